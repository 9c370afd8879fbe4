// dcgmi dmon import (docs/formats.md §3). There is no dcgmi capture among the fixtures: the inputs are the verbatim
// examples of docs/formats.md §3 and tables laid out the way dcgmi/DeviceMonitor.cpp prints them (label padded to
// 10, each field to its width + 8), with each quirk added.

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

const QString kFormat = QStringLiteral("dcgmi-dmon");

// docs/formats.md §3, verbatim (H800 node, llm-action docs/llm-base/dcgmi.md), command line included.
const QByteArray kH800 = lines(
    {"dcgmi dmon  -i 0  -e 1011,1012,1009,1010 -c 5",
     "#Entity   NVLTX                       NVLRX                       PCITX                       PCIRX        ",
     "ID                                                                                                         ",
     "GPU 0     N/A                         N/A                         N/A                         N/A          ",
     "GPU 0     0                           0                           498948                      1555         "});
const QStringList kH800Points =
    strs({"gpu:0|gpu.nvlink_tx|10:00:00=?, 10:00:01=0", "gpu:0|gpu.pcie_tx|10:00:00=?, 10:00:01=498948",
          "gpu:0|gpu.pcie_rx|10:00:00=?, 10:00:01=1555"});

struct Field
{
    const char* tag;
    const char* unit; // as dcgm_fields.cpp gives it: " W", " mJ", " C", "" ...
    int width;        // the field's valueFormat width
};
const std::vector<Field> kPowerFields = {
    {"POWER", " W", 10}, {"TOTEC", " mJ", 16}, {"SMCLK", "", 5}, {"TMPTR", " C", 5}, {"SMACT", "", 10}};

// A table as DeviceMonitor.cpp prints it; rows are "GPU 0|v|v|..."; a row starting with '#' is a header again.
// prefix goes before the header and unit lines (rows carry their own in their label).
QByteArray table(const std::vector<Field>& fields, std::initializer_list<const char*> rows, const char* prefix = "")
{
    QByteArray head = QByteArray(prefix) + QByteArray("#Entity").leftJustified(10);
    QByteArray units = QByteArray(prefix) + QByteArray("ID").leftJustified(10);
    for (const Field& f : fields) {
        head += QByteArray(f.tag).leftJustified(f.width + 8);
        units += QByteArray(f.unit).leftJustified(f.width + 8);
    }
    QByteArray out = head + '\n' + units + '\n';
    for (const char* r : rows) {
        if (r[0] == '#') {
            out += head + '\n' + units + '\n';
            continue;
        }
        const QList<QByteArray> cells = QByteArray(r).split('|');
        out += cells[0].leftJustified(9) + ' '; // a cell wider than its column still ends in a blank
        for (qsizetype i = 1; i < cells.size(); ++i)
            out += cells[i].leftJustified(i <= qsizetype(fields.size()) ? fields[size_t(i - 1)].width + 7 : 1) + ' ';
        out += '\n';
    }
    return out;
}

const QByteArray kPower =
    table(kPowerFields, {"GPU 0|300.000|1000000000|1980|45|0.500", "GPU 0|301.250|1000500000|1965|46|0.600",
                         "GPU 0|N/A|1001000000|1980|46|N/A"});
const QStringList kStart = strs({"start=2026-01-15T10:00:00Z"});

void addCase(const char* name, const QByteArray& input, const QStringList& points, const QStringList& diagnostics,
             const QStringList& sql = {}, const QStringList& options = kStart,
             const QString& tz = QStringLiteral("UTC"), const QString& mtime = {},
             const QString& encoding = QStringLiteral("plain"), const QString& format = {},
             const QString& outcome = QStringLiteral("imported"), const QString& error = {})
{
    QTest::newRow(name) << input << encoding << tz << options << mtime << format << outcome << error << points
                        << diagnostics << sql;
}

// 8 GPUs in descending order, as dcgmi lists them, for `intervals` intervals; the header again every 14 rows.
QByteArray eightGpus(int intervals)
{
    QByteArray out;
    int rows = 0;
    for (int i = 0; i < intervals; ++i) {
        for (int g = 7; g >= 0; --g) {
            if (rows++ % 14 == 0) out += "#Entity   NVLTX                       NVLRX\nID\n";
            out += "GPU " + QByteArray::number(g) + "     " + QByteArray::number(30570603980LL + i * 100 + g) +
                   "                 " + QByteArray::number(i) + "\n";
        }
    }
    return out;
}

} // namespace

class TestDcgmiImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void importCases_data();
    void importCases();
    void sniff_data();
    void sniff();
    void truncatedZstdLeavesDatabaseUnchanged();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
};

void TestDcgmiImporter::importCases_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("encoding"); // plain, zstd, gzip
    QTest::addColumn<QString>("tz");
    QTest::addColumn<QStringList>("options"); // key=value
    QTest::addColumn<QString>("mtime");       // the file's modification time, ISO 8601
    QTest::addColumn<QString>("format");      // forced format, or empty to detect
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<QString>("error");           // regular expression the fatal error must match
    QTest::addColumn<QStringList>("points");      // kind:name|metric|time=value, ...
    QTest::addColumn<QStringList>("diagnostics"); // kind|line in report order
    QTest::addColumn<QStringList>("sql");         // query => rows joined by "; "

    const QString utcTz = str("UTC");
    const QStringList h800Sql = strs({"SELECT rows_read, points FROM import => 2|8",
                                      "SELECT metric, unit, raw_name, missing_points FROM series_summary ORDER BY "
                                      "metric => gpu.nvlink_rx|bytes/s|NVLRX|1; gpu.nvlink_tx|bytes/s|NVLTX|1; "
                                      "gpu.pcie_rx|bytes/s|PCIRX|1; gpu.pcie_tx|bytes/s|PCITX|1"});
    const QStringList powerPoints = strs({"gpu:0|gpu.power|10:00:00=300, 10:00:01=301.25, 10:00:02=?",
                                          "gpu:0|gpu.energy_power|10:00:01=500, 10:00:02=500",
                                          "gpu:0|gpu.sm_clock|10:00:00=1980000000, "
                                          "10:00:01=1965000000, 10:00:02=1980000000",
                                          "gpu:0|gpu.temp|10:00:00=45, 10:00:01=46, 10:00:02=46",
                                          "gpu:0|gpu.sm_active|10:00:00=0.5, 10:00:01=0.6, 10:00:02=?"});

    addCase("FORMATS §3 verbatim: command line, N/A first sample", kH800, kH800Points, strs({"comment_line|1"}),
            h800Sql);
    addCase("8 GPUs descending, header every 14 rows: a GPU repeating starts the next interval", eightGpus(3),
            strs({"gpu:7|gpu.nvlink_rx|10:00:00=0, 10:00:01=1, 10:00:02=2",
                  "gpu:0|gpu.nvlink_rx|10:00:00=0, 10:00:01=1, 10:00:02=2",
                  "gpu:3|gpu.nvlink_tx|10:00:00=30570603983, 10:00:01=30570604083, 10:00:02=30570604183"}),
            {},
            strs({"SELECT count(*), sum(points) FROM series_summary => 16|48",
                  "SELECT summary LIKE '%devices: 8 gpu%header repeated 1 times%' FROM import => 1"}));
    addCase("units aligned with the header (blank for SMCLK), TOTEC mJ counter as W", kPower, powerPoints, {},
            strs({"SELECT metric, unit FROM series_summary ORDER BY metric => gpu.energy_power|W; gpu.power|W; "
                  "gpu.sm_active|ratio; gpu.sm_clock|Hz; gpu.temp|C"}));
    addCase("TOTEC going down is a counter reset",
            table({{"TOTEC", " mJ", 16}}, {"GPU 0|1000", "GPU 0|2000", "GPU 0|500", "GPU 0|N/A", "GPU 0|1500"}),
            strs({"gpu:0|gpu.energy_power|10:00:01=1, 10:00:02=0.5, 10:00:03=?, 10:00:04=0.5"}),
            strs({"counter_reset|5"}));
    addCase("DCGM blank sentinels as int and double",
            table({{"GPUTL", "", 5}, {"POWER", " W", 10}},
                  {"GPU 0|9223372036854775792|140737488355328.000", "GPU 0|9223372036854775794|140737488355330.000",
                   "GPU 0|97|250.125"}),
            strs({"gpu:0|gpu.util|10:00:00=?, 10:00:01=?, 10:00:02=97",
                  "gpu:0|gpu.power|10:00:00=?, 10:00:01=?, 10:00:02=250.125"}),
            strs({"sentinel_value|3", "sentinel_value|3", "sentinel_value|4", "sentinel_value|4"}),
            strs({"SELECT DISTINCT [column] FROM diagnostic ORDER BY 1 => 3; 4"}));
    addCase("interval=500ms", kH800, strs({"gpu:0|gpu.pcie_tx|10:00:00=?, 10:00:00.500=498948"}),
            strs({"comment_line|1"}), {}, strs({"start=2026-01-15T10:00:00Z", "interval=500ms"}));
    addCase("interval=250 is milliseconds, as dcgmi -d", kH800,
            strs({"gpu:0|gpu.pcie_tx|10:00:00=?, 10:00:00.250=498948"}), strs({"comment_line|1"}), {},
            strs({"start=2026-01-15T10:00:00Z", "interval=250"}));
    addCase("interval=2s, start= local in --tz +02:00", kH800, strs({"gpu:0|gpu.pcie_tx|08:00:00=?, 08:00:02=498948"}),
            strs({"comment_line|1"}), {}, strs({"start=2026-01-15T10:00:00", "interval=2s"}), str("+02:00"));
    addCase("no start=: the last interval at the file's modification time (estimate)", kH800,
            strs({"gpu:0|gpu.pcie_tx|10:00:04.250=?, 10:00:05.250=498948"}),
            strs({"comment_line|1", "estimated_time|4"}),
            strs({"SELECT summary LIKE '%2 intervals of 1000 ms%modification time 2026-01-15T10:00:05.250Z%estimate%' "
                  "FROM import => 1"}),
            {}, utcTz, str("2026-01-15T10:00:05.250Z"));
    addCase("awk strftime wall clock before every line, --tz +02:00",
            table(kPowerFields,
                  {"2026-01-15 12:00:01 GPU 0|300.000|1000000000|1980|45|0.500",
                   "2026-01-15 12:00:03 GPU 0|301.250|1001000000|1965|46|0.600"},
                  "2026-01-15 12:00:01 "),
            strs({"gpu:0|gpu.power|10:00:01=300, 10:00:03=301.25", "gpu:0|gpu.energy_power|10:00:03=500"}), {},
            strs({"SELECT summary LIKE '%wall clock before each row read in time zone UTC+02:00%' FROM import => 1"}),
            {}, str("+02:00"));
    addCase("wall clock in brackets, with milliseconds",
            lines({"[2026-01-15 10:00:01.250] #Entity   GPUTL", "[2026-01-15 10:00:01.250] ID",
                   "[2026-01-15 10:00:01.250] GPU 1     7", "[2026-01-15 10:00:02.250] GPU 1     8"}),
            strs({"gpu:1|gpu.util|10:00:01.250=7, 10:00:02.250=8"}), {}, {}, {});
    addCase("wall clock as epoch seconds, only on rows",
            lines({"#Entity   GPUTL", "ID", "1768471201 GPU 0     7", "1768471202 GPU 0     8"}),
            strs({"gpu:0|gpu.util|10:00:01=7, 10:00:02=8"}), {}, {}, {});
    addCase("epoch milliseconds beyond the years a timestamp holds: the row is not read",
            lines({"#Entity   GPUTL", "ID", "1768471201000 GPU 0     7", "99999999999999 GPU 0     8",
                   "1768471203000 GPU 0     9"}),
            strs({"gpu:0|gpu.util|10:00:01=7, 10:00:03=9"}), strs({"invalid_line|4"}), {}, {});
    addCase("a row without the wall clock the others have",
            lines({"#Entity   GPUTL", "ID", "2026-01-15 10:00:01 GPU 0     7", "GPU 0     8",
                   "2026-01-15 10:00:03 GPU 0     9"}),
            strs({"gpu:0|gpu.util|10:00:01=7, 10:00:03=9"}), strs({"bad_timestamp|4"}), {}, {});
    addCase("MIG and NVLink entities as their own devices",
            lines({"#Entity   SMACT", "ID", "GPU 0     0.100", "GPU-I 1   0.200", "GPU-CI 2  0.300",
                   "GPU 0 LINK 3  0.400", "GPU 0     0.500", "GPU-I 1   0.600"}),
            strs({"gpu:0|gpu.sm_active|10:00:00=0.1, 10:00:01=0.5", "gpu-i:1|gpu.sm_active|10:00:00=0.2, 10:00:01=0.6",
                  "gpu-ci:2|gpu.sm_active|10:00:00=0.3", "nvlink:0/3|gpu.sm_active|10:00:00=0.4"}),
            {}, strs({"SELECT kind, name FROM device ORDER BY kind, name => gpu|0; gpu-ci|2; gpu-i|1; nvlink|0/3"}));
    addCase("unmapped field kept as dcgm.<TAG> with its unit",
            table({{"GPUTL", "", 5}, {"XYZAB", "KB/s", 7}}, {"GPU 0|5|12"}), strs({"gpu:0|dcgm.XYZAB|10:00:00=12"}),
            strs({"unmapped_metric|1"}),
            strs({"SELECT metric, unit, raw_name FROM series WHERE metric LIKE 'dcgm.%' => dcgm.XYZAB|KB/s|XYZAB"}));
    addCase("header repeated with other fields",
            lines({"#Entity   GPUTL", "ID", "GPU 0     5", "#Entity   GPUTL  POWER", "ID               W",
                   "GPU 0     6      250.000"}),
            strs({"gpu:0|gpu.util|10:00:00=5, 10:00:01=6", "gpu:0|gpu.power|10:00:01=250"}),
            strs({"repeated_header|4"}));
    addCase("wrong field count",
            lines({"#Entity   GPUTL  POWER", "ID", "GPU 0     5", "GPU 0     6  1.000  2", "GPU 0     7      250.000"}),
            strs({"gpu:0|gpu.util|10:00:00=7"}), strs({"wrong_field_count|3", "wrong_field_count|4"}),
            strs({"SELECT rows, status FROM import_log => 3|data_loss"}));
    addCase("non-numeric, NaN and a value cut by dcgmi's column width",
            lines({"#Entity   GPUTL  POWER", "ID", "GPU 0     abc    nan", "GPU 0     9      12345678..."}),
            strs({"gpu:0|gpu.util|10:00:00=?, 10:00:01=9", "gpu:0|gpu.power|10:00:00=?, 10:00:01=?"}),
            strs({"bad_number|3", "nan_value|3", "bad_number|4"}),
            strs({"SELECT line, column FROM diagnostic ORDER BY id => 3|3; 3|4; 4|4"}));
    addCase("a line that is not a row; the stop message is a note",
            lines({"#Entity   GPUTL", "ID", "GPU 0     5", "Error getting values information. Return -3", "GPU 0     6",
                   "", "", "dmon was stopped do to receiving a signal"}),
            strs({"gpu:0|gpu.util|10:00:00=5, 10:00:01=6"}), strs({"invalid_line|4"}),
            strs({"SELECT summary LIKE '%stopped by a signal%' FROM import => 1"}));
    addCase("crlf line endings", QByteArray(kH800).replace("\n", "\r\n"), kH800Points, strs({"comment_line|1"}));
    addCase("no trailing newline", kH800.chopped(1), kH800Points, strs({"comment_line|1", "truncated_last_line|5"}));
    addCase("header only", lines({"#Entity   GPUTL", "ID"}), {}, {},
            strs({"SELECT rows_read, points FROM import => 0|0", "SELECT count(*) FROM series => 0"}));
    addCase("empty file, format forced", QByteArray(), {}, {}, strs({"SELECT count(*) FROM import => 0"}), kStart,
            utcTz, {}, str("plain"), kFormat, str("failed"), str("empty"));
    addCase("empty file, detected", QByteArray(), {}, {}, {}, kStart, utcTz, {}, str("plain"), {},
            str("not recognised"));
    addCase("rows before the header, format forced", lines({"GPU 0     5", "#Entity   GPUTL"}), {}, {},
            strs({"SELECT count(*) FROM import => 0"}), kStart, utcTz, {}, str("plain"), kFormat, str("failed"),
            str("t\\.txt:1(:\\d+)?: .*header"));
    addCase("bad interval= is a usage error", kH800, {}, {}, {}, strs({"interval=-5ms"}), utcTz, {}, str("plain"), {},
            str("failed"), str("interval=-5ms"));
    addCase("zstd compressed", kH800, kH800Points, strs({"comment_line|1"}), h800Sql, kStart, utcTz, {}, str("zstd"));
    addCase("gzip compressed", kH800, kH800Points, strs({"comment_line|1"}), h800Sql, kStart, utcTz, {}, str("gzip"));
    addCase("gzip, no start=: the second reading counts the same intervals", kH800,
            strs({"gpu:0|gpu.pcie_tx|10:00:04=?, 10:00:05=498948"}), strs({"comment_line|1", "estimated_time|4"}), {},
            {}, utcTz, str("2026-01-15T10:00:05Z"), str("gzip"));
}

void TestDcgmiImporter::importCases()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, encoding);
    QFETCH(QString, tz);
    QFETCH(QStringList, options);
    QFETCH(QString, mtime);
    QFETCH(QString, format);
    QFETCH(QString, outcome);
    QFETCH(QString, error);
    QFETCH(QStringList, points);
    QFETCH(QStringList, diagnostics);
    QFETCH(QStringList, sql);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString name = encoding == QLatin1String("zstd")   ? str("t.txt.zst")
                         : encoding == QLatin1String("gzip") ? str("t.txt.gz")
                                                             : str("t.txt");
    const std::string path = test::writeFile(dir, name, encode(input, encoding));
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format, tz, options, mtime);
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
        QCOMPARE(seriesText(r.db, parts[0], parts[1]), parts.mid(2).join(QLatin1Char('|')));
    }
    const QStringList found = queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id");
    if (found != diagnostics)
        qInfo() << queryRows(r.db, "SELECT kind, line, column, message FROM diagnostic ORDER BY id");
    QCOMPARE(found, diagnostics);
}

void TestDcgmiImporter::sniff_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<QString>("expected"); // the format detected, or empty
    QTest::newRow("with the command line first") << kH800 << kFormat;
    QTest::newRow("header and ID line") << kPower << kFormat;
    QTest::newRow("awk strftime prefix") << table(kPowerFields, {}, "2026-01-15 12:00:01 ") << kFormat;
    QTest::newRow("nvidia-smi dmon is not claimed")
        << lines({"# gpu pwr sm", "# Idx W %", "0 80 5"}) << str("nvidia-smi-dmon");
    QTest::newRow("an #Entity line later in the file") << lines({"hello", "#Entity GPUTL"}) << QString();
}

void TestDcgmiImporter::sniff()
{
    QFETCH(QByteArray, head);
    QFETCH(QString, expected);
    const SniffInput in{std::string_view(head.constData(), size_t(head.size())), "x.txt"};
    const auto [importer, score] = detectFormat(in);
    QCOMPARE(importer ? QString::fromUtf8(importer->format().data(), qsizetype(importer->format().size())) : QString(),
             expected);
    if (expected == kFormat) QVERIFY(score >= 90);
}

void TestDcgmiImporter::truncatedZstdLeavesDatabaseUnchanged()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const char* const counts =
        "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM point_chunk), (SELECT "
        "count(*) FROM import), (SELECT count(*) FROM device), (SELECT count(*) FROM diagnostic)";
    const std::string first = test::writeFile(dir, str("a/first.txt"), kH800.toStdString());
    QCOMPARE(outcomeName(importPath(db, first, QString(), str("UTC"), kStart).outcome), "imported");
    const QString before = queryOne(db, counts);
    QCOMPARE(before, str("4|4|1|1|1"));

    const std::string zst = test::zstdCompress(eightGpus(20000).toStdString());
    const std::string path = test::writeFile(dir, str("b/dcgm.txt.zst"), zst.substr(0, zst.size() / 2));
    for (const QStringList& options : {kStart, QStringList()}) { // without start= the second reading fails first
        const Imported r = importPath(db, path, QString(), str("UTC"), options);
        QCOMPARE(outcomeName(r.outcome), "failed");
        const QRegularExpression located(str("dcgm\\.txt\\.zst:\\d+(:\\d+)?: .*(truncated|zstd)"));
        QVERIFY2(located.match(QString::fromStdString(r.error)).hasMatch(), r.error.c_str());
        QCOMPARE(queryOne(db, counts), before);
    }
}

void TestDcgmiImporter::garbage_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format");
    const QByteArray random = randomBytes(8192, 13);
    QTest::newRow("random binary, detected") << random << QString();
    QTest::newRow("random binary, forced") << random << kFormat;
    QTest::newRow("header then random bytes") << lines({"#Entity   GPUTL", "ID"}) + random << QString();
}

void TestDcgmiImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(dir, str("garbage.txt"), input.toStdString());
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format, str("UTC"), kStart);
    const bool withHeader = input.startsWith("#Entity");
    if (format.isEmpty() && !withHeader) QVERIFY(r.importer != kFormat.toStdString());
    if (r.outcome == FileOutcome::Imported) {
        QVERIFY(withHeader);
        QVERIFY(queryOne(r.db, "SELECT diagnostics FROM import").toInt() > 0);
        QCOMPARE(queryOne(r.db, "SELECT status FROM import_log"), str("data_loss"));
    } else {
        QVERIFY(!withHeader);
        QVERIFY(!r.error.empty());
        QCOMPARE(queryOne(r.db, "SELECT count(*) FROM import"), str("0"));
    }
}

void TestDcgmiImporter::tenMegabyteLine()
{
    constexpr int kBytes = 10 << 20;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // Line 4: 10 MB of one field; line 5: a 10 MB value.
    std::string input = lines({"#Entity   GPUTL  POWER", "ID", "GPU 0     5      100.000"}).toStdString() +
                        std::string(kBytes, 'x') + "\nGPU 0     6      " + std::string(kBytes, '7') + "y\n" +
                        "GPU 0     7      102.000\n";
    const std::string path = test::writeFile(dir, str("huge.txt"), input);
    input.clear();
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, QString(), str("UTC"), kStart);
    QCOMPARE(outcomeName(r.outcome), "imported");
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
             strs({"invalid_line|4", "bad_number|5"}));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.util")), str("10:00:00=5, 10:00:01=6, 10:00:02=7"));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.power")), str("10:00:00=100, 10:00:01=?, 10:00:02=102"));
    const int longest = queryOne(r.db, "SELECT max(length(message)) FROM diagnostic").toInt();
    QVERIFY2(longest < 1000, qPrintable(QStringLiteral("a diagnostic message of %1 characters").arg(longest)));
}

QTEST_MAIN(TestDcgmiImporter)
#include "tst_importers_dcgmi.moc"
