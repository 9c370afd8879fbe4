// sysstat sadf -d / -dh and sar text import (docs/formats.md §8): the host label, a cut zstd file, garbage and a
// 10 MB line, then the real sysstat files checked against an independent reading of their rows. The cases of each
// behaviour and quirk are folders under tests/golden/sysstat and tests/golden/sar_text.

#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "importers/import_session.h"
#include "importers/sysstat/sadf_importer.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>
#include <cmath>
#include <map>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

const QString kFormat = QStringLiteral("sadf-csv");

const std::string kCountsSql = countsSql({"series", "point_chunk", "import", "device", "node", "diagnostic"});

// Lines joined by '\n'; "@HH:MM:SS" is the time of day on 2026-01-15 in sadf's UTC form.
QByteArray sadf(std::initializer_list<const char*> lines)
{
    QByteArray out;
    for (const char* l : lines) {
        QByteArray line(l);
        const qsizetype at = line.indexOf('@');
        if (at >= 0) line.replace(at, 9, "2026-01-15 " + line.mid(at + 1, 8) + " UTC");
        out += line + '\n';
    }
    return out;
}

const char* const kCpu = "# hostname;interval;timestamp;CPU;%usr;%idle";

// A sadf -d capture of `samples` intervals: CPU all and one network interface.
QByteArray generatedSadf(int samples, const char* host = "gen")
{
    QByteArray cpu = QByteArray(kCpu) + '\n', net("# hostname;interval;timestamp;IFACE;rxkB/s;txkB/s\n");
    const QDateTime start(QDate(2026, 1, 15), QTime(10, 0), Qt::UTC);
    for (int i = 0; i < samples; ++i) {
        const QByteArray ts = start.addSecs(i).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")).toLatin1() + " UTC";
        const QByteArray pre = QByteArray(host) + ";1;" + ts + ";";
        cpu += pre + "-1;1.00;" + QByteArray::number(50 + i % 40) + ".25\n";
        net += pre + "eth0;" + QByteArray::number(i % 1000) + ".50;1.00\n";
    }
    return cpu + net;
}

} // namespace

class TestSysstatImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void hostLabelIsFirstRowHost();
    void truncatedZstdLeavesDatabaseUnchanged();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
    void realSadfFixture();
    void realSarFixture();
};

void TestSysstatImporter::hostLabelIsFirstRowHost()
{
    const SadfImporter importer;
    const std::string head = sadf({kCpu, "node-7.cluster;10;@10:00:10;-1;1.00;90.00", "x"}).toStdString();
    QCOMPARE(importer.hostLabel({head, "a.csv"}).value_or("<none>"), std::string("node-7.cluster"));
    QCOMPARE(importer.sniff({head, "a.csv"}), 100);
    QCOMPARE(importer.sniff({"node;10;2026-01-15 10:00:10 UTC;-1;1.00;90.00\n", "a.csv"}), 80);
    QCOMPARE(importer.sniff({"timestamp, index, utilization.gpu [%]\n", "a.csv"}), 0);
    QVERIFY(!importer.hostLabel({std::string(kCpu) + "\n", "a.csv"}));
}

void TestSysstatImporter::truncatedZstdLeavesDatabaseUnchanged()
{
    checkCutZstdImport(kCountsSql, str("first.sadf"), generatedSadf(50, "first"), str("4|4|1|2|1|1"),
                       str("sar.sadf.zst"), generatedSadf(40000, "second"), importOptions({}, str("UTC"), {}, {}));
}

void TestSysstatImporter::garbage_data()
{
    const QByteArray random = addGarbageRows(11, kFormat);
    QTest::newRow("header then random bytes") << QByteArray(kCpu) + '\n' + random << QString();
}

void TestSysstatImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = writeInput(dir, str("garbage.sadf"), input);
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format);
    const bool withHeader = input.startsWith(kCpu);
    checkGarbage(r, format, kFormat, withHeader);
    if (r.outcome == FileOutcome::Imported) {
        QCOMPARE(QString::fromStdString(r.importer), kFormat);
        QCOMPARE(queryOne(r.db, "SELECT count(*) FROM series"), str("0"));
    }
}

void TestSysstatImporter::tenMegabyteLine()
{
    constexpr int kBytes = 10 << 20;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // Line 3: 10 MB without a separator; line 4: a 10 MB value; line 5: a 10 MB host name.
    std::string input = sadf({kCpu, "h1;10;@10:00:10;-1;1.00;90.00"}).toStdString() + std::string(kBytes, 'x') +
                        "\nh1;10;2026-01-15 10:00:20 UTC;-1;1.00;" + std::string(kBytes, 'y') + "\n" +
                        std::string(kBytes, 'h') + ";10;2026-01-15 10:00:25 UTC;-1;1.00;70.00\n" +
                        "h1;10;2026-01-15 10:00:30 UTC;-1;1.00;80.00\n";
    const std::string path = test::writeFile(dir, str("huge.sadf"), input);
    input.clear();
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, QString());
    QCOMPARE(outcomeName(r.outcome), "imported");
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
             strs({"unmapped_metric|1", "invalid_line|3", "bad_number|4", "invalid_line|5"}));
    QCOMPARE(seriesText(r.db, str("cpu"), str("cpu.util"), Fraction::Ns), str("10:00:10=10, 10:00:20=?, 10:00:30=20"));
    const int longest = queryOne(r.db, "SELECT max(length(message)) FROM diagnostic").toInt();
    QVERIFY2(longest < 1000, qPrintable(QStringLiteral("a diagnostic message of %1 characters").arg(longest)));
}

// The sysstat project's own `sadf -d` test output: every CPU-all row of the CPU sections becomes one cpu.util point
// of 100 - %idle, every row of the network sections one net.rx point of rxkB/s * 1024 on its interface.
void TestSysstatImporter::realSadfFixture()
{
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): real sadf -d not tested");
    const QString path = fixtures + str("/public/sysstat/tests/expected.sadf-d");
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) QSKIP("public/sysstat/tests/expected.sadf-d not in the fixtures");

    struct Point
    {
        qint64 ns;
        double value;
    };
    std::vector<Point> cpuAll;
    std::map<QString, std::vector<Point>> rx;
    QString host;
    int restarts = 0;
    QStringList header;
    for (QByteArray line : file.readAll().split('\n')) {
        if (line.endsWith('\r')) line.chop(1);
        if (line.startsWith("# ")) {
            header = QString::fromUtf8(line.mid(2)).split(QLatin1Char(';'));
            continue;
        }
        const QStringList f = QString::fromUtf8(line).split(QLatin1Char(';'));
        if (f.size() < 4) continue;
        if (f[1] == QLatin1String("-1")) {
            restarts += f[3].startsWith(QLatin1String("LINUX-RESTART"));
            continue;
        }
        if (f.size() != header.size()) continue;
        if (host.isEmpty()) host = f[0];
        QDateTime t = QDateTime::fromString(f[2].left(19), QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        t.setTimeZone(QTimeZone::utc());
        const qint64 ns = t.toMSecsSinceEpoch() * 1000000;
        QVERIFY(f[2].endsWith(QLatin1String(" UTC")));
        const qsizetype idle = header.indexOf(QStringLiteral("%idle"));
        if (header.value(3) == QLatin1String("CPU") && idle > 0 && f[3] == QLatin1String("-1"))
            cpuAll.push_back({ns, 100.0 - f[idle].toDouble()});
        const qsizetype rxCol = header.indexOf(QStringLiteral("rxkB/s"));
        if (header.value(3) == QLatin1String("IFACE") && rxCol > 0)
            rx[f[3]].push_back({ns, f[rxCol].toDouble() * 1024});
    }
    QVERIFY(cpuAll.size() >= 4 && !rx.empty() && restarts == 2);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Imported r = importWith(dir.filePath(str("t.runlens")).toStdString(), path.toStdString(),
                                  importOptions({}, str("UTC"), {}, {}));
    QCOMPARE(QString::fromStdString(r.importer), kFormat);
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(queryOne(r.db, "SELECT name FROM node"), host);
    QCOMPARE(queryOne(r.db, "SELECT data_loss FROM import"), str("0"));
    QCOMPARE(queryOne(r.db, "SELECT count FROM diagnostic_count WHERE kind = 'restart_record'"),
             QString::number(restarts));

    auto db = store::RunDatabase::open(r.db, store::OpenMode::ReadOnly);
    QVERIFY(db);
    store::RunReader reader(**db);
    auto compare = [&](std::string_view kind, const QString& name, std::string_view metric,
                       const std::vector<Point>& expected) {
        auto s = reader.findSeries(host.toStdString(), kind, name.toStdString(), metric);
        QVERIFY2(s && *s, qPrintable(name));
        auto points = reader.readPoints((**s).id, {});
        QVERIFY(points);
        QCOMPARE(points->size(), expected.size());
        for (size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(qint64((*points)[i].tsNs), expected[i].ns);
            QVERIFY2(
                std::fabs((*points)[i].value - expected[i].value) < 1e-9,
                qPrintable(
                    QStringLiteral("%1 %2: %3 != %4").arg(name).arg(i).arg((*points)[i].value).arg(expected[i].value)));
        }
    };
    compare("cpu", QString(), "cpu.util", cpuAll);
    for (const auto& [iface, points] : rx)
        compare("nic", iface, "net.rx", points);
    QCOMPARE(queryOne(r.db, "SELECT count(*) FROM device d JOIN device_attribute a ON a.device_id = d.id "
                            "WHERE d.kind = 'nic' AND d.name = 'lo' AND a.key = 'virtual'"),
             str("1"));
}

// sar text (format "sar-text"): skipped until SarTextImporter is registered in allImporters().
const QString kSar = QStringLiteral("sar-text");

// The sysstat project's own `sar -A` test output: the CPU "all" rows become cpu.util = 100 - %idle on the
// banner's date (06/01/20), read in UTC, on the banner's host.
void TestSysstatImporter::realSarFixture()
{
    if (!importerByFormat(kSar.toStdString())) QSKIP("sar-text is not registered in allImporters() yet");
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): real sar -A not tested");
    const QString path = fixtures + str("/public/sysstat/tests/expected.sar-A");
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) QSKIP("public/sysstat/tests/expected.sar-A not in the fixtures");
    std::vector<std::pair<qint64, double>> expected;
    bool cpuHeader = false;
    qsizetype idle = -1;
    for (const QByteArray& line : file.readAll().split('\n')) {
        const QStringList w = QString::fromUtf8(line).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (w.size() < 2 || w[0] == QLatin1String("Average:")) {
            cpuHeader = cpuHeader && w.size() >= 2;
            continue;
        }
        if (w[1] == QLatin1String("CPU")) {
            cpuHeader = w.contains(QStringLiteral("%idle"));
            idle = w.indexOf(QStringLiteral("%idle"));
        } else if (cpuHeader && w[1] == QLatin1String("all")) {
            const QDateTime t(QDate(2020, 6, 1), QTime::fromString(w[0], QStringLiteral("HH:mm:ss")), Qt::UTC);
            expected.emplace_back(t.toMSecsSinceEpoch() * 1000000, 100.0 - w[idle].toDouble());
        }
    }
    QVERIFY(expected.size() >= 2);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Imported r = importWith(dir.filePath(str("t.runlens")).toStdString(), path.toStdString(),
                                  importOptions({}, str("UTC"), {}, {}));
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(QString::fromStdString(r.importer), kSar);
    QCOMPARE(queryOne(r.db, "SELECT name FROM node"), str("SYSSTAT.TEST"));
    QCOMPARE(queryOne(r.db, "SELECT data_loss FROM import"), str("0"));
    auto db = store::RunDatabase::open(r.db, store::OpenMode::ReadOnly);
    QVERIFY(db);
    store::RunReader reader(**db);
    auto s = reader.findSeries("SYSSTAT.TEST", "cpu", "", "cpu.util");
    QVERIFY(s && *s);
    auto points = reader.readPoints((**s).id, {});
    QVERIFY(points);
    QCOMPARE(points->size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        QCOMPARE(qint64((*points)[i].tsNs), expected[i].first);
        QVERIFY(std::fabs((*points)[i].value - expected[i].second) < 1e-9);
    }
}

QTEST_MAIN(TestSysstatImporter)
#include "tst_importers_sysstat.moc"
