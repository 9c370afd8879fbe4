#pragma once

// STRAGGLER (docs/design.md §5): the node (or, in a one-node run, the GPU) the others wait for at each step's blocking
// collective. Per step (from computeStepTimes: the starts of the most confident node; steps longer than
// straggler.max_step_factor × the median, e.g. with a checkpoint, are left out) and GPU, the arrival is when the
// GPU leaves its last compute of the step: the end of the last slot at least half busy before the next step, placed
// within the slot by the slot's mean. A node arrives with its last GPU. The lag is the arrival minus the median of
// the peers' arrivals in that step; its robust z is lag / σ, σ the smaller of two MAD-consistent scales: each unit's
// lags about their own median (pooled; right when one is late in most steps) and the lower quartile of all |lags|
// (right when it is late in about half), at least straggler.scale_floor × the step time. A unit is late in a step
// when z ≥ straggler.z; it is a straggler when it is late in ≥ straggler.persistent (persistent) or
// ≥ straggler.intermittent (intermittent) of the steps, at least straggler.dominance times as often as the median
// peer (a different rank late every step is jitter, not a straggler), with a median lag (over its late steps)
// ≥ straggler.min_lag × the step time. Impact: the summed lag (the time the others wait) over the wall time.
// Needs steps of at least straggler.min_step_samples grid slots and at least straggler.min_steps of them.

#include "analysis/rules/finding.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"
#include "analysis/rules/step_detection.h"

#include <vector>

namespace runlens::analysis {

std::vector<Finding> stragglerRule(const RunMetrics& metrics, const std::vector<StepTimes>& steps, const RuleParams& params);

} // namespace runlens::analysis
