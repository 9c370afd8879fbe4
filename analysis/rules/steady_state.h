#pragma once

// The steady-state window W of docs/design.md §5: a node's run without its start-up. Before the GPUs first do work
// (processes starting, the model loaded and sharded, the first batch prepared) they sit idle, and that is
// neither a stall nor an input problem. W starts at the first slot from which the node's GPUs run at
// rules.warmup_util % or more in most slots of the next rules.warmup_hold_s; the rules judge only W.

#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <string>

namespace runlens::analysis {

// The first slot of the node's steady state; grid.size when its GPUs never start working, 0 without GPU metrics.
size_t steadyStartSlot(const RunMetrics& metrics, const std::string& node, const CommonParams& params);
// The same, reading the parameters (for callers outside the rules).
size_t steadyStartSlot(const RunMetrics& metrics, const std::string& node, const RuleParams& params);

} // namespace runlens::analysis
