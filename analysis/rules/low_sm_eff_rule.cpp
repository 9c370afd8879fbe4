#include "analysis/rules/low_sm_eff_rule.h"

#include "analysis/rules/steady_state.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace runlens::analysis {

std::vector<Finding> lowSmEfficiencyRule(const RunMetrics& m, const RuleParams& p, const std::vector<Finding>& explained,
                                         const PhaseSlices* phases)
{
    std::vector<Finding> out;
    const TimeGrid& grid = m.grid;
    const int maxGap = static_cast<int>(p.get("rules.episode_gap_samples"));
    const double wall = grid.seconds();
    for (const NodeMetrics& node : m.nodes) {
        std::vector<const GpuMetrics*> gpus;
        for (const GpuMetrics& g : m.gpus)
            if (g.node == node.node && !g.smActive.empty()) gpus.push_back(&g);
        if (gpus.empty()) continue;
        // Per slot, the node's busy GPUs: their mean SM activity.
        std::vector<uint8_t> low(grid.size, 0);
        std::vector<double> sm(grid.size, std::nan("")), util(grid.size, std::nan(""));
        for (size_t i = steadyStartSlot(m, node.node, p); i < grid.size; ++i) {
            double s = 0, u = 0;
            int n = 0;
            for (const GpuMetrics* g : gpus)
                if (std::isfinite(g->util[i]) && std::isfinite(g->smActive[i]) && g->util[i] >= p.get("low_sm.util_min")) {
                    s += g->smActive[i];
                    u += g->util[i];
                    ++n;
                }
            if (n == 0) continue;
            sm[i] = s / n;
            util[i] = u / n;
            low[i] = sm[i] < p.get("low_sm.warn_sm") ? 1 : 0;
        }
        // The time other rules explain on this node.
        std::vector<uint8_t> known(grid.size, 0);
        for (const Finding& f : explained) {
            if (std::find(f.nodes.begin(), f.nodes.end(), node.node) == f.nodes.end()) continue;
            for (const FindingEpisode& e : f.episodes)
                for (size_t i = grid.slotOf(std::max(e.startNs, grid.startNs)); i < grid.size && grid.slotStart(i) < e.endNs; ++i)
                    known[i] = 1;
        }
        Finding f;
        double slots = 0, explainedSlots = 0, smSum = 0, utilSum = 0, illusion = 0, savingS = 0;
        std::vector<size_t> seenSlices;
        PhaseCounts stackCounts{};
        const double slotS = static_cast<double>(grid.stepNs) / 1e9, goodUse = p.get("low_sm.good_use_sm");
        for (const Episode& e : episodesOf(low, grid, maxGap)) {
            if (e.seconds() < p.get("low_sm.min_s")) continue;
            // The saving: reaching the good-use level from each slot's SM activity, over the slots no other
            // finding explains (their time is that finding's to save). The episode is cut where it passes from
            // explained to unexplained time for at least low_sm.min_s / 2, so a window reads its own saving.
            std::vector<std::pair<size_t, size_t>> parts{{e.first, e.first}};
            const auto minPart = static_cast<size_t>(std::max(1.0, p.get("low_sm.min_s") / 2 / slotS));
            for (size_t i = e.first + 1; i <= e.last; ++i) {
                if (known[i] != known[parts.back().second]) {
                    size_t run = i;
                    while (run <= e.last && known[run] == known[i])
                        ++run;
                    if (run - i >= minPart && parts.back().second - parts.back().first + 1 >= minPart) {
                        parts.push_back({i, i});
                        continue;
                    }
                }
                parts.back().second = i;
            }
            for (const auto& [from, to] : parts) {
            double episodeSaving = 0;
            for (size_t i = from; i <= to; ++i) {
                if (!std::isfinite(sm[i])) continue;
                ++slots;
                explainedSlots += known[i];
                smSum += sm[i];
                utilSum += util[i];
                illusion += util[i] >= 90 ? 1 : 0;
                if (!known[i]) episodeSaving += slotS * std::clamp(1 - sm[i] / goodUse, 0.0, 1.0);
            }
            f.episodes.push_back({grid.slotStart(from), grid.slotStart(to + 1), episodeSaving});
            savingS += episodeSaving;
            }
            // The stacks of the unexplained time, each evidence slice counted once.
            if (phases && phases->hasNode(node.node))
                for (size_t i = e.first; i <= e.last; ++i) {
                    const size_t slice = i / phases->sliceSlots();
                    if (known[i] || (!seenSlices.empty() && seenSlices.back() == slice)) continue;
                    seenSlices.push_back(slice);
                    const SliceShares sh = phases->at(node.node, slice);
                    for (size_t k = 0; k < kPhaseCount; ++k)
                        stackCounts[k] += sh.counts[k];
                }
        }
        if (f.episodes.empty() || slots == 0) continue;
        double seconds = 0;
        for (const FindingEpisode& e : f.episodes)
            seconds += static_cast<double>(e.endNs - e.startNs) / 1e9;
        const double meanSm = smSum / slots, meanUtil = utilSum / slots, unexplained = 1 - explainedSlots / slots;
        f.rule = "LOW_SM_EFF";
        f.nodes = {node.node};
        for (const GpuMetrics* g : gpus)
            f.gpus.push_back(fmt::format("{}:gpu{}", g->node, g->gpu));
        // Time other findings explain entirely is theirs: the low SM activity there is described, not a cost of its own.
        f.severity = savingS <= 0 ? "info" : meanSm < p.get("low_sm.critical_sm") ? "critical" : "warn";
        f.primary = unexplained >= 0.5;
        f.confidence = 0.7;
        f.impact = wall > 0 ? seconds / wall : 0;
        f.savingS = savingS;
        const bool isIllusion = illusion / slots >= 0.5;
        int64_t busySamples = 0;
        for (size_t k = 0; k < kPhaseCount; ++k)
            if (static_cast<Phase>(k) != Phase::Idle) busySamples += stackCounts[k];
        const double modelShare = busySamples > 0 ? static_cast<double>(stackCounts[static_cast<size_t>(Phase::Compute)]) / static_cast<double>(busySamples) : 0;
        const double waitShare = busySamples > 0 ? static_cast<double>(stackCounts[static_cast<size_t>(Phase::GpuWait)]) / static_cast<double>(busySamples) : 0;
        // Launch-bound: the GPUs idle between kernels (utilization well below the illusion) while the training
        // threads do nothing but run model code and wait for those kernels.
        const bool launchBound = !isIllusion && busySamples > 0 && meanUtil < p.get("low_sm.launch_util_max") &&
                                 modelShare >= p.get("low_sm.launch_model_share") &&
                                 modelShare + waitShare >= p.get("low_sm.launch_host_share");
        f.title = fmt::format("Low SM efficiency on {}: SM activity {:.2f} while the GPUs are busy ({:.0f} % utilization){} for {:.0f} s",
                              node.node, meanSm, meanUtil,
                              isIllusion    ? std::string(", the utilization illusion")
                              : launchBound ? fmt::format(", launch-bound (the training thread runs model code {:.0f} % and waits on the GPU {:.0f} % of the time)", 100 * modelShare, 100 * waitShare)
                                            : std::string(),
                              seconds);
        if (!f.primary) f.title += fmt::format(" — {:.0f} % of it explained by other findings", 100 * (1 - unexplained));
        if (busySamples > 0) {
            f.evidence.insert(QStringLiteral("host_model_code_share"), modelShare);
            f.evidence.insert(QStringLiteral("host_gpu_wait_share"), waitShare);
            f.evidence.insert(QStringLiteral("sub_cause"), QString::fromLatin1(launchBound ? "launch_bound" : isIllusion ? "illusion" : "small_kernels"));
        }
        const QJsonObject base{{QStringLiteral("mean_sm_active"), meanSm},
                                 {QStringLiteral("mean_gpu_util_pct"), meanUtil},
                                 {QStringLiteral("illusion_share"), illusion / slots},
                                 {QStringLiteral("explained_share"), 1 - unexplained},
                                 {QStringLiteral("good_use_sm"), goodUse}};
        for (auto it = base.begin(); it != base.end(); ++it)
            f.evidence.insert(it.key(), it.value());
        f.recommendation = launchBound ?
            "The host cannot issue work fast enough: its model code launches many small kernels. Capture the step in "
            "CUDA graphs (torch.compile mode=\"reduce-overhead\", torch.cuda.graphs), fuse ops (torch.compile), and "
            "give each launch more work (larger micro-batches, sequence packing). " :
            std::string();
        f.recommendation +=
            "The GPUs run kernels that keep few SMs busy: larger micro-batches or sequence packing, fused kernels "
            "(torch.compile, FlashAttention), bf16/fp8 matmuls that use the tensor cores, and fewer small kernel "
            "launches (CUDA graphs); profile one step (PyTorch profiler) to see which kernels are small.";
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace runlens::analysis
