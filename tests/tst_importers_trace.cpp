// Chrome Trace Event / Kineto import (docs/formats.md §13): detection, the busy series on hand-computed intervals,
// chunk boundaries, the trace reader, then the real traces among the fixtures checked against an independent reading
// of their JSON. The cases of each behaviour and each kind of bad input are folders under tests/golden/trace.

#include "analysis/store/run_database.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/store/trace_reader.h"
#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <memory>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

constexpr int64_t kBase = 1790857026000000000; // a Kineto baseTimeNanoseconds (a 3-month boundary)

// Imports one file as node n1; options are "key=value".
Imported importInto(const std::string& db, const std::string& path, const QStringList& extra = {},
                    const std::string& format = {})
{
    return test::importPath(db, path, QString::fromStdString(format), QStringLiteral("UTC"), extra);
}

// A Kineto trace object: distributedInfo and baseTimeNanoseconds before the events, as torch.profiler writes.
QByteArray kineto(const QByteArrayList& events, const QByteArray& head = R"j("distributedInfo": {"backend": "nccl",
    "rank": 3, "world_size": 8}, "baseTimeNanoseconds": 1790857026000000000,)j")
{
    return "{\n  \"schemaVersion\": 1,\n  " + head + "\n  \"traceEvents\": [\n  " + events.join(",\n  ") +
           "\n  ],\n  \"traceName\": \"t.json\"\n}\n";
}

QByteArray bareArray(const QByteArrayList& events)
{
    return "[" + events.join(",\n") + "]\n";
}

const QByteArray kKernel = R"j({"ph": "X", "cat": "kernel", "name": "void gemm<128>(float*)", "pid": 0, "tid": 7,
    "ts": 5084761999090.898, "dur": 134.056, "args": {"External id": 3, "device": 0, "stream": 7,
    "correlation": 22}})j";
const QByteArray kCpuOp = R"j({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 461, "tid": 498,
    "ts": 5084761999000.001, "dur": 80.5, "args": {"External id": 3}})j";
const QByteArray kThreadName = R"j({"name": "thread_name", "ph": "M", "ts": 5084761999000, "pid": 461, "tid": 498,
    "args": {"name": "thread 498 (python3)"}})j";

// A complete event; ts and dur in µs, args the inside of its args object.
QByteArray complete(const char* cat, const char* name, int pid, int tid, double tsUs, double durUs,
                    const char* args = "")
{
    QByteArray e = QByteArray("{\"ph\": \"X\", \"cat\": \"") + cat + "\", \"name\": \"" + name +
                   "\", \"pid\": " + QByteArray::number(pid) + ", \"tid\": " + QByteArray::number(tid) +
                   ", \"ts\": " + QByteArray::number(tsUs, 'f', 3) + ", \"dur\": " + QByteArray::number(durUs, 'f', 3);
    if (*args) e += QByteArray(", \"args\": {") + args + "}";
    return e + "}";
}

} // namespace

class TestTraceImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        m_tmp = std::make_unique<QTemporaryDir>();
        QVERIFY(m_tmp->isValid());
    }
    void sniff_data();
    void sniff();
    void busySeries_data();
    void busySeries();
    void chunkBoundaries();
    void invalidJsonLeavesDatabase();
    void reader();
    void glooFixture();
    void fsdpFixture();
    void publicFixtures();

private:
    std::string write(const QString& name, const QByteArray& bytes)
    {
        return test::writeFile(*m_tmp, name, bytes.toStdString());
    }
    std::string db() const { return m_tmp->filePath(QStringLiteral("run.runlens")).toStdString(); }
    std::unique_ptr<QTemporaryDir> m_tmp;
};

void TestTraceImporter::sniff_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format"); // detected, or "" when not recognised
    const QString trace = QStringLiteral("chrome-trace");
    QTest::newRow("Kineto object") << kineto({kCpuOp}) << trace;
    QTest::newRow("blank line, then the object") << "\n\n" + kineto({kCpuOp}) << trace;
    QTest::newRow("bare array") << bareArray({kCpuOp}) << trace;
    QTest::newRow("bare array, compact") << QByteArray(R"j([{"ph":"B","name":"a","pid":1,"tid":1,"ts":0}])j") << trace;
    QTest::newRow("speedscope file")
        << QByteArray(R"j({"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": []},
        "profiles": []})j")
        << QStringLiteral("speedscope");
    QTest::newRow("metrics JSON lines")
        << QByteArray(R"j({"ts": 1768471200, "node": "n", "device": "gpu:0", "metric": "gpu.util", "value": 5})j"
                      "\n")
        << QStringLiteral("metrics-csv");
    QTest::newRow("a JSON array of numbers") << QByteArray("[1, 2, 3]\n") << QString();
}

void TestTraceImporter::sniff()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    const auto [importer, score] = detectFormat({std::string_view(input.constData(), size_t(input.size())), "x.json"});
    QCOMPARE(importer ? QString::fromLatin1(importer->format().data(), qsizetype(importer->format().size()))
                      : QString(),
             format);
    Q_UNUSED(score);
}

void TestTraceImporter::busySeries_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QStringList>("series"); // device|metric|labels|ms from the first bin=value, ...
    // Times in ms from a 10 ms boundary (ts µs = 5084761990000 + ms * 1000); the CPU step span makes the span.
    auto x = [](const char* cat, const char* name, int pid, int tid, double ms, double durMs) {
        return complete(cat, name, pid, tid, 5084761990000.0 + ms * 1000, durMs * 1000);
    };
    const QByteArrayList events = {x("user_annotation", "ProfilerStep#1", 1, 1, 0, 20),
                                   x("kernel", "gemm", 0, 7, 0, 5),
                                   x("kernel", "gemm", 0, 7, 3, 5),
                                   x("kernel", "ncclDevKernel_AllGather_RING_LL", 0, 22, 12, 2),
                                   x("gpu_memcpy", "Memcpy HtoD", 0, 7, 15, 4),
                                   x("user_annotation", "gloo:all_reduce", 1, 1, 5, 10)};
    QTest::newRow("10 ms bins: union of overlapping kernels, comm kernels are kernels, memcpy is not")
        << kineto(events) << QStringList()
        << strs({"gpu:0|gpu.comm_busy|rank=3|0=0, 10=0.2", "gpu:0|gpu.kernel_busy|rank=3|0=0.8, 10=0.2",
                 "host|trace.collective_busy|rank=3|0=0.5, 10=0.5"});
    QTest::newRow("busy_interval=5ms") << kineto(events) << strs({"busy_interval=5ms"})
                                       << strs({"gpu:0|gpu.comm_busy|rank=3|0=0, 5=0, 10=0.4, 15=0",
                                                "gpu:0|gpu.kernel_busy|rank=3|0=1, 5=0.6, 10=0.4, 15=0",
                                                "host|trace.collective_busy|rank=3|0=0, 5=1, 10=1, 15=0"});
    QTest::newRow("edge bins: the fraction of the part the trace covers")
        << kineto({x("user_annotation", "ProfilerStep#1", 1, 1, 2, 11), x("kernel", "gemm", 0, 7, 2, 4),
                   x("kernel", "ncclDevKernel_ReduceScatter", 0, 22, 11, 2),
                   x("user_annotation", "nccl:all_reduce", 1, 1, 4, 8)})
        << QStringList()
        << strs({"gpu:0|gpu.comm_busy|rank=3|0=0, 10=0.666667", "gpu:0|gpu.kernel_busy|rank=3|0=0.5, 10=0.666667",
                 "host|trace.collective_busy|rank=3|0=0.75, 10=0.666667"});
    QTest::newRow("no distributedInfo and no collective: GPU series only, rank=-1")
        << kineto({x("kernel", "gemm", 0, 7, 0, 5), x("cpu_op", "aten::mm", 1, 1, 0, 10)}, "") << QStringList()
        << strs({"gpu:0|gpu.comm_busy|rank=-1|0=0", "gpu:0|gpu.kernel_busy|rank=-1|0=0.5"});
}

void TestTraceImporter::busySeries()
{
    QFETCH(QByteArray, input);
    QFETCH(QStringList, options);
    QFETCH(QStringList, series);
    const QByteArray withBase = input.contains("baseTimeNanoseconds")
                                    ? input
                                    : QByteArray(input).replace("\"traceEvents\"", "\"baseTimeNanoseconds\": "
                                                                                   "1790857026000000000, "
                                                                                   "\"traceEvents\"");
    const Imported r = importInto(db(), write(QStringLiteral("t.json"), withBase), options);
    QCOMPARE(r.outcome, FileOutcome::Imported);
    const int64_t first = kBase + 5084761990000000;
    QStringList got;
    for (const QString& row :
         queryRows(db(), "SELECT device, metric, labels FROM series_summary ORDER BY device, metric")) {
        const QStringList k = row.split(QLatin1Char('|'));
        const QStringList points =
            queryRows(db(), "SELECT (ts_ns - " + std::to_string(first) +
                                ") / 1000000, value FROM series_points WHERE "
                                "device = '" +
                                k[0].toStdString() + "' AND metric = '" + k[1].toStdString() + "' ORDER BY ts_ns");
        got << row + QLatin1Char('|') + points.join(QStringLiteral(", ")).replace(QLatin1Char('|'), QLatin1Char('='));
    }
    QCOMPARE(got, series);
}

void TestTraceImporter::chunkBoundaries()
{
    // Over 4 MB of events (the parse goes in chunks of that size), names holding quotes, backslashes, brackets
    // and "}, {" so a chunk boundary can only be found by following the strings.
    QByteArrayList events;
    const int n = 50000;
    for (int i = 0; i < n; ++i)
        events << QByteArray(R"j({"ph": "X", "cat": "cpu_op", "name": "op \"}, {\" [\\)j" + QByteArray::number(i % 7) +
                             R"j(] \\", "pid": 1, "tid": 1, "ts": )j" + QByteArray::number(5084761990000 + i) +
                             R"j(, "dur": 1, "args": {"Input Dims": [[2048, 4], []], "note": "}, {\"ph\": \"X\""}})j");
    const QByteArray text = kineto(events);
    QVERIFY(text.size() > qsizetype{2} * (4 << 20));
    QCOMPARE(importInto(db(), write(QStringLiteral("big.json"), text)).outcome, FileOutcome::Imported);
    QCOMPARE(queryRows(db(), "SELECT count(*), count(DISTINCT name_id), min(ts_ns), max(ts_ns) FROM trace_slice"),
             QStringList{QStringLiteral("%1|7|%2|%3")
                             .arg(n)
                             .arg(kBase + 5084761990000000)
                             .arg(kBase + (5084761990000LL + n - 1) * 1000)});
    QCOMPARE(queryRows(db(), "SELECT name FROM trace_name ORDER BY name LIMIT 1"),
             QStringList{QStringLiteral("op \"}, {\" [\\0] \\")});
    QCOMPARE(queryRows(db(), "SELECT count(*) FROM diagnostic"), QStringList{QStringLiteral("0")});
}

void TestTraceImporter::invalidJsonLeavesDatabase()
{
    QCOMPARE(importInto(db(), write(QStringLiteral("ok.json"), kineto({kCpuOp, kKernel}))).outcome,
             FileOutcome::Imported);
    const std::string counts = "SELECT (SELECT count(*) FROM trace_slice), (SELECT count(*) FROM trace_track), "
                               "(SELECT count(*) FROM trace_name), (SELECT count(*) FROM series), "
                               "(SELECT count(*) FROM import)";
    const QStringList before = queryRows(db(), counts);
    QByteArray broken = kineto({kThreadName, kCpuOp, kKernel});
    broken.replace("\"dur\": 80.5", "\"dur\": 80.5,,");
    const Imported r = importInto(db(), write(QStringLiteral("broken.json"), broken));
    QCOMPARE(r.outcome, FileOutcome::Failed);
    QVERIFY2(r.error.find("broken.json:") != std::string::npos && r.error.find("invalid JSON") != std::string::npos,
             r.error.c_str());
    QCOMPARE(queryRows(db(), counts), before);
}

void TestTraceImporter::reader()
{
    QCOMPARE(importInto(db(), write(QStringLiteral("t.json"), kineto({kThreadName, kCpuOp, kKernel}))).outcome,
             FileOutcome::Imported);
    {
        auto rw = store::RunDatabase::open(db(), store::OpenMode::ReadWrite);
        QVERIFY(rw);
        QVERIFY(store::execSql((*rw)->handle(), "UPDATE node SET clock_offset_ns = 1000"));
    }
    auto opened = store::RunDatabase::open(db(), store::OpenMode::ReadOnly);
    QVERIFY(opened);
    store::TraceReader reader(**opened);
    auto tracks = reader.tracks();
    QVERIFY(tracks);
    QCOMPARE(int(tracks->size()), 2);
    QCOMPARE(QString::fromStdString(tracks->at(1).device), QStringLiteral("gpu:0"));
    QCOMPARE(QString::fromStdString(tracks->at(0).name), QStringLiteral("thread 498 (python3)"));
    const int64_t cpuStart = kBase + 5084761999000001 + 1000; // with the node's clock offset
    auto all = reader.slices({});
    QVERIFY(all);
    QCOMPARE(int(all->size()), 2);
    QCOMPARE(all->at(0).tsNs, cpuStart);
    QCOMPARE(all->at(1).correlation.value_or(-1), 22);
    // A window that starts inside the CPU op still finds it; one category only.
    auto kernels = reader.slices({cpuStart + 50'000, cpuStart + 60'000}, {{store::TraceCategory::CpuOp}, 3, {}, {}});
    QVERIFY(kernels);
    QCOMPARE(int(kernels->size()), 1);
    QCOMPARE(QString::fromStdString(kernels->front().name), QStringLiteral("aten::mm"));
    auto none = reader.slices({}, {{}, 4, {}, {}});
    QVERIFY(none && none->empty());
    // The CPU op covers [0, 80.5 µs) of the window, the kernel [90.897, 224.953 µs).
    auto covered = reader.coveredNs({cpuStart, cpuStart + 100'000});
    QVERIFY(covered);
    QCOMPARE(*covered, int64_t(80'500 + 100'000 - 90'897));
}

void TestTraceImporter::glooFixture()
{
    const QString root = test::fixturesDir();
    if (root.isEmpty()) QSKIP("no fixtures folder (../shared/fixtures): real Kineto traces not tested");
    for (int rank : {0, 1}) {
        const QString path = root + QStringLiteral("/h200-gloo-small/kineto-rank%1-baseline.json").arg(rank);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        const QJsonObject doc = QJsonDocument::fromJson(text).object();
        // Independently: the kernels, and the profiled step (ProfilerStep#N, else the profiler's own span).
        int kernels = 0;
        double stepTs = -1, stepDur = 0;
        for (const QJsonValue v : doc.value(QStringLiteral("traceEvents")).toArray()) {
            const QJsonObject e = v.toObject();
            const QString cat = e.value(QStringLiteral("cat")).toString().toLower();
            if (e.value(QStringLiteral("ph")).toString() != QLatin1String("X")) continue;
            if (cat == QLatin1String("kernel")) ++kernels;
            const bool step = e.value(QStringLiteral("name")).toString().startsWith(QLatin1String("ProfilerStep#"));
            if (step || (cat == QLatin1String("trace") && stepTs < 0)) {
                stepTs = e.value(QStringLiteral("ts")).toDouble();
                stepDur = e.value(QStringLiteral("dur")).toDouble();
            }
        }
        QVERIFY(kernels > 0 && stepTs > 0 && stepDur > 0);
        const QString base = QRegularExpression(QStringLiteral("\"baseTimeNanoseconds\":\\s*(\\d+)"))
                                 .match(QString::fromLatin1(text.left(4096)))
                                 .captured(1);
        QVERIFY(!base.isEmpty());
        const store::TimeWindow step{base.toLongLong() + llround(stepTs * 1000),
                                     base.toLongLong() + llround((stepTs + stepDur) * 1000)};

        const std::string run = m_tmp->filePath(QStringLiteral("gloo%1.runlens").arg(rank)).toStdString();
        QCOMPARE(importInto(run, path.toStdString()).outcome, FileOutcome::Imported);
        QCOMPARE(queryRows(run, "SELECT DISTINCT rank FROM trace_track"), QStringList{QString::number(rank)});
        QCOMPARE(queryRows(run, "SELECT sum(slices) FROM trace_summary WHERE category IN ('kernel', 'comm_kernel')"),
                 QStringList{QString::number(kernels)});
        QCOMPARE(queryRows(run, "SELECT summary LIKE '%world size 2, backend gloo%' FROM import"),
                 QStringList{QStringLiteral("1")});

        auto opened = store::RunDatabase::open(run, store::OpenMode::ReadOnly);
        QVERIFY(opened);
        store::TraceReader reader(**opened);
        auto collectives = reader.slices(step, {{store::TraceCategory::Collective}, rank, {}, {}});
        QVERIFY(collectives);
        // The union of the gloo:all_reduce spans, clipped to the step.
        std::vector<std::pair<int64_t, int64_t>> spans;
        for (const store::TraceSliceInfo& s : *collectives)
            if (s.name == "gloo:all_reduce")
                spans.emplace_back(std::max(s.tsNs, step.fromNs), std::min(s.tsNs + s.durNs, step.toNs));
        QVERIFY(!spans.empty());
        int64_t gloo = 0, end = step.fromNs;
        for (const auto& [a, b] : spans) { // in time order
            if (b > std::max(a, end)) gloo += b - std::max(a, end);
            end = std::max(end, b);
        }
        auto kernelTime =
            reader.coveredNs(step, {{store::TraceCategory::Kernel, store::TraceCategory::CommKernel}, rank, {}, {}});
        QVERIFY(kernelTime);
        const double span = double(step.toNs - step.fromNs);
        QVERIFY2(gloo / span > 0.8, qPrintable(QStringLiteral("gloo covers %1").arg(gloo / span)));
        QVERIFY2(*kernelTime / span < 0.2, qPrintable(QStringLiteral("kernels cover %1").arg(*kernelTime / span)));
        // The busy series say the same, bin by bin on average.
        const QStringList means =
            queryRows(run, "SELECT metric, avg(value) FROM series_points WHERE metric IN "
                           "('gpu.kernel_busy', 'trace.collective_busy') GROUP BY metric ORDER BY "
                           "metric");
        QCOMPARE(means.size(), 2);
        QVERIFY2(means[0].section(QLatin1Char('|'), 1).toDouble() < 0.2, qPrintable(means.join(QLatin1Char(' '))));
        QVERIFY2(means[1].section(QLatin1Char('|'), 1).toDouble() > 0.8, qPrintable(means.join(QLatin1Char(' '))));
    }
}

void TestTraceImporter::fsdpFixture()
{
    const QString root = test::fixturesDir();
    if (root.isEmpty()) QSKIP("no fixtures folder (../shared/fixtures): real Kineto traces not tested");
    for (int rank : {0, 1}) {
        const QString path = root + QStringLiteral("/h200x2-fsdp-hang/kineto-rank%1-zero3.json").arg(rank);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        int kernels = 0, allGather = 0, reduceScatter = 0;
        for (const QJsonValue v :
             QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("traceEvents")).toArray()) {
            const QJsonObject e = v.toObject();
            if (e.value(QStringLiteral("cat")).toString().toLower() != QLatin1String("kernel")) continue;
            ++kernels;
            const QString name = e.value(QStringLiteral("name")).toString();
            allGather += name.startsWith(QLatin1String("ncclDevKernel_AllGather_")) ? 1 : 0;
            reduceScatter += name.startsWith(QLatin1String("ncclDevKernel_ReduceScatter_")) ? 1 : 0;
        }
        QVERIFY(allGather > 0 && reduceScatter > 0);
        const std::string run = m_tmp->filePath(QStringLiteral("fsdp%1.runlens").arg(rank)).toStdString();
        QCOMPARE(importInto(run, path.toStdString()).outcome, FileOutcome::Imported);
        QCOMPARE(queryRows(run, "SELECT DISTINCT rank FROM trace_track"), QStringList{QString::number(rank)});
        QCOMPARE(queryRows(run, "SELECT sum(slices) FROM trace_summary WHERE category IN ('kernel', 'comm_kernel')"),
                 QStringList{QString::number(kernels)});
        const std::string byName = "SELECT s.category, count(*) FROM trace_slice s JOIN trace_name n ON n.id = "
                                   "s.name_id WHERE n.name LIKE 'ncclDevKernel_%' GROUP BY s.category";
        QCOMPARE(queryRows(run, byName), QStringList{QStringLiteral("comm_kernel|%1").arg(allGather + reduceScatter)});
        QCOMPARE(queryRows(run, "SELECT count(*) FROM trace_slice s JOIN trace_name n ON n.id = s.name_id WHERE "
                                "s.category = 'kernel' AND n.name LIKE 'nccl%'"),
                 QStringList{QStringLiteral("0")});
        // NCCL kernels wait on the GPU for the sockets: they cover most of the profiled step on their own.
        const double comm =
            queryRows(run, "SELECT avg(value) FROM series_points WHERE metric = 'gpu.comm_busy'").value(0).toDouble();
        QVERIFY2(comm > 0.5, qPrintable(QString::number(comm)));
    }
}

void TestTraceImporter::publicFixtures()
{
    const QString root = test::fixturesDir();
    if (root.isEmpty()) QSKIP("no fixtures folder (../shared/fixtures): public traces not tested");
    const QString hta = root + QStringLiteral("/public/HolisticTraceAnalysis/tests/data/");
    const std::string run = db();
    for (int rank : {0, 1}) {
        const auto r =
            importInto(run, (hta + QStringLiteral("trace_filter/sampled_rank-%1.json.gz").arg(rank)).toStdString());
        QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
        QCOMPARE(r.importer, std::string("chrome-trace"));
    }
    QCOMPARE(queryRows(run, "SELECT DISTINCT rank FROM trace_track ORDER BY rank"),
             (QStringList{QStringLiteral("0"), QStringLiteral("1")}));
    QCOMPARE(queryRows(run, "SELECT count(DISTINCT labels) FROM series_summary WHERE metric = 'gpu.kernel_busy'"),
             QStringList{QStringLiteral("2")});

    const auto amd =
        importInto(run, (hta + QStringLiteral("amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")).toStdString());
    QVERIFY2(amd.outcome == FileOutcome::Imported, amd.error.c_str());
    QVERIFY(amd.result.rowsRead > 0);
    QCOMPARE(queryRows(run, "SELECT count(*) > 0 FROM trace_summary WHERE rank = -1 AND category = 'kernel'"),
             QStringList{QStringLiteral("1")});

    // speedscope's sample: B/E and X events with relative ts, and one X with only tdur.
    const std::string simple =
        (root + QStringLiteral("/public/speedscope/sample/profiles/trace-event/simple.json")).toStdString();
    const auto refused = importInto(run, simple);
    QCOMPARE(refused.outcome, FileOutcome::Failed);
    QVERIFY2(refused.error.find("start=") != std::string::npos, refused.error.c_str());
    const auto placed = importInto(run, simple, strs({"start=2026-01-01T00:00:00Z"}));
    QVERIFY2(placed.outcome == FileOutcome::Imported, placed.error.c_str());
    QCOMPARE(placed.importer, std::string("chrome-trace"));
    QCOMPARE(queryRows(run,
                       "SELECT n.name, s.ts_ns - 1767225600000000000, s.dur_ns FROM trace_slice s JOIN trace_name n ON "
                       "n.id = s.name_id JOIN trace_track t ON t.id = s.track_id WHERE t.rank = -1 AND t.pid = '0' AND "
                       "t.kind = 'cpu' "
                       "ORDER BY s.ts_ns"),
             strs({"alpha|0|14000", "beta|1000|12000", "gamma|2000|5000", "epsilon|7000|4000"}));
}

QTEST_GUILESS_MAIN(TestTraceImporter)
#include "tst_importers_trace.moc"
