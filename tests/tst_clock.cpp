// Node clock offsets (analysis/clock): a generated 4-node run whose node clocks are off by known amounts, its
// offsets estimated back from per-rank Kineto traces and, separately, from nvidia-smi utilization alone; user-set
// offsets kept; ambiguous activity refused; and a flame window over two nodes showing the same step once aligned.

#include "analysis/clock/clock_align.h"
#include "analysis/clock/clock_estimate.h"
#include "analysis/flame/flame_tree.h"
#include "analysis/store/node_clock.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "importers/import_session.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <set>

using namespace runlens;
using namespace runlens::analysis;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'793'606'400LL * kSecond; // true time of the first step's start
constexpr int64_t kBase = 1'790'857'026LL * kSecond;  // the traces' baseTimeNanoseconds
constexpr int kNodes = 4, kRanksPerNode = 2;

// The offset that lines node n up with node0 (what estimation must find): node n's clock reads true - offset.
const int64_t kTrueOffset[kNodes] = {0, -3 * kSecond, 400 * kMs, 12 * kSecond};

// A small deterministic generator (the run is the same on every machine).
struct Lcg
{
    uint64_t state;
    double next() // [0, 1)
    {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) / 9007199254740992.0;
    }
};

// True step ends: steps of 6 to 9 s (never a whole number of metric intervals, never strictly periodic).
std::vector<int64_t> stepEnds(int steps, uint64_t seed = 17)
{
    Lcg rng{seed};
    std::vector<int64_t> ends;
    int64_t t = kStart;
    for (int k = 0; k < steps; ++k) {
        t += 6 * kSecond + static_cast<int64_t>(rng.next() * 3e9);
        ends.push_back(t);
    }
    return ends;
}

std::string importAs(const std::string& db, const std::vector<std::string>& paths, const std::string& node)
{
    importers::ImportOptions options;
    options.node = node;
    options.timeZone = "UTC";
    auto plan = importers::planImport(paths, options);
    if (!plan) return plan.error().toString();
    auto database = store::RunDatabase::open(db, store::OpenMode::Create);
    if (!database) return database.error().toString();
    for (const auto& f : *plan) {
        const auto r = importers::importFile(**database, f, options);
        if (r.outcome != importers::FileOutcome::Imported)
            return f.path + ": " + (r.error ? r.error->toString() : "not imported");
    }
    return {};
}

// One rank's Kineto trace on its node's clock: per step a GEMM, then an NCCL all-reduce kernel and its CPU-side
// nccl:all_reduce span that end at the step's true end (± a few µs), having started when this rank got there.
std::string kinetoTrace(int node, int local, const std::vector<int64_t>& ends, Lcg& rng)
{
    const int rank = node * kRanksPerNode + local;
    auto us = [&](int64_t trueNs) { return static_cast<double>(trueNs - kTrueOffset[node] - kBase) / 1000.0; };
    std::string events;
    auto add = [&](const char* cat, const char* name, int pid, int tid, int64_t from, int64_t to, const char* args) {
        events += fmt::format(R"({}{{"ph": "X", "cat": "{}", "name": "{}", "pid": {}, "tid": {}, "ts": {:.3f}, )"
                              R"("dur": {:.3f}, "args": {{{}}}}})",
                              events.empty() ? "" : ",\n", cat, name, pid, tid, us(from), us(to) - us(from), args);
    };
    for (int64_t end : ends) {
        const int64_t skew = static_cast<int64_t>(rng.next() * 4000) - 2000; // ±2 µs: ends seen by each rank
        const int64_t arrive = end - 5 * kMs - static_cast<int64_t>(rng.next() * 200 * kMs);
        add("kernel", "void gemm<128>(float*)", local, 7, arrive - 2 * kSecond, arrive - kSecond,
            R"("device": 0, "stream": 7)");
        add("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", local, 20,
            arrive, end + skew, R"("device": 0, "stream": 20)");
        add("user_annotation", "nccl:all_reduce", 4000 + rank, 4000 + rank, arrive - 50'000, end + skew + 30'000, "");
    }
    return fmt::format(R"({{"schemaVersion": 1, "distributedInfo": {{"backend": "nccl", "rank": {}, "world_size": {}}},
"baseTimeNanoseconds": {}, "traceEvents": [
{}
], "traceName": "rank{}.json"}}
)",
                       rank, kNodes * kRanksPerNode, kBase, events, rank);
}

// nvidia-smi --query-gpu at `interval` on node n's clock: each GPU busy but for `dipNs` after every true step end
// (the optimizer step and the next batch), the utilization the share of the last interval that was busy. Without
// step ends, 300 s of steady work.
std::string nvsmiCsv(int node, const std::vector<int64_t>& ends, int64_t interval, int64_t dipNs, Lcg& rng)
{
    std::string s = "timestamp, index, name, pci.bus_id, utilization.gpu [%], memory.used [MiB]\n";
    const int64_t last = ends.empty() ? kStart + 300 * kSecond : ends.back() + 20 * kSecond;
    for (int64_t local = kStart - 20 * kSecond; local < last; local += interval) {
        const int64_t to = local + kTrueOffset[node], from = to - interval; // the interval in true time
        int64_t idle = 0;
        for (int64_t e : ends)
            idle += std::max<int64_t>(0, std::min(to, e + dipNs) - std::max(from, e));
        const QString when =
            QDateTime::fromMSecsSinceEpoch(local / kMs, Qt::UTC).toString(QStringLiteral("yyyy/MM/dd HH:mm:ss.zzz"));
        for (int g = 0; g < 2; ++g) {
            const double busy = 1.0 - static_cast<double>(idle) / static_cast<double>(interval);
            const int util = std::clamp(static_cast<int>(std::lround(96 * busy + 3 * rng.next())), 0, 100);
            s += fmt::format("{}, {}, NVIDIA H200, 00000000:{}:00.0, {} %, 1000 MiB\n", when.toStdString(), g, 10 + g,
                             util);
        }
    }
    return s;
}

std::string nodeName(int n)
{
    return "node" + std::to_string(n);
}

const ClockEstimate* estimateOf(const ClockEstimates& all, const std::string& node)
{
    for (const ClockEstimate& e : all.nodes)
        if (e.node == node) return &e;
    return nullptr;
}

std::map<std::string, store::NodeInfo> nodesByName(store::RunDatabase& db)
{
    std::map<std::string, store::NodeInfo> out;
    store::RunReader reader(db);
    auto nodes = reader.nodes();
    if (nodes)
        for (const auto& n : *nodes)
            out[n.name] = n;
    return out;
}

} // namespace

class TestClock : public QObject
{
    Q_OBJECT

private:
    // Writes the 4-node run's traces (traces) or nvidia-smi logs (metrics) and imports them, a node per folder.
    std::string writeRun(const QTemporaryDir& dir, bool traces, bool metrics, int64_t interval = kSecond,
                         uint64_t seed = 17, int steps = 36)
    {
        const std::vector<int64_t> ends = stepEnds(steps, seed);
        Lcg rng{seed * 31 + 1};
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        for (int n = 0; n < kNodes; ++n) {
            std::vector<std::string> paths;
            for (int local = 0; traces && local < kRanksPerNode; ++local)
                paths.push_back(test::writeFile(dir, QString::fromStdString(fmt::format("n{}-rank{}.json", n, local)),
                                                kinetoTrace(n, local, ends, rng)));
            if (metrics)
                paths.push_back(test::writeFile(dir, QString::fromStdString(fmt::format("n{}-smi.csv", n)),
                                                nvsmiCsv(n, ends, interval, 700 * kMs, rng)));
            const std::string error = importAs(db, paths, nodeName(n));
            if (!error.empty()) qWarning("%s", error.c_str());
        }
        return db;
    }

private Q_SLOTS:
    void fromTraces()
    {
        QTemporaryDir dir;
        const std::string path = writeRun(dir, true, false);
        auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
        QVERIFY_OK(db);
        auto est = estimateClockOffsets(**db);
        QVERIFY_OK(est);
        QCOMPARE(est->reference, std::string("node0"));
        for (int n = 0; n < kNodes; ++n) {
            const ClockEstimate* e = estimateOf(*est, nodeName(n));
            QVERIFY(e);
            QVERIFY2(e->found, e->method.c_str());
            QCOMPARE(e->source, std::string("traces"));
            const int64_t error = e->offsetNs - kTrueOffset[n];
            qInfo("%s: true %s, from traces %s ±%s (%s)", e->node.c_str(), formatClockDuration(kTrueOffset[n]).c_str(),
                  formatClockDuration(e->offsetNs).c_str(), formatClockDuration(e->uncertaintyNs, false).c_str(),
                  e->method.c_str());
            QVERIFY2(std::llabs(error) < 50 * kMs, e->method.c_str());
            QVERIFY(e->uncertaintyNs < 50 * kMs);
            if (n > 0) QVERIFY(e->matches >= 36);
        }
        // Stored and applied: node3's NCCL kernels now end where node0's do.
        auto changes = applyClockEstimates(**db, *est, false);
        QVERIFY_OK(changes);
        const auto nodes = nodesByName(**db);
        for (int n = 0; n < kNodes; ++n) {
            const store::NodeInfo& info = nodes.at(nodeName(n));
            QVERIFY(std::llabs(info.clockOffsetNs - kTrueOffset[n]) < 50 * kMs);
            QCOMPARE(info.clockOffsetSource, std::string("traces"));
            QVERIFY(info.clockOffsetUncertaintyNs.has_value());
        }
        // Estimating again gives the same: the times as imported are used, not the ones already shifted.
        auto again = estimateClockOffsets(**db);
        QVERIFY_OK(again);
        for (int n = 0; n < kNodes; ++n)
            QCOMPARE(estimateOf(*again, nodeName(n))->offsetNs, estimateOf(*est, nodeName(n))->offsetNs);
    }

    void fromMetrics_data()
    {
        QTest::addColumn<qint64>("interval");
        QTest::addColumn<quint64>("seed");
        QTest::newRow("1 s") << qint64(kSecond) << quint64(17);
        QTest::newRow("1 s, other steps") << qint64(kSecond) << quint64(5);
        QTest::newRow("250 ms") << qint64(250 * kMs) << quint64(23);
    }

    void fromMetrics()
    {
        QFETCH(qint64, interval);
        QFETCH(quint64, seed);
        QTemporaryDir dir;
        const std::string path = writeRun(dir, false, true, interval, seed);
        auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
        QVERIFY_OK(db);
        auto est = estimateClockOffsets(**db);
        QVERIFY_OK(est);
        QVERIFY(!est->reference.empty());
        const int64_t refOffset = kTrueOffset[est->reference.back() - '0'];
        for (int n = 0; n < kNodes; ++n) {
            const ClockEstimate* e = estimateOf(*est, nodeName(n));
            QVERIFY(e);
            QVERIFY2(e->found, e->method.c_str());
            QCOMPARE(e->source, std::string("metrics"));
            const int64_t truth = kTrueOffset[n] - refOffset;
            qInfo("%s: true %s, from metrics %s ±%s (%s)", e->node.c_str(), formatClockDuration(truth).c_str(),
                  formatClockDuration(e->offsetNs).c_str(), formatClockDuration(e->uncertaintyNs, false).c_str(),
                  e->method.c_str());
            QVERIFY2(std::llabs(e->offsetNs - truth) <= interval, e->method.c_str());
            if (!e->reference) QCOMPARE(e->uncertaintyNs, interval);
        }
    }

    // After an import into a run whose offsets were estimated, only the new node is estimated (and the reference it
    // is lined up with) unless it takes the reference's place; either way the stored offsets are a full estimate's.
    void changedNodesOnly_data()
    {
        QTest::addColumn<bool>("traces");
        QTest::addColumn<int>("ranks");       // the new node's traced ranks
        QTest::addColumn<qint64>("interval"); // the new node's nvidia-smi interval (0: none)
        QTest::addColumn<int>("unchanged");   // nodes not estimated again
        QTest::addColumn<QString>("reference");
        QTest::addColumn<qint64>("userReferenceOffset"); // set on node0 between the estimates (0: none)
        QTest::newRow("traces, a node like the others")
            << true << kRanksPerNode << qint64(0) << 2 << "node0" << qint64(0);
        QTest::newRow("traces, a node with more ranks")
            << true << kRanksPerNode + 1 << qint64(0) << 0 << "node3" << qint64(0);
        QTest::newRow("metrics, a node like the others") << false << 0 << qint64(kSecond) << 2 << "node0" << qint64(0);
        QTest::newRow("metrics, a node sampled twice as often")
            << false << 0 << qint64(kSecond / 2) << 0 << "node3" << qint64(0);
        // The others were stored relative to the reference's old offset: all of them are estimated again.
        QTest::newRow("metrics, the reference's offset set by the user")
            << false << 0 << qint64(kSecond) << 0 << "node0" << qint64(2 * kSecond);
    }

    void changedNodesOnly()
    {
        QFETCH(bool, traces);
        QFETCH(int, ranks);
        QFETCH(qint64, interval);
        QFETCH(int, unchanged);
        QFETCH(QString, reference);
        QFETCH(qint64, userReferenceOffset);
        QTemporaryDir dir;
        const std::vector<int64_t> ends = stepEnds(36);
        Lcg rng{99};
        const std::string path = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        auto importNode = [&](int n, int traced, int64_t every) {
            std::vector<std::string> paths;
            for (int local = 0; local < traced; ++local)
                paths.push_back(test::writeFile(dir, QString::fromStdString(fmt::format("n{}-rank{}.json", n, local)),
                                                kinetoTrace(n, local, ends, rng)));
            if (every > 0)
                paths.push_back(test::writeFile(dir, QString::fromStdString(fmt::format("n{}-smi.csv", n)),
                                                nvsmiCsv(n, ends, every, 700 * kMs, rng)));
            return importAs(path, paths, nodeName(n));
        };
        for (int n = 0; n + 1 < kNodes; ++n)
            QCOMPARE(importNode(n, traces ? kRanksPerNode : 0, traces ? 0 : kSecond), std::string());
        {
            auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
            QVERIFY_OK(db);
            auto first = estimateClockOffsets(**db, {}, ClockScope::Changed); // nothing kept yet: every node
            QVERIFY_OK(first);
            QCOMPARE(first->nodes.size(), size_t(kNodes - 1));
            QVERIFY_OK(applyClockEstimates(**db, *first, false));
            if (userReferenceOffset != 0)
                QVERIFY_OK(store::setNodeClockOffset(**db, "node0", userReferenceOffset, 0, store::kClockSourceUser));
        }
        QCOMPARE(importNode(kNodes - 1, ranks, interval), std::string());
        auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
        QVERIFY_OK(db);
        auto est = estimateClockOffsets(**db, {}, ClockScope::Changed);
        QVERIFY_OK(est);
        QCOMPARE(QString::fromStdString(est->reference), reference);
        QCOMPARE(est->unchanged, size_t(unchanged));
        QCOMPARE(est->nodes.size(), size_t(kNodes - unchanged));
        QVERIFY(estimateOf(*est, "node3") && estimateOf(*est, "node3")->found);
        QVERIFY_OK(applyClockEstimates(**db, *est, false));

        auto full = estimateClockOffsets(**db);
        QVERIFY_OK(full);
        QCOMPARE(full->reference, est->reference);
        const auto stored = nodesByName(**db);
        const int64_t refTruth = kTrueOffset[reference.back().digitValue()];
        for (int n = 0; n < kNodes; ++n) {
            const ClockEstimate* e = estimateOf(*full, nodeName(n));
            QVERIFY(e && e->found);
            const store::NodeInfo& info = stored.at(nodeName(n));
            if (e->reference && userReferenceOffset != 0) { // kept, and the others placed relative to it
                QCOMPARE(info.clockOffsetNs, userReferenceOffset);
                QCOMPARE(info.clockOffsetSource, std::string(store::kClockSourceUser));
                continue;
            }
            QCOMPARE(info.clockOffsetNs, userReferenceOffset + e->offsetNs);
            QCOMPARE(info.clockOffsetSource, e->source);
            QVERIFY2(std::llabs(info.clockOffsetNs - userReferenceOffset - (kTrueOffset[n] - refTruth)) <=
                         (traces ? 50 * kMs : kSecond),
                     e->method.c_str());
        }
    }

    // Activity that does not pin a lag is refused: all busy, or dips strictly every 8 s (every 8 s lag fits).
    void ambiguousMetrics_data()
    {
        QTest::addColumn<bool>("periodic");
        QTest::newRow("steady") << false;
        QTest::newRow("strictly periodic") << true;
    }

    void ambiguousMetrics()
    {
        QFETCH(bool, periodic);
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        std::vector<int64_t> ends;
        for (int k = 0; periodic && k < 36; ++k)
            ends.push_back(kStart + static_cast<int64_t>(k + 1) * 8 * kSecond);
        Lcg rng{3};
        for (int n = 0; n < 2; ++n) {
            const std::string p = test::writeFile(dir, QString::fromStdString(fmt::format("n{}.csv", n)),
                                                  nvsmiCsv(n, ends, kSecond, 700 * kMs, rng));
            QCOMPARE(importAs(db, {p}, nodeName(n)), std::string());
        }
        auto database = store::RunDatabase::open(db, store::OpenMode::ReadWrite);
        QVERIFY_OK(database);
        auto est = estimateClockOffsets(**database);
        QVERIFY_OK(est);
        const ClockEstimate* e = estimateOf(*est, "node1");
        QVERIFY(e);
        QVERIFY2(!e->found, e->method.c_str());
        QVERIFY(est->reference.empty());
    }

    // One stray sample a century away: the grid that would span it is not allocated; the node is left unaligned
    // and the method says why.
    void strayTimestampBounded()
    {
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        const std::vector<int64_t> ends = stepEnds(36, 5);
        Lcg rng{5};
        for (int n = 0; n < 2; ++n) {
            std::string csv = nvsmiCsv(n, ends, kSecond, 700 * kMs, rng);
            if (n == 1) csv += "2200/01/01 00:00:00.000, 0, NVIDIA H200, 00000000:10:00.0, 50 %, 1000 MiB\n";
            const std::string p = test::writeFile(dir, QString::fromStdString(fmt::format("n{}.csv", n)), csv);
            QCOMPARE(importAs(db, {p}, nodeName(n)), std::string());
        }
        auto database = store::RunDatabase::open(db, store::OpenMode::ReadWrite);
        QVERIFY_OK(database);
        auto est = estimateClockOffsets(**database);
        QVERIFY_OK(est);
        // The node with the most samples is the reference; the other is the one left unaligned.
        const ClockEstimate* e = estimateOf(*est, "node0");
        QVERIFY(e);
        QVERIFY2(!e->found, e->method.c_str());
        QVERIFY2(e->method.find("span more than 2000000 samples of 1 s: not aligned by metrics") != std::string::npos,
                 e->method.c_str());
    }

    // A user-set offset is never replaced by an estimate, unless forced.
    void userOffsetKept()
    {
        QTemporaryDir dir;
        const std::string path = writeRun(dir, true, false, kSecond, 17, 12);
        auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
        QVERIFY_OK(db);
        QVERIFY_OK(store::setNodeClockOffset(**db, "node1", 5 * kSecond, 0, store::kClockSourceUser));
        QCOMPARE(store::setNodeClockOffset(**db, "node9", 0, 0, store::kClockSourceUser).ok(), false);
        auto est = estimateClockOffsets(**db);
        QVERIFY_OK(est);
        QVERIFY_OK(applyClockEstimates(**db, *est, false));
        auto nodes = nodesByName(**db);
        QCOMPARE(nodes.at("node1").clockOffsetNs, 5 * kSecond);
        QCOMPARE(nodes.at("node1").clockOffsetSource, std::string("user"));
        QVERIFY(std::llabs(nodes.at("node3").clockOffsetNs - kTrueOffset[3]) < 50 * kMs);
        QVERIFY_OK(applyClockEstimates(**db, *est, true));
        nodes = nodesByName(**db);
        QVERIFY(std::llabs(nodes.at("node1").clockOffsetNs - kTrueOffset[1]) < 50 * kMs);
        QCOMPARE(nodes.at("node1").clockOffsetSource, std::string("traces"));
    }

    // Stack samples at 10 Hz on node0 and node3, each frame naming the step it was taken in (true time): after the
    // offsets are estimated from the traces, a window inside one step holds that step's frame on both nodes only.
    void flameWindowAcrossNodes()
    {
        QTemporaryDir dir;
        const int steps = 12;
        const std::string path = writeRun(dir, true, false, kSecond, 17, steps);
        const std::vector<int64_t> ends = stepEnds(steps, 17);
        auto stepAt = [&](int64_t t) {
            int k = 0;
            while (k < steps && ends[static_cast<size_t>(k)] <= t)
                ++k;
            return k;
        };
        for (int n : {0, 3}) {
            const int64_t first = kStart + 100 * kMs, last = ends.back() + 3 * kSecond; // true times
            std::string frames, samples, weights;
            for (int k = 0; k <= steps; ++k)
                frames += fmt::format("{}{{\"name\": \"step_{}\"}}", k ? ", " : "", k);
            int i = 0;
            for (int64_t t = first; t < last; t += 100 * kMs, ++i) {
                samples += fmt::format("{}[{}]", i ? "," : "", stepAt(t));
                weights += std::string(i ? "," : "") + "0.1";
            }
            const std::string json = fmt::format(
                "{{\"shared\": {{\"frames\": [{}]}}, \"profiles\": [{{\"type\": \"sampled\", \"name\": "
                "\"Thread 7 \\\"MainThread\\\"\", \"unit\": \"seconds\", \"startValue\": 0, \"endValue\": {}, "
                "\"startUnixNs\": {}, \"samples\": [{}], \"weights\": [{}]}}]}}",
                frames, i / 10, first - kTrueOffset[n], samples, weights);
            const std::string p =
                test::writeFile(dir, QString::fromStdString(fmt::format("n{}.speedscope.json", n)), json);
            QCOMPARE(importAs(path, {p}, nodeName(n)), std::string());
        }
        auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
        QVERIFY_OK(db);
        const int step = 6;
        const store::TimeWindow window{ends[step - 1] + 300 * kMs, ends[step] - 300 * kMs};
        auto framesIn = [&](const std::string& node) {
            FlameSource source(**db, nullptr);
            FlameQuery q;
            q.window = window;
            q.nodes = {node};
            std::set<std::string> names;
            auto tree = source.tree(q);
            if (!tree) return names;
            for (int32_t i = 1; i < static_cast<int32_t>((*tree)->nodes().size()); ++i)
                if ((*tree)->node(i).samples > 0) names.insert(std::string((*tree)->name(i)));
            return names;
        };
        const std::set<std::string> expected{"step_" + std::to_string(step)};
        QCOMPARE(framesIn("node0"), expected);
        QVERIFY(framesIn("node3") != expected); // 12 s off: other steps before alignment
        auto est = estimateClockOffsets(**db);
        QVERIFY_OK(est);
        QVERIFY_OK(applyClockEstimates(**db, *est, false));
        QCOMPARE(framesIn("node0"), expected);
        QCOMPARE(framesIn("node3"), expected);
    }

    // A name whose ends do not coincide (the return of an asynchronous launch, c10d::allreduce_, when this rank got
    // there) is left out; the collective that completes together decides.
    void launchReturnsLeftOut()
    {
        const std::vector<int64_t> ends = stepEnds(20);
        Lcg rng{9};
        CollectiveEnds node, reference;
        const int64_t offset = 1234 * kMs;
        for (int64_t e : ends) {
            reference["gloo:all_reduce"].push_back(e + static_cast<int64_t>(rng.next() * 40'000));
            node["gloo:all_reduce"].push_back(e - offset + static_cast<int64_t>(rng.next() * 40'000));
            reference["c10d::allreduce_"].push_back(e - 300 * kMs + static_cast<int64_t>(rng.next() * 50 * kMs));
            node["c10d::allreduce_"].push_back(e - offset - 100 * kMs - static_cast<int64_t>(rng.next() * 50 * kMs));
        }
        const TraceAlignment a = alignByCollectives({node}, {reference}, ClockParams{});
        QVERIFY(a.found);
        QCOMPARE(a.names, 1);
        QCOMPARE(a.matches, qint64(20));
        QVERIFY2(std::llabs(a.offsetNs - offset) < 40'000, formatClockDuration(a.offsetNs - offset).c_str());
    }

    void parseAndFormat_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("ns"); // -1: refused
        QTest::newRow("seconds") << QStringLiteral("+1.25s") << qint64(1'250'000'000);
        QTest::newRow("negative ms") << QStringLiteral("-300ms") << qint64(-300'000'000);
        QTest::newRow("bare number") << QStringLiteral("2") << qint64(2'000'000'000);
        QTest::newRow("us") << QStringLiteral("40 us") << qint64(40'000);
        QTest::newRow("ns") << QStringLiteral("500ns") << qint64(500);
        QTest::newRow("word") << QStringLiteral("soon") << qint64(-1);
        QTest::newRow("unit only") << QStringLiteral("ms") << qint64(-1);
        QTest::newRow("trailing junk") << QStringLiteral("1.5sx") << qint64(-1);
    }

    void parseAndFormat()
    {
        QFETCH(QString, text);
        QFETCH(qint64, ns);
        const auto v = parseClockDuration(text.toStdString());
        QCOMPARE(v.has_value(), ns != -1);
        if (v) QCOMPARE(*v, ns);
        QCOMPARE(formatClockDuration(-3 * kSecond), std::string("-3.000 s"));
        QCOMPARE(formatClockDuration(400 * kMs), std::string("+400.000 ms"));
    }
};

QTEST_GUILESS_MAIN(TestClock)
#include "tst_clock.moc"
