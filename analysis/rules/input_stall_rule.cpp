#include "analysis/rules/input_stall_rule.h"

#include "analysis/flame/flame_search.h"
#include "analysis/rules/steady_state.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace runlens::analysis {

namespace {

// A disk's read peak: this quantile of its rate (one outlier sample does not set it).
constexpr double kReadPeakQuantile = 0.99;
// The top host frames are read from the longest episodes only (enough to name the cause, bounded cost), and the
// finding lists the first few.
constexpr size_t kFrameEpisodes = 20;
constexpr size_t kTopFrames = 5;
// Confidence: under-use judged on SM activity, or on utilization alone (a kernel waiting on the host's next batch
// and a small one look alike there).
constexpr double kConfidenceWithSm = 0.85;
constexpr double kConfidenceUtilOnly = 0.6;

// Integer shares of a slice's slots (exact): "at least half" and "more than half".
bool atLeastHalf(size_t part, size_t whole)
{
    return part * 2 >= whole;
}

bool moreThanHalf(size_t part, size_t whole)
{
    return part * 2 > whole;
}

enum class Cause
{
    None,
    Input,
    Host,
};

// The share of the slice's non-idle samples in each phase.
struct SliceEvidence
{
    int64_t samples = 0;
    double input = 0, host = 0, comm = 0, checkpoint = 0, gpuWait = 0;
};

// Per slot, the node's GPUs: their use (SM activity, else utilization as a fraction) and their utilization (queued
// work), summed with counts.
struct NodeUse
{
    std::vector<double> useSum, utilSum;
    std::vector<int> useCount, utilCount;
    bool haveSm = false, anyGpu = false;
};

NodeUse nodeUse(const RunMetrics& m, const NodeMetrics& node)
{
    const TimeGrid& grid = m.grid;
    NodeUse out;
    out.useSum.assign(grid.size, 0.0);
    out.utilSum.assign(grid.size, 0.0);
    out.useCount.assign(grid.size, 0);
    out.utilCount.assign(grid.size, 0);
    for (const GpuMetrics& g : m.gpus) {
        if (g.node != node.node) continue;
        out.anyGpu = true;
        const bool sm = !g.smActive.empty();
        out.haveSm = out.haveSm || sm;
        for (size_t i = 0; i < grid.size; ++i) {
            if (std::isfinite(g.util[i])) {
                out.utilSum[i] += g.util[i];
                ++out.utilCount[i];
            }
            const double v = sm ? g.smActive[i] : g.util[i] / 100.0;
            if (!std::isfinite(v)) continue;
            out.useSum[i] += v;
            ++out.useCount[i];
        }
    }
    return out;
}

// The node's slices judged: under-used in at least half their known slots and not mostly fed, the stack samples
// say whether DataLoader waits (input) or the host's own work (host) hold the GPUs up.
struct SliceCauses
{
    std::vector<Cause> cause;
    std::vector<SliceEvidence> evidence;
};

SliceCauses judgeSlices(const RunMetrics& m, const NodeMetrics& node, const NodeUse& use, double limit,
                        const PhaseSlices& phases, const InputStallParams& q)
{
    const TimeGrid& grid = m.grid;
    const size_t sliceSlots = grid.slotsPerSlice(q.common.evidenceS), slices = grid.sliceCount(q.common.evidenceS);
    SliceCauses out{std::vector<Cause>(slices, Cause::None), std::vector<SliceEvidence>(slices)};
    for (size_t s = steadyStartSlot(m, node.node, q.common) / sliceSlots; s < slices; ++s) {
        const size_t a = s * sliceSlots, b = std::min(grid.size, a + sliceSlots);
        size_t under = 0, known = 0, queued = 0;
        for (size_t i = a; i < b; ++i)
            if (use.useCount[i] > 0) {
                ++known;
                under += use.useSum[i] / use.useCount[i] < limit ? 1 : 0;
                // A GPU with kernels resident nearly all the time is not waiting for the host (it may be
                // waiting for a peer: that is COMM_BOUND's illusion).
                queued += use.utilCount[i] > 0 && use.utilSum[i] / use.utilCount[i] >= q.utilBusy ? 1 : 0;
            }
        if (known == 0 || !atLeastHalf(under, known) || moreThanHalf(queued, known))
            continue; // mostly well used, or fed
        const SliceShares shares = phases.at(node.node, s);
        SliceEvidence& e = out.evidence[s];
        e.samples = shares.samples;
        if (!shares.hasBusy()) continue;
        e.input = shares.share(Phase::Input);
        // The host's own work is the user's code outside the model (phase other). Model code on the host
        // (forward, backward, optimizer Python, kernel launches) feeding under-used GPUs is the launch-bound
        // case of LOW_SM_EFF: the kernels are too small, not late.
        e.host = shares.share(Phase::Other);
        e.comm = shares.share(Phase::Comm);
        e.checkpoint = shares.share(Phase::Checkpoint);
        e.gpuWait = shares.share(Phase::GpuWait);
        if (e.input >= q.hostShare)
            out.cause[s] = Cause::Input;
        else if (e.input + e.host >= q.hostShare)
            out.cause[s] = Cause::Host;
    }
    return out;
}

// The episodes of one sub-cause on a node.
struct Group
{
    std::vector<FindingEpisode> episodes;
    double seconds = 0, input = 0, host = 0, comm = 0, n = 0, spanned = 0, savingS = 0;
    std::vector<std::pair<size_t, size_t>> slotRanges;
};

// Episodes: input-stall slices, joined across gaps of at most rules.episode_gap_samples slices (a checkpoint inside
// a stall does not split it); short ones left out. Grouped by sub-cause: DataLoader waits (io_bound when disk reads
// run near their peak), or the host's own work (cpu_bound when the node's CPU is saturated).
std::map<std::string, Group> groupEpisodes(const NodeMetrics& node, const SliceCauses& sc, const TimeGrid& grid,
                                           const InputStallParams& q)
{
    std::map<std::string, Group> groups;
    const size_t sliceSlots = grid.slotsPerSlice(q.common.evidenceS), slices = sc.cause.size();
    const double sliceS = static_cast<double>(grid.stepNs) * static_cast<double>(sliceSlots) / 1e9;
    const auto maxGap = static_cast<size_t>(std::max(0, q.common.episodeGapSamples));
    const double readPeak = quantile(node.diskRead.toVector(), kReadPeakQuantile);
    for (size_t s = 0; s < slices;) {
        if (sc.cause[s] == Cause::None) {
            ++s;
            continue;
        }
        size_t t = s;
        for (size_t next = t + 1; next < slices && next <= t + 1 + maxGap; ++next)
            if (sc.cause[next] != Cause::None) t = next;
        const size_t firstSlot = s * sliceSlots, endSlot = std::min(grid.size, (t + 1) * sliceSlots);
        const int64_t start = grid.slotStart(firstSlot), end = grid.slotStart(endSlot);
        const size_t from = s;
        s = t + 1;
        const double seconds = static_cast<double>(end - start) / 1e9;
        if (seconds < q.minS) continue;
        size_t inputSlices = 0;
        double input = 0, host = 0, comm = 0, n = 0;
        for (size_t k = from; k <= t; ++k) {
            if (sc.cause[k] == Cause::None) continue;
            inputSlices += sc.cause[k] == Cause::Input ? 1 : 0;
            input += sc.evidence[k].input;
            host += sc.evidence[k].host;
            comm += sc.evidence[k].comm;
            ++n;
        }
        const double cpu = meanOf(node.cpuUtil, firstSlot, endSlot), reads = meanOf(node.diskRead, firstSlot, endSlot);
        std::string sub;
        if (atLeastHalf(inputSlices, static_cast<size_t>(n)))
            sub = std::isfinite(reads) && readPeak > 0 && reads >= q.ioBoundShare * readPeak ? "io_bound"
                                                                                             : "worker_starved";
        else
            sub = std::isfinite(cpu) && cpu >= q.cpuBoundPct ? "cpu_bound" : "host_compute";
        Group& g = groups[sub];
        g.episodes.push_back({start, end});
        g.slotRanges.emplace_back(firstSlot, endSlot);
        g.seconds += seconds;
        g.input += input;
        g.host += host;
        g.comm += comm;
        g.n += n;
        g.spanned += static_cast<double>(t - from + 1);
        g.savingS +=
            n * sliceS * std::min(1.0, (input + host) / std::max(n, 1.0)); // the host's share of the stalled time
    }
    return groups;
}

// The top host self frames over the group's longest episodes: frames whose own samples are in the host phases (not
// model code, not waiting on the GPU, on communication, in a checkpoint, or idle), with their share of all samples.
Expected<QJsonArray> topHostFrames(FlameSource& stacks, const std::string& node, const Group& g, std::string* topName)
{
    std::vector<size_t> order(g.episodes.size());
    for (size_t k = 0; k < order.size(); ++k)
        order[k] = k;
    const std::vector<FindingEpisode>& episodes = g.episodes;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return episodes[a].endNs - episodes[a].startNs > episodes[b].endNs - episodes[b].startNs;
    });
    std::map<std::pair<std::string, std::string>, int64_t> hostSelf; // (name, file) -> samples
    int64_t total = 0;
    for (size_t k = 0; k < order.size() && k < kFrameEpisodes; ++k) {
        FlameQuery fq;
        fq.window = {g.episodes[order[k]].startNs, g.episodes[order[k]].endNs - 1};
        fq.nodes = {node};
        fq.untimed = UntimedStacks::Exclude;
        RUNLENS_ASSIGN_OR_RETURN(auto tree, stacks.tree(fq));
        total += tree->totalSamples();
        for (int32_t i = 1; i < static_cast<int32_t>(tree->nodes().size()); ++i) {
            const auto& nd = tree->node(i);
            if (nd.selfSamples > 0 && (nd.phase == Phase::Other || nd.phase == Phase::Input))
                hostSelf[{std::string(tree->name(i)), std::string(tree->file(i))}] += nd.selfSamples;
        }
    }
    std::vector<std::pair<int64_t, std::pair<std::string, std::string>>> ranked;
    ranked.reserve(hostSelf.size());
    for (const auto& [key, samples] : hostSelf)
        ranked.emplace_back(samples, key);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    QJsonArray top;
    *topName = ranked.empty() ? std::string() : ranked.front().second.first;
    for (size_t k = 0; k < ranked.size() && k < kTopFrames; ++k)
        top.append(QJsonObject{{QStringLiteral("frame"), QString::fromStdString(ranked[k].second.first)},
                               {QStringLiteral("file"), QString::fromStdString(ranked[k].second.second)},
                               {QStringLiteral("self_share"), static_cast<double>(ranked[k].first) /
                                                                  static_cast<double>(std::max<int64_t>(total, 1))}});
    return top;
}

// The node's mean CPU utilization over the group's episodes; NaN without samples.
double cpuOver(const NodeMetrics& node, const Group& g)
{
    double cpuSum = 0;
    int cpuN = 0;
    for (const auto& [a, b] : g.slotRanges)
        for (size_t i = a; i < b && i < node.cpuUtil.size(); ++i)
            if (std::isfinite(node.cpuUtil[i])) {
                cpuSum += node.cpuUtil[i];
                ++cpuN;
            }
    return cpuN ? cpuSum / cpuN : std::nan("");
}

// One finding per node and sub-cause.
Expected<Finding> groupFinding(const RunMetrics& m, FlameSource& stacks, const NodeMetrics& node,
                               const std::string& sub, const Group& g, bool haveSm, double limit,
                               const InputStallParams& q)
{
    std::string topName;
    RUNLENS_ASSIGN_OR_RETURN(auto top, topHostFrames(stacks, node.node, g, &topName));
    const double n = std::max(g.n, 1.0), wall = m.grid.seconds();
    Finding f;
    f.rule = "INPUT_STALL";
    f.nodes = {node.node};
    for (const GpuMetrics& gm : m.gpus)
        if (gm.node == node.node) f.gpus.push_back(fmt::format("{}:gpu{}", gm.node, gm.gpu));
    f.episodes = g.episodes;
    std::sort(f.episodes.begin(), f.episodes.end(), [](const auto& a, const auto& b) { return a.startNs < b.startNs; });
    f.impact = wall > 0 ? g.seconds / wall : 0;
    f.savingS = g.savingS;
    f.severity = q.severity.of(f.impact);
    f.confidence = haveSm ? kConfidenceWithSm : kConfidenceUtilOnly;
    // Primary when the cause is found in most of the episodes' slices (the rest bridged gaps).
    f.primary = g.n >= kPrimaryCover * g.spanned;
    const std::string when = g.episodes.size() == 1
                                 ? fmt::format("for {:.0f} s", g.seconds)
                                 : fmt::format("{} times, {:.0f} s in all", g.episodes.size(), g.seconds);
    const bool hostWork = sub == "host_compute" || sub == "cpu_bound";
    f.title = hostWork ? fmt::format("The GPUs on {} wait for the host's own work ({}) {}", node.node,
                                     topName.empty() ? "?" : topName, when)
                       : fmt::format("The GPUs on {} wait for input (DataLoader, {}) {}", node.node, sub, when);
    f.evidence =
        QJsonObject{{QStringLiteral("sub_cause"), QString::fromStdString(sub)},
                    {QStringLiteral("input_share"), g.input / n},
                    {QStringLiteral("host_compute_share"), g.host / n},
                    {QStringLiteral("comm_share"), g.comm / n},
                    {QStringLiteral("top_frames"), top},
                    {QStringLiteral("cpu_util_pct"), cpuOver(node, g)},
                    {QStringLiteral("gpu_use_limit"), limit},
                    {QStringLiteral("cause_shares"), QJsonObject{{QStringLiteral("input"), g.input / n},
                                                                 {QStringLiteral("host_compute"), g.host / n},
                                                                 {QStringLiteral("communication"), g.comm / n}}}};
    f.recommendation =
        hostWork ? fmt::format("Move {} off the training thread: into DataLoader workers (num_workers, "
                               "persistent_workers, prefetch_factor), onto the GPU, or precompute it offline.",
                               topName.empty() ? std::string("the host work") : topName)
                 : std::string("Feed the GPUs faster: more DataLoader workers (num_workers), pin_memory=True, a larger "
                               "prefetch_factor, persistent_workers; for io_bound, faster or local storage and a "
                               "sharded, pre-tokenised dataset.");
    return f;
}

} // namespace

InputStallParams InputStallParams::from(const RuleParams& p)
{
    InputStallParams q;
    q.common = CommonParams::from(p);
    q.smMax = p.get("input_stall.sm_max");
    q.utilMax = p.get("input_stall.util_max");
    q.hostShare = p.get("input_stall.host_share");
    q.utilBusy = p.get("input_stall.util_busy");
    q.minS = p.get("input_stall.min_s");
    q.cpuBoundPct = p.get("input_stall.cpu_bound_pct");
    q.ioBoundShare = p.get("input_stall.io_bound_share");
    q.severity = SeverityCuts::from(p, "input_stall");
    return q;
}

Expected<std::vector<Finding>> inputStallRule(const RunMetrics& m, FlameSource& stacks, const PhaseSlices& phases,
                                              const RuleParams& params)
{
    const InputStallParams q = InputStallParams::from(params);
    std::vector<Finding> out;
    if (m.grid.size == 0) return out;
    for (const NodeMetrics& node : m.nodes) {
        const NodeUse use = nodeUse(m, node);
        if (!use.anyGpu) continue;
        const double limit = use.haveSm ? q.smMax : q.utilMax / 100.0;
        const SliceCauses causes = judgeSlices(m, node, use, limit, phases, q);
        for (const auto& [sub, g] : groupEpisodes(node, causes, m.grid, q)) {
            RUNLENS_ASSIGN_OR_RETURN(auto f, groupFinding(m, stacks, node, sub, g, use.haveSm, limit, q));
            out.push_back(std::move(f));
        }
    }
    return out;
}

} // namespace runlens::analysis
