#pragma once

// Where a stall starts and ends, from the finest source (docs/design.md §5, "Episode boundaries"). The rules find
// stalls on the common 1 s grid, where interval-averaged metrics (1 s SM activity read as the mean of the second
// before its timestamp, and GPM counters that lag by a sample or two) move the edges by seconds. A CKPT_GAP
// episode is then moved to the span of the training threads' checkpoint samples (torch.save, DCP, …) that
// overlaps it within bounds.search_s, joined with the stretch of the node's finest GPU utilization series
// (nvidia-smi at 250 ms rather than dmon at 1 s) at or below stall.util_max that overlaps that span (the GPUs stay
// idle until the write is flushed, and an fsync in the user's own code is no checkpoint frame). Each edge of a
// utilization stretch lies halfway between the last busy and the first idle sample. Without stacks the stretch
// alone decides; an episode with neither keeps its grid edges.

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/finding.h"
#include "analysis/rules/host_stall_rule.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"
#include "analysis/store/run_reader.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace runlens::analysis {

class StallBounds
{
public:
    StallBounds(const RunMetrics& metrics, FlameSource& stacks, const std::vector<ThreadScan>& threads,
                store::RunReader& reader, const RuleParams& params)
        : m_metrics(metrics), m_stacks(stacks), m_threads(threads), m_reader(reader),
          m_params(CommonParams::from(params))
    {
    }
    // The edges of a checkpoint stall of the node's GPUs found on the grid as [startNs, endNs).
    Expected<FindingEpisode> checkpoint(const std::string& node, int64_t startNs, int64_t endNs);

private:
    Expected<std::optional<FindingEpisode>> fromStacks(const std::string& node, int64_t startNs, int64_t endNs);
    Expected<std::optional<FindingEpisode>> fromUtilization(const std::string& node, int64_t startNs, int64_t endNs);

    const RunMetrics& m_metrics;
    FlameSource& m_stacks;
    const std::vector<ThreadScan>& m_threads;
    store::RunReader& m_reader;
    const CommonParams m_params; // bounds.*, stall.util_max
    // Per (node, GPU name): its finest gpu.util series (the most points per second), read once.
    std::optional<std::map<std::pair<std::string, std::string>, int64_t>> m_finestUtil;
};

} // namespace runlens::analysis
