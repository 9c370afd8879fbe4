#pragma once

// What a run holds, read once when it is opened (and again after an import), as one immutable value the GUI
// can keep: nodes, devices, series with their summaries, stack threads, imports and their first problems, and
// how the MFU follows from the trainer's throughput.
// The run browser, the lane list and the import summary are built from it without touching the database.

#include "analysis/store/error.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/stack_reader.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace runlens::timeline {

struct ImportProblems
{
    store::ImportInfo import;
    std::vector<std::pair<std::string, int64_t>> counts; // per diagnostic kind
    std::vector<store::DiagnosticInfo> first;            // the stored occurrences (file:line), up to the limit
};

// How a trainer series becomes the MFU in %, when the run's MFU is known (analysis/mfu/mfu.h): tokens/s (or
// samples/s) × the MFU per token/s when the FLOPs come from the model, the log's TFLOP/s per GPU over the peak when
// they come from the trainer log.
struct MfuScale
{
    std::string metric;        // train.tokens_per_s, train.samples_per_s or train.tflops_per_gpu
    double percentPerUnit = 0; // MFU in % per unit of the metric
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
    std::optional<MfuScale> mfu; // unset when the run's MFU is not known

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
