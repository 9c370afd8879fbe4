#include "analysis/rules/input_stall_rule.h"

#include "analysis/flame/flame_search.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

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
    for (const NodeMetrics& node : m.nodes) {
        // Under-use per slot: the node's GPUs on average.
        std::vector<double> useSum(grid.size, 0.0);
        std::vector<int> useCount(grid.size, 0);
        bool haveSm = false, anyGpu = false;
        for (const GpuMetrics& g : m.gpus) {
            if (g.node != node.node) continue;
            anyGpu = true;
            const bool sm = !g.smActive.empty();
            haveSm = haveSm || sm;
            for (size_t i = 0; i < grid.size; ++i) {
                const double v = sm ? g.smActive[i] : g.util[i] / 100.0;
                if (!std::isfinite(v)) continue;
                useSum[i] += v;
                ++useCount[i];
            }
        }
        if (!anyGpu) continue;
        const double limit = haveSm ? p.get("input_stall.sm_max") : p.get("input_stall.util_max") / 100.0;
        std::vector<Cause> cause(slices, Cause::None);
        std::vector<SliceEvidence> evidence(slices);
        for (size_t s = 0; s < slices; ++s) {
            const size_t a = s * sliceSlots, b = std::min(grid.size, a + sliceSlots);
            size_t under = 0, known = 0;
            for (size_t i = a; i < b; ++i)
                if (useCount[i] > 0) {
                    ++known;
                    under += useSum[i] / useCount[i] < limit ? 1 : 0;
                }
            if (known == 0 || under * 2 < known) continue; // the slice is mostly well used
            const SliceShares shares = phases.at(node.node, s);
            SliceEvidence& e = evidence[s];
            e.samples = shares.samples;
            if (!shares.hasBusy()) continue;
            e.input = shares.share(Phase::Input);
            e.host = shares.share(Phase::Other) + shares.share(Phase::Compute);
            e.comm = shares.share(Phase::Comm);
            e.checkpoint = shares.share(Phase::Checkpoint);
            e.gpuWait = shares.share(Phase::GpuWait);
            if (e.input >= p.get("input_stall.host_share")) cause[s] = Cause::Input;
            else if (e.input + e.host >= p.get("input_stall.host_share")) cause[s] = Cause::Host;
        }
        // Episodes: input-stall slices, joined across gaps of at most rules.episode_gap_samples slices (a
        // checkpoint inside a stall does not split it).
        const auto maxGap = static_cast<size_t>(std::max(0.0, p.get("rules.episode_gap_samples")));
        for (size_t s = 0; s < slices;) {
            if (cause[s] == Cause::None) {
                ++s;
                continue;
            }
            size_t t = s;
            for (size_t next = t + 1; next < slices && next <= t + 1 + maxGap; ++next)
                if (cause[next] != Cause::None) t = next;
            const int64_t start = grid.slotStart(s * sliceSlots), end = grid.slotStart(std::min(grid.size, (t + 1) * sliceSlots));
            int inputSlices = 0;
            double input = 0, host = 0, comm = 0;
            double n = 0;
            for (size_t k = s; k <= t; ++k) {
                if (cause[k] == Cause::None) continue;
                inputSlices += cause[k] == Cause::Input ? 1 : 0;
                input += evidence[k].input;
                host += evidence[k].host;
                comm += evidence[k].comm;
                ++n;
            }
            // The top self frames of the episode (idle left out).
            FlameQuery q;
            q.window = {start, end - 1};
            q.nodes = {node.node};
            q.untimed = UntimedStacks::Exclude;
            auto tree = stacks.tree(q);
            if (!tree) return tree.error();
            QJsonArray top;
            std::string topName;
            const double total = static_cast<double>(std::max<int64_t>((*tree)->totalSamples(), 1));
            for (const FunctionTotal& ft : functionTotals(**tree)) {
                if (top.size() >= 5) break;
                // The cause is host work: frames whose own samples are in the host phases (not waiting on the GPU,
                // on communication, in a checkpoint, or idle).
                int64_t hostSelf = 0;
                for (int32_t i = 1; i < static_cast<int32_t>((*tree)->nodes().size()); ++i) {
                    const auto& nd = (*tree)->node(i);
                    if ((*tree)->name(i) == ft.name && (*tree)->file(i) == ft.file &&
                        (nd.phase == Phase::Other || nd.phase == Phase::Compute || nd.phase == Phase::Input))
                        hostSelf += nd.selfSamples;
                }
                if (hostSelf * 2 < ft.selfSamples || ft.selfSamples == 0) continue;
                if (topName.empty()) topName = ft.name;
                top.append(QJsonObject{{QStringLiteral("frame"), QString::fromStdString(ft.name)},
                                       {QStringLiteral("file"), QString::fromStdString(ft.file)},
                                       {QStringLiteral("self_share"), static_cast<double>(ft.selfSamples) / total}});
            }
            // Sub-cause: DataLoader waits (io_bound when disk reads run near their peak), or the host's own work
            // (cpu_bound when the node's CPU is saturated).
            auto meanOver = [&](const std::vector<double>& v) {
                double sum = 0;
                int c = 0;
                for (size_t i = s * sliceSlots; i < std::min(grid.size, (t + 1) * sliceSlots) && i < v.size(); ++i)
                    if (std::isfinite(v[i])) {
                        sum += v[i];
                        ++c;
                    }
                return c ? sum / c : std::nan("");
            };
            const double cpu = meanOver(node.cpuUtil);
            const double reads = meanOver(node.diskRead), readPeak = quantile(node.diskRead, 0.99);
            std::string sub;
            if (inputSlices * 2 >= static_cast<int>(n)) sub = std::isfinite(reads) && readPeak > 0 && reads >= 0.8 * readPeak ? "io_bound" : "worker_starved";
            else sub = std::isfinite(cpu) && cpu >= p.get("input_stall.cpu_bound_pct") ? "cpu_bound" : "host_compute";

            Finding f;
            f.rule = "INPUT_STALL";
            f.nodes = {node.node};
            for (const GpuMetrics& g : m.gpus)
                if (g.node == node.node) f.gpus.push_back(fmt::format("{}:gpu{}", g.node, g.gpu));
            f.episodes.push_back({start, end});
            const double seconds = static_cast<double>(end - start) / 1e9;
            f.impact = wall > 0 ? seconds / wall : 0;
            f.savingS = seconds * (input + host) / n; // the host's share of the stalled time
            f.severity = f.impact >= 0.2 ? "critical" : f.impact >= 0.1 ? "warn" : "info";
            f.confidence = haveSm ? 0.85 : 0.6;
            // Primary when the cause is found in ≥ 80 % of the episode's slices (the rest bridged gaps).
            f.primary = n >= 0.8 * static_cast<double>(t - s + 1);
            f.title = sub == "host_compute" || sub == "cpu_bound"
                          ? fmt::format("The GPUs on {} wait for the host's own work ({}) for {:.0f} s", node.node,
                                        topName.empty() ? "?" : topName, seconds)
                          : fmt::format("The GPUs on {} wait for input (DataLoader, {}) for {:.0f} s", node.node, sub, seconds);
            f.evidence = QJsonObject{{QStringLiteral("sub_cause"), QString::fromStdString(sub)},
                                     {QStringLiteral("input_share"), input / n},
                                     {QStringLiteral("host_compute_share"), host / n},
                                     {QStringLiteral("comm_share"), comm / n},
                                     {QStringLiteral("top_frames"), top},
                                     {QStringLiteral("cpu_util_pct"), cpu},
                                     {QStringLiteral("gpu_use_limit"), limit}};
            f.recommendation =
                sub == "host_compute" || sub == "cpu_bound"
                    ? fmt::format("Move {} off the training thread: into DataLoader workers (num_workers, "
                                  "persistent_workers, prefetch_factor), onto the GPU, or precompute it offline.",
                                  topName.empty() ? std::string("the host work") : topName)
                    : std::string("Feed the GPUs faster: more DataLoader workers (num_workers), pin_memory=True, a larger "
                                  "prefetch_factor, persistent_workers; for io_bound, faster or local storage and a "
                                  "sharded, pre-tokenised dataset.");
            out.push_back(std::move(f));
            s = t + 1;
        }
    }
    return out;
}

} // namespace runlens::analysis
