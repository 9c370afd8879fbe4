#pragma once

// LOW_SM_EFF (docs/design.md §5): busy GPUs (utilization ≥ low_sm.util_min) whose SM activity stays below
// low_sm.warn_sm for at least low_sm.min_s (warn; critical when the mean over the episodes is below
// low_sm.critical_sm; info when it saves nothing, e.g. other findings explain all of it). It is the primary finding
// when other rules explain at most half of its time (the `explained` findings: COMM_BOUND, INPUT_STALL, CKPT_GAP,
// HANG); otherwise it is contributing, and says how much of it is explained. Utilization ≥ low_sm.illusion_util in
// at least half its slots is the utilization illusion, and the finding says so. Saving: per slot no other finding
// explains, the share of it the GPUs would not need at low_sm.good_use_sm (1 − SM activity / good use), summed per
// episode. With stack samples, GPUs below low_sm.launch_util_max utilization whose training threads spend at least
// low_sm.launch_model_share of their busy samples in model code on the host (forward, backward and optimizer Python,
// kernel launches), and at least low_sm.launch_host_share in model code and GPU waits together, over the
// unexplained time, are launch-bound: the host issues kernels too small to fill the GPU, and the finding says so.

#include "analysis/rules/finding.h"
#include "analysis/rules/phase_slices.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <vector>

namespace runlens::analysis {

// The rule's parameters (low_sm.*), read once.
struct LowSmParams
{
    CommonParams common;
    double utilMin = 0;          // low_sm.util_min (%)
    double warnSm = 0;           // low_sm.warn_sm
    double criticalSm = 0;       // low_sm.critical_sm
    double goodUseSm = 0;        // low_sm.good_use_sm
    double launchUtilMax = 0;    // low_sm.launch_util_max (%)
    double launchModelShare = 0; // low_sm.launch_model_share
    double launchHostShare = 0;  // low_sm.launch_host_share
    double minS = 0;             // low_sm.min_s
    double illusionUtil = 0;     // low_sm.illusion_util (%)

    static LowSmParams from(const RuleParams& p);
};

// phases (may be null): the stack samples per evidence slice, which tell the launch-bound case.
std::vector<Finding> lowSmEfficiencyRule(const RunMetrics& metrics, const RuleParams& params,
                                         const std::vector<Finding>& explained, const PhaseSlices* phases = nullptr);

} // namespace runlens::analysis
