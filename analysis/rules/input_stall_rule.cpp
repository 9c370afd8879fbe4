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

} // namespace

Expected<std::vector<Finding>> inputStallRule(const RunMetrics& m, FlameSource& stacks, const PhaseSlices& phases,
                                              const RuleParams& p)
{
    std::vector<Finding> out;
    const TimeGrid& grid = m.grid;
    if (grid.size == 0) return out;
    const size_t sliceSlots = grid.slotsPerSlice(p.get("rules.evidence_s"));
    const size_t slices = grid.sliceCount(p.get("rules.evidence_s"));
    const double wall = grid.seconds();
    const double sliceS = static_cast<double>(grid.stepNs) * static_cast<double>(sliceSlots) / 1e9;
    for (const NodeMetrics& node : m.nodes) {
        // Under-use per slot: the node's GPUs on average; and their utilization (queued work).
        std::vector<double> useSum(grid.size, 0.0), utilSum(grid.size, 0.0);
        std::vector<int> useCount(grid.size, 0), utilCount(grid.size, 0);
        bool haveSm = false, anyGpu = false;
        for (const GpuMetrics& g : m.gpus) {
            if (g.node != node.node) continue;
            anyGpu = true;
            const bool sm = !g.smActive.empty();
            haveSm = haveSm || sm;
            for (size_t i = 0; i < grid.size; ++i) {
                if (std::isfinite(g.util[i])) {
                    utilSum[i] += g.util[i];
                    ++utilCount[i];
                }
                const double v = sm ? g.smActive[i] : g.util[i] / 100.0;
                if (!std::isfinite(v)) continue;
                useSum[i] += v;
                ++useCount[i];
            }
        }
        if (!anyGpu) continue;
        const double limit = haveSm ? p.get("input_stall.sm_max") : p.get("input_stall.util_max") / 100.0;
        const size_t firstSlice = steadyStartSlot(m, node.node, p) / sliceSlots;
        std::vector<Cause> cause(slices, Cause::None);
        std::vector<SliceEvidence> evidence(slices);
        for (size_t s = firstSlice; s < slices; ++s) {
            const size_t a = s * sliceSlots, b = std::min(grid.size, a + sliceSlots);
            size_t under = 0, known = 0, queued = 0;
            for (size_t i = a; i < b; ++i)
                if (useCount[i] > 0) {
                    ++known;
                    under += useSum[i] / useCount[i] < limit ? 1 : 0;
                    // A GPU with kernels resident nearly all the time is not waiting for the host (it may be
                    // waiting for a peer: that is COMM_BOUND's illusion).
                    queued += utilCount[i] > 0 && utilSum[i] / utilCount[i] >= p.get("input_stall.util_busy") ? 1 : 0;
                }
            if (known == 0 || under * 2 < known || queued * 2 > known) continue; // mostly well used, or fed
            const SliceShares shares = phases.at(node.node, s);
            SliceEvidence& e = evidence[s];
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
            if (e.input >= p.get("input_stall.host_share")) cause[s] = Cause::Input;
            else if (e.input + e.host >= p.get("input_stall.host_share")) cause[s] = Cause::Host;
        }
        // Episodes: input-stall slices, joined across gaps of at most rules.episode_gap_samples slices (a
        // checkpoint inside a stall does not split it); short ones left out. One finding per node and sub-cause.
        struct Group
        {
            std::vector<FindingEpisode> episodes;
            double seconds = 0, input = 0, host = 0, comm = 0, n = 0, spanned = 0, savingS = 0;
            std::vector<std::pair<size_t, size_t>> slotRanges;
        };
        std::map<std::string, Group> groups;
        const auto maxGap = static_cast<size_t>(std::max(0.0, p.get("rules.episode_gap_samples")));
        const double readPeak = quantile(node.diskRead, 0.99);
        for (size_t s = 0; s < slices;) {
            if (cause[s] == Cause::None) {
                ++s;
                continue;
            }
            size_t t = s;
            for (size_t next = t + 1; next < slices && next <= t + 1 + maxGap; ++next)
                if (cause[next] != Cause::None) t = next;
            const size_t firstSlot = s * sliceSlots, endSlot = std::min(grid.size, (t + 1) * sliceSlots);
            const int64_t start = grid.slotStart(firstSlot), end = grid.slotStart(endSlot);
            const size_t from = s;
            s = t + 1;
            const double seconds = static_cast<double>(end - start) / 1e9;
            if (seconds < p.get("input_stall.min_s")) continue;
            int inputSlices = 0;
            double input = 0, host = 0, comm = 0, n = 0;
            for (size_t k = from; k <= t; ++k) {
                if (cause[k] == Cause::None) continue;
                inputSlices += cause[k] == Cause::Input ? 1 : 0;
                input += evidence[k].input;
                host += evidence[k].host;
                comm += evidence[k].comm;
                ++n;
            }
            // Sub-cause: DataLoader waits (io_bound when disk reads run near their peak), or the host's own work
            // (cpu_bound when the node's CPU is saturated).
            const double cpu = meanOf(node.cpuUtil, firstSlot, endSlot), reads = meanOf(node.diskRead, firstSlot, endSlot);
            std::string sub;
            if (inputSlices * 2 >= static_cast<int>(n)) sub = std::isfinite(reads) && readPeak > 0 && reads >= 0.8 * readPeak ? "io_bound" : "worker_starved";
            else sub = std::isfinite(cpu) && cpu >= p.get("input_stall.cpu_bound_pct") ? "cpu_bound" : "host_compute";
            Group& g = groups[sub];
            g.episodes.push_back({start, end});
            g.slotRanges.emplace_back(firstSlot, endSlot);
            g.seconds += seconds;
            g.input += input;
            g.host += host;
            g.comm += comm;
            g.n += n;
            g.spanned += static_cast<double>(t - from + 1);
            g.savingS += n * sliceS * std::min(1.0, (input + host) / std::max(n, 1.0)); // the host's share of the stalled time
        }
        for (auto& [sub, g] : groups) {
            // The top host self frames over the episodes (the longest 20: enough to name the cause).
            std::vector<size_t> order(g.episodes.size());
            for (size_t k = 0; k < order.size(); ++k)
                order[k] = k;
            const std::vector<FindingEpisode>& episodes = g.episodes; // a structured binding is not captured by clang 14
            std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                return episodes[a].endNs - episodes[a].startNs > episodes[b].endNs - episodes[b].startNs;
            });
            std::map<std::pair<std::string, std::string>, int64_t> hostSelf; // (name, file) -> samples
            int64_t total = 0;
            for (size_t k = 0; k < order.size() && k < 20; ++k) {
                FlameQuery q;
                q.window = {g.episodes[order[k]].startNs, g.episodes[order[k]].endNs - 1};
                q.nodes = {node.node};
                q.untimed = UntimedStacks::Exclude;
                RUNLENS_ASSIGN_OR_RETURN(auto tree, stacks.tree(q));
                total += tree->totalSamples();
                // Host work: frames whose own samples are in the host phases (not model code, not waiting on the
                // GPU, on communication, in a checkpoint, or idle).
                for (int32_t i = 1; i < static_cast<int32_t>(tree->nodes().size()); ++i) {
                    const auto& nd = tree->node(i);
                    if (nd.selfSamples > 0 && (nd.phase == Phase::Other || nd.phase == Phase::Input))
                        hostSelf[{std::string(tree->name(i)), std::string(tree->file(i))}] += nd.selfSamples;
                }
            }
            std::vector<std::pair<int64_t, std::pair<std::string, std::string>>> ranked;
            for (const auto& [key, samples] : hostSelf)
                ranked.emplace_back(samples, key);
            std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
            QJsonArray top;
            const std::string topName = ranked.empty() ? std::string() : ranked.front().second.first;
            for (size_t k = 0; k < ranked.size() && k < 5; ++k)
                top.append(QJsonObject{{QStringLiteral("frame"), QString::fromStdString(ranked[k].second.first)},
                                       {QStringLiteral("file"), QString::fromStdString(ranked[k].second.second)},
                                       {QStringLiteral("self_share"),
                                        static_cast<double>(ranked[k].first) / static_cast<double>(std::max<int64_t>(total, 1))}});
            double cpuSum = 0;
            int cpuN = 0;
            for (const auto& [a, b] : g.slotRanges)
                for (size_t i = a; i < b && i < node.cpuUtil.size(); ++i)
                    if (std::isfinite(node.cpuUtil[i])) {
                        cpuSum += node.cpuUtil[i];
                        ++cpuN;
                    }
            const double n = std::max(g.n, 1.0);
            Finding f;
            f.rule = "INPUT_STALL";
            f.nodes = {node.node};
            for (const GpuMetrics& gm : m.gpus)
                if (gm.node == node.node) f.gpus.push_back(fmt::format("{}:gpu{}", gm.node, gm.gpu));
            f.episodes = g.episodes;
            std::sort(f.episodes.begin(), f.episodes.end(), [](const auto& a, const auto& b) { return a.startNs < b.startNs; });
            f.impact = wall > 0 ? g.seconds / wall : 0;
            f.savingS = g.savingS;
            f.severity = f.impact >= 0.2 ? "critical" : f.impact >= 0.1 ? "warn" : "info";
            f.confidence = haveSm ? 0.85 : 0.6;
            // Primary when the cause is found in ≥ 80 % of the episodes' slices (the rest bridged gaps).
            f.primary = g.n >= 0.8 * g.spanned;
            const std::string when = g.episodes.size() == 1 ? fmt::format("for {:.0f} s", g.seconds)
                                                             : fmt::format("{} times, {:.0f} s in all", g.episodes.size(), g.seconds);
            f.title = sub == "host_compute" || sub == "cpu_bound"
                          ? fmt::format("The GPUs on {} wait for the host's own work ({}) {}", node.node,
                                        topName.empty() ? "?" : topName, when)
                          : fmt::format("The GPUs on {} wait for input (DataLoader, {}) {}", node.node, sub, when);
            f.evidence = QJsonObject{{QStringLiteral("sub_cause"), QString::fromStdString(sub)},
                                     {QStringLiteral("input_share"), g.input / n},
                                     {QStringLiteral("host_compute_share"), g.host / n},
                                     {QStringLiteral("comm_share"), g.comm / n},
                                     {QStringLiteral("top_frames"), top},
                                     {QStringLiteral("cpu_util_pct"), cpuN ? cpuSum / cpuN : std::nan("")},
                                     {QStringLiteral("gpu_use_limit"), limit},
                                     {QStringLiteral("cause_shares"),
                                      QJsonObject{{QStringLiteral("input"), g.input / n},
                                                  {QStringLiteral("host_compute"), g.host / n},
                                                  {QStringLiteral("communication"), g.comm / n}}}};
            f.recommendation =
                sub == "host_compute" || sub == "cpu_bound"
                    ? fmt::format("Move {} off the training thread: into DataLoader workers (num_workers, "
                                  "persistent_workers, prefetch_factor), onto the GPU, or precompute it offline.",
                                  topName.empty() ? std::string("the host work") : topName)
                    : std::string("Feed the GPUs faster: more DataLoader workers (num_workers), pin_memory=True, a larger "
                                  "prefetch_factor, persistent_workers; for io_bound, faster or local storage and a "
                                  "sharded, pre-tokenised dataset.");
            out.push_back(std::move(f));
        }
    }
    return out;
}

} // namespace runlens::analysis
