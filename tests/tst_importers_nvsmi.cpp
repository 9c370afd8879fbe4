// nvidia-smi --query-gpu CSV import (docs/formats.md §1): generated inputs for each behaviour and quirk, then the
// real fixtures checked against an independent count of their rows per GPU.

#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/user_query.h"
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

const QString kFormat = QStringLiteral("nvidia-smi-query-csv");

const char* const kCountsSql = "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM point_chunk), "
                               "(SELECT count(*) FROM import), (SELECT count(*) FROM device), "
                               "(SELECT count(*) FROM device_attribute), (SELECT count(*) FROM diagnostic)";

// Every point of a series as "time=value", a missing one as "time=?<raw token>".
QString pointsText(store::RunDatabase& db, int64_t seriesId)
{
    return test::pointsText(test::readSeries(db, seriesId, true),
                            [](int64_t ns) { return utc(ns, Fraction::AlwaysMillis); });
}

// Every series of a run with its points, for comparing two imports.
QStringList dumpAll(const std::string& dbPath)
{
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadOnly);
    if (!db) return {QString::fromStdString(db.error().toString())};
    QStringList out = queryRows(dbPath, "SELECT s.id, d.name, s.metric, s.unit, s.raw_name FROM series s JOIN device d "
                                        "ON d.id = s.device_id ORDER BY d.name, s.metric");
    for (QString& row : out)
        row += QLatin1Char('|') + pointsText(**db, row.section(QLatin1Char('|'), 0, 0).toLongLong());
    return out;
}

// A -lms style capture: samples x gpus rows, 250 ms apart, a [N/A] power every 97th sample.
QByteArray generatedCsv(int samples, int gpus, int firstGpu = 0)
{
    QByteArray out("timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W], "
                   "clocks.current.sm [MHz], temperature.gpu, pstate\n");
    const QDateTime start(QDate(2026, 1, 15), QTime(10, 0), Qt::UTC);
    for (int i = 0; i < samples; ++i) {
        for (int g = firstGpu; g < firstGpu + gpus; ++g) {
            const QByteArray ts =
                start.addMSecs(i * 250 + g * 3).toString(QStringLiteral("yyyy/MM/dd HH:mm:ss.zzz")).toLatin1();
            const QByteArray power = i % 97 == 5 ? QByteArray("[N/A]") : QByteArray::number(80 + i % 600) + ".25 W";
            out += ts + ", " + QByteArray::number(g) + ", NVIDIA H200, " + QByteArray::number((i * 7 + g) % 101) +
                   " %, " + QByteArray::number(1000 + i) + " MiB, " + power + ", " +
                   QByteArray::number(1500 + i % 480) + " MHz, " + QByteArray::number(30 + i % 50) + ", P" +
                   QByteArray::number(i % 3) + "\n";
        }
    }
    return out;
}

// An independent reading of a query CSV: rows per GPU index with their first and last timestamps (read as UTC).
struct GpuRows
{
    int rows = 0;
    qint64 firstNs = 0, lastNs = 0;
};

std::map<QString, GpuRows> referenceRows(const QByteArray& text, bool* hasUtilAndIndex)
{
    std::map<QString, GpuRows> out;
    QStringList header;
    QByteArray headerLine;
    for (QByteArray line : text.split('\n')) {
        if (line.endsWith('\r')) line.chop(1);
        if (line.trimmed().isEmpty()) continue;
        const QList<QByteArray> fields = line.split(',');
        if (header.isEmpty()) {
            headerLine = line;
            for (const QByteArray& f : fields)
                header << QString::fromUtf8(f).section(QStringLiteral(" ["), 0, 0).trimmed().toLower();
            continue;
        }
        const int ts = static_cast<int>(header.indexOf(QStringLiteral("timestamp")));
        const int idx = static_cast<int>(header.indexOf(QStringLiteral("index")));
        if (ts < 0 || line == headerLine || fields.size() != header.size()) continue;
        const QString t = QString::fromUtf8(fields[ts].trimmed());
        const QDateTime dt(QDate::fromString(t.left(10), QStringLiteral("yyyy/MM/dd")),
                           QTime::fromString(t.mid(11), QStringLiteral("HH:mm:ss.zzz")), Qt::UTC);
        GpuRows& g = out[idx >= 0 ? QString::fromUtf8(fields[idx].trimmed()) : QStringLiteral("0")];
        const qint64 ns = dt.toMSecsSinceEpoch() * 1000000;
        if (g.rows++ == 0) g.firstNs = ns;
        g.lastNs = ns;
    }
    *hasUtilAndIndex = header.contains(QStringLiteral("utilization.gpu")) && header.contains(QStringLiteral("index"));
    return out;
}

// A CSV from a header and rows; a row starting with '@' is on 2026/01/15 10:00 ("@01.500" = 10:00:01.500).
QByteArray csv(const char* header, std::initializer_list<const char*> rows)
{
    QByteArray out = QByteArray(header) + '\n';
    for (const char* r : rows)
        out += (r[0] == '@' ? "2026/01/15 10:00:" + QByteArray(r + 1) : QByteArray(r)) + '\n';
    return out;
}

const char* const kH3 = "timestamp, index, utilization.gpu [%], power.draw [W]";
const QByteArray kSimple = csv(kH3, {"@01.000, 0, 1 %, 80 W", "@02.000, 0, 2 %, 81 W"});
const char* const kSimpleUtil = "0|gpu.util|10:00:01.000=1, 10:00:02.000=2";

const QByteArray kTwoGpus =
    csv("timestamp, index, name, pci.bus_id, utilization.gpu [%], memory.used [MiB], power.draw [W], clocks.current.sm "
        "[MHz], temperature.gpu, pstate",
        {"@00.100, 0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 100 %, 17092 MiB, 631.95 W, 1980 MHz, 61, P0",
         "@00.104, 1, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 49 %, 20394 MiB, 105.75 W, 345 MHz, 38, P8",
         "@00.350, 0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 99 %, 17093 MiB, 630.5 W, 1965 MHz, 62, P0",
         "@00.356, 1, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 0 %, 0 MiB, 80.09 W, 345 MHz, 38, P8"});

const QStringList kTwoGpusPoints = strs(
    {"0|gpu.util|10:00:00.100=100, 10:00:00.350=99", "1|gpu.util|10:00:00.104=49, 10:00:00.356=0",
     "0|gpu.mem_used|10:00:00.100=17922260992, 10:00:00.350=17923309568",
     "1|gpu.mem_used|10:00:00.104=21384658944, 10:00:00.356=0", "0|gpu.power|10:00:00.100=631.95, 10:00:00.350=630.5",
     "1|gpu.power|10:00:00.104=105.75, 10:00:00.356=80.09",
     "0|gpu.sm_clock|10:00:00.100=1980000000, 10:00:00.350=1965000000",
     "1|gpu.sm_clock|10:00:00.104=345000000, 10:00:00.356=345000000", "0|gpu.temp|10:00:00.100=61, 10:00:00.350=62",
     "0|gpu.pstate|10:00:00.100=0, 10:00:00.350=0", "1|gpu.pstate|10:00:00.104=8, 10:00:00.356=8"});

void addCase(const char* name, const QByteArray& input, const QStringList& points, const QStringList& diagnostics,
             const QStringList& sql = {}, const QString& tz = QStringLiteral("UTC"),
             const QString& encoding = QStringLiteral("plain"), const QString& format = {},
             const QString& outcome = QStringLiteral("imported"), const QString& error = {})
{
    QTest::newRow(name) << input << encoding << tz << format << outcome << error << points << diagnostics << sql;
}

} // namespace

class TestNvsmiImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void importCases_data();
    void importCases();
    void compressedSameAsPlain();
    void truncatedZstdLeavesDatabaseUnchanged();
    void reimportIsNoOp();
    void overlappingLogsStoredOnce();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
    void realFixtures_data();
    void realFixtures();
    void publicNonNvsmiCsv();
};

void TestNvsmiImporter::importCases_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("encoding"); // plain, zstd, gzip, utf8bom
    QTest::addColumn<QString>("tz");
    QTest::addColumn<QString>("format"); // forced format, or empty to detect
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<QString>("error");           // regular expression the fatal error must match
    QTest::addColumn<QStringList>("points");      // gpu|metric|time=value, ...
    QTest::addColumn<QStringList>("diagnostics"); // kind|line, in report order; "*": not checked
    QTest::addColumn<QStringList>("sql");         // query => rows joined by "; "

    const QString plain = str("plain");
    const QString utcTz = str("UTC");
    const QStringList attrs = strs({"SELECT d.name, a.key, a.value FROM device_attribute a JOIN device d ON "
                                    "d.id = a.device_id ORDER BY d.name, a.key => 0|name|NVIDIA H100 80GB HBM3; "
                                    "0|pci.bus_id|00000000:18:00.0; 1|name|NVIDIA H100 80GB HBM3; "
                                    "1|pci.bus_id|00000000:2A:00.0",
                                    "SELECT metric, unit, raw_name FROM series_summary WHERE device = 'gpu:0' ORDER BY "
                                    "metric => gpu.mem_used|bytes|memory.used [MiB]; gpu.power|W|power.draw [W]; "
                                    "gpu.pstate||pstate; gpu.sm_clock|Hz|clocks.current.sm [MHz]; gpu.temp|C|"
                                    "temperature.gpu; gpu.util|%|utilization.gpu [%]",
                                    "SELECT rows_read, points FROM import => 4|24"});

    addCase("units in header and values, two GPUs, -lms, --tz UTC", kTwoGpus, kTwoGpusPoints, {}, attrs);
    addCase("--tz +02:00 shifts by two hours", kTwoGpus, strs({"0|gpu.util|08:00:00.100=100, 08:00:00.350=99"}), {}, {},
            str("+02:00"));
    addCase("--tz Europe/Berlin: winter, spring DST change, summer",
            csv(kH3, {"2026/01/15 10:00:00.000, 0, 1 %, 80 W", "2026/03/29 01:59:59.000, 0, 2 %, 80 W",
                      "2026/03/29 03:00:00.000, 0, 3 %, 80 W", "2026/07/01 12:00:00.500, 0, 4 %, 80 W"}),
            strs({"0|gpu.util|09:00:00.000=1, 2026-03-29T00:59:59.000=2, 2026-03-29T01:00:00.000=3, "
                  "2026-07-01T10:00:00.500=4"}),
            {}, {}, str("Europe/Berlin"));
    addCase("--tz Europe/Berlin: autumn fall-back repeats 02:00-03:00",
            csv(kH3, {"2026/10/25 01:30:00.000, 0, 0 %, 80 W", "2026/10/25 02:59:59.000, 0, 1 %, 80 W",
                      "2026/10/25 02:00:00.000, 0, 2 %, 80 W", "2026/10/25 02:30:00.000, 0, 3 %, 80 W",
                      "2026/10/25 03:00:00.000, 0, 4 %, 80 W"}),
            strs({"0|gpu.util|2026-10-24T23:30:00.000=0, 2026-10-25T00:59:59.000=1, 2026-10-25T01:00:00.000=2, "
                  "2026-10-25T01:30:00.000=3, 2026-10-25T02:00:00.000=4"}),
            {}, {}, str("Europe/Berlin"));
    addCase("nounits values, header with units",
            csv("timestamp, index, utilization.gpu [%], memory.used [MiB], power.draw [W], clocks.sm [MHz]",
                {"@00.100, 0, 100, 17092, 631.95, 1980"}),
            strs({"0|gpu.util|10:00:00.100=100", "0|gpu.mem_used|10:00:00.100=17922260992",
                  "0|gpu.power|10:00:00.100=631.95", "0|gpu.sm_clock|10:00:00.100=1980000000"}),
            {});
    addCase(
        "hand-made header without units, epoch seconds (quirk a)",
        csv("timestamp,memory.used,memory.total,utilization.gpu", {"1764189075,1, 24576, 0", "1764189076,2, 24576, 5"}),
        strs({"0|gpu.mem_used|2025-11-26T20:31:15.000=1048576, 2025-11-26T20:31:16.000=2097152",
              "0|gpu.mem_total|2025-11-26T20:31:15.000=25769803776, 2025-11-26T20:31:16.000=25769803776",
              "0|gpu.util|2025-11-26T20:31:15.000=0, 2025-11-26T20:31:16.000=5"}),
        {});
    addCase("epoch milliseconds", csv("timestamp,utilization.gpu", {"1764189075123,7"}),
            strs({"0|gpu.util|2025-11-26T20:31:15.123=7"}), {});
    addCase("every missing spelling keeps its raw token",
            csv(kH3, {"@01.000, 0, 1 %, [N/A]", "@02.000, 0, 2 %, [Not Supported]",
                      "@03.000, 0, 3 %, [Requested functionality has been deprecated]",
                      "@04.000, 0, 4 %, [Insufficient Permissions]", "@05.000, 0, 5 %, N/A", "@06.000, 0, 6 %, -",
                      "@07.000, 0, 7 %, ", "@08.000, 0, 8 %, 100.5 W"}),
            strs({"0|gpu.power|10:00:01.000=?[N/A], 10:00:02.000=?[Not Supported], 10:00:03.000=?[Requested "
                  "functionality has been deprecated], 10:00:04.000=?[Insufficient Permissions], 10:00:05.000=?N/A, "
                  "10:00:06.000=?-, 10:00:07.000=?, 10:00:08.000=100.5"}),
            {},
            strs({"SELECT points, missing_points, max_value FROM series_summary WHERE metric = 'gpu.power' => "
                  "8|7|100.5",
                  "SELECT missing_points FROM series_summary WHERE metric = 'gpu.util' => 0"}));
    addCase("[N/A] utilization on MIG: series of missing points",
            csv("timestamp, index, mig.mode.current, utilization.gpu [%], utilization.memory [%], memory.used [MiB]",
                {"@01.000, 0, Enabled, [N/A], [N/A], 5000 MiB", "@02.000, 0, Enabled, [N/A], [N/A], 5001 MiB"}),
            strs({"0|gpu.util|10:00:01.000=?[N/A], 10:00:02.000=?[N/A]"}), {},
            strs({"SELECT metric, points, missing_points FROM series_summary ORDER BY metric => gpu.mem_used|2|0; "
                  "gpu.mem_util|2|2; gpu.util|2|2",
                  "SELECT key, value FROM device_attribute => mig.mode.current|Enabled"}));
    addCase("clocks_throttle_reasons old names, Active/Not Active, hex bitmask",
            csv("timestamp, index, clocks_throttle_reasons.active, clocks_throttle_reasons.sw_power_cap, "
                "clocks_event_reasons.hw_slowdown, clocks_event_reasons_counters.sw_power_cap [us]",
                {"@01.000, 0, 0x0000000000000004, Active, Not Active, 0 us",
                 "@02.000, 0, 0x00000000000001FF, Not Active, Active, 1500000 us"}),
            strs({"0|gpu.clock_event_reasons|10:00:01.000=4, 10:00:02.000=511",
                  "0|gpu.clock_event.sw_power_cap|10:00:01.000=1, 10:00:02.000=0",
                  "0|gpu.clock_event.hw_slowdown|10:00:01.000=0, 10:00:02.000=1",
                  "0|gpu.clock_event_time.sw_power_cap|10:00:01.000=0, 10:00:02.000=1.5"}),
            {},
            strs({"SELECT raw_name FROM series WHERE metric = 'gpu.clock_event.sw_power_cap' => "
                  "clocks_throttle_reasons.sw_power_cap"}));
    addCase("unknown properties: numeric kept as nvsmi.<name>, text as attribute",
            csv("timestamp, index, utilization.gpu [%], temperature.gpu.tlimit, module.power.draw.instant [W], "
                "gpu_recovery_action",
                {"@01.000, 0, 5 %, 43, 631.95 W, None", "@02.000, 0, 6 %, 42, [N/A], None"}),
            strs({"0|nvsmi.temperature.gpu.tlimit|10:00:01.000=43, 10:00:02.000=42",
                  "0|nvsmi.module.power.draw.instant|10:00:01.000=631.95, 10:00:02.000=?[N/A]"}),
            strs({"unmapped_column|1", "unmapped_column|1", "unmapped_column|1"}),
            strs({"SELECT metric, unit, raw_name FROM series WHERE metric LIKE 'nvsmi.%' ORDER BY metric => "
                  "nvsmi.module.power.draw.instant|W|module.power.draw.instant [W]; "
                  "nvsmi.temperature.gpu.tlimit||temperature.gpu.tlimit",
                  "SELECT key, value FROM device_attribute => gpu_recovery_action|None"}));
    // The first column keeps the canonical name; the other keeps its own so nothing is lost.
    addCase("two properties mapped to one metric give one point per row",
            csv("timestamp, index, power.draw [W], power.draw.average [W], clocks.sm [MHz], clocks.current.sm [MHz]",
                {"@01.000, 0, 100 W, 90 W, 1980 MHz, 1980 MHz", "@02.000, 0, 101 W, 91 W, 1975 MHz, 1975 MHz"}),
            {}, {},
            strs({"SELECT metric, points FROM series ORDER BY metric => gpu.power|2; gpu.sm_clock|2; "
                  "nvsmi.clocks.current.sm|2; nvsmi.power.draw.average|2"}));
    addCase("no index column: GPUs numbered by uuid in order of appearance",
            csv("timestamp, uuid, utilization.gpu [%]",
                {"@01.000, GPU-bbbb, 5 %", "@01.010, GPU-aaaa, 6 %", "@02.000, GPU-bbbb, 7 %"}),
            strs({"0|gpu.util|10:00:01.000=5, 10:00:02.000=7", "1|gpu.util|10:00:01.010=6"}), {},
            strs({"SELECT d.name, a.value FROM device_attribute a JOIN device d ON d.id = a.device_id "
                  "WHERE a.key = 'uuid' ORDER BY d.name => 0|GPU-bbbb; 1|GPU-aaaa"}));
    addCase("header only", csv(kH3, {}), {}, {},
            strs({"SELECT rows_read, points FROM import => 0|0", "SELECT count(*) FROM series => 0"}));
    addCase("empty file, format forced", QByteArray(), {}, {}, strs({"SELECT count(*) FROM import => 0"}), utcTz, plain,
            kFormat, str("failed"), str("empty"));
    addCase("empty file, detected", QByteArray(), {}, {}, strs({"SELECT count(*) FROM import => 0"}), utcTz, plain, {},
            str("not recognised"));
    addCase("NaN value", csv(kH3, {"@01.000, 0, 5 %, NaN W", "@02.000, 0, 6 %, nan", "@03.000, 0, 7 %, 80.5 W"}),
            strs({"0|gpu.power|10:00:01.000=?NaN W, 10:00:02.000=?nan, 10:00:03.000=80.5"}),
            strs({"nan_value|2", "nan_value|3"}));
    addCase("1OO % is a bad number stored as missing", csv(kH3, {"@01.000, 0, 1OO %, 80 W", "@02.000, 0, 100 %, 81 W"}),
            strs({"0|gpu.util|10:00:01.000=?1OO %, 10:00:02.000=100"}), strs({"bad_number|2"}),
            strs({"SELECT column FROM diagnostic => 3", "SELECT status FROM import_log => data_loss"}));
    addCase("backwards time for one GPU",
            csv(kH3, {"@01.000, 0, 1 %, 80 W", "@01.005, 1, 2 %, 81 W", "@02.000, 0, 3 %, 82 W",
                      "@01.500, 0, 4 %, 83 W", "@02.005, 1, 5 %, 84 W", "@03.000, 0, 6 %, 85 W"}),
            strs({"0|gpu.util|10:00:01.000=1, 10:00:02.000=3, 10:00:03.000=6",
                  "1|gpu.util|10:00:01.005=2, 10:00:02.005=5"}),
            strs({"backwards_time|5"}), strs({"SELECT rows_read FROM import => 6"}));
    addCase(
        "wrong field count",
        csv(kH3, {"@01.000, 0, 1 %, 80 W", "@02.000, 0, 2 %", "@03.000, 0, 3 %, 82 W, extra", "@04.000, 0, 4 %, 83 W"}),
        strs({"0|gpu.util|10:00:01.000=1, 10:00:04.000=4"}), strs({"wrong_field_count|3", "wrong_field_count|4"}));
    addCase("crlf line endings", QByteArray(kSimple).replace("\n", "\r\n"), strs({kSimpleUtil}), {});
    addCase("trailing blank lines", kSimple + "\n\n  \n", strs({kSimpleUtil}), {},
            strs({"SELECT rows_read FROM import => 2"}));
    addCase("no trailing newline", kSimple.chopped(1), strs({kSimpleUtil}), strs({"truncated_last_line|3"}));
    addCase("repeated header with other columns",
            csv("timestamp, index, name, pci.bus_id, utilization.gpu [%]",
                {"@01.000, 0, NVIDIA H200, 00000000:18:00.0, 1 %",
                 "timestamp, index, pci.bus_id, name, utilization.gpu [%], power.draw [W]",
                 "@02.000, 0, 00000000:18:00.0, NVIDIA H200, 2 %, 80 W"}),
            strs({"0|gpu.util|10:00:01.000=1, 10:00:02.000=2", "0|gpu.power|10:00:02.000=80"}),
            strs({"repeated_header|3"}),
            strs({"SELECT key, value FROM device_attribute ORDER BY key => name|NVIDIA H200; "
                  "pci.bus_id|00000000:18:00.0"}));
    addCase("quoted cell with a newline (quirk b)",
            csv(kH3, {"@01.000, 0, 1 %, 80 W", "@02.000, 0, 2 %, \"26.11", "0\"", "@03.000, 0, 3 %, 82 W"}),
            strs({"0|gpu.util|10:00:01.000=1, 10:00:03.000=3"}), strs({"quoted_newline|3"}),
            strs({"SELECT rows_read FROM import => 3"}));
    addCase("stray quote does not swallow the following rows",
            csv("timestamp, index, name, utilization.gpu [%]",
                {"@01.000, 0, NVIDIA \"H200, 1 %", "@02.000, 0, NVIDIA H200, 2 %", "@03.000, 0, NVIDIA H200, 3 %"}),
            {}, strs({"*"}),
            strs({"SELECT points >= 2, last_ns FROM series_summary WHERE metric = 'gpu.util' => "
                  "1|1768471203000000000"}));
    addCase("missing timestamp column is fatal",
            csv("index, utilization.gpu [%], memory.used [MiB]", {"0, 5 %, 100 MiB"}), {}, {},
            strs({"SELECT count(*) FROM import => 0", "SELECT count(*) FROM series => 0"}), utcTz, plain, {},
            str("failed"), str("t\\.csv:1(:\\d+)?: .*timestamp"));
    addCase("zstd compressed", kTwoGpus, kTwoGpusPoints, {}, attrs, utcTz, str("zstd"));
    addCase("gzip compressed", kTwoGpus, kTwoGpusPoints, {}, attrs, utcTz, str("gzip"));
    addCase("utf-8 byte-order mark", kTwoGpus, kTwoGpusPoints, {}, attrs, utcTz, str("utf8bom"));
}

void TestNvsmiImporter::importCases()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, encoding);
    QFETCH(QString, tz);
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
    const QString name = encoding == QLatin1String("zstd")   ? str("t.csv.zst")
                         : encoding == QLatin1String("gzip") ? str("t.csv.gz")
                                                             : str("t.csv");
    const std::string path = test::writeFile(dir, name, encode(input, encoding));
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format, tz);
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
        QCOMPARE(seriesText(r.db, str("gpu:") + parts[0], parts[1], Fraction::AlwaysMillis, true),
                 parts.mid(2).join(QLatin1Char('|')));
    }
    const QStringList found = queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id");
    if (found != diagnostics)
        qInfo() << queryRows(r.db, "SELECT kind, line, column, message FROM diagnostic ORDER BY id");
    if (diagnostics != strs({"*"})) QCOMPARE(found, diagnostics);
}

void TestNvsmiImporter::compressedSameAsPlain()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QByteArray text = generatedCsv(3000, 2);
    QStringList reference;
    for (const QString& enc : strs({"plain", "zstd", "gzip"})) {
        const QString ext = enc == str("zstd") ? str(".zst") : enc == str("gzip") ? str(".gz") : QString();
        const std::string path = test::writeFile(dir, enc + str("/gpu.csv") + ext, encode(text, enc));
        const Imported r = importPath(dir.filePath(enc + str(".runlens")).toStdString(), path, QString());
        QCOMPARE(outcomeName(r.outcome), "imported");
        const QStringList dump = dumpAll(r.db)
                                 << queryRows(r.db, "SELECT kind, line, message FROM diagnostic ORDER BY id");
        if (reference.isEmpty()) {
            reference = dump;
            QCOMPARE(queryOne(r.db, "SELECT sum(points) FROM series WHERE metric = 'gpu.util'"), str("6000"));
            QCOMPARE(queryOne(r.db, "SELECT sum(missing_points) FROM series WHERE metric = 'gpu.power'"),
                     QString::number(2 * 31));
        } else {
            QCOMPARE(dump, reference);
        }
    }
}

void TestNvsmiImporter::truncatedZstdLeavesDatabaseUnchanged()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const std::string first = test::writeFile(dir, str("a/first.csv"), generatedCsv(50, 1).toStdString());
    QCOMPARE(outcomeName(importPath(db, first, QString()).outcome), "imported");
    const QString before = queryOne(db, kCountsSql);
    QCOMPARE(before, str("6|6|1|1|1|0"));

    const std::string zst = test::zstdCompress(generatedCsv(20000, 2, 1).toStdString());
    const std::string path = test::writeFile(dir, str("b/gpu.csv.zst"), zst.substr(0, zst.size() / 2));
    const Imported r = importPath(db, path, QString());
    QCOMPARE(outcomeName(r.outcome), "failed");
    const QRegularExpression located(str("gpu\\.csv\\.zst:\\d+(:\\d+)?: .*(truncated|zstd)"));
    QVERIFY2(located.match(QString::fromStdString(r.error)).hasMatch(), r.error.c_str());
    QCOMPARE(queryOne(db, kCountsSql), before);
}

void TestNvsmiImporter::reimportIsNoOp()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const std::string path = test::writeFile(dir, str("n/gpu.csv"), generatedCsv(100, 2).toStdString());
    const Imported first = importPath(db, path, QString());
    QCOMPARE(outcomeName(first.outcome), "imported");
    const QString before = queryOne(db, kCountsSql);
    const QStringList dump = dumpAll(db);
    const Imported again = importPath(db, path, QString());
    QCOMPARE(outcomeName(again.outcome), "already imported");
    QCOMPARE(again.result.importId, first.result.importId);
    QCOMPARE(queryOne(db, kCountsSql), before);
    QCOMPARE(dumpAll(db), dump);
}

// Two log files that overlap in time (a rotated log copied twice, say): the shared samples are stored once
// and counted as already_stored; the series holds the union.
void TestNvsmiImporter::overlappingLogsStoredOnce()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const QByteArray full = generatedCsv(300, 2);
    const QList<QByteArray> lines = full.split('\n');
    // First file: samples 0-199; second: the header and samples 100-299 (2 GPUs per sample).
    QByteArray first = lines[0] + '\n', second = lines[0] + '\n';
    for (int i = 1; i <= 400; ++i)
        first += lines[i] + '\n';
    for (int i = 201; i <= 600; ++i)
        second += lines[i] + '\n';
    const std::string a = test::writeFile(dir, str("n/a.csv"), first.toStdString());
    const std::string b = test::writeFile(dir, str("n/b.csv"), second.toStdString());
    QCOMPARE(outcomeName(importPath(db, a, QString()).outcome), "imported");
    QCOMPARE(outcomeName(importPath(db, b, QString()).outcome), "imported");
    QCOMPARE(queryOne(db, "SELECT points FROM series_summary WHERE device = 'gpu:1' AND metric = 'gpu.util'"),
             str("300"));
    QCOMPARE(queryOne(db, "SELECT count(*), count(DISTINCT ts_ns) FROM series_points WHERE metric = 'gpu.power'"),
             str("600|600"));
    // 100 samples × 2 GPUs × 6 numeric properties were in both files: said in the import's summary, and not
    // counted as a problem.
    QCOMPARE(queryOne(db, "SELECT diagnostics, summary LIKE '%1200 points already stored%' FROM import "
                          "WHERE path LIKE '%b.csv'"),
             str("0|1"));
}

void TestNvsmiImporter::garbage_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format");
    const QByteArray random = randomBytes(8192, 7);
    QTest::newRow("random binary, detected") << random << QString();
    QTest::newRow("random binary, forced") << random << kFormat;
    QTest::newRow("header then random bytes") << csv(kH3, {}) + random << QString();
}

void TestNvsmiImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(dir, str("garbage.csv"), input.toStdString());
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format);
    const bool withHeader = input.startsWith(kH3);
    if (format.isEmpty() && !withHeader) QVERIFY(r.importer != kFormat.toStdString());
    if (r.outcome == FileOutcome::Imported) {
        QVERIFY(queryOne(r.db, "SELECT diagnostics FROM import").toInt() > 0);
        QCOMPARE(queryOne(r.db, "SELECT status FROM import_log"), str("data_loss"));
    } else {
        QVERIFY(!withHeader);
        QVERIFY(!r.error.empty());
        QCOMPARE(queryOne(r.db, "SELECT count(*) FROM import"), str("0"));
    }
}

void TestNvsmiImporter::tenMegabyteLine()
{
    constexpr int kBytes = 10 << 20;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // Line 3: 10 MB without a comma; line 4: a 10 MB value.
    std::string input = csv(kH3, {"@01.000, 0, 1 %, 80 W"}).toStdString() + std::string(kBytes, 'x') +
                        "\n2026/01/15 10:00:02.000, 0, " + std::string(kBytes, 'y') + " %, 81 W\n" +
                        "2026/01/15 10:00:03.000, 0, 3 %, 82 W\n";
    const std::string path = test::writeFile(dir, str("huge.csv"), input);
    input.clear();
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, QString());
    QCOMPARE(outcomeName(r.outcome), "imported");
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
             strs({"wrong_field_count|3", "bad_number|4"}));
    QCOMPARE(queryRows(r.db, "SELECT metric, points, missing_points FROM series ORDER BY metric"),
             strs({"gpu.power|3|0", "gpu.util|3|1"}));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.power"), Fraction::AlwaysMillis, true),
             str("10:00:01.000=80, 10:00:02.000=81, 10:00:03.000=82"));
    const int longest = queryOne(r.db, "SELECT max(length(message)) FROM diagnostic").toInt();
    QVERIFY2(longest < 1000, qPrintable(QStringLiteral("a diagnostic message of %1 characters").arg(longest)));
}

void TestNvsmiImporter::realFixtures_data()
{
    QTest::addColumn<QString>("path");       // the file to import, or empty to write `content`
    QTest::addColumn<QByteArray>("content"); // the CSV text
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty())
        QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): real nvidia-smi CSVs not tested");

    int rows = 0;
    QStringList files;
    for (QDirIterator it(fixtures, QDir::Files, QDirIterator::Subdirectories); it.hasNext();)
        files << it.next();
    files.sort();
    for (const QString& f : files) {
        const QString rel = QDir(fixtures).relativeFilePath(f);
        QFile file(f);
        if (file.size() > (8 << 20) || !file.open(QIODevice::ReadOnly)) continue;
        const QByteArray bytes = file.readAll();
        if (bytes.contains('\0')) continue; // binary or compressed
        if (QFileInfo(f).fileName() == QLatin1String("nvidia-smi-query.csv")) {
            QTest::newRow(qPrintable(rel)) << f << bytes;
            ++rows;
            continue;
        }
        if (!rel.startsWith(QLatin1String("public/"))) continue;
        // Public captures hold many command outputs between '#' banner lines: sniff each block on its own.
        const QList<QByteArray> lines = bytes.split('\n');
        for (qsizetype i = 0; i < lines.size(); ++i) {
            if (lines[i].startsWith('#') || lines[i].trimmed().isEmpty()) continue;
            const qsizetype start = i;
            QByteArray block;
            while (i < lines.size() && !lines[i].startsWith('#'))
                block += lines[i++] + '\n';
            const SniffInput head{std::string_view(block.constData(), size_t(block.size())), {}};
            const auto [importer, score] = detectFormat(head);
            bool hasUtil = false; // a --query-gpu CSV, not --query-compute-apps and the like
            referenceRows(block, &hasUtil);
            if (importer && importer->format() == kFormat.toStdString() && hasUtil) {
                QTest::newRow(qPrintable(QStringLiteral("%1:%2").arg(rel).arg(start + 1))) << QString() << block;
                ++rows;
            }
        }
    }
    if (rows == 0) QSKIP("no nvidia-smi query CSV under the fixtures folder");
}

void TestNvsmiImporter::realFixtures()
{
    QFETCH(QString, path);
    QFETCH(QByteArray, content);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string file =
        path.isEmpty() ? test::writeFile(dir, str("capture.csv"), content.toStdString()) : path.toStdString();
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), file, QString());
    QCOMPARE(QString::fromStdString(r.importer), kFormat);
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    bool hasUtil = false;
    const std::map<QString, GpuRows> ref = referenceRows(content, &hasUtil);
    QVERIFY(hasUtil && !ref.empty());
    QCOMPARE(queryOne(r.db, "SELECT count(*) FROM device WHERE kind = 'gpu'").toInt(), int(ref.size()));
    QCOMPARE(queryOne(r.db, "SELECT data_loss FROM import"), str("0"));

    auto db = store::RunDatabase::open(r.db, store::OpenMode::ReadOnly);
    QVERIFY(db);
    store::RunReader reader(**db);
    for (const auto& [gpu, rows] : ref) {
        auto s = reader.findSeries("n1", "gpu", gpu.toStdString(), "gpu.util");
        QVERIFY(s && *s);
        const store::SeriesInfo info = **s;
        QCOMPARE(info.points, int64_t(rows.rows));
        auto points = reader.readPoints(info.id, {});
        QVERIFY(points && !points->empty());
        QCOMPARE(qint64(points->front().tsNs), rows.firstNs);
        QCOMPARE(qint64(points->back().tsNs), rows.lastNs);
    }
    // No series gets more points than its GPU has rows (one value per row and column).
    QStringList tooMany;
    for (const QString& row :
         queryRows(r.db, "SELECT d.name, s.metric, s.raw_name, s.points FROM series s JOIN device d "
                         "ON d.id = s.device_id")) {
        const QStringList cells = row.split(QLatin1Char('|'));
        if (cells[3].toInt() > ref.at(cells[0]).rows)
            tooMany << QStringLiteral("GPU %1 points for %2 rows").arg(row).arg(ref.at(cells[0]).rows);
    }
    QVERIFY2(tooMany.isEmpty(), qPrintable(tooMany.join(QStringLiteral("; "))));
}

void TestNvsmiImporter::publicNonNvsmiCsv()
{
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): DCConv CSV not tested");
    const QString path = fixtures + str("/public/DCConv/gpu_usage.csv");
    if (!QFileInfo::exists(path)) QSKIP("public/DCConv/gpu_usage.csv not in the fixtures");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Imported detected = importPath(dir.filePath(str("a.runlens")).toStdString(), path.toStdString(), QString());
    QVERIFY(detected.importer != kFormat.toStdString());

    const Imported forced = importPath(dir.filePath(str("b.runlens")).toStdString(), path.toStdString(), kFormat);
    QCOMPARE(outcomeName(forced.outcome), "failed");
    const QString error = QString::fromStdString(forced.error);
    QVERIFY2(error.contains(str("gpu_usage.csv:1")) && error.contains(str("timestamp")), qPrintable(error));
    QCOMPARE(queryOne(forced.db, "SELECT count(*) FROM import"), str("0"));
}

QTEST_MAIN(TestNvsmiImporter)
#include "tst_importers_nvsmi.moc"
