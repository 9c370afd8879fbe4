// Generic long metrics import (CSV and JSON lines; format described in importers/generic/generic_importer.h):
// generated inputs for each behaviour and quirk.

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

const char* const kCountsSql = "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM point_chunk), "
                               "(SELECT count(*) FROM import), (SELECT count(*) FROM device), "
                               "(SELECT count(*) FROM node), (SELECT count(*) FROM diagnostic)";

const QByteArray kCanonical = lines(
    {"ts,node,device,metric,value,unit", "2026-01-15T10:00:01Z,n1,gpu:0,gpu.util,87.5,%",
     "2026-01-15T10:00:01Z,n1,gpu:0,gpu.mem_used,1024,MiB", "2026-01-15T10:00:01Z,n1,nic:eth0,net.rx,2.5,kB/s",
     "2026-01-15T10:00:01Z,n1,disk:nvme0n1,disk.write,1,KiB/s", "2026-01-15T10:00:02Z,n1,gpu:0,gpu.util,0.5,ratio",
     "2026-01-15T10:00:02Z,n1,cpu,cpu.util,12.5,", "2026-01-15T10:00:02Z,n1,host,host.mem_available,2,GiB"});
const QStringList kCanonicalPoints =
    strs({"gpu:0|gpu.util|10:00:01=87.5, 10:00:02=50", "gpu:0|gpu.mem_used|10:00:01=1073741824",
          "nic:eth0|net.rx|10:00:01=2500", "disk:nvme0n1|disk.write|10:00:01=1024", "cpu|cpu.util|10:00:02=12.5",
          "host|host.mem_available|10:00:02=2147483648"});
const QStringList kCanonicalSql =
    strs({"SELECT device, metric, unit, raw_name FROM series_summary ORDER BY device, metric => "
          "cpu|cpu.util|%|cpu.util; disk:nvme0n1|disk.write|bytes/s|disk.write; gpu:0|gpu.mem_used|bytes|gpu.mem_used; "
          "gpu:0|gpu.util|%|gpu.util; host|host.mem_available|bytes|host.mem_available; nic:eth0|net.rx|bytes/s|net.rx",
          "SELECT rows, status FROM import_log => 7|ok"});

void addCase(const char* name, const QByteArray& input, const QStringList& points, const QStringList& diagnostics,
             const QStringList& sql = {}, const QString& tz = QStringLiteral("UTC"),
             const QString& encoding = QStringLiteral("plain"), const QString& format = {},
             const QString& outcome = QStringLiteral("imported"), const QString& error = {},
             const QString& node = QStringLiteral("n1"))
{
    QTest::newRow(name) << input << encoding << tz << format << node << outcome << error << points << diagnostics
                        << sql;
}

QByteArray generatedCsv(int samples, int gpus)
{
    QByteArray out("ts,device,metric,value,unit\n");
    for (int i = 0; i < samples; ++i)
        for (int g = 0; g < gpus; ++g)
            out += QByteArray::number(1768471200000LL + i * 250) + ",gpu:" + QByteArray::number(g) + ",gpu.util," +
                   QByteArray::number((i * 7 + g) % 101) + ",%\n";
    return out;
}

} // namespace

class TestGenericImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void importCases_data();
    void importCases();
    void sniffAndHostLabel();
    void truncatedZstdLeavesDatabaseUnchanged();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
};

void TestGenericImporter::importCases_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("encoding"); // plain, zstd, gzip
    QTest::addColumn<QString>("tz");
    QTest::addColumn<QString>("format"); // forced format, or empty to detect
    QTest::addColumn<QString>("node");   // --node, or empty for the node column
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<QString>("error");           // regular expression the fatal error must match
    QTest::addColumn<QStringList>("points");      // device|metric|time=value, ... (node n1)
    QTest::addColumn<QStringList>("diagnostics"); // kind|line in report order; "*": not checked
    QTest::addColumn<QStringList>("sql");         // query => rows joined by "; "
    const QString plain = str("plain"), utcTz = str("UTC");

    addCase("CSV: canonical metrics, units converted, devices", kCanonical, kCanonicalPoints, {}, kCanonicalSql);
    addCase("zstd compressed", kCanonical, kCanonicalPoints, {}, kCanonicalSql, utcTz, str("zstd"));
    addCase("gzip compressed", kCanonical, kCanonicalPoints, {}, kCanonicalSql, utcTz, str("gzip"));
    addCase("crlf line endings", QByteArray(kCanonical).replace("\n", "\r\n"), kCanonicalPoints, {}, kCanonicalSql);
    addCase("any column order; extra columns become labels",
            lines({"metric,value,rank,ts,device,job", "gpu.util,10,3,1768471201,gpu:0,train",
                   "gpu.util,20,3,1768471202,gpu:0,train", "gpu.util,30,4,1768471201,gpu:0,"}),
            {}, {},
            strs({"SELECT labels, points, max_value FROM series_summary ORDER BY labels => job=train,rank=3|2|20; "
                  "rank=4|1|30",
                  "SELECT instr(summary, 'labels: job, rank') > 0 FROM import => 1"}));
    addCase("many nodes in one file: the node column names them",
            lines({"ts,node,device,metric,value", "1768471201,alpha,gpu:0,gpu.util,1",
                   "1768471201,beta,gpu:0,gpu.util,2", "1768471202,alpha,gpu:0,gpu.util,3"}),
            {}, {},
            strs({"SELECT node, points, max_value FROM series_summary ORDER BY node => alpha|2|3; beta|1|2",
                  "SELECT name, name_source FROM node ORDER BY name => alpha|host label; beta|host label"}),
            utcTz, plain, {}, str("imported"), {}, QString());
    addCase("times: ISO 8601 with Z or offsets, naive local in --tz, epoch s/ms/us/ns",
            lines({"ts,metric,value", "2026-01-15T10:00:01Z,m,1", "2026-01-15T12:00:02+02:00,m,2",
                   "2026-01-15 13:00:03.250+0300,m,3", "2026-01-15T05:00:04-05,m,4", "2026-01-15T12:00:05,m,5",
                   "2026/01/15 12:00:06.5,m,6", "1768471207,m,7", "1768471208000,m,8", "1768471209000000,m,9",
                   "1768471210000000000,m,10", "1768471211.25,m,11"}),
            strs({"host|m|10:00:01=1, 10:00:02=2, 10:00:03.250=3, 10:00:04=4, 10:00:05=5, 10:00:06.500=6, 10:00:07=7, "
                  "10:00:08=8, 10:00:09=9, 10:00:10=10, 10:00:11.250=11"}),
            strs({"unmapped_metric|2"}),
            strs({"SELECT time_zone FROM node => +02:00",
                  "SELECT instr(summary, 'naive local times read in time zone UTC+02:00') > 0 FROM import => 1"}),
            str("+02:00"));
    addCase("JSON lines: values as numbers, strings, null, true; labels; bad records",
            lines({R"({"ts": "2026-01-15T10:00:01Z", "node": "n1", "device": "gpu:1", "metric": "gpu.power", )"
                   R"("value": 300.5, "unit": "W"})",
                   R"({"ts": 1768471202, "device": "gpu:1", "metric": "gpu.power", "value": "301", "unit": "W"})",
                   R"({"ts": 1768471203, "device": "gpu:1", "metric": "gpu.power", "value": null})",
                   R"({"ts": 1768471204, "device": "gpu:1", "metric": "gpu.power", "value": 250000, "unit": "mW", )"
                   R"("labels": {"rank": 3}})",
                   R"({"ts": 1768471205, "device": "gpu:1", "metric": "gpu.throttled", "value": true, "rank": 1, )"
                   R"("job": "a", "extra": [1, 2]})",
                   "not json", R"({"ts": 1768471206, "device": "gpu:1", "value": 1})",
                   R"({"ts": 1768471207, "device": 7, "metric": "gpu.power", "value": 1})"}),
            {}, strs({"unmapped_metric|5", "invalid_line|6", "invalid_line|7", "invalid_line|8"}),
            strs({"SELECT device, metric, unit, labels, points, missing_points, max_value FROM series_summary ORDER BY "
                  "metric, labels => gpu:1|gpu.power|W||3|1|301; gpu:1|gpu.power|W|rank=3|1|0|250; "
                  "gpu:1|gpu.throttled||job=a,rank=1|1|0|1",
                  "SELECT instr(summary, 'nested JSON values (\"extra\") ignored') > 0 FROM import => 1"}));
    addCase("NaN, empty, N/A, null are missing; text is a bad number",
            lines({"ts,metric,value", "1768471201,gpu.util,NaN", "1768471202,gpu.util,", "1768471203,gpu.util,N/A",
                   "1768471204,gpu.util,null", "1768471205,gpu.util,1OO", "1768471206,gpu.util,inf",
                   "1768471207,gpu.util,5"}),
            strs({"host|gpu.util|10:00:01=?, 10:00:02=?, 10:00:03=?, 10:00:04=?, 10:00:05=?, 10:00:06=?, "
                  "10:00:07=5"}),
            strs({"nan_value|2", "bad_number|6", "nan_value|7"}),
            strs({"SELECT column FROM diagnostic WHERE kind = 'bad_number' => 3"}));
    addCase("backwards time and duplicates per series; interleaved series are fine",
            lines({"ts,device,metric,value", "1768471202,gpu:0,gpu.util,1", "1768471201,gpu:1,gpu.util,2",
                   "1768471201,gpu:0,gpu.util,3", "1768471202,gpu:0,gpu.util,4", "1768471203,gpu:0,gpu.util,5"}),
            strs({"gpu:0|gpu.util|10:00:02=1, 10:00:03=5", "gpu:1|gpu.util|10:00:01=2"}),
            strs({"backwards_time|4", "duplicate_sample|5"}), strs({"SELECT status FROM import_log => data_loss"}));
    addCase("a unit that cannot be converted; another metric keeps its first unit",
            lines({"ts,metric,value,unit", "1768471201,gpu.util,5,MiB", "1768471202,my.latency,5,ms",
                   "1768471203,my.latency,6,ms", "1768471204,my.latency,0.25,s"}),
            strs({"host|gpu.util|10:00:01=?", "host|my.latency|10:00:02=5, 10:00:03=6, 10:00:04=?"}),
            strs({"unknown_unit|2", "unmapped_metric|3", "unknown_unit|5"}),
            strs({"SELECT unit FROM series_summary WHERE metric = 'my.latency' => ms"}));
    addCase("wrong field count, bad timestamp, no metric",
            lines({"ts,metric,value", "1768471201,m,1", "1768471202,m", "yesterday,m,3", "1768471204,,4",
                   "1768471205,m,5"}),
            strs({"host|m|10:00:01=1, 10:00:05=5"}),
            strs({"unmapped_metric|2", "wrong_field_count|3", "bad_timestamp|4", "invalid_line|5"}),
            strs({"SELECT rows FROM import_log => 4"}));
    addCase(
        "quoted cells, ';' separator, comments and blank lines",
        lines({"# exported by a script", "ts;metric;value;tag", R"("2026-01-15T10:00:01Z";"gpu.util";"7";"a;""b""")",
               "", "1768471202;gpu.util;8;x"}),
        {}, {},
        strs({R"(SELECT labels, points, max_value FROM series_summary ORDER BY labels => tag=a;"b"|1|7; tag=x|1|8)"}));
    addCase("device kinds: unknown kind on the host with a label; virtual NIC and partition flagged",
            lines({"ts,device,metric,value", "1768471201,fan:2,fan.rpm,900", "1768471201,nic:docker0,net.rx,1",
                   "1768471201,disk:sda1,disk.read,1", "1768471201,ib:mlx5_0:1,ib.rx,5"}),
            {}, strs({"unmapped_metric|2"}),
            strs({"SELECT device, metric, labels FROM series_summary ORDER BY device => disk:sda1|disk.read|; "
                  "host|fan.rpm|device=fan:2; ib:mlx5_0:1|ib.rx|; nic:docker0|net.rx|",
                  "SELECT d.kind, d.name, a.key FROM device_attribute a JOIN device d ON d.id = a.device_id ORDER BY "
                  "d.kind => disk|sda1|partition; nic|docker0|virtual"}));
    addCase("header without a value column is fatal", lines({"ts,metric,val", "1768471201,m,1"}), {}, {},
            strs({"SELECT count(*) FROM import => 0"}), utcTz, plain, kFormat, str("failed"),
            str("t\\.csv:1(:\\d+)?: .*\"value\""));
    addCase("header only", lines({"ts,node,device,metric,value,unit"}), {}, {},
            strs({"SELECT rows, points FROM import_log => 0|0"}));
    addCase("empty file, format forced", QByteArray(), {}, {}, strs({"SELECT count(*) FROM import => 0"}), utcTz, plain,
            kFormat, str("failed"), str("empty"));
    addCase("empty file, detected", QByteArray(), {}, {}, strs({"SELECT count(*) FROM import => 0"}), utcTz, plain, {},
            str("not recognised"));
}

void TestGenericImporter::importCases()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, encoding);
    QFETCH(QString, tz);
    QFETCH(QString, format);
    QFETCH(QString, node);
    QFETCH(QString, outcome);
    QFETCH(QString, error);
    QFETCH(QStringList, points);
    QFETCH(QStringList, diagnostics);
    QFETCH(QStringList, sql);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString name = encoding == QLatin1String("zstd")   ? str("t.csv.zst")
                         : encoding == QLatin1String("gzip") ? str("t.csv.gz")
                                                             : str("t.csv");
    const std::string path = test::writeFile(dir, name, encode(input, encoding));
    const Imported r =
        importWith(dir.filePath(str("t.runlens")).toStdString(), path, importOptions(format, tz, {}, node));
    const QString got = QString::fromLatin1(outcomeName(r.outcome));
    QVERIFY2(got == outcome, qPrintable(got + QStringLiteral(": ") + QString::fromStdString(r.error)));
    if (!error.isEmpty())
        QVERIFY2(QRegularExpression(error).match(QString::fromStdString(r.error)).hasMatch(), r.error.c_str());
    for (const QString& check : sql) {
        const qsizetype arrow = check.lastIndexOf(QStringLiteral(" => "));
        QCOMPARE(queryRows(r.db, check.left(arrow).toStdString()).join(QStringLiteral("; ")), check.mid(arrow + 4));
    }
    if (r.outcome != FileOutcome::Imported) return;
    QCOMPARE(QString::fromStdString(r.importer), kFormat);
    for (const QString& p : points) {
        const QStringList parts = p.split(QLatin1Char('|'));
        QCOMPARE(seriesText(r.db, parts[0], parts[1], Fraction::MillisAndNs), parts.mid(2).join(QLatin1Char('|')));
    }
    const QStringList found = queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id");
    if (found != diagnostics && diagnostics != strs({"*"}))
        qInfo() << queryRows(r.db, "SELECT kind, line, column, message FROM diagnostic ORDER BY id");
    if (diagnostics != strs({"*"})) QCOMPARE(found, diagnostics);
}

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
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const std::string first = test::writeFile(dir, str("a/first.csv"), generatedCsv(50, 1).toStdString());
    QCOMPARE(outcomeName(importPath(db, first, QString()).outcome), "imported");
    const QString before = queryOne(db, kCountsSql);
    QCOMPARE(before, str("1|1|1|1|1|0"));

    const std::string zst = test::zstdCompress(generatedCsv(20000, 4).toStdString());
    const std::string path = test::writeFile(dir, str("b/metrics.csv.zst"), zst.substr(0, zst.size() / 2));
    const Imported r = importPath(db, path, QString());
    QCOMPARE(outcomeName(r.outcome), "failed");
    const QRegularExpression located(str("metrics\\.csv\\.zst:\\d+(:\\d+)?: .*(truncated|zstd)"));
    QVERIFY2(located.match(QString::fromStdString(r.error)).hasMatch(), r.error.c_str());
    QCOMPARE(queryOne(db, kCountsSql), before);
}

void TestGenericImporter::garbage_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format");
    const QByteArray random = randomBytes(8192, 5);
    QTest::newRow("random binary, detected") << random << QString();
    QTest::newRow("random binary, forced") << random << kFormat;
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
    const std::string path = test::writeFile(dir, str("garbage.csv"), input.toStdString());
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format);
    const bool valid = input.startsWith("ts,") || input.startsWith("{");
    if (format.isEmpty() && !valid) QVERIFY(r.importer != kFormat.toStdString());
    if (r.outcome == FileOutcome::Imported) {
        QCOMPARE(QString::fromStdString(r.importer), kFormat);
        QCOMPARE(queryOne(r.db, "SELECT status FROM import_log"), str("data_loss"));
    } else {
        QVERIFY(!valid);
        QVERIFY(!r.error.empty());
        QCOMPARE(queryOne(r.db, "SELECT count(*) FROM import"), str("0"));
    }
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
