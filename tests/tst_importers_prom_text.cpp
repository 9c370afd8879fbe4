// Prometheus text exposition 0.0.4 / OpenMetrics import (docs/formats.md §4-6): generated inputs for each behaviour
// (dcgm-exporter, node_exporter, OpenMetrics, snapshots, options, bad input), detection, then the real fixtures
// checked against an independent count of their sample lines.

#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

const QString kFormat = QStringLiteral("prometheus-text");

const char* const kCountsSql = "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM point_chunk), "
                               "(SELECT count(*) FROM import), (SELECT count(*) FROM node), "
                               "(SELECT count(*) FROM device), (SELECT count(*) FROM diagnostic)";

// Options: "node=NAME", "tz=ZONE", anything else key=value goes to the format's options.
Imported importKeyed(const std::string& dbPath, const std::string& path, const QString& format,
                     const QStringList& options = {})
{
    return test::importWith(dbPath, path, test::keyedOptions(options, test::importOptions(format, str("UTC"), {}, {})));
}

// "node|kind:name|metric" → "time=value, ..." with missing points as "?<raw token>".
QString seriesText(const std::string& dbPath, const QString& spec)
{
    const QStringList p = spec.split(QLatin1Char('|'));
    return test::seriesText(dbPath, p[1], p[2], Fraction::AlwaysMillis, true, p[0]);
}

// Sample lines as another reader sees them: not blank, not a comment.
int sampleLines(const QByteArray& text)
{
    int n = 0;
    for (const QByteArray& l : text.split('\n'))
        if (!l.trimmed().isEmpty() && !l.trimmed().startsWith('#')) ++n;
    return n;
}

// dcgm-exporter as in its README (docs/formats.md §4): ", " and "," between labels, the NOT_SUPPORTED sentinel.
const QByteArray kDcgmReadme = lines({
    "# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).",
    "# TYPE DCGM_FI_DEV_SM_CLOCK gauge",
    R"(DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",Hostname="gpu-node-7",container="",namespace="",pod=""} 139)",
    R"(DCGM_FI_DEV_SM_CLOCK{gpu="1", UUID="GPU-7c2e8f0a-1b2c-3d4e-5f60-718293a4b5c6",Hostname="gpu-node-7",container="",namespace="",pod=""} 1980)",
    "# HELP DCGM_FI_DEV_MEMORY_TEMP Memory temperature (in C).",
    "# TYPE DCGM_FI_DEV_MEMORY_TEMP gauge",
    R"(DCGM_FI_DEV_MEMORY_TEMP{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",Hostname="gpu-node-7",container="",namespace="",pod=""} 9223372036854775794)",
    R"(DCGM_FI_DEV_MEMORY_TEMP{gpu="1", UUID="GPU-7c2e8f0a-1b2c-3d4e-5f60-718293a4b5c6",Hostname="gpu-node-7",container="",namespace="",pod=""} 45)",
});

// The current dcgm-exporter label set (lower-case hostname, driver version label), two scrapes 15 s apart.
QByteArray dcgmNew()
{
    const QByteArray labels = R"({gpu="0",UUID="GPU-aaaa",pci_bus_id="00000000:18:00.0",device="nvidia0",)"
                              R"(modelName="NVIDIA H100 80GB HBM3",hostname="gpu-node-8",)"
                              R"(DCGM_FI_DRIVER_VERSION="535.183.01",container="",namespace="",pod=""})";
    QByteArray out;
    for (const auto& [util, energy, ms] :
         {std::tuple{"87", "1000000", "1768471200000"}, std::tuple{"91", "7000000", "1768471215000"}}) {
        out += "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
        out += "DCGM_FI_DEV_GPU_UTIL" + labels + ' ' + util + ' ' + ms + '\n';
        out += "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n"
               "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n";
        out += "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + labels + ' ' + energy + ' ' + ms + '\n';
    }
    return out;
}

// node_exporter, three snapshots 10 s apart (HELP/TYPE only in the first): 2 CPUs x 4 modes, a disk whose
// counter restarts in the third (line 37), eth0 and lo receive bytes.
QByteArray nodeSnapshots()
{
    const int cpu[3][8] = {
        {100, 10, 20, 50, 200, 0, 10, 30}, {105, 11, 21, 53, 209, 0, 10, 31}, {109, 11, 23, 57, 215, 0, 11, 34}};
    const char* const disk[3] = {"5e+06", "6e+06", "1e+06"};
    const char* const eth0[3] = {"1000", "11000", "31000"};
    const char* const lo[3] = {"2.0199236096e+10", "2.0200236096e+10", "2.0202236096e+10"};
    const char* const modes[4] = {"idle", "iowait", "system", "user"};
    QByteArray out;
    for (int s = 0; s < 3; ++s) {
        const QByteArray ts = ' ' + QByteArray::number(1768471200000LL + s * 10000);
        if (s == 0)
            out += "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n"
                   "# TYPE node_cpu_seconds_total counter\n";
        for (int c = 0; c < 8; ++c)
            out += "node_cpu_seconds_total{cpu=\"" + QByteArray::number(c / 4) + "\",mode=\"" + modes[c % 4] + "\"} " +
                   QByteArray::number(cpu[s][c]) + ts + '\n';
        if (s == 0)
            out += "# HELP node_disk_written_bytes_total The total number of bytes written successfully.\n"
                   "# TYPE node_disk_written_bytes_total counter\n";
        out += "node_disk_written_bytes_total{device=\"nvme0n1\"} " + QByteArray(disk[s]) + ts + '\n';
        if (s == 0)
            out += "# HELP node_network_receive_bytes_total Network device statistic receive_bytes.\n"
                   "# TYPE node_network_receive_bytes_total counter\n";
        out += "node_network_receive_bytes_total{device=\"eth0\"} " + QByteArray(eth0[s]) + ts + '\n';
        out += "node_network_receive_bytes_total{device=\"lo\"} " + QByteArray(lo[s]) + ts + '\n';
    }
    return out;
}
const QStringList kNodePoints = strs({"n1|nic:eth0|net.rx|10:00:10.000=1000, 10:00:20.000=2000",
                                      "n1|nic:lo|net.rx|10:00:10.000=100000, 10:00:20.000=200000",
                                      "n1|disk:nvme0n1|disk.write|10:00:10.000=100000, 10:00:20.000=100000",
                                      "n1|cpu|cpu.util|10:00:10.000=25, 10:00:20.000=50"});

// The promtool example of docs/formats.md §6 (OpenMetrics, float seconds).
const QByteArray kPromtool =
    lines({R"(my_counter{baz="abc",foo="bar"} 1 0.000)", R"(my_counter{baz="abc",foo="bar"} 2 60.000)", "# EOF"});

const QByteArray kInstances =
    lines({"# TYPE node_load1 gauge", R"(node_load1{instance="10.0.0.1:9100",job="node"} 0.5 1768471200000)",
           R"(node_load1{instance="10.0.0.2:9100",job="node"} 1.5 1768471200000)",
           R"(node_load1{instance="[fd00::3]:9100",job="node"} 2.5 1768471200000)"});

const QByteArray kLoad1 = lines({"# TYPE node_load1 gauge", "node_load1 0.5"});
const QByteArray kUntimed3 =
    lines({"# TYPE node_load1 gauge", "node_load1 0.5", "node_memory_MemFree_bytes 1024", "node_load1 1.5",
           "node_memory_MemFree_bytes 2048", "node_load1 2.5", "node_memory_MemFree_bytes 4096"});

void addCase(const char* name, const QByteArray& input, const QStringList& options, const QStringList& points = {},
             const QStringList& diagnostics = {}, const QStringList& sql = {},
             const QString& encoding = QStringLiteral("plain"), const QString& format = {},
             const QString& outcome = QStringLiteral("imported"), const QString& error = {})
{
    QTest::newRow(name) << input << options << encoding << format << outcome << error << points << diagnostics << sql;
}

} // namespace

class TestPromTextImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void importCases_data();
    void importCases();
    void modificationTimeEstimate();
    void truncatedZstdLeavesDatabaseUnchanged();
    void garbage_data();
    void garbage();
    void tenMegabyteLines();
    void sniff_data();
    void sniff();
    void realFixtures_data();
    void realFixtures();
};

void TestPromTextImporter::importCases_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QStringList>("options");     // node=, tz=, time=, interval=
    QTest::addColumn<QString>("encoding");        // plain, zstd, gzip
    QTest::addColumn<QString>("format");          // forced, or empty to detect
    QTest::addColumn<QString>("outcome");         // imported, failed, not recognised
    QTest::addColumn<QString>("error");           // regular expression the fatal error must match
    QTest::addColumn<QStringList>("points");      // node|kind:name|metric|time=value, ...
    QTest::addColumn<QStringList>("diagnostics"); // kind|line in report order
    QTest::addColumn<QStringList>("sql");         // query => rows joined by "; "

    const QStringList at10 = strs({"time=2026-01-15T10:00:00Z"});
    addCase("dcgm-exporter README scrape: old Hostname, ', ' separators, NOT_SUPPORTED sentinel", kDcgmReadme, at10,
            strs({"gpu-node-7|gpu:0|gpu.sm_clock|10:00:00.000=139000000",
                  "gpu-node-7|gpu:1|gpu.sm_clock|10:00:00.000=1980000000",
                  "gpu-node-7|gpu:0|gpu.mem_temp|10:00:00.000=?9223372036854775794",
                  "gpu-node-7|gpu:1|gpu.mem_temp|10:00:00.000=45"}),
            strs({"sentinel_value|7"}),
            strs({"SELECT name, name_source FROM node => gpu-node-7|host label",
                  "SELECT d.name, a.key, a.value FROM device_attribute a JOIN device d ON d.id = a.device_id ORDER BY "
                  "d.name => 0|UUID|GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52; 1|UUID|"
                  "GPU-7c2e8f0a-1b2c-3d4e-5f60-718293a4b5c6",
                  "SELECT rows_read, points FROM import => 4|4"}));
    addCase("dcgm-exporter new hostname label, ms timestamps, energy counter as watts", dcgmNew(), {},
            strs({"gpu-node-8|gpu:0|gpu.util|10:00:00.000=87, 10:00:15.000=91",
                  "gpu-node-8|gpu:0|gpu.energy_power|10:00:15.000=400"}),
            {},
            strs({"SELECT name FROM node => gpu-node-8",
                  "SELECT key, value FROM device_attribute ORDER BY key => UUID|GPU-aaaa; modelName|NVIDIA H100 80GB "
                  "HBM3; pci_bus_id|00000000:18:00.0",
                  "SELECT summary LIKE '%timestamps read as milliseconds%' FROM import => 1"}));
    const QStringList nodeSql = strs({"SELECT d.kind, d.name, a.key, a.value FROM device_attribute a JOIN device d ON "
                                      "d.id = a.device_id => nic|lo|virtual|1",
                                      "SELECT rows_read, points FROM import => 33|8"});
    addCase("node_exporter snapshots: byte counter rates, counter reset, cpu.util of 2 CPUs", nodeSnapshots(), {},
            kNodePoints, strs({"counter_reset|37"}), nodeSql);
    addCase("node_exporter snapshots, zstd", nodeSnapshots(), {}, kNodePoints, strs({"counter_reset|37"}), nodeSql,
            str("zstd"));
    addCase("node_exporter snapshots, gzip, CRLF", nodeSnapshots().replace("\n", "\r\n"), {}, kNodePoints,
            strs({"counter_reset|37"}), nodeSql, str("gzip"));
    addCase("utf-8 byte-order mark", "\xef\xbb\xbf" + nodeSnapshots(), {}, kNodePoints, strs({"counter_reset|37"}),
            nodeSql);
    addCase("OpenMetrics promtool example: # EOF, float seconds", kPromtool, {},
            strs({"n1|host|prom.my_counter|1970-01-01T00:00:00.000=1, 1970-01-01T00:01:00.000=2"}),
            strs({"unmapped_metric|1"}),
            strs({"SELECT metric, raw_name, labels FROM series => prom.my_counter|my_counter|baz=abc,foo=bar",
                  "SELECT summary LIKE '%timestamps read as seconds (OpenMetrics)%' FROM import => 1"}));
    addCase(
        "OpenMetrics # UNIT, _total counter, fractional seconds, exemplar",
        lines(
            {"# TYPE node_network_transmit_bytes counter", "# UNIT node_network_transmit_bytes bytes",
             "# HELP node_network_transmit_bytes Network device statistic transmit_bytes.",
             R"(node_network_transmit_bytes_total{device="eth0"} 1000 1768471200.250)",
             R"(node_network_transmit_bytes_total{device="eth0"} 3000 1768471200.750 # {trace_id="4bf9"} 1 1768471200.7)",
             "# EOF"}),
        {}, strs({"n1|nic:eth0|net.tx|10:00:00.750=4000"}), {},
        strs({"SELECT summary LIKE '%2 samples of 1 families%' FROM import => 1"}));
    addCase("text after # EOF is read as another exposition",
            kPromtool + R"(my_counter{baz="abc",foo="bar"} 3 120.000)" + "\n# EOF\n", {},
            strs({"n1|host|prom.my_counter|1970-01-01T00:00:00.000=1, 1970-01-01T00:01:00.000=2, "
                  "1970-01-01T00:02:00.000=3"}),
            strs({"unmapped_metric|1", "repeated_header|4"}));
    addCase("histogram family skipped, gauge beside it kept",
            lines({"# HELP http_request_duration_seconds A histogram of the request duration.",
                   "# TYPE http_request_duration_seconds histogram",
                   R"(http_request_duration_seconds_bucket{le="0.05"} 24054 1768471200000)",
                   R"(http_request_duration_seconds_bucket{le="+Inf"} 144320 1768471200000)",
                   "http_request_duration_seconds_sum 53423 1768471200000",
                   "http_request_duration_seconds_count 144320 1768471200000", "# HELP node_load1 1m load average.",
                   "# TYPE node_load1 gauge", "node_load1 0.21 1768471200000"}),
            {}, strs({"n1|host|host.load1|10:00:00.000=0.21"}), strs({"skipped_family|9"}),
            strs({"SELECT count(*) FROM series => 1", "SELECT status FROM import_log => data_loss",
                  "SELECT message FROM diagnostic => http_request_duration_seconds: 4 samples of a "
                  "histogram/summary/info family not imported"}));
    addCase("NaN, +Inf, -Inf stored as missing with their text",
            lines({"# TYPE node_load1 gauge", "node_load1 NaN 1768471200000", "node_load1 +Inf 1768471201000",
                   "node_load1 -Inf 1768471202000", "node_load1 1.5e+00 1768471203000"}),
            {},
            strs({"n1|host|host.load1|10:00:00.000=?NaN, 10:00:01.000=?+Inf, 10:00:02.000=?-Inf, 10:00:03.000=1.5"}),
            strs({"nan_value|3", "nan_value|4"}));
    addCase("label escapes, trailing comma, quoted metric and label names",
            lines({R"(app_state_gauge{path="C:\\dir\\file",msg="say \"hi\"\nbye",} 1 1768471200000)",
                   R"({"app.requests.in_flight", "service.name"="api", zone="a"} 3 1768471200000)"}),
            {}, strs({"n1|host|prom.app.requests.in_flight|10:00:00.000=3"}),
            strs({"unmapped_metric|1", "unmapped_metric|2"}),
            strs({"SELECT metric, labels FROM series ORDER BY metric => prom.app.requests.in_flight|service.name=api,"
                  "zone=a; prom.app_state_gauge|msg=say \"hi\"\nbye,path=C:\\dir\\file"}));
    addCase("a family with HELP/TYPE and no samples",
            lines({"# HELP node_network_transmit_bytes_total Network device statistic transmit_bytes.",
                   "# TYPE node_network_transmit_bytes_total counter", "# HELP node_load1 1m load average.",
                   "# TYPE node_load1 gauge", "node_load1 0.5 1768471200000"}),
            {}, strs({"n1|host|host.load1|10:00:00.000=0.5"}), {},
            strs({"SELECT summary LIKE '%1 samples of 1 families; 1 declared with no samples "
                  "(node_network_transmit_bytes_total)%' FROM import => 1"}));
    addCase("only HELP/TYPE lines", lines({"# HELP node_load1 1m load average.", "# TYPE node_load1 gauge"}), {}, {},
            {}, strs({"SELECT rows_read, points FROM import => 0|0"}));
    addCase("many instances in one file: one node each", kInstances, {},
            strs({"10.0.0.1|host|host.load1|10:00:00.000=0.5", "10.0.0.2|host|host.load1|10:00:00.000=1.5",
                  "fd00::3|host|host.load1|10:00:00.000=2.5"}),
            {},
            strs({"SELECT name, name_source FROM node ORDER BY name => 10.0.0.1|host label; 10.0.0.2|host label; "
                  "fd00::3|host label"}));
    addCase("--node overrides the hostname label", kDcgmReadme, strs({"node=forced", "time=1768471200"}),
            strs({"forced|gpu:0|gpu.sm_clock|10:00:00.000=139000000"}), strs({"sentinel_value|7"}),
            strs({"SELECT name, name_source FROM node => forced|option"}));
    // Three instances become one series: the second and third value at the same time are duplicates.
    addCase("--node merging instances keeps one value per time", kInstances, strs({"node=forced"}),
            strs({"forced|host|host.load1|10:00:00.000=0.5"}), strs({"duplicate_sample|3", "duplicate_sample|4"}),
            strs({"SELECT name FROM node => forced"}));
    addCase("no timestamps, time= ISO 8601 UTC", kLoad1, at10, strs({"n1|host|host.load1|10:00:00.000=0.5"}), {},
            strs({"SELECT summary LIKE '%placed at time= 2026-01-15T10:00:00Z%' FROM import => 1"}));
    addCase("no timestamps, time= epoch seconds with a fraction", kLoad1, strs({"time=1768471200.25"}),
            strs({"n1|host|host.load1|10:00:00.250=0.5"}));
    addCase("no timestamps, time= with a UTC offset", kLoad1, strs({"time=2026-01-15T11:00:00+01:00"}),
            strs({"n1|host|host.load1|10:00:00.000=0.5"}));
    addCase("no timestamps, naive time= read in --tz", kLoad1, strs({"time=2026-01-15 12:00:00", "tz=+02:00"}),
            strs({"n1|host|host.load1|10:00:00.000=0.5"}));
    addCase("three snapshots without timestamps, interval=15", kUntimed3,
            strs({"time=2026-01-15T10:00:00Z", "interval=15"}),
            strs({"n1|host|host.load1|10:00:00.000=0.5, 10:00:15.000=1.5, 10:00:30.000=2.5",
                  "n1|host|host.mem_free|10:00:00.000=1024, 10:00:15.000=2048, 10:00:30.000=4096"}));
    addCase("two dcgm-exporter scrapes, each with HELP/TYPE, no timestamps, interval=15", kDcgmReadme + kDcgmReadme,
            strs({"time=2026-01-15T10:00:00Z", "interval=15"}),
            strs({"gpu-node-7|gpu:1|gpu.sm_clock|10:00:00.000=1980000000, 10:00:15.000=1980000000",
                  "gpu-node-7|gpu:0|gpu.mem_temp|10:00:00.000=?9223372036854775794, "
                  "10:00:15.000=?9223372036854775794"}),
            strs({"sentinel_value|7", "sentinel_value|15"}));
    addCase("a second snapshot without timestamps and no interval= is fatal", kUntimed3, at10, {}, {},
            strs({"SELECT count(*) FROM import => 0", "SELECT count(*) FROM series => 0"}), str("plain"), {},
            str("failed"), str("t\\.prom:4: .*interval=SECONDS"));
    addCase("bad time= option", kLoad1, strs({"time=yesterday"}), {}, {}, {}, str("plain"), {}, str("failed"),
            str("time=yesterday"));
    addCase("bad interval= option", kUntimed3, strs({"interval=-5"}), {}, {}, {}, str("plain"), {}, str("failed"),
            str("interval=-5"));
    addCase("bad number stored as missing",
            lines({"# TYPE node_load1 gauge", "node_load1 1OO 1768471200000", "node_load1 2 1768471201000"}), {},
            strs({"n1|host|host.load1|10:00:00.000=?1OO, 10:00:01.000=2"}), strs({"bad_number|2"}),
            strs({"SELECT column FROM diagnostic => 12", "SELECT status FROM import_log => data_loss"}), str("plain"),
            kFormat);
    addCase("bad timestamp drops the sample",
            lines({"# TYPE node_load1 gauge", "node_load1 1 1768471200000", "node_load1 2 17684712O1000",
                   "node_load1 3 1768471202000"}),
            {}, strs({"n1|host|host.load1|10:00:00.000=1, 10:00:02.000=3"}), strs({"bad_timestamp|3"}),
            strs({"SELECT column FROM diagnostic => 14"}));
    addCase(
        "malformed lines and labels",
        lines({"# TYPE node_load1 gauge", "node_load1 0.5 1768471200000", "node_load1{device=eth0} 1 1768471201000",
               R"(node_load1{device="eth0} 1 1768471201000)", R"(node_load1{device="eth0" mode="x"} 1 1768471201000)",
               "1node_load1 1 1768471201000", "node_load1 1 1768471201000 extra", "node_load1", R"(node_load1{a="b"}1)",
               "node_load1 0.75 1768471202000"}),
        {}, strs({"n1|host|host.load1|10:00:00.000=0.5, 10:00:02.000=0.75"}),
        strs({"invalid_line|3", "invalid_line|4", "invalid_line|5", "invalid_line|6", "invalid_line|7",
              "invalid_line|8", "invalid_line|9"}),
        strs({"SELECT group_concat(column) FROM diagnostic => 19,19,26,1,28,11,18",
              "SELECT rows_read FROM import => 9"}),
        str("plain"), kFormat);
    addCase("a bad first timestamp does not decide the unit",
            lines({"# TYPE node_load1 gauge", "node_load1 1 12x", "node_load1 2 1768471200000"}), {},
            strs({"n1|host|host.load1|10:00:00.000=2"}), strs({"bad_timestamp|2"}));
    addCase("timestamp out of range",
            lines({"# TYPE node_load1 gauge", "node_load1 1 1768471200000", "node_load1 2 99999999999999999999"}), {},
            strs({"n1|host|host.load1|10:00:00.000=1"}), strs({"bad_timestamp|3"}));
    addCase("backwards time of one series",
            lines({"# TYPE node_load1 gauge", "node_load1 1 1768471201000", "node_load1 2 1768471200000",
                   "node_load1 3 1768471202000"}),
            {}, strs({"n1|host|host.load1|10:00:01.000=1, 10:00:02.000=3"}), strs({"backwards_time|3"}));
    addCase("empty file, format forced", QByteArray(), {}, {}, {}, strs({"SELECT count(*) FROM import => 0"}),
            str("plain"), kFormat, str("failed"), str("empty"));
    addCase("empty file, detected", QByteArray(), {}, {}, {}, {}, str("plain"), {}, str("not recognised"), {});
    addCase("comments only, format forced", lines({"# just a note", "# another"}), {}, {}, {}, {}, str("plain"),
            kFormat, str("failed"), str("t\\.prom:1: not Prometheus text"));
}

void TestPromTextImporter::importCases()
{
    QFETCH(QByteArray, input);
    QFETCH(QStringList, options);
    QFETCH(QString, encoding);
    QFETCH(QString, format);
    QFETCH(QString, outcome);
    QFETCH(QString, error);
    QFETCH(QStringList, points);
    QFETCH(QStringList, diagnostics);
    QFETCH(QStringList, sql);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString name = encoding == QLatin1String("zstd")   ? str("n1/t.prom.zst")
                         : encoding == QLatin1String("gzip") ? str("n1/t.prom.gz")
                                                             : str("n1/t.prom");
    const std::string path = test::writeFile(dir, name, encode(input, encoding));
    const Imported r = importKeyed(dir.filePath(str("t.runlens")).toStdString(), path, format, options);
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
    for (const QString& p : points)
        QCOMPARE(seriesText(r.db, p.section(QLatin1Char('|'), 0, 2)), p.section(QLatin1Char('|'), 3));
    const QStringList found = queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id");
    if (found != diagnostics)
        qInfo() << queryRows(r.db, "SELECT kind, line, column, message FROM diagnostic ORDER BY id");
    QCOMPARE(found, diagnostics);
}

// Without time=, samples without a timestamp are placed at the file's modification time (the end of the
// capture): one snapshot there, or with interval= the last of several.
void TestPromTextImporter::modificationTimeEstimate()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QDateTime mtime(QDate(2026, 1, 15), QTime(10, 0), Qt::UTC);
    for (const auto& [input, options, expected] :
         {std::tuple{kLoad1, QStringList(), str("10:00:00.000=0.5")},
          std::tuple{kUntimed3, strs({"interval=10"}), str("09:59:40.000=0.5, 09:59:50.000=1.5, 10:00:00.000=2.5")}}) {
        const QString sub = options.isEmpty() ? str("a") : str("b");
        const std::string path = test::writeFile(dir, sub + str("/n1/t.prom"), input.toStdString());
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::ReadWrite) && f.setFileTime(mtime, QFileDevice::FileModificationTime));
        f.close();
        const Imported r = importKeyed(dir.filePath(sub + str(".runlens")).toStdString(), path, QString(), options);
        QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
        QCOMPARE(seriesText(r.db, str("n1|host|host.load1")), expected);
        QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic"), strs({"estimated_time|2"}));
        QCOMPARE(queryOne(r.db, "SELECT summary LIKE '%modification time 2026-01-15T10:00:00Z%estimate%' FROM import"),
                 str("1"));
    }
}

void TestPromTextImporter::truncatedZstdLeavesDatabaseUnchanged()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const std::string first = test::writeFile(dir, str("a/first.prom"), nodeSnapshots().toStdString());
    QCOMPARE(outcomeName(importKeyed(db, first, QString()).outcome), "imported");
    const QString before = queryOne(db, kCountsSql);
    QCOMPARE(before, str("4|4|1|1|4|1"));

    QByteArray big;
    for (int s = 0; s < 20000; ++s)
        for (int g = 0; g < 8; ++g)
            big += "DCGM_FI_DEV_GPU_UTIL{gpu=\"" + QByteArray::number(g) + "\",hostname=\"other\"} " +
                   QByteArray::number((s + g) % 101) + ' ' + QByteArray::number(1768471200000LL + s * 1000) + '\n';
    const std::string zst = test::zstdCompress(big.toStdString());
    const std::string path = test::writeFile(dir, str("b/dcgm.prom.zst"), zst.substr(0, zst.size() / 2));
    const Imported r = importKeyed(db, path, QString());
    QCOMPARE(outcomeName(r.outcome), "failed");
    QVERIFY2(QRegularExpression(str("dcgm\\.prom\\.zst:\\d+(:\\d+)?: .*(truncated|zstd)"))
                 .match(QString::fromStdString(r.error))
                 .hasMatch(),
             r.error.c_str());
    QCOMPARE(queryOne(db, kCountsSql), before);
}

void TestPromTextImporter::garbage_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format");
    const QByteArray random = randomBytes(8192, 11);
    QTest::newRow("random binary, detected") << random << QString();
    QTest::newRow("random binary, forced") << random << kFormat;
    QTest::newRow("a scrape then random bytes") << kDcgmReadme + random << kFormat;
}

void TestPromTextImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(dir, str("garbage.prom"), input.toStdString());
    const Imported r = importKeyed(dir.filePath(str("t.runlens")).toStdString(), path, format, strs({"interval=1"}));
    if (format.isEmpty()) QVERIFY(r.importer != kFormat.toStdString());
    if (r.outcome == FileOutcome::Imported) {
        QVERIFY(input.startsWith(kDcgmReadme));
        QVERIFY(queryOne(r.db, "SELECT count(*) FROM diagnostic WHERE kind = 'invalid_line'").toInt() > 0);
        QCOMPARE(queryOne(r.db, "SELECT status FROM import_log"), str("data_loss"));
    } else {
        QVERIFY(!r.error.empty());
        QCOMPARE(queryOne(r.db, "SELECT count(*) FROM import"), str("0"));
    }
}

void TestPromTextImporter::tenMegabyteLines()
{
    constexpr int kBytes = 10 << 20;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // Line 3: 10 MB of one word; line 4: a 10 MB value; line 5: a 10 MB label value.
    std::string input = "# TYPE node_load1 gauge\nnode_load1 1 1768471201000\n" + std::string(kBytes, 'x') +
                        "\nnode_load1 " + std::string(kBytes, '7') + "y 1768471202000\nnode_load1{path=\"" +
                        std::string(kBytes, 'z') + "\"} 1 1768471203000\nnode_load1 4 1768471204000\n";
    const std::string path = test::writeFile(dir, str("n1/huge.prom"), input);
    input.clear();
    const Imported r = importKeyed(dir.filePath(str("t.runlens")).toStdString(), path, QString());
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
             strs({"invalid_line|3", "bad_number|4", "invalid_line|5"}));
    QCOMPARE(seriesText(r.db, str("n1|host|host.load1")),
             QStringLiteral("10:00:01.000=1, 10:00:02.000=?%1, 10:00:04.000=4").arg(QString(64, QLatin1Char('7'))));
    const int longest = queryOne(r.db, "SELECT max(length(message)) FROM diagnostic").toInt();
    QVERIFY2(longest < 1000, qPrintable(QStringLiteral("a diagnostic message of %1 characters").arg(longest)));
}

void TestPromTextImporter::sniff_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<int>("minScore");
    QTest::addColumn<int>("maxScore");
    QTest::addColumn<QString>("host"); // hostLabel(), "-" for none
    QTest::newRow("dcgm-exporter README") << kDcgmReadme << 90 << 100 << str("gpu-node-7");
    QTest::newRow("dcgm-exporter new hostname") << dcgmNew() << 90 << 100 << str("gpu-node-8");
    QTest::newRow("node_exporter, no host label") << nodeSnapshots() << 90 << 100 << str("-");
    QTest::newRow("instances: the first, port dropped") << kInstances << 90 << 100 << str("10.0.0.1");
    QTest::newRow("samples with labels, no HELP/TYPE") << kPromtool << 90 << 100 << str("-");
    QTest::newRow("bare samples only") << lines({"node_load1 0.5", "node_load15 0.25"}) << 1 << 29 << str("-");
    QTest::newRow("JSON") << QByteArray(R"({"status":"success","data":{"resultType":"matrix","result":[]}})") << 0 << 0
                          << str("-");
    QTest::newRow("nvidia-smi CSV") << lines(
                                           {"timestamp, index, utilization.gpu [%]", "2026/01/15 10:00:00.000, 0, 5 %"})
                                    << 0 << 0 << str("-");
    QTest::newRow("folded stacks") << lines({"main;foo;bar 12", "main;foo 3", "main;baz 1"}) << 0 << 0 << str("-");
    QTest::newRow("nvidia-smi dmon") << lines({"# gpu    pwr  gtemp  mtemp     sm    mem",
                                               "# Idx      W      C      C "
                                               "     %      %",
                                               "    0     68     37      -      0      0"})
                                     << 0 << 0 << str("-");
    QTest::newRow("sadf -d") << lines({"# hostname;interval;timestamp;CPU;%user;%nice",
                                       "node1;600;2026-01-15 10:00:00 UTC;-1;5.0;0.0"})
                             << 0 << 0 << str("-");
}

void TestPromTextImporter::sniff()
{
    QFETCH(QByteArray, head);
    QFETCH(int, minScore);
    QFETCH(int, maxScore);
    QFETCH(QString, host);
    const Importer* importer = importerByFormat(kFormat.toStdString());
    QVERIFY(importer);
    const SniffInput input{std::string_view(head.constData(), size_t(head.size())), "t.prom"};
    const int score = importer->sniff(input);
    QVERIFY2(score >= minScore && score <= maxScore, qPrintable(QString::number(score)));
    const auto label = importer->hostLabel(input);
    QCOMPARE(label ? QString::fromStdString(*label) : str("-"), host);
}

void TestPromTextImporter::realFixtures_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QStringList>("options");
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty())
        QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): real Prometheus text not tested");
    const QString pub = fixtures + str("/public/");
    int rows = 0;
    const QString e2e = pub + str("node_exporter/collector/fixtures/e2e-output.txt");
    if (QFileInfo::exists(e2e)) {
        QTest::newRow("node_exporter e2e-output.txt") << e2e << strs({"time=2026-01-15T10:00:00Z"});
        ++rows;
    }
    for (const auto& [folder, pattern] :
         {std::pair{str("prometheus/cmd/promtool/testdata"), str("*.prom")},
          std::pair{str("nvidia_gpu_exporter/internal/integration/testdata"), str("*.metrics")}}) {
        for (QDirIterator it(pub + folder, {pattern}, QDir::Files); it.hasNext();) {
            const QString f = it.next();
            QTest::newRow(
                qPrintable(folder.section(QLatin1Char('/'), 0, 0) + QLatin1Char('/') + QFileInfo(f).fileName()))
                << f << QStringList();
            ++rows;
        }
    }
    if (rows == 0) QSKIP("no Prometheus text files under the fixtures folder");
}

void TestPromTextImporter::realFixtures()
{
    QFETCH(QString, path);
    QFETCH(QStringList, options);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Imported r =
        importKeyed(dir.filePath(str("t.runlens")).toStdString(), path.toStdString(), QString(), options);
    QCOMPARE(QString::fromStdString(r.importer), kFormat);
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(queryOne(r.db, "SELECT rows_read FROM import").toInt(), sampleLines(text));
    QCOMPARE(queryOne(r.db, "SELECT count(*) FROM diagnostic WHERE kind IN ('invalid_line', 'bad_number', "
                            "'bad_timestamp', 'line_too_long')"),
             str("0"));
    QVERIFY(queryOne(r.db, "SELECT points FROM import").toInt() > 0);
}

QTEST_MAIN(TestPromTextImporter)
#include "tst_importers_prom_text.moc"
