#pragma once

// What a run holds, read once when it is opened (and again after an import), as one immutable value the GUI
// can keep: nodes, devices, series with their summaries, stack threads, imports and their first problems.
// The run browser, the lane list and the import summary are built from it without touching the database.

#include "analysis/store/error.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/stack_reader.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace runlens::timeline {

struct ImportProblems
{
    store::ImportInfo import;
    std::vector<std::pair<std::string, int64_t>> counts; // per diagnostic kind
    std::vector<store::DiagnosticInfo> first;            // the stored occurrences (file:line), up to the limit
};

struct RunCatalog
{
    std::string path;
    std::vector<store::NodeInfo> nodes; // index in this vector = the node's colour index in every view
    std::vector<store::DeviceInfo> devices;
    std::vector<store::SeriesInfo> series;
    std::vector<store::ThreadStacks> stackThreads;
    std::vector<ImportProblems> imports;
    int64_t firstNs = 0; // earliest point or timed sample (clock offsets applied); 0/0 for an empty run
    int64_t lastNs = 0;

    int nodeIndex(int64_t nodeId) const;                     // -1 when unknown
    const store::DeviceInfo* device(int64_t deviceId) const; // null when unknown
    const store::SeriesInfo* findSeries(int64_t seriesId) const;
    int64_t problemCount() const; // diagnostics over all imports
    bool empty() const { return series.empty() && stackThreads.empty(); }
};

// The series outside a scope: not on one of `nodes` (empty: every node), or a GPU's series not named in `gpus`
// ("node:gpuN"; empty: every GPU). A finding's scope, hidden in the timeline of the GUI and of reports. Sorted.
std::vector<int64_t> seriesOutside(const RunCatalog& catalog, const std::vector<std::string>& nodes,
                                   const std::vector<std::string>& gpus);

// Opens the run read-only on the calling thread's own connection. diagnosticsPerImport bounds `first`.
Expected<std::shared_ptr<const RunCatalog>> loadRunCatalog(const std::string& path, int diagnosticsPerImport = 100);

} // namespace runlens::timeline
