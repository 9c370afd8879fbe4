#pragma once

// THROTTLE (docs/design.md §5): a busy GPU (utilization ≥ throttle.busy_util, when known) whose clocks are held down,
// per slot:
// - a thermal or hardware-slowdown clock-event reason (NVML: sw/hw thermal slowdown, hw slowdown, hw power brake);
// - the software power-cap reason while its SM clock is below throttle.clock_ratio × its reference (the peers'
//   median, else its own busy clock: the clock it reaches when not capped); a fleet that is capped alike is its
//   configuration, not a throttle;
// - or, without reasons, its SM clock below throttle.clock_ratio × the median of its busy peers (every other GPU of
//   the run) while it is at its power limit (power ≥ throttle.power_at_limit × the recorded limit, else × the most it
//   drew in the run) or hot (temperature ≥ throttle.temp_hot_c).
// Episodes of at least throttle.min_s; the GPUs of one node make one finding: impact = the throttled share of the
// wall time (info, warn ≥ throttle.warn, critical ≥ throttle.critical), saving = the clock deficit over that time,
// evidence per GPU (median clock against the peers', power and its limit, temperature, which reasons and how often).

#include "analysis/rules/finding.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <vector>

namespace runlens::analysis {

std::vector<Finding> throttleRule(const RunMetrics& metrics, const RuleParams& params);

} // namespace runlens::analysis
