#include "analysis/rules/hang_rule.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace runlens::analysis {

namespace {

// A stuck collective is read off the metrics without doubt (utilization pinned, no SM activity for minutes); the
// metrics alone cannot say which rank failed to arrive.
constexpr double kConfidence = 0.9;

struct GpuHang
{
    const GpuMetrics* gpu;
    Episode episode;
};

} // namespace

HangParams HangParams::from(const RuleParams& p)
{
    HangParams q;
    q.common = CommonParams::from(p);
    q.utilMin = p.get("hang.util_min");
    q.smMax = p.get("hang.sm_max");
    q.minS = p.get("hang.min_s");
    return q;
}

namespace {

// Every GPU's hang episodes (spinning for at least hang.min_s), in time order.
std::vector<GpuHang> gpuHangs(const RunMetrics& m, const HangParams& q)
{
    const TimeGrid& grid = m.grid;
    std::vector<GpuHang> hangs;
    for (const GpuMetrics& g : m.gpus) {
        if (g.smActive.empty()) continue; // utilization alone cannot tell a spinning kernel from a busy one
        std::vector<uint8_t> spinning(grid.size, 0);
        for (size_t i = 0; i < grid.size && i < g.util.size() && i < g.smActive.size(); ++i)
            spinning[i] = std::isfinite(g.util[i]) && std::isfinite(g.smActive[i]) && g.util[i] >= q.utilMin &&
                                  g.smActive[i] <= q.smMax
                              ? 1
                              : 0;
        for (const Episode& e : episodesOf(spinning, grid, q.common.episodeGapSamples))
            if (e.seconds() >= q.minS) hangs.push_back({&g, e});
    }
    std::sort(hangs.begin(), hangs.end(),
              [](const GpuHang& a, const GpuHang& b) { return a.episode.startNs < b.episode.startNs; });
    return hangs;
}

// The hangs [first, end) that overlap, ending at endNs: one stuck collective.
Finding hangFinding(const RunMetrics& m, const std::vector<GpuHang>& hangs, size_t first, size_t end, int64_t endNs)
{
    Finding f;
    f.rule = "HANG";
    f.severity = "critical";
    f.confidence = kConfidence;
    const int64_t start = hangs[first].episode.startNs;
    f.episodes.push_back({start, endNs});
    QJsonArray gpus;
    for (size_t i = first; i < end; ++i) {
        const GpuMetrics& g = *hangs[i].gpu;
        const std::string name = fmt::format("{}:gpu{}", g.node, g.gpu);
        if (std::find(f.gpus.begin(), f.gpus.end(), name) == f.gpus.end()) f.gpus.push_back(name);
        if (std::find(f.nodes.begin(), f.nodes.end(), g.node) == f.nodes.end()) f.nodes.push_back(g.node);
        const Episode& e = hangs[i].episode;
        std::vector<double> util(g.util.begin() + static_cast<std::ptrdiff_t>(e.first),
                                 g.util.begin() + static_cast<std::ptrdiff_t>(e.last) + 1);
        std::vector<double> sm(g.smActive.begin() + static_cast<std::ptrdiff_t>(e.first),
                               g.smActive.begin() + static_cast<std::ptrdiff_t>(e.last) + 1);
        gpus.append(QJsonObject{{QStringLiteral("gpu"), QString::fromStdString(name)},
                                {QStringLiteral("start_ns"), static_cast<qint64>(e.startNs)},
                                {QStringLiteral("end_ns"), static_cast<qint64>(e.endNs)},
                                {QStringLiteral("median_util_pct"), quantile(util, 0.5)},
                                {QStringLiteral("median_sm_active"), quantile(sm, 0.5)}});
    }
    const double seconds = static_cast<double>(endNs - start) / 1e9, wall = m.grid.seconds();
    f.impact = wall > 0 ? seconds / wall : 0;
    f.savingS = seconds;
    f.title = fmt::format("Hung collective: {} spin at 100 % utilization with no SM activity for {:.0f} s",
                          fmt::join(f.gpus, ", "), seconds);
    f.evidence = QJsonObject{{QStringLiteral("gpus"), gpus},
                             {QStringLiteral("began_ns"), static_cast<qint64>(start)},
                             {QStringLiteral("duration_s"), seconds}};
    // The last step the trainer logged before the hang began (its log time is the step's end): what ran last.
    for (const NodeMetrics& n : m.nodes) {
        if (std::find(f.nodes.begin(), f.nodes.end(), n.node) == f.nodes.end() || n.stepTimes.empty()) continue;
        const auto last = std::find_if(n.stepTimes.rbegin(), n.stepTimes.rend(),
                                       [&](const store::Point& pt) { return pt.tsNs <= start; });
        if (last == n.stepTimes.rend()) continue;
        const auto logged = static_cast<qint64>(std::distance(last, n.stepTimes.rend()));
        f.evidence.insert(QStringLiteral("last_step_logged_ns"), static_cast<qint64>(last->tsNs));
        f.evidence.insert(QStringLiteral("steps_logged_before"), logged);
        f.evidence.insert(QStringLiteral("no_step_for_s"), static_cast<double>(endNs - last->tsNs) / 1e9);
        break;
    }
    f.recommendation =
        "A collective some rank never joined: check that every rank runs the same collectives in the same order "
        "(the same stop condition and step count, no rank-dependent branches around all_reduce / reduce_scatter); "
        "rerun with NCCL_DEBUG=INFO and TORCH_DISTRIBUTED_DEBUG=DETAIL, take py-spy dump of every rank when it "
        "hangs, and lower the watchdog timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC, the process group timeout) so a "
        "hang fails in minutes, not hours.";
    return f;
}

} // namespace

std::vector<Finding> hangRule(const RunMetrics& m, const RuleParams& params)
{
    const std::vector<GpuHang> hangs = gpuHangs(m, HangParams::from(params));
    std::vector<Finding> out;
    for (size_t k = 0; k < hangs.size();) {
        // GPUs whose hangs overlap: one stuck collective.
        size_t j = k + 1;
        int64_t end = hangs[k].episode.endNs;
        while (j < hangs.size() && hangs[j].episode.startNs < end) {
            end = std::max(end, hangs[j].episode.endNs);
            ++j;
        }
        out.push_back(hangFinding(m, hangs, k, j, end));
        k = j;
    }
    return out;
}

} // namespace runlens::analysis
