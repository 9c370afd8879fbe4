#pragma once

// The diagnosis rules' tests share these: a synthetic run written through the store (GPUs' SM activity and
// utilization, disk writes, optional stack samples and InfiniBand traffic, on one or more identical nodes), the
// rules run on it the way analyzeRun runs them, and fixture files imported into a temporary run.

#include "analysis/rules/ckpt_gap_rule.h"
#include "analysis/rules/comm_bound_rule.h"
#include "analysis/rules/hang_rule.h"
#include "analysis/rules/input_stall_rule.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "importers/import_session.h"

#include <QByteArray>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace runlens::test::rules {

using namespace runlens::analysis;

inline constexpr int64_t kSecond = 1'000'000'000;
inline constexpr int64_t kStart = 1'790'000'000'000'000'000;

// A generated run written into a new run database dir/name as one import ("synthetic", format "test"): true once
// the import has begun; finish() ends it, commits and hands the run back (null on a failure).
class SyntheticImport
{
public:
    SyntheticImport(const QTemporaryDir& dir, const QString& name)
    {
        auto db = store::RunDatabase::open(dir.filePath(name).toStdString(), store::OpenMode::Create);
        if (!db) return;
        auto tx = (*db)->transaction();
        if (!tx) return;
        m_tx.emplace(std::move(*tx));
        m_db = std::move(*db);
        auto writer = std::make_unique<store::RunWriter>(*m_db);
        store::ImportRecord rec;
        rec.path = "synthetic";
        rec.contentHash = "synthetic";
        rec.format = "test";
        if (!writer->beginImport(rec)) return;
        m_writer = std::move(writer);
    }

    explicit operator bool() const { return m_writer != nullptr; }
    store::RunWriter& writer() { return *m_writer; }
    // The writer stays until this is destroyed: writers of the import's other tables (TraceWriter) may hold it.
    std::unique_ptr<store::RunDatabase> finish()
    {
        if (!m_writer) return nullptr;
        store::ImportTotals totals;
        totals.contentHash = "synthetic";
        if (!m_writer->finishImport(totals, store::Diagnostics()) || !m_tx->commit()) return nullptr;
        return std::move(m_db);
    }

private:
    std::unique_ptr<store::RunDatabase> m_db;
    std::optional<store::Transaction> m_tx;     // ended before the database closes
    std::unique_ptr<store::RunWriter> m_writer; // destroyed first
};

// A call path, root first: (name, file) per frame.
using Stack = std::vector<std::pair<std::string, std::string>>;

// The frames a generated training thread's stacks start with: main, then train_step (train.py).
inline Stack trainStepStack()
{
    return {{"main", "train.py"}, {"train_step", "train.py"}};
}

// One node with `gpus` GPUs and one disk, `seconds` at 1 s: SM activity and utilization per GPU and second,
// disk writes per second.
struct Synthetic
{
    int gpus = 2;
    int64_t seconds = 3600;
    std::function<double(int gpu, int64_t s)> sm; // empty: the run has no SM activity
    std::function<double(int gpu, int64_t s)> util;
    std::function<double(int64_t s)> write;
    int64_t offsetNs = 0; // every timestamp moved by this
    // Optional stack samples at 10 Hz on the node's training thread: the call path (root first) of sample k.
    std::function<Stack(int64_t k)> stack;
    int nodes = 1; // node0, node1, …: each the same
    // Optional InfiniBand traffic per second (each direction, over one port) and the port's capacity (0: none).
    std::function<double(int64_t s)> link;
    double linkCapacity = 0;
};

// 30 min of one node, 2 GPUs: training at SM 0.7 with a 20 s checkpoint stall every 5 min (disk busy), stacks in a
// training call path and, during the stalls, in torch.save.
inline Synthetic checkpointRun(bool stacks, bool sm)
{
    Synthetic run;
    run.seconds = 1800;
    if (sm) run.sm = [](int, int64_t s) { return s % 300 >= 280 ? 0.01 : 0.7; };
    run.util = [](int, int64_t s) { return s % 300 >= 280 ? 2.0 : 97.0; };
    run.write = [](int64_t s) { return s % 300 >= 281 && s % 300 < 299 ? 1.5e9 : 2e6; };
    if (stacks)
        run.stack = [](int64_t k) -> Stack {
            if ((k / 10) % 300 >= 280)
                return {{"main", "train.py"},
                        {"save_checkpoint", "train.py"},
                        {"save", "torch/serialization.py"},
                        {"_save", "torch/serialization.py"},
                        {"persistent_id", "torch/serialization.py"},
                        {"write_record", "torch/serialization.py"}};
            return {{"main", "train.py"}, {"train_step", "train.py"}, {"forward", "torch/nn/modules/module.py"}};
        };
    return run;
}

// A series of one value a second for `seconds` from kStart + offsetNs, the value of second s f(s); false on a failure.
inline bool writeSeconds(store::RunWriter& w, int64_t device, const char* metric, const char* unit, int64_t seconds,
                         int64_t offsetNs, const std::function<double(int64_t)>& f)
{
    auto sink = w.series(device, metric, unit, metric);
    if (!sink) return false;
    for (int64_t s = 0; s < seconds; ++s) {
        (*sink)->append(kStart + offsetNs + s * kSecond, f(s));
        if (!w.flushIfNeeded(**sink)) return false;
    }
    return true;
}

// `samples` stack samples at 10 Hz from kStart + offsetNs on a thread, sample k's call path stack(k); false on a
// failure.
inline bool writeStackSamples(store::RunWriter& w, int64_t thread, int64_t samples, int64_t offsetNs,
                              const std::function<Stack(int64_t)>& stack)
{
    for (int64_t k = 0; k < samples; ++k) {
        int64_t callsite = 0;
        for (const auto& [name, file] : stack(k)) {
            auto f = w.frame(name, file, 0, {});
            if (!f) return false;
            auto c = w.callsite(callsite, *f);
            if (!c) return false;
            callsite = *c;
        }
        if (!w.stackSample(thread, callsite, kStart + offsetNs + k * kSecond / 10, 1, 0.1)) return false;
    }
    return true;
}

inline std::unique_ptr<store::RunDatabase> writeRun(const QTemporaryDir& dir, const Synthetic& run)
{
    SyntheticImport synthetic(dir, QStringLiteral("r.runlens"));
    if (!synthetic) return nullptr;
    store::RunWriter& w = synthetic.writer();
    for (int n = 0; n < run.nodes; ++n) {
        auto node = w.node("node" + std::to_string(n), "option", "UTC");
        if (!node) return nullptr;
        auto series = [&](int64_t device, const char* metric, const char* unit,
                          const std::function<double(int64_t)>& f) {
            return writeSeconds(w, device, metric, unit, run.seconds, run.offsetNs, f);
        };
        for (int g = 0; g < run.gpus; ++g) {
            auto gpu = w.device(*node, "gpu", std::to_string(g));
            if (!gpu || (run.sm && !series(*gpu, "gpu.sm_active", "ratio", [&](int64_t s) { return run.sm(g, s); })) ||
                !series(*gpu, "gpu.util", "%", [&](int64_t s) { return run.util(g, s); }))
                return nullptr;
        }
        auto disk = w.device(*node, "disk", "nvme0n1");
        if (!disk || !series(*disk, "disk.write", "bytes/s", run.write)) return nullptr;
        if (run.link) {
            auto port = w.device(*node, "ib", "mlx5_0:1");
            if (!port || !series(*port, "ib.tx", "bytes/s", run.link) || !series(*port, "ib.rx", "bytes/s", run.link))
                return nullptr;
            if (run.linkCapacity > 0 &&
                !series(*port, "ib.capacity", "bytes/s", [&](int64_t) { return run.linkCapacity; }))
                return nullptr;
        }
        if (run.stack) {
            auto thread = w.thread(*node, "python train.py", 100 + n, "MainThread", 100 + n);
            if (!thread || !writeStackSamples(w, *thread, run.seconds * 10, run.offsetNs, run.stack)) return nullptr;
        }
    }
    return synthetic.finish();
}

using Rule = std::vector<Finding> (*)(const RunMetrics&, const RuleParams&);

inline std::vector<Finding> runRule(store::RunDatabase& db, Rule rule, const RuleParams& p = RuleParams::defaults())
{
    auto m = loadRunMetrics(db, static_cast<int64_t>(p.get("rules.grid_s") * 1e9));
    if (!m) return {};
    return rule(*m, p);
}

inline std::vector<Finding> ckptGaps(store::RunDatabase& db, const RuleParams& p = RuleParams::defaults())
{
    return runRule(
        db, [](const RunMetrics& m, const RuleParams& q) { return checkpointGapRule(m, q); }, p);
}

inline std::vector<Finding> commBound(store::RunDatabase& db, const RuleParams& p = RuleParams::defaults())
{
    auto m = loadRunMetrics(db, static_cast<int64_t>(p.get("rules.grid_s") * 1e9));
    auto classifier = PhaseClassifier::builtIn();
    if (!m || !classifier) return {};
    FlameSource stacks(db, std::make_shared<PhaseClassifier>(std::move(*classifier)));
    store::TraceReader traces(db);
    auto phases = phaseSlices(stacks, m->grid, m->grid.slotsPerSlice(p.get("rules.evidence_s")));
    if (!phases) return {};
    auto found = commBoundRule(*m, stacks, *phases, &traces, p, hangRule(*m, p));
    return found ? *found : std::vector<Finding>{};
}

inline std::vector<Finding> inputStalls(store::RunDatabase& db, const RuleParams& p = RuleParams::defaults())
{
    auto m = loadRunMetrics(db, static_cast<int64_t>(p.get("rules.grid_s") * 1e9));
    auto classifier = PhaseClassifier::builtIn();
    if (!m || !classifier) return {};
    FlameSource stacks(db, std::make_shared<PhaseClassifier>(std::move(*classifier)));
    auto phases = phaseSlices(stacks, m->grid, m->grid.slotsPerSlice(p.get("rules.evidence_s")));
    if (!phases) return {};
    auto found = inputStallRule(*m, stacks, *phases, p);
    return found ? *found : std::vector<Finding>{};
}

// The lines of a fixture's ground truth file (truth/events-rank0.jsonl, read by the tests only) whose "event" is
// `event` (every line when empty); nullopt when the file cannot be read.
inline std::optional<std::vector<QJsonObject>> truthEvents(const QString& path, const QString& event = {})
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return std::nullopt;
    std::vector<QJsonObject> out;
    for (const QByteArray& line : f.readAll().split('\n')) {
        QJsonObject o = QJsonDocument::fromJson(line).object();
        if (event.isEmpty() || o.value(QStringLiteral("event")).toString() == event) out.push_back(std::move(o));
    }
    return out;
}

// The truth time of a field in nanoseconds ("ts_ns", "end_ns").
inline int64_t truthNs(const QJsonObject& o, const char* field)
{
    return static_cast<int64_t>(o.value(QLatin1String(field)).toDouble());
}

// The first and the last end (ts_ns) of the steps of a phase among step events; {max, 0} when it has none.
inline std::pair<int64_t, int64_t> stepEndsOf(const std::vector<QJsonObject>& steps, const QString& phase)
{
    int64_t from = std::numeric_limits<int64_t>::max(), to = 0;
    for (const QJsonObject& o : steps) {
        if (o.value(QStringLiteral("phase")).toString() != phase) continue;
        const int64_t ts = truthNs(o, "ts_ns");
        from = std::min(from, ts);
        to = std::max(to, ts);
    }
    return {from, to};
}

// The time of a finding's episodes within [from, to), in nanoseconds.
inline int64_t episodeNs(const Finding& f, int64_t from, int64_t to)
{
    int64_t ns = 0;
    for (const FindingEpisode& e : f.episodes)
        ns += std::max<int64_t>(0, std::min(e.endNs, to) - std::max(e.startNs, from));
    return ns;
}

// The seconds of [from, to) covered by a finding's episodes.
inline double episodeSeconds(const Finding& f, int64_t from, int64_t to)
{
    return static_cast<double>(episodeNs(f, from, to)) / 1e9;
}

// A rule run on a whole run database (ckptGaps, commBound, inputStalls).
using RunRule = std::vector<Finding> (*)(store::RunDatabase&, const RuleParams&);

// The one finding `rule` gives on a generated run (null: it could not be written), into out, and its rule `name`
// unless that is null; the test fails (QTest::currentTestFailed) when there is no run or not exactly one finding.
inline void oneFinding(store::RunDatabase* db, RunRule rule, const char* name, Finding& out)
{
    QVERIFY(db);
    const auto found = rule(*db, RuleParams::defaults());
    QCOMPARE(found.size(), size_t(1));
    out = found[0];
    if (name) QCOMPARE(out.rule, std::string(name));
}

// Imports a fixture run's metrics (nvidia-smi query and dmon, the GPM dmon, prometheus) and the given files of it
// into a temporary database.
inline std::unique_ptr<store::RunDatabase> importFixture(const QTemporaryDir& dir, const QString& base,
                                                         std::initializer_list<const char*> files = {})
{
    std::vector<std::string> inputs;
    for (const char* f : {"nvidia-smi-query.csv", "nvidia-smi-dmon.txt", "nvidia-smi-dmon-gpm.txt", "prometheus"})
        inputs.push_back((base + QLatin1String(f)).toStdString());
    for (const char* f : files)
        inputs.push_back((base + QLatin1String(f)).toStdString());
    importers::ImportOptions options;
    auto plan = importers::planImport(inputs, options);
    if (!plan) return nullptr;
    auto db =
        store::RunDatabase::open(dir.filePath(QStringLiteral("f.runlens")).toStdString(), store::OpenMode::Create);
    if (!db) return nullptr;
    for (const auto& f : *plan)
        if (importers::importFile(**db, f, options).outcome != importers::FileOutcome::Imported) return nullptr;
    return std::move(*db);
}

} // namespace runlens::test::rules
