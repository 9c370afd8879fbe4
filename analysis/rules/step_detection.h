#pragma once

// Training steps per node: when each step started and how long a step takes. From the trainer log when the node
// has one (train.step_time: a point at the end of each step holding its duration; without it, the times train.loss
// was logged), else from the periodicity of the node's GPUs: the mean SM activity of its GPUs (utilization when the
// run has no SM activity), whose autocorrelation over the busy part of the run has its first clear peak at the step
// period (between steps.min_period_s and steps.max_period_s, at least steps.min_cycles periods long). A step then
// starts where the GPUs rise out of each recurring dip (the wait at the step's collective); a checkpoint stall is a
// long dip, and the step after it starts where it ends. A signal that is flat but for narrow dips (a one-sample wait
// at each step's collective, as ZeRO-3 shows at 1 s sampling) has too little variance for that: its dips are found as
// runs well below the level (the median, beyond its robust noise), and the period is the median interval between
// the steps that start as the GPUs rise out of them; when both find a period, the finer is the step (checkpoint
// stalls every N steps make the coarser). A node without a clear period has no steps (no guess).

#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <cstdint>
#include <string>
#include <vector>

namespace runlens::analysis {

// Step detection's parameters (steps.*), read once.
struct StepParams
{
    int minLogged = 0;        // steps.min_logged
    double idleLevel = 0;     // steps.idle_level
    double minContrast = 0;   // steps.min_contrast
    double minPeriodS = 0;    // steps.min_period_s
    double maxPeriodS = 0;    // steps.max_period_s
    int minCycles = 0;        // steps.min_cycles
    double minAcf = 0;        // steps.min_acf
    double peakShare = 0;     // steps.peak_share
    double minProminence = 0; // steps.min_prominence
    double minDipDepth = 0;   // steps.min_dip_depth
    double minRegular = 0;    // steps.min_regular
    double dipNoiseZ = 0;     // steps.dip_noise_z
    double minDipArea = 0;    // steps.min_dip_area
    double maxDipShare = 0;   // steps.max_dip_share

    static StepParams from(const RuleParams& p);
};

struct StepTimes
{
    std::string node;
    std::string source;            // "trainer_log", "sm_periodicity" or "utilization_periodicity"
    double medianStepS = 0;        // the median step time
    std::vector<int64_t> startsNs; // step starts, in time order
    double confidence = 0;         // 0–1
};

// One entry per node that has steps; nodes without a trainer log and without a clear period are left out.
std::vector<StepTimes> computeStepTimes(const RunMetrics& metrics, const StepParams& params);
std::vector<StepTimes> computeStepTimes(const RunMetrics& metrics, const RuleParams& params);

// The periodicity of one signal on the grid (the part of computeStepTimes that reads no node): empty starts when
// there is no clear period. Values are activities 0–1 (utilization divided by 100); NaN is unknown.
StepTimes stepTimesFromActivity(const std::vector<double>& activity, const TimeGrid& grid, const StepParams& params);
StepTimes stepTimesFromActivity(const std::vector<double>& activity, const TimeGrid& grid, const RuleParams& params);

} // namespace runlens::analysis
