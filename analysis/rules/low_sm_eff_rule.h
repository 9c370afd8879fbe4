#pragma once

// LOW_SM_EFF (docs/design.md §5): busy GPUs (utilization ≥ low_sm.util_min) whose SM activity stays low (below 0.5:
// warn, below 0.3: critical, as means over the episode), for at least low_sm.min_s. It is the primary finding
// only where no other rule explains the same time (the `explained` findings: COMM_BOUND, INPUT_STALL, CKPT_GAP,
// HANG); otherwise it is contributing, and says how much of it is explained. Utilization ≥ 90 % during it is
// the utilization illusion, and the finding says so. Saving: per slot no other finding explains, the share of it
// the GPUs would not need at low_sm.good_use_sm (1 − SM activity / good use), summed per episode.

#include "analysis/rules/finding.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <vector>

namespace runlens::analysis {

std::vector<Finding> lowSmEfficiencyRule(const RunMetrics& metrics, const RuleParams& params,
                                         const std::vector<Finding>& explained);

} // namespace runlens::analysis
