#include "analysis/timeline/run_catalog.h"

#include "analysis/mfu/mfu.h"
#include "analysis/store/run_database.h"

#include <algorithm>
#include <limits>

namespace runlens::timeline {
namespace {

// The MFU is proportional to the trainer's throughput (the model, GPUs and peak stay the same over the run), so the
// factor worked out from its typical value turns every throughput point into an MFU point.
Expected<std::optional<MfuScale>> mfuScale(store::RunDatabase& db)
{
    auto m = analysis::runMfu(db);
    if (!m) return m.error();
    if (!m->mfu) return std::optional<MfuScale>();
    if (m->flopsSource == "model" && m->tokensPerS && *m->tokensPerS > 0) {
        const double perTokenPerS = 100 * *m->mfu / *m->tokensPerS;
        if (m->tokensSource == "samples_per_s" && m->seqLen)
            return std::optional<MfuScale>(MfuScale{"train.samples_per_s", perTokenPerS * *m->seqLen});
        return std::optional<MfuScale>(MfuScale{"train.tokens_per_s", perTokenPerS});
    }
    if (m->flopsSource == "trainer_log" && m->peakTflops && *m->peakTflops > 0)
        return std::optional<MfuScale>(MfuScale{"train.tflops_per_gpu", 100 / *m->peakTflops});
    return std::optional<MfuScale>();
}

} // namespace

int RunCatalog::nodeIndex(int64_t nodeId) const
{
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].id == nodeId) return static_cast<int>(i);
    return -1;
}

const store::DeviceInfo* RunCatalog::device(int64_t deviceId) const
{
    for (const store::DeviceInfo& d : devices)
        if (d.id == deviceId) return &d;
    return nullptr;
}

const store::SeriesInfo* RunCatalog::findSeries(int64_t seriesId) const
{
    // series() is ordered by node, device and metric, not by id: a linear scan (a few hundred entries).
    for (const store::SeriesInfo& s : series)
        if (s.id == seriesId) return &s;
    return nullptr;
}

int64_t RunCatalog::problemCount() const
{
    int64_t n = 0;
    for (const ImportProblems& p : imports)
        n += p.import.diagnostics;
    return n;
}

Expected<std::shared_ptr<const RunCatalog>> loadRunCatalog(const std::string& path, int diagnosticsPerImport)
{
    RUNLENS_ASSIGN_OR_RETURN(auto db, store::RunDatabase::open(path, store::OpenMode::ReadOnly));
    store::RunReader reader(*db);
    auto cat = std::make_shared<RunCatalog>();
    cat->path = path;

    RUNLENS_ASSIGN_OR_RETURN(auto nodes, reader.nodes());
    cat->nodes = std::move(nodes);
    RUNLENS_ASSIGN_OR_RETURN(auto devices, reader.devices());
    cat->devices = std::move(devices);
    RUNLENS_ASSIGN_OR_RETURN(auto series, reader.series());
    cat->series = std::move(series);
    RUNLENS_ASSIGN_OR_RETURN(auto threads, reader.stackThreads());
    cat->stackThreads = std::move(threads);

    RUNLENS_ASSIGN_OR_RETURN(auto imports, reader.imports());
    for (store::ImportInfo& info : imports) {
        ImportProblems p;
        p.import = std::move(info);
        if (p.import.diagnostics > 0) {
            RUNLENS_ASSIGN_OR_RETURN(auto counts, reader.diagnosticCounts(p.import.id));
            p.counts = std::move(counts);
            RUNLENS_ASSIGN_OR_RETURN(auto first, reader.diagnostics(p.import.id, std::max(0, diagnosticsPerImport)));
            p.first = std::move(first);
        }
        cat->imports.push_back(std::move(p));
    }

    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    auto extend = [&](const std::optional<int64_t>& a, const std::optional<int64_t>& b) {
        if (a) first = std::min(first, *a);
        if (b) last = std::max(last, *b);
    };
    for (const store::SeriesInfo& s : cat->series)
        extend(s.firstNs, s.lastNs);
    if (!cat->stackThreads.empty()) {
        // The per-thread time ranges of timed samples (offsets applied) come from the stack reader.
        store::StackReader stacks(*db);
        RUNLENS_ASSIGN_OR_RETURN(auto timed, stacks.threads());
        for (const store::StackThreadInfo& t : timed)
            extend(t.firstNs, t.lastNs);
    }
    if (first <= last) {
        cat->firstNs = first;
        cat->lastNs = last;
    }
    RUNLENS_ASSIGN_OR_RETURN(auto mfu, mfuScale(*db));
    cat->mfu = mfu;
    return std::shared_ptr<const RunCatalog>(std::move(cat));
}

std::vector<int64_t> seriesOutside(const RunCatalog& catalog, const std::vector<std::string>& nodes,
                                   const std::vector<std::string>& gpus)
{
    std::vector<int64_t> out;
    for (const store::SeriesInfo& s : catalog.series) {
        const int n = catalog.nodeIndex(s.nodeId);
        if (n < 0) continue;
        const std::string& node = catalog.nodes[static_cast<size_t>(n)].name;
        bool outside = !nodes.empty() && std::find(nodes.begin(), nodes.end(), node) == nodes.end();
        // Within the nodes, a GPU the scope does not name (a hang on two of eight GPUs).
        const store::DeviceInfo* d = catalog.device(s.deviceId);
        if (!outside && !gpus.empty() && d && d->kind == "gpu")
            outside = std::find(gpus.begin(), gpus.end(), node + ":gpu" + d->name) == gpus.end();
        if (outside) out.push_back(s.id);
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace runlens::timeline
