#include "analysis/rules/low_sm_eff_rule.h"

#include "analysis/rules/steady_state.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace runlens::analysis {

namespace {

// The illusion when utilization reaches low_sm.illusion_util in at least this share of the episodes' slots (most of
// the time, not a passing spike).
constexpr double kIllusionSlotShare = 0.5;
// Primary when at least this share of its time is unexplained by other findings: then the low SM activity is mostly
// its own problem, not a side effect of theirs.
constexpr double kPrimaryUnexplained = 0.5;
// An episode is cut where it passes between explained and unexplained time for at least low_sm.min_s over this (each
// part at least as long), so a window reads its own saving without slicing the episode at every short change.
constexpr double kPartOfMinS = 2;
// The low SM activity is measured; its cause (small kernels, launch overhead) is inferred, not seen.
constexpr double kConfidence = 0.7;

// Per slot of the node's steady state, its busy GPUs (utilization ≥ low_sm.util_min): their mean SM activity and
// utilization (NaN where none is busy), and whether the SM activity is low.
struct SlotUse
{
    std::vector<uint8_t> low;
    std::vector<double> sm, util;
};

SlotUse slotUse(const RunMetrics& m, const NodeMetrics& node, const std::vector<const GpuMetrics*>& gpus,
                const LowSmParams& q)
{
    const TimeGrid& grid = m.grid;
    SlotUse out;
    out.low.assign(grid.size, 0);
    out.sm.assign(grid.size, std::nan(""));
    out.util.assign(grid.size, std::nan(""));
    for (size_t i = steadyStartSlot(m, node.node, q.common); i < grid.size; ++i) {
        double s = 0, u = 0;
        int n = 0;
        for (const GpuMetrics* g : gpus)
            if (std::isfinite(g->util[i]) && std::isfinite(g->smActive[i]) && g->util[i] >= q.utilMin) {
                s += g->smActive[i];
                u += g->util[i];
                ++n;
            }
        if (n == 0) continue;
        out.sm[i] = s / n;
        out.util[i] = u / n;
        out.low[i] = out.sm[i] < q.warnSm ? 1 : 0;
    }
    return out;
}

// The slots other rules' findings on this node explain.
std::vector<uint8_t> explainedSlots(const TimeGrid& grid, const std::string& node,
                                    const std::vector<Finding>& explained)
{
    std::vector<uint8_t> known(grid.size, 0);
    for (const Finding& f : explained) {
        if (std::find(f.nodes.begin(), f.nodes.end(), node) == f.nodes.end()) continue;
        for (const FindingEpisode& e : f.episodes) {
            const auto [first, end] = grid.slotsOverlapping(e.startNs, e.endNs);
            for (size_t i = first; i < end; ++i)
                known[i] = 1;
        }
    }
    return known;
}

// The node's low-SM time summed over its episodes.
struct Tally
{
    double slots = 0, explainedSlots = 0, smSum = 0, utilSum = 0, illusion = 0, savingS = 0;
    std::vector<size_t> seenSlices;
    PhaseCounts stackCounts{};
};

// An episode's parts: cut where it passes from explained to unexplained time (or back) for at least minPart slots.
std::vector<std::pair<size_t, size_t>> episodeParts(const Episode& e, const std::vector<uint8_t>& known, size_t minPart)
{
    std::vector<std::pair<size_t, size_t>> parts{{e.first, e.first}};
    for (size_t i = e.first + 1; i <= e.last; ++i) {
        if (known[i] != known[parts.back().second]) {
            size_t run = i;
            while (run <= e.last && known[run] == known[i])
                ++run;
            if (run - i >= minPart && parts.back().second - parts.back().first + 1 >= minPart) {
                parts.emplace_back(i, i);
                continue;
            }
        }
        parts.back().second = i;
    }
    return parts;
}

// Adds one episode: its parts with their savings (reaching the good-use level from each slot's SM activity, over the
// slots no other finding explains: their time is that finding's to save), and the stacks of its unexplained time.
void addEpisode(const Episode& e, const SlotUse& use, const std::vector<uint8_t>& known, const TimeGrid& grid,
                const std::string& node, const PhaseSlices* phases, const LowSmParams& q, Finding& f, Tally& t)
{
    const double slotS = static_cast<double>(grid.stepNs) / 1e9;
    const auto minPart = static_cast<size_t>(std::max(1.0, q.minS / kPartOfMinS / slotS));
    for (const auto& [from, to] : episodeParts(e, known, minPart)) {
        double episodeSaving = 0;
        for (size_t i = from; i <= to; ++i) {
            if (!std::isfinite(use.sm[i])) continue;
            ++t.slots;
            t.explainedSlots += known[i];
            t.smSum += use.sm[i];
            t.utilSum += use.util[i];
            t.illusion += use.util[i] >= q.illusionUtil ? 1 : 0;
            if (!known[i]) episodeSaving += slotS * std::clamp(1 - use.sm[i] / q.goodUseSm, 0.0, 1.0);
        }
        f.episodes.push_back({grid.slotStart(from), grid.slotStart(to + 1), episodeSaving});
        t.savingS += episodeSaving;
    }
    // The stacks of the unexplained time, each evidence slice counted once.
    if (phases && phases->hasNode(node))
        for (size_t i = e.first; i <= e.last; ++i) {
            const size_t slice = i / phases->sliceSlots();
            if (known[i] || (!t.seenSlices.empty() && t.seenSlices.back() == slice)) continue;
            t.seenSlices.push_back(slice);
            const SliceShares sh = phases->at(node, slice);
            for (size_t k = 0; k < kPhaseCount; ++k)
                t.stackCounts[k] += sh.counts[k];
        }
}

// Severity, role, the sub-cause (illusion, launch-bound or small kernels) and what to change, from the tally.
void describe(Finding& f, const std::string& node, const Tally& t, const LowSmParams& q, double wall)
{
    double seconds = 0;
    for (const FindingEpisode& e : f.episodes)
        seconds += static_cast<double>(e.endNs - e.startNs) / 1e9;
    const double meanSm = t.smSum / t.slots, meanUtil = t.utilSum / t.slots,
                 unexplained = 1 - t.explainedSlots / t.slots;
    // Time other findings explain entirely is theirs: the low SM activity there is described, not a cost of its own.
    f.severity = t.savingS <= 0 ? "info" : meanSm < q.criticalSm ? "critical" : "warn";
    f.primary = unexplained >= kPrimaryUnexplained;
    f.confidence = kConfidence;
    f.impact = wall > 0 ? seconds / wall : 0;
    f.savingS = t.savingS;
    const bool isIllusion = t.illusion / t.slots >= kIllusionSlotShare;
    int64_t busySamples = 0;
    for (size_t k = 0; k < kPhaseCount; ++k)
        if (static_cast<Phase>(k) != Phase::Idle) busySamples += t.stackCounts[k];
    const double modelShare =
        busySamples > 0
            ? static_cast<double>(t.stackCounts[static_cast<size_t>(Phase::Compute)]) / static_cast<double>(busySamples)
            : 0;
    const double waitShare = busySamples > 0 ? static_cast<double>(t.stackCounts[static_cast<size_t>(Phase::GpuWait)]) /
                                                   static_cast<double>(busySamples)
                                             : 0;
    // Launch-bound: the GPUs idle between kernels (utilization well below the illusion) while the training
    // threads do nothing but run model code and wait for those kernels.
    const bool launchBound = !isIllusion && busySamples > 0 && meanUtil < q.launchUtilMax &&
                             modelShare >= q.launchModelShare && modelShare + waitShare >= q.launchHostShare;
    f.title = fmt::format(
        "Low SM efficiency on {}: SM activity {:.2f} while the GPUs are busy ({:.0f} % utilization){} for {:.0f} s",
        node, meanSm, meanUtil,
        isIllusion    ? std::string(", the utilization illusion")
        : launchBound ? fmt::format(", launch-bound (the training thread runs model code {:.0f} % and waits on the GPU "
                                    "{:.0f} % of the time)",
                                    100 * modelShare, 100 * waitShare)
                      : std::string(),
        seconds);
    if (!f.primary) f.title += fmt::format(" — {:.0f} % of it explained by other findings", 100 * (1 - unexplained));
    if (busySamples > 0) {
        f.evidence.insert(QStringLiteral("host_model_code_share"), modelShare);
        f.evidence.insert(QStringLiteral("host_gpu_wait_share"), waitShare);
        f.evidence.insert(QStringLiteral("sub_cause"), QString::fromLatin1(launchBound  ? "launch_bound"
                                                                           : isIllusion ? "illusion"
                                                                                        : "small_kernels"));
    }
    const QJsonObject base{{QStringLiteral("mean_sm_active"), meanSm},
                           {QStringLiteral("mean_gpu_util_pct"), meanUtil},
                           {QStringLiteral("illusion_share"), t.illusion / t.slots},
                           {QStringLiteral("explained_share"), 1 - unexplained},
                           {QStringLiteral("good_use_sm"), q.goodUseSm}};
    for (auto it = base.begin(); it != base.end(); ++it)
        f.evidence.insert(it.key(), it.value());
    f.recommendation =
        launchBound
            ? "The host cannot issue work fast enough: its model code launches many small kernels. Capture the step in "
              "CUDA graphs (torch.compile mode=\"reduce-overhead\", torch.cuda.graphs), fuse ops (torch.compile), and "
              "give each launch more work (larger micro-batches, sequence packing). "
            : std::string();
    f.recommendation +=
        "The GPUs run kernels that keep few SMs busy: larger micro-batches or sequence packing, fused kernels "
        "(torch.compile, FlashAttention), bf16/fp8 matmuls that use the tensor cores, and fewer small kernel "
        "launches (CUDA graphs); profile one step (PyTorch profiler) to see which kernels are small.";
}

} // namespace

LowSmParams LowSmParams::from(const RuleParams& p)
{
    LowSmParams q;
    q.common = CommonParams::from(p);
    q.utilMin = p.get("low_sm.util_min");
    q.warnSm = p.get("low_sm.warn_sm");
    q.criticalSm = p.get("low_sm.critical_sm");
    q.goodUseSm = p.get("low_sm.good_use_sm");
    q.launchUtilMax = p.get("low_sm.launch_util_max");
    q.launchModelShare = p.get("low_sm.launch_model_share");
    q.launchHostShare = p.get("low_sm.launch_host_share");
    q.minS = p.get("low_sm.min_s");
    q.illusionUtil = p.get("low_sm.illusion_util");
    return q;
}

std::vector<Finding> lowSmEfficiencyRule(const RunMetrics& m, const RuleParams& params,
                                         const std::vector<Finding>& explained, const PhaseSlices* phases)
{
    const LowSmParams q = LowSmParams::from(params);
    std::vector<Finding> out;
    const TimeGrid& grid = m.grid;
    for (const NodeMetrics& node : m.nodes) {
        std::vector<const GpuMetrics*> gpus;
        for (const GpuMetrics& g : m.gpus)
            if (g.node == node.node && !g.smActive.empty()) gpus.push_back(&g);
        if (gpus.empty()) continue;
        const SlotUse use = slotUse(m, node, gpus, q);
        const std::vector<uint8_t> known = explainedSlots(grid, node.node, explained);
        Finding f;
        Tally t;
        for (const Episode& e : episodesOf(use.low, grid, q.common.episodeGapSamples))
            if (e.seconds() >= q.minS) addEpisode(e, use, known, grid, node.node, phases, q, f, t);
        if (f.episodes.empty() || t.slots == 0) continue;
        f.rule = "LOW_SM_EFF";
        f.nodes = {node.node};
        for (const GpuMetrics* g : gpus)
            f.gpus.push_back(fmt::format("{}:gpu{}", g->node, g->gpu));
        describe(f, node.node, t, q, grid.seconds());
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace runlens::analysis
