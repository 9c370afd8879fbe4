// sysstat sadf -d / -dh import (docs/formats.md §8): generated inputs for each behaviour and quirk, then the real
// sysstat test file checked against an independent reading of its rows.

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

const char* const kCountsSql = "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM point_chunk), "
                               "(SELECT count(*) FROM import), (SELECT count(*) FROM device), "
                               "(SELECT count(*) FROM node), (SELECT count(*) FROM diagnostic)";

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

const QByteArray kFull =
    sadf({"# hostname;interval;timestamp;CPU;%usr;%nice;%sys;%iowait;%steal;%irq;%soft;%guest;%gnice;%idle",
          "h1;10;@10:00:10;-1;2.15;12.50;1.84;0.12;0.00;0.34;0.19;0.00;0.00;82.88",
          "h1;10;@10:00:10;0;2.71;0.03;2.16;0.00;0.00;0.32;0.64;0.00;0.00;94.14",
          "h1;10;@10:00:20;-1;2.28;0.00;1.55;0.48;0.00;0.19;0.19;0.00;0.00;95.31",
          "h1;10;@10:00:20;0;1.25;0.00;1.51;0.35;0.00;0.19;0.58;0.00;0.00;96.12",
          "# hostname;interval;timestamp;IFACE;rxpck/s;txpck/s;rxkB/s;txkB/s;rxcmp/s;txcmp/s;rxmcst/s;%ifutil",
          "h1;10;@10:00:10;lo;1.00;1.00;0.50;0.50;0.00;0.00;0.00;0.00",
          "h1;10;@10:00:10;eth0;100.00;50.00;1000.00;2.50;0.00;0.00;0.00;0.08",
          "h1;10;@10:00:20;eth0;100.00;50.00;1500.25;3.00;0.00;0.00;0.00;0.12",
          "# hostname;interval;timestamp;DEV;tps;rkB/s;wkB/s;dkB/s;areq-sz;aqu-sz;await;%util",
          "h1;10;@10:00:10;nvme0n1;10.00;2048.00;512.50;0.00;0.00;0.00;0.00;12.34",
          "h1;10;@10:00:10;nvme0n1p1;10.00;2048.00;512.50;0.00;0.00;0.00;0.00;12.34",
          "# hostname;interval;timestamp;kbmemfree;kbavail;kbmemused;%memused;kbbuffers;kbcached;kbcommit;%commit;"
          "kbactive;kbinact;kbdirty",
          "h1;10;@10:00:10;1437740;4389516;3755444;46.11;260172;2821596;12097852;48.54;4042384;1772396;396"});

const QStringList kFullPoints =
    strs({"cpu|cpu.util|10:00:10=17.12, 10:00:20=4.69", "cpu:0|cpu.util|10:00:10=5.86, 10:00:20=3.88",
          "nic:eth0|net.rx|10:00:10=1024000, 10:00:20=1536256", "nic:eth0|net.tx|10:00:10=2560, 10:00:20=3072",
          "nic:lo|net.rx|10:00:10=512", "disk:nvme0n1|disk.read|10:00:10=2097152",
          "disk:nvme0n1|disk.write|10:00:10=524800", "disk:nvme0n1|disk.busy|10:00:10=0.1234",
          "host|host.mem_available|10:00:10=4494864384", "host|host.mem_free|10:00:10=1472245760",
          "host|host.mem_cached|10:00:10=2889314304", "host|host.mem_dirty|10:00:10=405504"});
const QStringList kFullSql =
    strs({"SELECT d.kind, d.name, a.key, a.value FROM device_attribute a JOIN device d ON d.id = a.device_id "
          "ORDER BY d.kind, d.name => disk|nvme0n1p1|partition|1; nic|lo|virtual|1",
          "SELECT kind, line, count(*) FROM diagnostic GROUP BY kind, line ORDER BY line => unmapped_metric|1|9; "
          "unmapped_metric|6|6; unmapped_metric|10|5; unmapped_metric|13|7",
          "SELECT unit, raw_name, points FROM series_summary WHERE device = 'nic:eth0' AND "
          "metric = 'sar.net-dev.%ifutil' => %|%ifutil|2",
          "SELECT metric, unit, raw_name FROM series_summary WHERE device = 'cpu' AND metric NOT LIKE 'sar.%' => "
          "cpu.util|%|%idle",
          "SELECT rows, status FROM import_log => 10|warnings"});

void addCase(const char* name, const QByteArray& input, const QStringList& points, const QStringList& diagnostics,
             const QStringList& sql = {}, const QString& tz = QStringLiteral("UTC"),
             const QString& encoding = QStringLiteral("plain"), const QString& format = {},
             const QString& outcome = QStringLiteral("imported"), const QString& error = {},
             const QString& node = QStringLiteral("n1"))
{
    QTest::newRow(name) << input << encoding << tz << format << node << outcome << error << points << diagnostics
                        << sql;
}

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
    void importCases_data();
    void importCases();
    void hostLabelIsFirstRowHost();
    void truncatedZstdLeavesDatabaseUnchanged();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
    void realSadfFixture();
    void sarTextCases_data();
    void sarTextCases();
    void realSarFixture();
};

void TestSysstatImporter::importCases_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("encoding"); // plain, zstd, gzip
    QTest::addColumn<QString>("tz");
    QTest::addColumn<QString>("format"); // forced format, or empty to detect
    QTest::addColumn<QString>("node");   // --node, or empty for the host labels
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<QString>("error");           // regular expression the fatal error must match
    QTest::addColumn<QStringList>("points");      // device|metric|time=value, ... (node n1)
    QTest::addColumn<QStringList>("diagnostics"); // kind|line in report order; "*": not checked
    QTest::addColumn<QStringList>("sql");         // query => rows joined by "; "
    const QString plain = str("plain"), utcTz = str("UTC");

    addCase("UTC: CPU all and per CPU, network, disks, memory", kFull, kFullPoints, strs({"*"}), kFullSql);
    addCase("zstd compressed", kFull, kFullPoints, strs({"*"}), kFullSql, utcTz, str("zstd"));
    addCase("gzip compressed", kFull, kFullPoints, strs({"*"}), kFullSql, utcTz, str("gzip"));
    addCase("crlf line endings", QByteArray(kFull).replace("\n", "\r\n"), kFullPoints, strs({"*"}), kFullSql);
    addCase("-T local time with zone abbreviations, read in --tz Europe/Berlin",
            sadf({"# hostname;interval;timestamp;CPU;%user;%nice;%system;%iowait;%steal;%idle",
                  "h1;600;2026-01-15 11:00:10 CET;all;1.00;0.00;1.00;0.00;0.00;80.00",
                  "h1;600;2026-07-01 12:00:10 CEST;all;1.00;0.00;1.00;0.00;0.00;70.50"}),
            strs({"cpu|cpu.util|10:00:10=20, 2026-07-01T10:00:10=29.5"}), strs({"*"}),
            strs({"SELECT time_zone FROM node => Europe/Berlin",
                  "SELECT instr(summary, '\"CEST\"') > 0, instr(summary, '\"CET\"') > 0 FROM import => 1|1"}),
            str("Europe/Berlin"));
    addCase("-U epoch seconds", sadf({kCpu, "h1;10;1768471210;-1;2.15;82.88", "h1;10;1768471220;-1;2.28;95.31"}),
            strs({"cpu|cpu.util|10:00:10=17.12, 10:00:20=4.69"}), strs({"unmapped_metric|1"}));
    addCase("restart and comment records; the repeated header reports nothing new",
            sadf({kCpu, "h1;10;@10:00:10;-1;2.15;82.88", "h1;-1;@10:05:00;LINUX-RESTART\t(9 CPU)",
                  "h1;-1;@10:06:00;COM Testing sysstat!", kCpu, "h1;10;@10:06:10;-1;2.28;95.31"}),
            strs({"cpu|cpu.util|10:00:10=17.12, 10:06:10=4.69"}),
            strs({"unmapped_metric|1", "restart_record|3", "comment_line|4"}),
            strs({"SELECT instr(summary, '1 restart record') > 0 FROM import => 1",
                  "SELECT message FROM diagnostic WHERE kind = 'restart_record' => restart record at 2026-01-15 "
                  "10:05:00 UTC: the host rebooted (9 CPU)",
                  "SELECT rows, status FROM import_log => 2|warnings"}));
    addCase("decimal commas (sadf run under de_DE)",
            sadf({kCpu, "h1;10;@10:00:10;-1;2,15;82,88", "# hostname;interval;timestamp;kbmemfree;kbavail;%memused",
                  "h1;10;@10:00:10;100;200;46,11"}),
            strs({"cpu|cpu.util|10:00:10=17.12", "host|host.mem_available|10:00:10=204800"}),
            strs({"unmapped_metric|1", "unmapped_metric|3"}),
            strs({"SELECT max_value FROM series_summary WHERE metric = 'sar.memory.%memused' => 46.11",
                  "SELECT instr(summary, 'decimal commas') > 0 FROM import => 1"}));
    addCase("a decimal point after decimal commas is a bad number",
            sadf({kCpu, "h1;10;@10:00:10;-1;2,15;82,88", "h1;10;@10:00:20;-1;2.15;82.88"}),
            strs({"cpu|cpu.util|10:00:10=17.12, 10:00:20=?"}),
            strs({"unmapped_metric|1", "bad_number|3", "bad_number|3"}),
            strs({"SELECT status FROM import_log => data_loss"}));
    addCase("older sysstat: rd_sec/s sectors, no kbavail",
            sadf({"# hostname;interval;timestamp;DEV;tps;rd_sec/s;wr_sec/s;%util",
                  "h1;600;@10:10:00;dev8-0;5.00;100.00;8.50;1.50",
                  "# hostname;interval;timestamp;kbmemfree;kbmemused;%memused", "h1;600;@10:10:00;1000;2000;66.67"}),
            strs({"disk:dev8-0|disk.read|10:10:00=51200", "disk:dev8-0|disk.write|10:10:00=4352",
                  "disk:dev8-0|disk.busy|10:10:00=0.015", "host|host.mem_available|10:10:00=1024000"}),
            strs({"unmapped_metric|1", "unmapped_metric|3", "unmapped_metric|3"}),
            strs({"SELECT instr(summary, 'no kbavail') > 0 FROM import => 1"}));
    addCase("two hosts in one file: the hostname column names the node",
            sadf({kCpu, "alpha;10;@10:00:10;-1;1.00;90.00", "beta;10;@10:00:10;-1;2.00;80.00",
                  "alpha;10;@10:00:20;-1;1.00;91.00"}),
            {}, strs({"unmapped_metric|1"}),
            strs({"SELECT node, device, points, max_value FROM series_summary WHERE metric = 'cpu.util' ORDER BY node "
                  "=> alpha|cpu|2|10; beta|cpu|1|20",
                  "SELECT name, name_source FROM node ORDER BY name => alpha|host label; beta|host label"}),
            utcTz, plain, {}, str("imported"), {}, QString());
    addCase("-dh: the CPU group repeats per CPU, then memory",
            sadf({"# hostname;interval;timestamp;CPU;%usr;%idle[...];kbmemfree;kbavail",
                  "h1;10;@10:00:10;-1;2.15;82.88;0;5.50;94.50;100;200",
                  "h1;10;@10:00:20;-1;2.28;95.31;0;1.25;96.12;100;300"}),
            strs({"cpu|cpu.util|10:00:10=17.12, 10:00:20=4.69", "cpu:0|cpu.util|10:00:10=5.5, 10:00:20=3.88",
                  "host|host.mem_available|10:00:10=204800, 10:00:20=307200"}),
            strs({"unmapped_metric|1"}));
    addCase("-dh: the last repeated group takes the rest of the line",
            sadf({"# hostname;interval;timestamp;kbmemfree;kbavail;IFACE;rxkB/s;txkB/s[...]",
                  "h1;10;@10:00:10;100;200;eth0;1.00;2.00;eth1;3.00;4.00"}),
            strs({"nic:eth0|net.rx|10:00:10=1024", "nic:eth0|net.tx|10:00:10=2048", "nic:eth1|net.rx|10:00:10=3072",
                  "host|host.mem_available|10:00:10=204800"}),
            {});
    addCase("-dh: per-CPU interrupts (INTR;CPU*[...]) cannot be split: skipped_columns",
            sadf({"# hostname;interval;timestamp;CPU;%usr;%idle[...];INTR;CPU*[...]",
                  "h1;10;@10:00:10;-1;2.15;82.88;sum;100.00;50.00"}),
            strs({"cpu|cpu.util|10:00:10=17.12"}),
            strs({"unmapped_metric|1", "unmapped_metric|1", "skipped_columns|2"}),
            strs({"SELECT column FROM diagnostic WHERE kind = 'skipped_columns' => 7"}));
    addCase("-d per-CPU interrupts: all CPUs, then CPU 0, 1 with the interrupt as a label",
            sadf({"# hostname;interval;timestamp;INTR;CPU*", "h1;10;@10:00:10;sum;300.00;100.00;200.00",
                  "h1;10;@10:00:10;LOC;30.00;10.00;20.00"}),
            {}, strs({"unmapped_metric|1"}),
            strs({"SELECT device, labels, max_value FROM series_summary WHERE metric = 'sar.irq.intr/s' ORDER BY "
                  "labels, device => cpu|intr=LOC|30; cpu:0|intr=LOC|10; cpu:1|intr=LOC|20; cpu|intr=sum|300; "
                  "cpu:0|intr=sum|100; cpu:1|intr=sum|200"}));
    addCase("text column (battery status) left out with a note; BAT as a label",
            sadf({"# hostname;interval;timestamp;BAT;%cap;cap/min;status", "h1;10;@10:00:10;0;100;0.00;Full",
                  "h1;10;@10:00:20;0;99;-3.85;Discharging"}),
            {}, strs({"unmapped_metric|1", "unmapped_metric|1", "unmapped_metric|1"}),
            strs({"SELECT device, metric, labels, points FROM series_summary ORDER BY metric => "
                  "host|sar.pwr-bat.%cap|bat=0|2; host|sar.pwr-bat.cap/min|bat=0|2",
                  "SELECT instr(summary, 'status of section pwr-bat holds text') > 0 FROM import => 1"}));
    addCase("NaN value stored as missing", sadf({kCpu, "h1;10;@10:00:10;-1;2.15;nan", "h1;10;@10:00:20;-1;2.15;82.88"}),
            strs({"cpu|cpu.util|10:00:10=?, 10:00:20=17.12"}), strs({"unmapped_metric|1", "nan_value|2"}),
            strs({"SELECT points, missing_points FROM series_summary WHERE metric = 'cpu.util' => 2|1"}));
    addCase("backwards time and a duplicate row",
            sadf({kCpu, "h1;10;@10:00:10;-1;1.00;90.00", "h1;10;@10:00:20;-1;1.00;80.00",
                  "h1;10;@10:00:15;-1;1.00;70.00", "h1;10;@10:00:20;-1;1.00;60.00", "h1;10;@10:00:30;-1;1.00;50.00"}),
            strs({"cpu|cpu.util|10:00:10=10, 10:00:20=20, 10:00:30=50"}),
            strs({"unmapped_metric|1", "backwards_time|4", "duplicate_sample|5"}));
    addCase(
        "wrong field count, bad timestamp, invalid line",
        sadf({kCpu, "h1;10;@10:00:10;-1;1.00", "h1;10;@10:00:20;-1;1.00;80.00;7", "h1;10;yesterday;-1;1.00;80.00",
              "h1;10;@10:00:40;-1;1.00;60.00", "garbage"}),
        strs({"cpu|cpu.util|10:00:40=40"}),
        strs({"unmapped_metric|1", "wrong_field_count|2", "wrong_field_count|3", "bad_timestamp|4", "invalid_line|6"}),
        strs({"SELECT status FROM import_log => data_loss",
              "SELECT column, message FROM diagnostic WHERE kind = 'bad_timestamp' => 3|cannot read timestamp "
              "\"yesterday\"; row dropped"}));
    addCase("a data row before any header",
            sadf({"h1;10;@10:00:10;-1;1.00;90.00", kCpu, "h1;10;@10:00:20;-1;1.00;80.00"}),
            strs({"cpu|cpu.util|10:00:20=20"}), strs({"invalid_line|1", "unmapped_metric|2"}));
    addCase("header only", sadf({kCpu}), {}, strs({"unmapped_metric|1"}),
            strs({"SELECT rows_read, points FROM import => 0|0", "SELECT count(*) FROM series => 0"}));
    addCase("empty file, format forced", QByteArray(), {}, {}, strs({"SELECT count(*) FROM import => 0"}), utcTz, plain,
            kFormat, str("failed"), str("empty"));
    addCase("empty file, detected", QByteArray(), {}, {}, strs({"SELECT count(*) FROM import => 0"}), utcTz, plain, {},
            str("not recognised"));
    addCase("no header at all, format forced", QByteArray("hello;world\n"), {}, {},
            strs({"SELECT count(*) FROM import => 0"}), utcTz, plain, kFormat, str("failed"),
            str("t\\.sadf:\\d+(:\\d+)?: .*header"));
}

void TestSysstatImporter::importCases()
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

    if (tz.contains(QLatin1Char('/')) && !QTimeZone(tz.toUtf8()).isValid())
        QSKIP("the time zone database of this machine lacks the zone of this case");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString name = encoding == QLatin1String("zstd")   ? str("t.sadf.zst")
                         : encoding == QLatin1String("gzip") ? str("t.sadf.gz")
                                                             : str("t.sadf");
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
        QCOMPARE(seriesText(r.db, parts[0], parts[1], Fraction::Ns), parts.mid(2).join(QLatin1Char('|')));
    }
    const QStringList found = queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id");
    if (found != diagnostics && diagnostics != strs({"*"}))
        qInfo() << queryRows(r.db, "SELECT kind, line, column, message FROM diagnostic ORDER BY id");
    if (diagnostics != strs({"*"})) QCOMPARE(found, diagnostics);
}

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
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const std::string first = test::writeFile(dir, str("a/first.sadf"), generatedSadf(50, "first").toStdString());
    QCOMPARE(outcomeName(importWith(db, first, importOptions({}, str("UTC"), {}, {})).outcome), "imported");
    const QString before = queryOne(db, kCountsSql);
    QCOMPARE(before, str("4|4|1|2|1|1"));

    const std::string zst = test::zstdCompress(generatedSadf(40000, "second").toStdString());
    const std::string path = test::writeFile(dir, str("b/sar.sadf.zst"), zst.substr(0, zst.size() / 2));
    const Imported r = importWith(db, path, importOptions({}, str("UTC"), {}, {}));
    QCOMPARE(outcomeName(r.outcome), "failed");
    const QRegularExpression located(str("sar\\.sadf\\.zst:\\d+(:\\d+)?: .*(truncated|zstd)"));
    QVERIFY2(located.match(QString::fromStdString(r.error)).hasMatch(), r.error.c_str());
    QCOMPARE(queryOne(db, kCountsSql), before);
}

void TestSysstatImporter::garbage_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format");
    const QByteArray random = randomBytes(8192, 11);
    QTest::newRow("random binary, detected") << random << QString();
    QTest::newRow("random binary, forced") << random << kFormat;
    QTest::newRow("header then random bytes") << QByteArray(kCpu) + '\n' + random << QString();
}

void TestSysstatImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(dir, str("garbage.sadf"), input.toStdString());
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format);
    const bool withHeader = input.startsWith(kCpu);
    if (format.isEmpty() && !withHeader) QVERIFY(r.importer != kFormat.toStdString());
    if (r.outcome == FileOutcome::Imported) {
        QCOMPARE(QString::fromStdString(r.importer), kFormat);
        QCOMPARE(queryOne(r.db, "SELECT status FROM import_log"), str("data_loss"));
        QCOMPARE(queryOne(r.db, "SELECT count(*) FROM series"), str("0"));
    } else {
        QVERIFY(!withHeader);
        QVERIFY(!r.error.empty());
        QCOMPARE(queryOne(r.db, "SELECT count(*) FROM import"), str("0"));
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
const char* const kSarBanner = "Linux 6.1.0-17-amd64 (gpu-7) \t01/15/26 \t_x86_64_\t(4 CPU)";

void TestSysstatImporter::sarTextCases_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("tz");
    QTest::addColumn<QStringList>("points");      // device|metric|time=value, ... (node n1)
    QTest::addColumn<QStringList>("diagnostics"); // kind|line in report order
    QTest::addColumn<QStringList>("sql");         // query => rows joined by "; "
    const QString utcTz = str("UTC");
    auto text = [](std::initializer_list<const char*> lines) {
        QByteArray out;
        for (const char* l : lines)
            out += QByteArray(l) + '\n';
        return out;
    };
    QTest::newRow("banner date; CPU and network sections; Average rows skipped")
        << text({kSarBanner, "", "10:00:00        CPU      %usr     %idle", "10:00:10        all      2.15     82.88",
                 "10:00:10          0      5.50     94.50", "10:00:20        all      2.28     95.31", "",
                 "10:00:00        IFACE   rxpck/s    rxkB/s    txkB/s",
                 "10:00:10         eth0      1.00      1.00      2.00", "", "Average:        CPU      %usr     %idle",
                 "Average:        all      2.20     89.00"})
        << utcTz
        << strs({"cpu|cpu.util|10:00:10=17.12, 10:00:20=4.69", "cpu:0|cpu.util|10:00:10=5.5",
                 "nic:eth0|net.rx|10:00:10=1024", "nic:eth0|net.tx|10:00:10=2048"})
        << strs({"unmapped_metric|3", "unmapped_metric|8"}) << strs({"SELECT rows FROM import_log => 4"});
    QTest::newRow("AM/PM times and the day rolling over at midnight")
        << text({"Linux 6.1.0 (gpu-7) \t01/15/2026 \t_x86_64_\t(4 CPU)", "", "11:59:50 PM     CPU     %user     %idle",
                 "11:59:55 PM     all      1.00     90.00", "12:00:05 AM     all      1.00     80.00",
                 "12:30:15 AM     all      1.00     70.00", "01:00:00 PM     all      1.00     60.00"})
        << utcTz
        << strs({"cpu|cpu.util|23:59:55=10, 2026-01-16T00:00:05=20, 2026-01-16T00:30:15=30, "
                 "2026-01-16T13:00:00=40"})
        << strs({"unmapped_metric|3"}) << QStringList();
    QTest::newRow("ISO banner date, --tz Europe/Berlin, decimal commas")
        << text({"Linux 6.1.0 (gpu-7) \t2026-07-01 \t_x86_64_\t(4 CPU)", "", "12:00:00        CPU      %usr     %idle",
                 "12:00:10        all      2,15     82,88"})
        << str("Europe/Berlin") << strs({"cpu|cpu.util|2026-07-01T10:00:10=17.12"}) << strs({"unmapped_metric|3"})
        << strs({"SELECT time_zone FROM node => Europe/Berlin"});
    QTest::newRow("LINUX RESTART line; a line before the banner; a line without a time")
        << text({"garbage before the banner", kSarBanner, "", "10:00:00        CPU      %usr     %idle",
                 "10:00:10        all      2.15     82.88", "", "10:05:00     LINUX RESTART\t(4 CPU)", "",
                 "10:05:00        CPU      %usr     %idle", "10:05:10        all      2.28     95.31", "oops"})
        << utcTz << strs({"cpu|cpu.util|10:00:10=17.12, 10:05:10=4.69"})
        << strs({"invalid_line|1", "unmapped_metric|4", "restart_record|7", "invalid_line|11"})
        << strs({"SELECT instr(summary, '1 LINUX RESTART line') > 0 FROM import => 1"});
    QTest::newRow("key printed last (FILESYSTEM) becomes a label")
        << text({kSarBanner, "", "10:00:00     MBfsfree  MBfsused FILESYSTEM",
                 "10:00:10          705       145 /dev/sda9", "10:00:10         2496       845 /dev/sda7"})
        << utcTz << QStringList() << strs({"unmapped_metric|3", "unmapped_metric|3"})
        << strs({"SELECT labels, max_value FROM series_summary WHERE metric = 'sar.filesystem.MBfsfree' ORDER BY "
                 "labels => filesystem=/dev/sda7|2496; filesystem=/dev/sda9|705",
                 "SELECT column FROM diagnostic ORDER BY id => 2; 3"});
}

void TestSysstatImporter::sarTextCases()
{
    if (!importerByFormat(kSar.toStdString())) QSKIP("sar-text is not registered in allImporters() yet");
    QFETCH(QByteArray, input);
    QFETCH(QString, tz);
    QFETCH(QStringList, points);
    QFETCH(QStringList, diagnostics);
    QFETCH(QStringList, sql);
    if (tz.contains(QLatin1Char('/')) && !QTimeZone(tz.toUtf8()).isValid())
        QSKIP("the time zone database of this machine lacks the zone of this case");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(dir, str("sar.txt"), input.toStdString());
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, QString(), tz);
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(QString::fromStdString(r.importer), kSar);
    for (const QString& p : points) {
        const QStringList parts = p.split(QLatin1Char('|'));
        QCOMPARE(seriesText(r.db, parts[0], parts[1], Fraction::Ns), parts.mid(2).join(QLatin1Char('|')));
    }
    const QStringList found = queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id");
    if (found != diagnostics)
        qInfo() << queryRows(r.db, "SELECT kind, line, column, message FROM diagnostic ORDER BY id");
    QCOMPARE(found, diagnostics);
    for (const QString& check : sql) {
        const qsizetype arrow = check.lastIndexOf(QStringLiteral(" => "));
        QCOMPARE(queryRows(r.db, check.left(arrow).toStdString()).join(QStringLiteral("; ")), check.mid(arrow + 4));
    }
}

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
