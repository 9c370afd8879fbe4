// nvidia-smi dmon import (docs/formats.md §2): generated inputs for each behaviour and quirk, then the real fixtures
// checked against an independent count of their rows per GPU.

#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>
#include <map>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

const QString kFormat = QStringLiteral("nvidia-smi-dmon");

const char* const kCountsSql = "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM point_chunk), "
                               "(SELECT count(*) FROM import), (SELECT count(*) FROM device), "
                               "(SELECT count(*) FROM diagnostic)";

// Default `nvidia-smi dmon` (-s puc, no time columns), two GPUs, two intervals, trailing spaces as dmon prints.
const QByteArray kPuc = lines({"# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk ",
                               "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz ",
                               "    0    631     63     57    100     10      0      0      0      0   2619   1980 ",
                               "    1    105     38     36     49      0      0      0      0      0   2619    345 ",
                               "    0    630     64     57     99     11      0      0      0      0   2619   1965 ",
                               "    1     80     38     36      0      0      0      0      0      0   2619    345 "});
const char* const kDtHeader = "#Date       Time        gpu    pwr     sm     fb  rxpci ";
const char* const kDtUnits = "#YYYYMMDD   HH:MM:SS    Idx      W      %     MB   MB/s ";
const QByteArray kDt = lines({kDtHeader, kDtUnits, " 20260115   12:00:01      0     80      5      1      5 ",
                              " 20260115   12:00:02      0     81      6      2      6 "});
const char* const kDtUtil = "0|gpu.util|10:00:01=5, 10:00:02=6";
const char* const kTHeader = "#Time        gpu     sm ";
const char* const kTUnits = "#HH:MM:SS    Idx      % ";

void addCase(const char* name, const QByteArray& input, const QStringList& points, const QStringList& diagnostics,
             const QStringList& sql = {}, const QStringList& options = {}, const QString& tz = QStringLiteral("UTC"),
             const QString& mtime = {}, const QString& encoding = QStringLiteral("plain"), const QString& format = {},
             const QString& outcome = QStringLiteral("imported"), const QString& error = {})
{
    QTest::newRow(name) << input << encoding << tz << options << mtime << format << outcome << error << points
                        << diagnostics << sql;
}

// An independent reading of a dmon file: data rows per GPU, and per GPU the '-' cells of one column.
struct Reference
{
    std::map<QString, int> rows, dashes;
};
Reference referenceRows(const QByteArray& text, const QString& dashColumn)
{
    Reference ref;
    QStringList header;
    for (const QByteArray& raw : text.split('\n')) {
        const QStringList f = QString::fromUtf8(raw).simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (f.isEmpty()) continue;
        if (f[0].startsWith(QLatin1Char('#'))) {
            QStringList names = f;
            names[0] = names[0].mid(1);
            if (names[0].isEmpty()) names.removeFirst();
            if (names.contains(str("gpu"))) header = names;
            continue;
        }
        const qsizetype gpu = header.indexOf(str("gpu"));
        const qsizetype dash = header.indexOf(dashColumn);
        ++ref.rows[f.value(gpu)];
        if (dash >= 0 && f.value(dash) == QLatin1String("-")) ++ref.dashes[f.value(gpu)];
    }
    return ref;
}

} // namespace

class TestDmonImporter : public QObject
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
    void realFixtures_data();
    void realFixtures();
};

void TestDmonImporter::importCases_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("encoding"); // plain, zstd, gzip
    QTest::addColumn<QString>("tz");
    QTest::addColumn<QStringList>("options"); // key=value
    QTest::addColumn<QString>("mtime");       // the file's modification time, ISO 8601
    QTest::addColumn<QString>("format");      // forced format, or empty to detect
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<QString>("error");           // regular expression the fatal error must match
    QTest::addColumn<QStringList>("points");      // gpu|metric|time=value, ...
    QTest::addColumn<QStringList>("diagnostics"); // kind|line in report order
    QTest::addColumn<QStringList>("sql");         // query => rows joined by "; "

    const QString utcTz = str("UTC");
    const QStringList start = strs({"start=2026-01-15T10:00:00", "interval=2"});
    const QStringList pucPoints = strs({"0|gpu.util|10:00:00=100, 10:00:02=99", "1|gpu.util|10:00:00=49, 10:00:02=0",
                                        "0|gpu.power|10:00:00=631, 10:00:02=630", "1|gpu.temp|10:00:00=38, 10:00:02=38",
                                        "0|gpu.sm_clock|10:00:00=1980000000, 10:00:02=1965000000",
                                        "1|gpu.mem_clock|10:00:00=2619000000, "
                                        "10:00:02=2619000000"});
    const QStringList pucSql =
        strs({"SELECT rows_read, points FROM import => 4|44", "SELECT count(*) FROM device WHERE kind = 'gpu' => 2",
              "SELECT metric, unit, raw_name FROM series_summary WHERE device = 'gpu:0' AND "
              "metric IN ('gpu.util', 'gpu.sm_clock') ORDER BY metric => "
              "gpu.sm_clock|Hz|pclk; gpu.util|%|sm"});

    addCase("default -s puc, no time columns, start= and interval=2", kPuc, pucPoints, {}, pucSql, start);
    addCase("start= as epoch seconds", kPuc, strs({"0|gpu.util|10:00:00=100, 10:00:01=99"}), {}, {},
            strs({"start=1768471200"}));
    addCase("start= with an offset ignores --tz", kPuc, strs({"0|gpu.util|10:00:00=100, 10:00:01=99"}), {}, {},
            strs({"start=2026-01-15T12:00:00+02:00"}), str("-05:00"));
    addCase("start= local in --tz +02:00", kPuc, strs({"0|gpu.util|08:00:00=100, 08:00:01=99"}), {}, {},
            strs({"start=2026-01-15 10:00:00"}), str("+02:00"));
    addCase("no time, no start=: last interval at the file's modification time (estimate)", kPuc,
            strs({"0|gpu.util|10:00:04=100, 10:00:05=99", "1|gpu.util|10:00:04=49, 10:00:05=0"}),
            strs({"estimated_time|3"}),
            strs({"SELECT summary LIKE '%2 intervals of 1 s%modification time 2026-01-15T10:00:05.000Z%estimate%' "
                  "FROM import => 1"}),
            {}, utcTz, str("2026-01-15T10:00:05.700Z"));
    addCase("a GPU repeating starts the next interval, GPUs in any order",
            lines({"# gpu sm", "# Idx %", "3 1", "1 2", "1 3", "3 4", "1 5"}),
            strs({"3|gpu.util|10:00:00=1, 10:00:01=4", "1|gpu.util|10:00:00=2, 10:00:01=3, 10:00:02=5"}), {}, {},
            strs({"start=2026-01-15T10:00:00Z"}));
    addCase("-o DT naive local time, --tz +02:00", kDt, strs({kDtUtil}), {},
            strs({"SELECT summary LIKE '%local times read in time zone UTC+02:00%' FROM import => 1"}), {},
            str("+02:00"));
    addCase("-o DT with --tz Europe/Berlin (winter)", kDt, strs({"0|gpu.util|11:00:01=5, 11:00:02=6"}), {}, {}, {},
            str("Europe/Berlin"));
    addCase(
        "fb in MB is MiB, rxpci MB/s is 10^6 B/s", kDt,
        strs({"0|gpu.mem_used|10:00:01=1048576, 10:00:02=2097152", "0|gpu.pcie_rx|10:00:01=5000000, 10:00:02=6000000"}),
        {}, {}, {}, str("+02:00"));
    addCase("-o T with date= and a midnight",
            lines({kTHeader, kTUnits, "23:59:59 0 1", "00:00:00 0 2", "00:00:01 0 3"}),
            strs({"0|gpu.util|2026-01-14T23:59:59=1, 00:00:00=2, 00:00:01=3"}), {}, {}, strs({"date=2026-01-14"}));
    addCase("-o T without date=: dated from the modification time (estimate)",
            lines({kTHeader, kTUnits, "23:59:58 0 1", "23:59:59 0 2", "00:00:00 0 3"}),
            strs({"0|gpu.util|2026-01-14T23:59:58=1, 2026-01-14T23:59:59=2, 00:00:00=3"}), strs({"estimated_time|3"}),
            strs({"SELECT summary LIKE '%first row dated 2026-01-14%estimate%' FROM import => 1"}), {}, utcTz,
            str("2026-01-15T00:00:30Z"));
    addCase("-o T without date=, modified the day after the last row",
            lines({kTHeader, kTUnits, "22:00:00 0 1", "22:00:01 0 2"}),
            strs({"0|gpu.util|2026-01-14T22:00:00=1, 2026-01-14T22:00:01=2"}), strs({"estimated_time|3"}), {}, {},
            utcTz, str("2026-01-15T00:10:00Z"));
    addCase("GPM columns: '-' first samples, GPM:% stored as 0-1",
            lines({"#Date        Time         gpu     sm      gract     smutil     mmaact ",
                   "#YYYYMMDD    HH:MM:SS     Idx      %      GPM:%      GPM:%      GPM:% ",
                   " 20260115    10:00:01       0     99          -          -          - ",
                   " 20260115    10:00:02       0     99         97         21          - ",
                   " 20260115    10:00:03       0    100        100         38         13 "}),
            strs({"0|gpu.sm_active|10:00:01=?, 10:00:02=0.21, 10:00:03=0.38",
                  "0|gpu.tensor_active|10:00:01=?, 10:00:02=?, 10:00:03=0.13",
                  "0|gpu.gr_active|10:00:01=?, 10:00:02=0.97, 10:00:03=1"}),
            {},
            strs({"SELECT metric, unit, points, missing_points FROM series_summary ORDER BY metric => "
                  "gpu.gr_active|ratio|3|1; gpu.sm_active|ratio|3|1; gpu.tensor_active|ratio|3|2; gpu.util|%|3|0"}));
    addCase("header repeated (identical) is re-read silently",
            lines({kDtHeader, kDtUnits, " 20260115 12:00:01 0 80 5 1 5", kDtHeader, kDtUnits,
                   " 20260115 12:00:02 0 81 6 2 6", kDtHeader, kDtUnits}),
            strs({kDtUtil}), {},
            strs({"SELECT rows_read FROM import => 2", "SELECT summary LIKE '%header repeated 2 times%' FROM import "
                                                       "=> 1"}),
            {}, str("+02:00"));
    addCase("header repeated with other columns",
            lines({kDtHeader, kDtUnits, " 20260115 12:00:01 0 80 5 1 5", "#Date Time gpu sm mclk",
                   "#YYYYMMDD HH:MM:SS Idx % MHz", " 20260115 12:00:02 0 6 1593"}),
            strs({kDtUtil, "0|gpu.power|10:00:01=80", "0|gpu.mem_clock|10:00:02=1593000000"}),
            strs({"repeated_header|4"}), {}, {}, str("+02:00"));
    addCase("older driver -s pucet -o DT: no jpg/ofa, ecc and pci columns",
            lines({"#Date       Time        gpu   pwr gtemp mtemp    sm   mem   enc   dec  mclk  pclk sbecc dbecc   "
                   "pci rxpci txpci",
                   "#YYYYMMDD   HH:MM:SS    Idx     W     C     C     %     %     %     %   MHz   MHz  errs  errs  "
                   "errs  MB/s  MB/s",
                   " 20260115   10:00:01      0    60    40     -    12     3     0     0  5001  1380     0     0     "
                   "0    11    22"}),
            strs({"0|gpu.mem_temp|10:00:01=?", "0|gpu.ecc_single_bit|10:00:01=0", "0|gpu.pcie_tx|10:00:01=22000000"}),
            {}, strs({"SELECT count(*) FROM series => 14"}));
    addCase("blank lines, tabs and trailing spaces", QByteArray(kDt).replace("   ", "\t").insert(0, "\n  \n") + "\n \n",
            strs({kDtUtil}), {}, {}, {}, str("+02:00"));
    addCase("crlf line endings", QByteArray(kDt).replace("\n", "\r\n"), strs({kDtUtil}), {}, {}, {}, str("+02:00"));
    addCase("no trailing newline", kDt.chopped(1), strs({kDtUtil}), strs({"truncated_last_line|4"}), {}, {},
            str("+02:00"));
    addCase("unmapped column kept as dmon.<name> with its unit", lines({"# gpu sm xyz", "# Idx % W", "0 5 1.5"}),
            strs({"0|dmon.xyz|10:00:00=1.5"}), strs({"unmapped_column|1"}),
            strs({"SELECT metric, unit, raw_name FROM series WHERE metric LIKE 'dmon.%' => dmon.xyz|W|xyz"}),
            strs({"start=2026-01-15T10:00:00Z"}));
    addCase("rxpci and GPM pcirx: the second keeps its raw name",
            lines({"# gpu rxpci pcirx", "# Idx MB/s GPM:MiB/s", "0 1 1"}), {}, {},
            strs({"SELECT metric, max_value FROM series_summary ORDER BY metric => dmon.pcirx|1048576; "
                  "gpu.pcie_rx|1000000"}),
            strs({"start=2026-01-15T10:00:00Z"}));
    addCase("comment line", lines({kDtHeader, kDtUnits, "# a note", " 20260115 12:00:01 0 80 5 1 5"}),
            strs({"0|gpu.util|10:00:01=5"}), strs({"comment_line|3"}), {}, {}, str("+02:00"));
    addCase("wrong field count",
            lines({kDtHeader, kDtUnits, " 20260115 12:00:01 0 80 5 1", " 20260115 12:00:02 0 81 6 2 6 7",
                   " 20260115 12:00:03 0 82 7 3 7"}),
            strs({"0|gpu.util|10:00:03=7"}), strs({"wrong_field_count|3", "wrong_field_count|4"}),
            strs({"SELECT rows, status FROM import_log => 3|data_loss"}), {}, str("+02:00"));
    addCase("non-numeric value stored as missing", lines({kDtHeader, kDtUnits, " 20260115 12:00:01 0 80 1OO 1 5"}),
            strs({"0|gpu.util|10:00:01=?", "0|gpu.power|10:00:01=80"}), strs({"bad_number|3"}),
            strs({"SELECT column FROM diagnostic => 5"}), {}, str("+02:00"));
    addCase("NaN and inf",
            lines({kDtHeader, kDtUnits, " 20260115 12:00:01 0 nan 5 1 5", " 20260115 12:00:02 0 inf 6 1 5"}),
            strs({"0|gpu.power|10:00:01=?, 10:00:02=?"}), strs({"nan_value|3", "nan_value|4"}), {}, {}, str("+02:00"));
    addCase("a utilization above 100 % (a GPM counter's first sample) stored as missing",
            lines({kDtHeader, kDtUnits, " 20260115 12:00:01 0 80 104131 1 5", " 20260115 12:00:02 0 81 100 1 5"}),
            strs({"0|gpu.util|10:00:01=?, 10:00:02=100"}), strs({"implausible_value|3"}), {}, {}, str("+02:00"));
    addCase("bad GPU index",
            lines({kDtHeader, kDtUnits, " 20260115 12:00:01 x 80 5 1 5", " 20260115 12:00:02 0 81 6 2 6"}),
            strs({"0|gpu.util|10:00:02=6"}), strs({"invalid_line|3"}), {}, {}, str("+02:00"));
    addCase("bad date and bad time",
            lines({kDtHeader, kDtUnits, " 20261399 12:00:01 0 80 5 1 5", " 20260115 25:00:01 0 80 5 1 5",
                   " 20260115 12:00:02 0 81 6 2 6"}),
            strs({"0|gpu.util|10:00:02=6"}), strs({"bad_timestamp|3", "bad_timestamp|4"}), {}, {}, str("+02:00"));
    addCase("backwards time for one GPU",
            lines({kDtHeader, kDtUnits, " 20260115 12:00:02 0 80 5 1 5", " 20260115 12:00:01 0 80 9 1 5",
                   " 20260115 12:00:01 1 80 7 1 5", " 20260115 12:00:03 0 81 6 2 6"}),
            strs({"0|gpu.util|10:00:02=5, 10:00:03=6", "1|gpu.util|10:00:01=7"}), strs({"backwards_time|4"}), {}, {},
            str("+02:00"));
    addCase("header only", lines({kDtHeader, kDtUnits}), {}, {},
            strs({"SELECT rows_read, points FROM import => 0|0", "SELECT count(*) FROM series => 0"}));
    addCase("empty file, format forced", QByteArray(), {}, {}, strs({"SELECT count(*) FROM import => 0"}), {}, utcTz,
            {}, str("plain"), kFormat, str("failed"), str("empty"));
    addCase("empty file, detected", QByteArray(), {}, {}, {}, {}, utcTz, {}, str("plain"), {}, str("not recognised"));
    addCase("data before the header, format forced", lines({" 0 80 5", kDtHeader}), {}, {},
            strs({"SELECT count(*) FROM import => 0"}), {}, utcTz, {}, str("plain"), kFormat, str("failed"),
            str("t\\.txt:1(:\\d+)?: .*header"));
    addCase("bad interval= is a usage error", kPuc, {}, {}, {}, strs({"interval=fast"}), utcTz, {}, str("plain"), {},
            str("failed"), str("interval=fast"));
    addCase("bad start= is a usage error", kPuc, {}, {}, {}, strs({"start=yesterday"}), utcTz, {}, str("plain"), {},
            str("failed"), str("start=yesterday"));
    addCase("zstd compressed", kPuc, pucPoints, {}, pucSql, start, utcTz, {}, str("zstd"));
    addCase("gzip compressed", kPuc, pucPoints, {}, pucSql, start, utcTz, {}, str("gzip"));
    addCase("zstd, no start=: the second reading counts the same intervals", kPuc,
            strs({"0|gpu.util|10:00:04=100, 10:00:05=99"}), strs({"estimated_time|3"}), {}, {}, utcTz,
            str("2026-01-15T10:00:05Z"), str("zstd"));
}

void TestDmonImporter::importCases()
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

    if (tz.contains(QLatin1Char('/')) && !QTimeZone(tz.toUtf8()).isValid())
        QSKIP("the time zone database of this machine lacks the zone of this case");
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
        QCOMPARE(seriesText(r.db, str("gpu:") + parts[0], parts[1]), parts.mid(2).join(QLatin1Char('|')));
    }
    const QStringList found = queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id");
    if (found != diagnostics)
        qInfo() << queryRows(r.db, "SELECT kind, line, column, message FROM diagnostic ORDER BY id");
    QCOMPARE(found, diagnostics);
}

void TestDmonImporter::sniff_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<QString>("expected"); // the format detected, or empty
    QTest::newRow("default header and unit row") << kPuc << kFormat;
    QTest::newRow("-o DT header") << kDt << kFormat;
    QTest::newRow("header without unit row") << lines({"# gpu pwr sm", "0 80 5"}) << kFormat;
    QTest::newRow("blank lines first") << QByteArray("\n\n" + kDt) << kFormat;
    QTest::newRow("dcgmi dmon is not claimed") << lines({"#Entity   NVLTX                       NVLRX", "ID",
                                                         "GPU 7     30570603980                 30638829242"})
                                               << str("dcgmi-dmon");
    QTest::newRow("a comment naming gpu but no dmon column") << lines({"# gpu notes", "hello"}) << QString();
    QTest::newRow("nvidia-smi query CSV")
        << lines({"timestamp, index, utilization.gpu [%]"}) << str("nvidia-smi-query-csv");
}

void TestDmonImporter::sniff()
{
    QFETCH(QByteArray, head);
    QFETCH(QString, expected);
    const SniffInput in{std::string_view(head.constData(), size_t(head.size())), "x.txt"};
    const auto [importer, score] = detectFormat(in);
    QCOMPARE(importer ? QString::fromUtf8(importer->format().data(), qsizetype(importer->format().size())) : QString(),
             expected);
    if (expected == kFormat) QVERIFY(score >= 75);
}

void TestDmonImporter::truncatedZstdLeavesDatabaseUnchanged()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const std::string first = test::writeFile(dir, str("a/first.txt"), kDt.toStdString());
    QCOMPARE(outcomeName(importPath(db, first, QString()).outcome), "imported");
    const QString before = queryOne(db, kCountsSql);
    QCOMPARE(before, str("4|4|1|1|0"));

    QByteArray big = lines({kDtHeader, kDtUnits});
    const QDateTime t0(QDate(2026, 1, 15), QTime(0, 0), QTimeZone::utc());
    for (int i = 0; i < 40000; ++i)
        big += t0.addSecs(i).toString(QStringLiteral(" yyyyMMdd HH:mm:ss ")).toLatin1() + "1 " +
               QByteArray::number(i % 700) + " " + QByteArray::number(i % 101) + " 100 5\n";
    const std::string zst = test::zstdCompress(big.toStdString());
    for (const QString& start : {QString(), str("start=2026-01-15T00:00:00Z")}) {
        // Cut in the middle; without start= the second reading meets the error first.
        const std::string path = test::writeFile(dir, str("b/gpu.txt.zst"), zst.substr(0, zst.size() / 2));
        const Imported r =
            importPath(db, path, QString(), str("UTC"), start.isEmpty() ? QStringList() : QStringList{start});
        QCOMPARE(outcomeName(r.outcome), "failed");
        const QRegularExpression located(str("gpu\\.txt\\.zst:\\d+(:\\d+)?: .*(truncated|zstd)"));
        QVERIFY2(located.match(QString::fromStdString(r.error)).hasMatch(), r.error.c_str());
        QCOMPARE(queryOne(db, kCountsSql), before);
    }
}

void TestDmonImporter::garbage_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format");
    const QByteArray random = randomBytes(8192, 11);
    QTest::newRow("random binary, detected") << random << QString();
    QTest::newRow("random binary, forced") << random << kFormat;
    QTest::newRow("header then random bytes") << lines({kDtHeader, kDtUnits}) + random << QString();
}

void TestDmonImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(dir, str("garbage.txt"), input.toStdString());
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format);
    const bool withHeader = input.startsWith(kDtHeader);
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

void TestDmonImporter::tenMegabyteLine()
{
    constexpr int kBytes = 10 << 20;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // Line 4: 10 MB of one field; line 5: a 10 MB value.
    std::string input = lines({kDtHeader, kDtUnits, " 20260115 12:00:01 0 80 5 1 5"}).toStdString() +
                        std::string(kBytes, 'x') + "\n 20260115 12:00:02 0 81 " + std::string(kBytes, '7') +
                        "y 2 6\n 20260115 12:00:03 0 82 7 3 7\n";
    const std::string path = test::writeFile(dir, str("huge.txt"), input);
    input.clear();
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, QString(), str("+02:00"));
    QCOMPARE(outcomeName(r.outcome), "imported");
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
             strs({"wrong_field_count|4", "bad_number|5"}));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.util")), str("10:00:01=5, 10:00:02=?, 10:00:03=7"));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.power")), str("10:00:01=80, 10:00:02=81, 10:00:03=82"));
    const int longest = queryOne(r.db, "SELECT max(length(message)) FROM diagnostic").toInt();
    QVERIFY2(longest < 1000, qPrintable(QStringLiteral("a diagnostic message of %1 characters").arg(longest)));
}

void TestDmonImporter::realFixtures_data()
{
    QTest::addColumn<QString>("path");
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty())
        QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): real nvidia-smi dmon captures not tested");
    int rows = 0;
    for (QDirIterator it(fixtures, {str("nvidia-smi-dmon*.txt")}, QDir::Files, QDirIterator::Subdirectories);
         it.hasNext();) {
        const QString f = it.next();
        QTest::newRow(qPrintable(QDir(fixtures).relativeFilePath(f))) << f;
        ++rows;
    }
    if (rows == 0) QSKIP("no nvidia-smi-dmon*.txt under the fixtures folder");
}

void TestDmonImporter::realFixtures()
{
    QFETCH(QString, path);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const Reference ref = referenceRows(file.readAll(), str("smutil"));
    QVERIFY(!ref.rows.empty());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path.toStdString(), QString());
    QCOMPARE(QString::fromStdString(r.importer), kFormat);
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(queryOne(r.db, "SELECT data_loss FROM import"), str("0"));
    QCOMPARE(queryOne(r.db, "SELECT count(*) FROM device WHERE kind = 'gpu'").toInt(), int(ref.rows.size()));
    int total = 0;
    for (const auto& [gpu, n] : ref.rows) {
        total += n;
        const QString device = QStringLiteral("gpu:") + gpu;
        QCOMPARE(queryOne(r.db, "SELECT points FROM series_summary WHERE metric = 'gpu.util' AND device = '" +
                                    device.toStdString() + "'")
                     .toInt(),
                 n);
        if (!path.contains(QLatin1String("gpm"))) continue;
        const QStringList active = queryRows(r.db, "SELECT points, missing_points, min_value >= 0, max_value <= 1 FROM "
                                                   "series_summary WHERE metric = 'gpu.sm_active' AND device = '" +
                                                       device.toStdString() + "'");
        QCOMPARE(active,
                 QStringList{QStringLiteral("%1|%2|1|1").arg(n).arg(ref.dashes.count(gpu) ? ref.dashes.at(gpu) : 0)});
    }
    QCOMPARE(queryOne(r.db, "SELECT rows_read FROM import").toInt(), total);
}

QTEST_MAIN(TestDmonImporter)
#include "tst_importers_dmon.moc"
