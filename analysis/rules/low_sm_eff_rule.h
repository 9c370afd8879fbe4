#pragma once

// LOW_SM_EFF (docs/design.md §5): busy GPUs (utilization ≥ low_sm.util_min) whose SM activity stays low (below 0.5:
// warn, below 0.3: critical, as means over the episode), for at least low_sm.min_s. It is the primary finding
// only where no other rule explains the same time (the `explained` findings: COMM_BOUND, INPUT_STALL, CKPT_GAP,
// HANG); otherwise it is contributing, and says how much of it is explained. Utilization ≥ 90 % during it is
// the utilization illusion, and the finding says so. Saving: per slot no other finding explains, the share of it
// the GPUs would not need at low_sm.good_use_sm (1 − SM activity / good use), summed per episode. With stack
// samples, GPUs below low_sm.launch_util_max utilization whose training threads spend at least
// low_sm.launch_model_share of their busy samples in model code on the host (forward, backward and optimizer Python,
// kernel launches), and at least low_sm.launch_host_share in model code and GPU waits together, over the
// unexplained time, are launch-bound: the host issues kernels too small to fill the GPU, and the finding says so.

#include "analysis/rules/finding.h"
#include "analysis/rules/phase_slices.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <vector>

namespace runlens::analysis {

// phases (may be null): the stack samples per evidence slice, which tell the launch-bound case.
std::vector<Finding> lowSmEfficiencyRule(const RunMetrics& metrics, const RuleParams& params,
                                         const std::vector<Finding>& explained, const PhaseSlices* phases = nullptr);

} // namespace runlens::analysis
