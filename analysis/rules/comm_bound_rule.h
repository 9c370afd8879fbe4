#pragma once

// COMM_BOUND (docs/design.md §5): GPU under-use or the utilization illusion whose evidence is communication. Per
// evidence slice (rules.evidence_s) and node: the symptom is the node's GPUs under-used (SM activity below
// comm_bound.sm_max) or showing the illusion (utilization ≥ 90 % with SM activity ≤ 0.5 and util/100 − SM ≥ 0.5)
// in at least half the slice; the evidence is the illusion itself (kernels resident and waiting: the NCCL case),
// communication frames in ≥ comm_bound.share of the busy stack samples, or profiled communication kernels or
// collective spans covering ≥ comm_bound.share of the time. Slices of a HANG are left to that rule. The link load
// (network rate / capacity) sub-types a finding when the capacity is known; without it the finding says so and
// its confidence drops.

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/finding.h"
#include "analysis/rules/phase_slices.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"
#include "analysis/store/trace_reader.h"

#include <vector>

namespace runlens::analysis {

// phases: the stack samples per slice (phaseSlices with rules.evidence_s); stacks gives the episodes' top frames.
// traces may be null; with them the evidence lists the communication kernels and collectives profiled in the
// episodes.
Expected<std::vector<Finding>> commBoundRule(const RunMetrics& metrics, FlameSource& stacks, const PhaseSlices& phases,
                                             store::TraceReader* traces, const RuleParams& params,
                                             const std::vector<Finding>& hangs);

} // namespace runlens::analysis
