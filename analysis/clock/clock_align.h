#pragma once

// The two ways clock_estimate.h lines up one node with the reference node, on plain values (times as imported).

#include "analysis/clock/clock_estimate.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace runlens::analysis {

// One rank's collective end times (ns, as imported) per collective or kernel name, each list sorted.
using CollectiveEnds = std::map<std::string, std::vector<int64_t>>;

struct TraceAlignment
{
    bool found = false;
    int64_t offsetNs = 0; // add to the node's times to line it up with the reference
    int64_t uncertaintyNs = 0;
    int64_t matches = 0;  // matched pairs kept
    int64_t spreadNs = 0; // 1.4826 × MAD of the matched differences
    int rankPairs = 0;
    int names = 0; // collective names pooled
};

// Matches the ends of same-named collectives of every rank of the node with every rank of the reference: in order
// first, then each to the nearest reference end once the median of the in-order differences is known. Names are
// matched separately; those that agree with the tightest name are pooled.
TraceAlignment alignByCollectives(const std::vector<CollectiveEnds>& node, const std::vector<CollectiveEnds>& reference,
                                  const ClockParams& params);

// A node's activity on a regular grid: value k at originNs + k × intervalNs, NaN where there is no data.
struct ActivityGrid
{
    int64_t originNs = 0;
    int64_t intervalNs = 0;
    std::vector<double> values;
};

struct MetricAlignment
{
    bool found = false;
    int64_t offsetNs = 0;
    double peak = 0;       // Pearson r at the best lag
    double secondPeak = 0; // the best other local peak more than two samples away (-1 when none)
    int64_t overlap = 0;   // grid samples correlated at the best lag
};

// Cross-correlates node against reference (both on the same origin and interval) over ± params.maxMetricLagNs.
MetricAlignment alignByActivity(const ActivityGrid& node, const ActivityGrid& reference, const ClockParams& params);

// Samples the mean of some series (points sorted by time, NaN = missing) on the grid [originNs, originNs + n ×
// intervalNs): each series linearly interpolated between neighbours no further apart than maxGapNs.
struct TimedValues
{
    std::vector<int64_t> ts;
    std::vector<double> values;
};
ActivityGrid meanOnGrid(const std::vector<TimedValues>& series, int64_t originNs, int64_t intervalNs, size_t n,
                        int64_t maxGapNs);

// Median of the gaps between successive times (0 when fewer than two).
int64_t medianInterval(const std::vector<int64_t>& ts);

} // namespace runlens::analysis
