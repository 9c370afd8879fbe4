#pragma once

// COMM_BOUND (docs/design.md §5): GPU under-use or the utilization illusion whose evidence is communication. Per
// evidence slice (rules.evidence_s) and node: the symptom is the node's GPUs under-used (SM activity below
// comm_bound.sm_max) or showing the illusion (utilization ≥ comm_bound.illusion_util with SM activity
// ≤ comm_bound.illusion_sm and util/100 − SM ≥ comm_bound.illusion_gap) in at least half the slice; the evidence is the
// illusion itself (kernels resident and waiting: the NCCL case), communication frames in ≥ comm_bound.share of the busy
// stack samples, or profiled communication kernels or collective spans covering ≥ comm_bound.share of the time. Slices
// of a HANG are left to that rule. The link load (network rate / capacity) sub-types a finding when the capacity is
// known; without it the finding says so and its confidence drops.
//
// Profiled steps measure it: each rank's profiled step's share of wall time with a collective or communication kernel
// in flight and none of its compute kernels running. The node's steps that overlap a profiled step carry that share
// (measured), the steps with the profiled steps' signature (step time, SM activity, CPU utilization, link rate
// within comm_bound.match_*) inherit it (extrapolated). Where the traces show collectives inside backward, that
// fraction of the training thread's samples inside backward is communication wait. The saving is the wait per
// step × the steps of each episode (per episode in FindingEpisode::savingS), else the other evidence's share of the
// flagged slices. Severity: warn from comm_bound.warn of the wall time, critical from comm_bound.critical.

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/finding.h"
#include "analysis/rules/phase_slices.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"
#include "analysis/rules/step_detection.h"
#include "analysis/store/trace_reader.h"

#include <vector>

namespace runlens::analysis {

// The rule's parameters (comm_bound.*), read once; with step detection's, which finds the node's steps.
struct CommBoundParams
{
    CommonParams common;
    StepParams steps;
    double smMax = 0;           // comm_bound.sm_max
    double share = 0;           // comm_bound.share
    double unlikeStepRatio = 0; // comm_bound.unlike_step_ratio
    double latencyLoad = 0;     // comm_bound.latency_load
    double bandwidthLoad = 0;   // comm_bound.bandwidth_load
    double matchStepRel = 0;    // comm_bound.match_step_rel
    double matchSmAbs = 0;      // comm_bound.match_sm_abs
    double matchCpuAbs = 0;     // comm_bound.match_cpu_abs (% points)
    double matchNetRel = 0;     // comm_bound.match_net_rel
    double matchNetFloor = 0;   // comm_bound.match_net_floor (B/s)
    double basisMinS = 0;       // comm_bound.basis_min_s
    double illusionUtil = 0;    // comm_bound.illusion_util (%)
    double illusionSm = 0;      // comm_bound.illusion_sm
    double illusionGap = 0;     // comm_bound.illusion_gap
    SeverityCuts severity;      // comm_bound.warn, comm_bound.critical

    static CommBoundParams from(const RuleParams& p);
};

// phases: the stack samples per slice (phaseSlices with rules.evidence_s); stacks gives the episodes' top frames and
// the samples inside backward. traces may be null; with them the profiled steps are measured and the evidence lists
// the communication kernels and collectives profiled in the episodes.
Expected<std::vector<Finding>> commBoundRule(const RunMetrics& metrics, FlameSource& stacks, const PhaseSlices& phases,
                                             store::TraceReader* traces, const RuleParams& params,
                                             const std::vector<Finding>& hangs);

} // namespace runlens::analysis
