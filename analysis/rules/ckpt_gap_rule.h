#pragma once

// CKPT_GAP (docs/design.md §5): a GPU stall overlapping a write burst on its node (disk writes ≥ max(burst_factor ×
// their median, burst_min_bytes), writing at least burst_min_samples samples' worth at that rate) by ≥ `overlap`
// of the stall, a burst covering the slots within align_slack_samples of it. (Not ≥ 2 samples at the rate: a real
// 1.7 GB checkpoint fsync lands in one 1 s counter sample, so the volume is what counts.) The gaps of one
// node (over all its GPUs) make one finding: when, how long each stall, bytes written per event, whether they
// are periodic (≥ periodic_min_events with interval CV ≤ periodic_max_cv) and at what period, and the total cost.

#include "analysis/rules/finding.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <functional>
#include <string>
#include <vector>

namespace runlens::analysis {

// The rule's parameters (ckpt_gap.*), read once.
struct CkptGapParams
{
    CommonParams common;
    double burstFactor = 0;    // ckpt_gap.burst_factor
    double burstMinBytes = 0;  // ckpt_gap.burst_min_bytes (B/s)
    int burstMinSamples = 0;   // ckpt_gap.burst_min_samples
    int alignSlackSamples = 0; // ckpt_gap.align_slack_samples
    double overlap = 0;        // ckpt_gap.overlap
    PeriodicCuts periodic;     // ckpt_gap.periodic_min_events, ckpt_gap.periodic_max_cv
    SeverityCuts severity;     // ckpt_gap.warn, ckpt_gap.critical

    static CkptGapParams from(const RuleParams& p);
};

// Per GPU: the slots where it stalls (SM activity ≤ stall.sm_fraction × its busy baseline; without SM activity,
// utilization ≤ stall.util_max). Unknown slots are not stalls.
std::vector<uint8_t> gpuStalls(const GpuMetrics& gpu, const CommonParams& p);

// Moves a gap found on the grid as [startNs, endNs) of a node to its edges in a finer source (StallBounds).
using RefineGap = std::function<FindingEpisode(const std::string& node, int64_t startNs, int64_t endNs)>;

// refine may be empty: the gaps keep their grid edges.
std::vector<Finding> checkpointGapRule(const RunMetrics& metrics, const RuleParams& params,
                                       const RefineGap& refine = {});

} // namespace runlens::analysis
