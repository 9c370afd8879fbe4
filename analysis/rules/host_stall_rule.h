#pragma once

// HOST_STALL (docs/design.md §5): a training thread blocked in one place, outside input, communication, checkpoint
// and model code, while its node's GPUs idle: a metrics push, a synchronous log upload, a lock, a sleep. Read from
// the timed stack samples: a thread's run of consecutive samples with the same stack (no gap over
// host_stall.max_gap_s between them) lasting at least host_stall.min_s is a block; it counts on a training thread
// (one whose samples are at least host_stall.training_share in model code, waiting on the GPU or communicating)
// when the node's GPUs idle in at least host_stall.gpu_idle_share of the grid slots it covers (a slot idles when
// every GPU of the node stalls by gpuStalls or its utilization is at most stall.util_max), and it is not already
// a checkpoint gap or a hang, nor start-up before the GPUs first work. The blocks of one node in one frame make
// one finding: when (to the sample), the frame that blocks (the innermost frame on the stack that is not itself a
// wait: time.sleep and lock waits name their caller), how long each, the interval and whether it is periodic,
// and what the GPUs lost (their sum).

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/finding.h"
#include "analysis/rules/phase_slices.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <atomic>
#include <vector>

namespace runlens::analysis {

// The rule's parameters (host_stall.*), read once.
struct HostStallParams
{
    CommonParams common;
    double minS = 0;          // host_stall.min_s
    double maxGapS = 0;       // host_stall.max_gap_s
    double trainingShare = 0; // host_stall.training_share
    double gpuIdleShare = 0;  // host_stall.gpu_idle_share
    PeriodicCuts periodic;    // host_stall.periodic_min_events, host_stall.periodic_max_cv
    SeverityCuts severity;    // host_stall.warn, host_stall.critical

    static HostStallParams from(const RuleParams& p);
};

// A run of one thread's consecutive samples with the same stack, outside input, communication, checkpoint and
// model code, of at least host_stall.min_s.
struct StackBlock
{
    int64_t startNs = 0, endNs = 0; // the first sample, the last one plus the sampling period
    int64_t callsite = 0;
};

// One thread's timed samples read once: whether it trains, its sampling period and its blocks.
struct ThreadScan
{
    store::StackThreadInfo thread;
    bool training = false;
    int64_t periodNs = 0;
    std::vector<StackBlock> blocks;
};

// Every thread with timed samples, read in windows (memory bounded by the blocks, not the samples); slices, when
// given, counts the same samples (one read of the stacks for both).
Expected<std::vector<ThreadScan>> scanThreads(FlameSource& stacks, const RuleParams& params,
                                              const std::atomic<bool>* cancel = nullptr,
                                              PhaseSliceCounter* slices = nullptr);

// others: the findings so far (CKPT_GAP and HANG episodes are not host stalls).
Expected<std::vector<Finding>> hostStallRule(const RunMetrics& metrics, FlameSource& stacks,
                                             const std::vector<ThreadScan>& threads, const RuleParams& params,
                                             const std::vector<Finding>& others);

} // namespace runlens::analysis
