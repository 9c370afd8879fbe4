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

#include <QString>
#include <QTemporaryDir>
#include <functional>
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
    std::function<std::vector<std::pair<std::string, std::string>>(int64_t k)> stack;
    int nodes = 1; // node0, node1, …: each the same
    // Optional InfiniBand traffic per second (each direction, over one port) and the port's capacity (0: none).
    std::function<double(int64_t s)> link;
    double linkCapacity = 0;
};

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
            auto sink = w.series(device, metric, unit, metric);
            if (!sink) return false;
            for (int64_t s = 0; s < run.seconds; ++s) {
                (*sink)->append(kStart + run.offsetNs + s * kSecond, f(s));
                if (!w.flushIfNeeded(**sink)) return false;
            }
            return true;
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
            if (!thread) return nullptr;
            for (int64_t k = 0; k < run.seconds * 10; ++k) {
                int64_t callsite = 0;
                for (const auto& [name, file] : run.stack(k)) {
                    auto f = w.frame(name, file, 0, {});
                    if (!f) return nullptr;
                    auto c = w.callsite(callsite, *f);
                    if (!c) return nullptr;
                    callsite = *c;
                }
                if (!w.stackSample(*thread, callsite, kStart + run.offsetNs + k * kSecond / 10, 1, 0.1)) return nullptr;
            }
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

// Imports the given files of a fixture run into a temporary database.
inline std::unique_ptr<store::RunDatabase> importFixture(const QTemporaryDir& dir, const QString& base,
                                                         std::initializer_list<const char*> files)
{
    std::vector<std::string> inputs;
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
