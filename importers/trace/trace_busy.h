#pragma once

// Busy series derived from a trace's slices, so that a trace lines up with the metrics of its node:
// - gpu.kernel_busy per rank and GPU: the union of all kernel slices (communication kernels included;
//   memcpy and memset are not kernels, as in nvidia-smi's utilization.gpu, so the two compare);
// - gpu.comm_busy per rank and GPU: the union of NCCL/RCCL kernel slices;
// - trace.collective_busy per rank on the host: the union of CPU-side collective spans (gloo, where the
//   GPU just idles while the CPU all-reduces).
// Each point is the fraction (0-1, unit "ratio") of one bin covered, over the part of the bin the trace
// spans; bins start at multiples of the bin width, so ranks and files line up. Labels: rank=N, so two
// ranks sharing one GPU stay apart.

#include "analysis/store/error.h"
#include "importers/importer.h"

#include <cstdint>
#include <map>
#include <vector>

namespace runlens::importers::trace {

struct Interval
{
    int64_t startNs = 0;
    int64_t endNs = 0;
};

struct BusyIntervals
{
    std::map<int64_t, std::vector<Interval>> kernels; // by GPU index; every GPU with a track has an entry
    std::map<int64_t, std::vector<Interval>> comm;
    std::vector<Interval> collectives;
    bool collectiveSeries = false; // trace.collective_busy: CPU tracks of a distributed job (a rank or collectives)
    int64_t spanStartNs = 0;       // what the trace covers: the earliest slice start to the latest slice end
    int64_t spanEndNs = 0;
};

struct BusyBins
{
    int64_t firstNs = 0; // start of the first bin
    int64_t binNs = 0;
    std::vector<double> values;
};

// The fraction of each bin covered by the union of the intervals, over the part of the bin inside the span.
BusyBins busyFraction(std::vector<Interval> intervals, int64_t spanStartNs, int64_t spanEndNs, int64_t binNs);

// The busy_interval= option (e.g. 10ms, 1s, 500us; a bare number counts milliseconds); default 10 ms.
Expected<int64_t> busyIntervalNs(const ImportOptions& options);

// Writes the busy series of one rank's trace; adds a note saying what was derived.
Status writeBusySeries(ImportContext& ctx, const BusyIntervals& busy, int64_t rank, int64_t binNs);

} // namespace runlens::importers::trace
