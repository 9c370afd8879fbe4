#pragma once

// Clock offsets between the nodes of a run, estimated from instants every rank shares (docs/design.md §4, "Time").
//
// From traces: a collective completes together on every rank, so the k-th NCCL kernel (or CPU-side collective)
// of one name ends at almost the same true instant on every rank. Instances are matched across the ranks of two
// nodes in order, then again to the nearest one once the first estimate is known; the offset is the median of
// the end-time differences against the reference node and its ± comes from their spread (MAD) and count.
//
// From metrics alone: the GPUs of all nodes dip together at step boundaries and collectives. Each node's mean GPU
// activity (gpu.sm_active, else gpu.util, over its GPUs) on the metric grid is cross-correlated with the reference
// node's over a bounded lag range; the best lag is refined below one sample with a parabola and kept only when the
// peak is high and clearly above every other peak (a periodic signal without jitter has many equal peaks).
//
// The reference node has offset 0: the node with the most matched trace data, else the most GPU samples, ties
// broken by name. Every estimate is computed from the times as imported, so the offsets already set do not
// change it. A pure function of the store; storing the results is applyClockEstimates.
//
// A node's estimate reads only its own data and the reference's. After an import into a large run, only the nodes
// whose inputs changed need estimating again, as long as the reference is the same node with the same inputs and
// GPU activity, or no node has any (ClockScope::Changed); otherwise every node is. Imports only add data, so inputs are
// compared by their counts (ClockInputs), kept in the run with the offsets they gave.

#include "analysis/store/error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::store {
class RunDatabase;
}

namespace runlens::analysis {

struct ClockParams
{
    // Traces: at least this many matched collective ends per node pair; fewer is too little to see an outlier.
    int minTraceMatches = 5;
    // Traces: a matched pair whose difference is further than this from the first (in-order) median is not the
    // same instance (a collective missing on one rank shifts the order); the nearest-match pass drops it.
    int64_t maxTraceResidualNs = 50'000'000;
    // Traces: names whose spread and median are within this many times the tightest name's spread (or the ± floor)
    // are pooled with it; the return of an asynchronous launch (c10d::allreduce_) ends anywhere and is left out.
    double maxTraceNameSpreadRatio = 3.0;
    // Traces: the ± never goes below this (the traces' µs resolution and the kernels' own end skew).
    int64_t minTraceUncertaintyNs = 10'000;
    // Metrics: the lags tried, ± this (NTP drift is ms to s; a broken clock minutes).
    int64_t maxMetricLagNs = 120'000'000'000;
    // Metrics: at least this many overlapping grid samples at a lag for its correlation to count.
    int minMetricOverlap = 60;
    // Metrics: the correlation peak must reach this (Pearson r); below it the nodes do not share a pattern.
    double minMetricPeak = 0.5;
    // Metrics: and exceed every other local peak further than two grid samples away by this much; a steady or
    // strictly periodic activity has several near-equal peaks, and then the lag is ambiguous.
    double minMetricPeakMargin = 0.1;
    // Metrics: the activity grid holds at most this many samples (23 days at 1 s, 80 MB for the two grids); a
    // longer span (a stray timestamp years away) is not aligned by metrics rather than allocated.
    int64_t maxMetricGridSamples = 2'000'000;
};

struct ClockEstimate
{
    std::string node;
    bool found = false;   // false: nothing to estimate from (see method)
    int64_t offsetNs = 0; // add to the node's times (relative to the reference node, whose offset is 0)
    int64_t uncertaintyNs = 0;
    std::string source; // traces, metrics (store::kClockSource…)
    bool reference = false;
    int64_t matches = 0; // matched collective ends, or grid samples correlated
    std::string method;  // in words: what was matched, and how well (or why nothing was found)
};

// What the estimate reads of one node, counted.
struct ClockInputCounts
{
    int64_t traceEnds = 0; // NCCL kernel and collective slices
    std::string metric;    // the GPU activity it is lined up by: gpu.sm_active when present, else gpu.util
    int64_t gpuSeries = 0; // that metric's series of two points or more
    int64_t gpuPoints = 0; //   and their points
    bool operator==(const ClockInputCounts&) const = default;
};
using ClockInputs = std::map<std::string, ClockInputCounts>; // by node name

Expected<ClockInputs> readClockInputs(store::RunDatabase& db);

enum class ClockScope
{
    All,     // every node
    Changed, // the nodes whose inputs changed since the offsets were last estimated (see above), else every node
};

struct ClockEstimates
{
    std::string reference;            // empty when the run has fewer than two nodes or nothing to align them by
    std::vector<ClockEstimate> nodes; // every node estimated, by name
    size_t unchanged = 0;             // nodes not estimated again: neither they nor the reference changed
    // Kept in the run by applyClockEstimates for the next ClockScope::Changed, with the source each estimate above
    // was found from: every node's inputs as read, the source the nodes not estimated again were found from last
    // time ("" when not), the reference by the inputs (even when nothing was lined up with it) and how the estimate
    // was made.
    ClockInputs inputs;
    std::map<std::string, std::string> unchangedFoundFrom;
    std::string inputsReference;
    std::string method;
};

Expected<ClockEstimates> estimateClockOffsets(store::RunDatabase& db, const ClockParams& params = {},
                                              ClockScope scope = ClockScope::All);

// What applyClockEstimates did for one node.
struct ClockChange
{
    std::string node;
    bool changed = false;
    bool keptUser = false; // a user-set offset kept (force not given)
    int64_t offsetNs = 0;  // the node's offset afterwards
    std::optional<int64_t> uncertaintyNs;
    std::string source;
    std::string method;
};

// Stores the found estimates (node offset, ±, source) and, for ClockScope::Changed, what they were estimated from with
// the reference's offset and source as stored (when those change, as when the user sets the reference's offset,
// every node is estimated again), in one transaction. A user-set offset is kept unless force; when the reference
// node has one, the others are stored relative to it.
Expected<std::vector<ClockChange>> applyClockEstimates(store::RunDatabase& db, const ClockEstimates& estimates,
                                                       bool force);

// "+1.250 s", "-12.345 ms", "+8.2 µs" (sign: always write it), as offsets are shown.
std::string formatClockDuration(int64_t ns, bool sign = true);
// "+1.25s", "-300ms", "12 us", "500ns", "2" (seconds): nanoseconds, or nullopt when it is not a duration.
std::optional<int64_t> parseClockDuration(std::string_view text);

} // namespace runlens::analysis
