// Prometheus text exposition 0.0.4 / OpenMetrics import (docs/formats.md §4-6): the modification time estimate, a
// cut zstd file, garbage, 10 MB lines, detection, then the real fixtures checked against an independent count of
// their sample lines. The cases of each behaviour (dcgm-exporter, node_exporter, OpenMetrics, snapshots, options,
// bad input) are folders under tests/golden/prom_text.

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

const std::string kCountsSql = countsSql({"series", "point_chunk", "import", "node", "device", "diagnostic"});

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
        const QByteArray ts = ' ' + QByteArray::number(1768471200000LL + s * 10000LL);
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

// A promtool-style OpenMetrics example (float seconds; docs/formats.md §6).
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

} // namespace

class TestPromTextImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
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
    QByteArray big;
    for (int s = 0; s < 20000; ++s)
        for (int g = 0; g < 8; ++g)
            big += "DCGM_FI_DEV_GPU_UTIL{gpu=\"" + QByteArray::number(g) + "\",hostname=\"other\"} " +
                   QByteArray::number((s + g) % 101) + ' ' + QByteArray::number(1768471200000LL + s * 1000LL) + '\n';
    checkCutZstdImport(kCountsSql, str("first.prom"), nodeSnapshots(), str("4|4|1|1|4|1"), str("dcgm.prom.zst"), big,
                       importOptions(QString(), str("UTC"), {}, {}));
}

void TestPromTextImporter::garbage_data()
{
    const QByteArray random = addGarbageRows(11, kFormat);
    QTest::newRow("a scrape then random bytes") << kDcgmReadme + random << kFormat;
}

void TestPromTextImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = writeInput(dir, str("garbage.prom"), input);
    const Imported r = importKeyed(dir.filePath(str("t.runlens")).toStdString(), path, format, strs({"interval=1"}));
    checkGarbage(r, format, kFormat, false); // detected, no input here is prometheus text, not even README + garbage
    if (r.outcome == FileOutcome::Imported) {
        QVERIFY(input.startsWith(kDcgmReadme));
        QVERIFY(queryOne(r.db, "SELECT count(*) FROM diagnostic WHERE kind = 'invalid_line'").toInt() > 0);
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
