#pragma once

// HANG (docs/design.md §5): GPUs whose utilization stays ≥ hang.util_min while their SM activity is ≤ hang.sm_max
// (communication kernels spinning on a peer that never arrives) for ≥ hang.min_s. The GPUs whose hang episodes
// overlap make one critical finding: which GPUs, when it began on each, how long it lasted.
// (A second criterion, no step progress for ≥ 10 × the median step, would need step times here: not yet.)

#include "analysis/rules/finding.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <vector>

namespace runlens::analysis {

// The rule's parameters (hang.*), read once.
struct HangParams
{
    CommonParams common;
    double utilMin = 0; // hang.util_min (%)
    double smMax = 0;   // hang.sm_max
    double minS = 0;    // hang.min_s

    static HangParams from(const RuleParams& p);
};

std::vector<Finding> hangRule(const RunMetrics& metrics, const RuleParams& params);

} // namespace runlens::analysis
