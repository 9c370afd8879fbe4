// Generic long metrics import (CSV and JSON lines; format described in importers/generic/generic_importer.h):
// detection and the host label, a cut zstd file, garbage and a 10 MB line. The cases of each behaviour and quirk are
// folders under tests/golden/generic.

#include "importers/generic/generic_importer.h"
#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

const QString kFormat = QStringLiteral("metrics-csv");

const std::string kCountsSql = countsSql({"series", "point_chunk", "import", "device", "node", "diagnostic"});

QByteArray generatedCsv(int samples, int gpus)
{
    QByteArray out("ts,device,metric,value,unit\n");
    for (int i = 0; i < samples; ++i)
        for (int g = 0; g < gpus; ++g)
            out += QByteArray::number(1768471200000LL + i * 250LL) + ",gpu:" + QByteArray::number(g) + ",gpu.util," +
                   QByteArray::number((i * 7 + g) % 101) + ",%\n";
    return out;
}

} // namespace

class TestGenericImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sniffAndHostLabel();
    void truncatedZstdLeavesDatabaseUnchanged();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
};

void TestGenericImporter::sniffAndHostLabel()
{
    const GenericMetricsImporter importer;
    auto sniff = [&](const char* head) { return importer.sniff({head, "x"}); };
    auto host = [&](const char* head) { return importer.hostLabel({head, "x"}).value_or("<none>"); };
    QCOMPARE(sniff("ts,node,device,metric,value\n1,a,gpu:0,gpu.util,1\n"), 95);
    QCOMPARE(sniff("# comment\nMetric;Value;TS\n"), 85);
    QCOMPARE(sniff(R"({"ts": 1, "metric": "m", "value": 2, "node": "a"})"
                   "\n"),
             95);
    QCOMPARE(sniff(R"({"ts": 1, "metric": "m", "val)"), 0);
    QCOMPARE(sniff(R"({"ts": 1, "metric": "m", "value": 2, "no)"), 60);
    QCOMPARE(sniff(R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[]}]}})"
                   "\n"),
             0);
    QCOMPARE(sniff("timestamp, index, utilization.gpu [%]\n"), 0);
    QCOMPARE(sniff("# hostname;interval;timestamp;CPU;%usr;%idle\n"), 0);
    QCOMPARE(host("ts,node,metric,value\n1,node-3,m,1\n2,node-4,m,1\n"), std::string("node-3"));
    QCOMPARE(host("ts,metric,value\n1,m,1\n"), std::string("<none>"));
    QCOMPARE(host("ts,node,metric,value\n1,node-3,m,1"), std::string("<none>")); // a row cut by the head's end
    QCOMPARE(host(R"({"ts": 1, "metric": "m", "value": 2, "node": "gpu-host-1"})"
                  "\n"),
             std::string("gpu-host-1"));
}

void TestGenericImporter::truncatedZstdLeavesDatabaseUnchanged()
{
    checkCutZstdImport(kCountsSql, str("first.csv"), generatedCsv(50, 1), str("1|1|1|1|1|0"), str("metrics.csv.zst"),
                       generatedCsv(20000, 4), importOptions(QString()));
}

void TestGenericImporter::garbage_data()
{
    const QByteArray random = addGarbageRows(5, kFormat);
    QTest::newRow("header then random bytes") << QByteArray("ts,metric,value\n") + random << QString();
    QTest::newRow("JSON then random bytes") << QByteArray(R"({"ts": 1, "metric": "m", "value": 2})"
                                                          "\n") +
                                                   random
                                            << QString();
}

void TestGenericImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = writeInput(dir, str("garbage.csv"), input);
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format);
    const bool valid = input.startsWith("ts,") || input.startsWith("{");
    checkGarbage(r, format, kFormat, valid);
    if (r.outcome == FileOutcome::Imported) QCOMPARE(QString::fromStdString(r.importer), kFormat);
}

void TestGenericImporter::tenMegabyteLine()
{
    constexpr int kBytes = 10 << 20;
    for (const bool json : {false, true}) {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // Line 2: 10 MB of one cell; line 3: a 10 MB value; line 4: a 10 MB metric name.
        std::string input =
            json
                ? std::string(R"({"ts": 1768471201, "metric": "gpu.util", "value": 1})") + "\n" +
                      std::string(kBytes, 'x') + "\n" + R"({"ts": 1768471202, "metric": "gpu.util", "value": ")" +
                      std::string(kBytes, 'y') + "\"}\n" + R"({"ts": 1768471203, "metric": ")" +
                      std::string(kBytes, 'm') + R"(", "value": 3})" + "\n" +
                      R"({"ts": 1768471204, "metric": "gpu.util", "value": 4})" + "\n"
                : "ts,metric,value\n" + std::string(kBytes, 'x') + "\n1768471202,gpu.util," + std::string(kBytes, 'y') +
                      "\n1768471203," + std::string(kBytes, 'm') + ",3\n" + "1768471204,gpu.util,4\n";
        const std::string path = test::writeFile(dir, str("huge.csv"), input);
        input.clear();
        const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, QString());
        QCOMPARE(outcomeName(r.outcome), "imported");
        QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
                 json ? strs({"invalid_line|2", "bad_number|3", "invalid_line|4"})
                      : strs({"wrong_field_count|2", "bad_number|3", "invalid_line|4"}));
        QCOMPARE(seriesText(r.db, str("host"), str("gpu.util"), Fraction::MillisAndNs),
                 json ? str("10:00:01=1, 10:00:02=?, 10:00:04=4") : str("10:00:02=?, 10:00:04=4"));
        const int longest = queryOne(r.db, "SELECT max(length(message)) FROM diagnostic").toInt();
        QVERIFY2(longest < 1000, qPrintable(QStringLiteral("a diagnostic message of %1 characters").arg(longest)));
    }
}

QTEST_MAIN(TestGenericImporter)
#include "tst_importers_generic.moc"
