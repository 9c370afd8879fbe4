#pragma once

// THROTTLE (docs/design.md §5): a busy GPU (utilization ≥ throttle.busy_util, when known) whose clocks are held down,
// per slot:
// - a thermal or hardware-slowdown clock-event reason (NVML: sw/hw thermal slowdown, hw slowdown, hw power brake);
// - the software power-cap reason while its SM clock is below throttle.clock_ratio × its reference (the peers'
//   median, else its own busy clock: the clock it reaches when not capped); a fleet that is capped alike is its
//   configuration, not a throttle;
// - or its SM clock below throttle.clock_ratio × the median of its busy peers (every other GPU of the run) while it
//   is at its power limit (power ≥ throttle.power_at_limit × the recorded limit, else × the most it drew in the run)
//   or hot (temperature ≥ throttle.temp_hot_c): what tells a throttle where the driver records no reasons.
// Episodes of at least throttle.min_s; the GPUs of one node make one finding: impact = the throttled share of the
// wall time (info, warn ≥ throttle.warn, critical ≥ throttle.critical), saving = the clock deficit of its slowest
// GPU over that time, evidence per GPU (median clock against the peers', power and its limit, temperature, which
// reasons and how often), and the cause with the most slots (mixed when several show and it is in less than
// kPrimaryCover of the throttled GPU slots).

#include "analysis/rules/finding.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <vector>

namespace runlens::analysis {

// The rule's parameters (throttle.*), read once.
struct ThrottleParams
{
    CommonParams common;
    double busyUtil = 0;         // throttle.busy_util (%)
    double clockRatio = 0;       // throttle.clock_ratio
    double ownClockQuantile = 0; // throttle.own_clock_quantile
    double powerAtLimit = 0;     // throttle.power_at_limit
    double tempHotC = 0;         // throttle.temp_hot_c
    double minS = 0;             // throttle.min_s
    SeverityCuts severity;       // throttle.warn, throttle.critical

    static ThrottleParams from(const RuleParams& p);
};

std::vector<Finding> throttleRule(const RunMetrics& metrics, const RuleParams& params);

} // namespace runlens::analysis
