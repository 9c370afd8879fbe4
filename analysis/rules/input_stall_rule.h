#pragma once

// INPUT_STALL (docs/design.md §5): GPU under-use whose evidence is the host side. The run is cut into evidence slices
// (rules.evidence_s); in each slice where a node's GPUs are under-used (SM activity < input_stall.sm_max, or
// utilization < input_stall.util_max without SM activity), the node's stack samples (idle frames left out) say
// why: DataLoader waits (phase input) or the host's own work on the training threads (phase other: the user's
// preprocessing; model code on the host feeding small kernels is LOW_SM_EFF's launch-bound case) at
// ≥ input_stall.host_share of the samples make it an input stall (not where most slots have work queued:
// utilization ≥ input_stall.util_busy). Consecutive such slices are one episode (at least input_stall.min_s); the
// finding names the sub-cause (worker_starved, io_bound when disk reads are at least input_stall.io_bound_share of
// their peak, host_compute, cpu_bound when the node's CPU is ≥ input_stall.cpu_bound_pct) and the top self frames
// with their shares. Severity: warn from input_stall.warn of the wall time, critical from input_stall.critical.

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/finding.h"
#include "analysis/rules/phase_slices.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <vector>

namespace runlens::analysis {

// The rule's parameters (input_stall.*), read once.
struct InputStallParams
{
    CommonParams common;
    double smMax = 0;        // input_stall.sm_max
    double utilMax = 0;      // input_stall.util_max (%)
    double hostShare = 0;    // input_stall.host_share
    double utilBusy = 0;     // input_stall.util_busy (%)
    double minS = 0;         // input_stall.min_s
    double cpuBoundPct = 0;  // input_stall.cpu_bound_pct
    double ioBoundShare = 0; // input_stall.io_bound_share
    SeverityCuts severity;   // input_stall.warn, input_stall.critical

    static InputStallParams from(const RuleParams& p);
};

// phases: the stack samples per slice (phaseSlices with rules.evidence_s); stacks gives the episodes' top frames.
Expected<std::vector<Finding>> inputStallRule(const RunMetrics& metrics, FlameSource& stacks, const PhaseSlices& phases,
                                              const RuleParams& params);

} // namespace runlens::analysis
