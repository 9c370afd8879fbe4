#pragma once

// INPUT_STALL (docs/design.md §5): GPU under-use whose evidence is the host side. The run is cut into evidence slices
// (rules.evidence_s); in each slice where a node's GPUs are under-used (SM activity < input_stall.sm_max, or
// utilization < input_stall.util_max without SM activity), the node's stack samples (idle frames left out) say
// why: DataLoader waits (phase input) or the host's own work on the training threads (phase other: the user's
// preprocessing; model code on the host feeding small kernels is LOW_SM_EFF's launch-bound case) at
// ≥ input_stall.host_share of the samples make it an input stall. Consecutive such
// slices are one episode; the finding names the sub-cause (worker_starved, io_bound when disk reads are near
// their peak, host_compute, cpu_bound when the node's CPU is ≥ 90 %) and the top self frames with their shares.

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/finding.h"
#include "analysis/rules/phase_slices.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <vector>

namespace runlens::analysis {

// phases: the stack samples per slice (phaseSlices with rules.evidence_s); stacks gives the episodes' top frames.
Expected<std::vector<Finding>> inputStallRule(const RunMetrics& metrics, FlameSource& stacks, const PhaseSlices& phases,
                                              const RuleParams& params);

} // namespace runlens::analysis
