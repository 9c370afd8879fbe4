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
//
// Ranks (rankStragglerRule): the rank (process) the others wait for, from what each rank does rather than from its
// GPU, so it is found when ranks share a GPU or the GPUs look alike. Two sources:
//  - Profiled traces (trace_track.rank): per profiled window (collectives at most straggler.trace_gap_s apart), the
//    k-th collective of a name is one instance on every rank (communication kernels when every rank has them, else
//    the CPU-side collective spans); a rank's arrival is the instance's start, the collective ends together (no
//    rank done before the last arrives, else it is not one rendezvous), so the latest rank makes the others wait
//    from the median of their arrivals to its own. A rank's lateness in a step is
//    its largest such wait there (the waits of one step overlap; ProfilerStep#N when traced, else the window's
//    steps), late from straggler.trace_min_lag of the step.
//  - Timed stack samples: one training thread per process (the most sampled; a process is the thread's pid, or a
//    "pid N" in its name, or the thread itself), ranked by a "rank N" in its name or process or by the trace rank of
//    its pid. Per window (steps joined until a window holds straggler.window_samples samples, or evidence slices
//    without steps; at most straggler.max_reads thread windows and about straggler.max_samples samples read, spread
//    evenly over longer runs), a rank's work share is the part of the window it spends busy outside the waits:
//    communication, GPU-wait and idle frames, and the frames its profiled collectives run under (the deepest frame
//    on straggler.collective_frame_share of the samples taken during them: a trainer's own frame whose collectives
//    run in native code). Its lateness is its work share minus the peers' median: the others spend that part of
//    the window waiting for it. Windows where the extra work is a checkpoint are left to CKPT_GAP.
// A rank is late in a window (or profiled step) as a unit is above (straggler.z, straggler.min_lag of the step), and a
// straggler by the same shares and dominance; from traces alone it needs straggler.trace_min_steps profiled steps
// and to be late in straggler.trace_share of them.
// The finding names the rank and the frames it spends the late windows in that its peers do not (top_frames), the
// median lateness per step, and saves the others' wait: the lateness summed over the windows it is late in.

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/finding.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"
#include "analysis/rules/step_detection.h"
#include "analysis/store/trace_reader.h"

#include <atomic>
#include <vector>

namespace runlens::analysis {

// The rule's parameters (straggler.*), read once; with step detection's (a GPU's busy share needs steps.min_contrast).
struct StragglerParams
{
    CommonParams common;
    StepParams steps;
    double maxStepFactor = 0;        // straggler.max_step_factor
    int minStepSamples = 0;          // straggler.min_step_samples
    int minSteps = 0;                // straggler.min_steps
    double scaleFloor = 0;           // straggler.scale_floor
    double z = 0;                    // straggler.z
    double persistent = 0;           // straggler.persistent
    double intermittent = 0;         // straggler.intermittent
    double dominance = 0;            // straggler.dominance
    double significance = 0;         // straggler.significance
    double minLag = 0;               // straggler.min_lag
    SeverityCuts severity;           // straggler.warn, straggler.critical
    int windowSamples = 0;           // straggler.window_samples
    int maxReads = 0;                // straggler.max_reads
    int maxSamples = 0;              // straggler.max_samples
    double collectiveFrameShare = 0; // straggler.collective_frame_share
    double traceGapS = 0;            // straggler.trace_gap_s
    double traceMinLag = 0;          // straggler.trace_min_lag
    int traceMinSteps = 0;           // straggler.trace_min_steps
    double traceShare = 0;           // straggler.trace_share
    double topFrameShare = 0;        // straggler.top_frame_share
    double symptomOverlap = 0;       // straggler.symptom_overlap
    double symptomMinS = 0;          // straggler.symptom_min_s

    static StragglerParams from(const RuleParams& p);
};

std::vector<Finding> stragglerRule(const RunMetrics& metrics, const std::vector<StepTimes>& steps,
                                   const RuleParams& params);

// The rank stragglers (above). traces may be null.
Expected<std::vector<Finding>> rankStragglerRule(const RunMetrics& metrics, const std::vector<StepTimes>& steps,
                                                 FlameSource& stacks, store::TraceReader* traces,
                                                 const RuleParams& params, const std::atomic<bool>* cancel = nullptr);

// A finding of rankStragglerRule (evidence unit_kind "rank").
bool isRankStraggler(const Finding& f);

// A rank straggler's cost shows elsewhere as the others' communication wait: a COMM_BOUND finding on the straggler's
// node with at least straggler.symptom_overlap of its episode time inside the straggler's episodes becomes its
// symptom (causedBy "STRAGGLER rank N"). Run after all rules.
void linkStragglerSymptoms(std::vector<Finding>& findings, const RuleParams& params);

} // namespace runlens::analysis
