#include "analysis/rules/ckpt_gap_rule.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace runlens::analysis {

std::vector<uint8_t> gpuStalls(const GpuMetrics& gpu, const RuleParams& p)
{
    const size_t n = gpu.util.size();
    std::vector<uint8_t> out(n, 0);
    const bool haveSm = !gpu.smActive.empty() &&
                        std::any_of(gpu.smActive.begin(), gpu.smActive.end(), [](double v) { return std::isfinite(v); });
    if (haveSm) {
        const double baseline = quantile(gpu.smActive, p.get("stall.baseline_quantile"));
        const double limit = p.get("stall.sm_fraction") * baseline;
        for (size_t i = 0; i < n && i < gpu.smActive.size(); ++i)
            out[i] = std::isfinite(gpu.smActive[i]) && gpu.smActive[i] <= limit ? 1 : 0;
        return out;
    }
    for (size_t i = 0; i < n; ++i)
        out[i] = std::isfinite(gpu.util[i]) && gpu.util[i] <= p.get("stall.util_max") ? 1 : 0;
    return out;
}

namespace {

QJsonArray jsonTimes(const std::vector<Episode>& eps)
{
    QJsonArray a;
    for (const Episode& e : eps)
        a.append(QJsonObject{{QStringLiteral("start_ns"), static_cast<qint64>(e.startNs)},
                             {QStringLiteral("end_ns"), static_cast<qint64>(e.endNs)}});
    return a;
}

} // namespace

std::vector<Finding> checkpointGapRule(const RunMetrics& m, const RuleParams& p, const RefineGap& refine)
{
    std::vector<Finding> out;
    const TimeGrid& grid = m.grid;
    const int maxGap = static_cast<int>(p.get("rules.episode_gap_samples"));
    const double wall = grid.seconds();
    for (const NodeMetrics& node : m.nodes) {
        if (node.diskWrite.empty()) continue;
        // Write bursts.
        std::vector<double> present;
        for (double v : node.diskWrite)
            if (std::isfinite(v)) present.push_back(v);
        const double median = quantile(present, 0.5);
        const double threshold = std::max(p.get("ckpt_gap.burst_factor") * median, p.get("ckpt_gap.burst_min_bytes"));
        std::vector<uint8_t> writing(grid.size, 0);
        for (size_t i = 0; i < grid.size && i < node.diskWrite.size(); ++i)
            writing[i] = std::isfinite(node.diskWrite[i]) && node.diskWrite[i] >= threshold ? 1 : 0;
        // A burst writes at least burst_min_samples samples' worth at the threshold rate: two seconds at it, or one
        // flush of twice that in a single sample.
        const double stepS = static_cast<double>(grid.stepNs) / 1e9;
        std::vector<Episode> bursts;
        for (const Episode& b : episodesOf(writing, grid, 0)) {
            double bytes = 0;
            for (size_t i = b.first; i <= b.last; ++i)
                bytes += node.diskWrite[i] * stepS;
            if (bytes >= p.get("ckpt_gap.burst_min_samples") * threshold * stepS) bursts.push_back(b);
        }
        if (bursts.empty()) continue;
        const auto slack = static_cast<size_t>(std::max(0.0, p.get("ckpt_gap.align_slack_samples")));
        std::vector<uint8_t> inBurst(grid.size, 0);
        for (const Episode& b : bursts) {
            const size_t from = b.first >= slack ? b.first - slack : 0, to = std::min(grid.size - 1, b.last + slack);
            std::fill(inBurst.begin() + static_cast<std::ptrdiff_t>(from), inBurst.begin() + static_cast<std::ptrdiff_t>(to) + 1, 1);
        }

        // Stalls of the node's GPUs that the bursts cover: their union is the node's checkpoint gaps.
        std::vector<uint8_t> gap(grid.size, 0);
        std::vector<std::string> gpus;
        for (const GpuMetrics& g : m.gpus) {
            if (g.node != node.node) continue;
            bool any = false;
            for (const Episode& s : episodesOf(gpuStalls(g, p), grid, maxGap)) {
                size_t covered = 0;
                for (size_t i = s.first; i <= s.last; ++i)
                    covered += inBurst[i];
                if (static_cast<double>(covered) < p.get("ckpt_gap.overlap") * static_cast<double>(s.last - s.first + 1)) continue;
                std::fill(gap.begin() + static_cast<std::ptrdiff_t>(s.first), gap.begin() + static_cast<std::ptrdiff_t>(s.last) + 1, 1);
                any = true;
            }
            if (any) gpus.push_back(fmt::format("{}:gpu{}", g.node, g.gpu));
        }
        const std::vector<Episode> gaps = episodesOf(gap, grid, 0);
        if (gaps.empty()) continue;

        Finding f;
        f.rule = "CKPT_GAP";
        f.nodes = {node.node};
        f.gpus = gpus;
        double stallS = 0;
        QJsonArray events;
        for (const Episode& e : gaps) {
            FindingEpisode edges = refine ? refine(node.node, e.startNs, e.endNs) : FindingEpisode{e.startNs, e.endNs};
            edges.savingS = static_cast<double>(edges.endNs - edges.startNs) / 1e9;
            f.episodes.push_back(edges);
            stallS += edges.savingS;
            // Bytes of the bursts that overlap this gap.
            double bytes = 0;
            for (const Episode& b : bursts)
                if (b.last + slack >= e.first && b.first <= e.last + slack)
                    for (size_t i = b.first; i <= b.last; ++i)
                        bytes += node.diskWrite[i] * stepS;
            events.append(QJsonObject{{QStringLiteral("start_ns"), static_cast<qint64>(edges.startNs)},
                                      {QStringLiteral("end_ns"), static_cast<qint64>(edges.endNs)},
                                      {QStringLiteral("stall_s"), edges.savingS},
                                      {QStringLiteral("bytes_written"), bytes}});
        }
        // Periodicity from the gaps' starts.
        const auto [period, cv] = periodOf(f.episodes);
        const bool periodic = static_cast<double>(gaps.size()) >= p.get("ckpt_gap.periodic_min_events") &&
                              cv <= p.get("ckpt_gap.periodic_max_cv");
        f.impact = wall > 0 ? stallS / wall : 0;
        f.savingS = stallS;
        f.severity = f.impact >= p.get("ckpt_gap.critical") ? "critical" : f.impact >= p.get("ckpt_gap.warn") ? "warn" : "info";
        f.confidence = std::all_of(m.gpus.begin(), m.gpus.end(), [&](const GpuMetrics& g) { return g.node != node.node || !g.smActive.empty(); })
                           ? 0.9
                           : 0.7; // stalls from utilization alone are coarser
        const double meanStall = stallS / static_cast<double>(gaps.size());
        f.title = periodic ? fmt::format("Checkpoint writes stall the GPUs on {} every {:.0f} s for {:.1f} s", node.node, period, meanStall)
                           : (gaps.size() == 1 ? fmt::format("Checkpoint writes stall the GPUs on {} once, for {:.1f} s", node.node, meanStall)
                                              : fmt::format("Checkpoint writes stall the GPUs on {} {} times, {:.1f} s each", node.node, gaps.size(), meanStall));
        f.evidence = QJsonObject{{QStringLiteral("events"), events},
                                 {QStringLiteral("bursts"), jsonTimes(bursts)},
                                 {QStringLiteral("write_burst_threshold_bytes_per_s"), threshold},
                                 {QStringLiteral("disk_write_median_bytes_per_s"), median},
                                 {QStringLiteral("periodic"), periodic},
                                 {QStringLiteral("period_s"), period},
                                 {QStringLiteral("interval_cv"), cv},
                                 {QStringLiteral("mean_stall_s"), meanStall},
                                 {QStringLiteral("total_stall_s"), stallS}};
        f.recommendation = "Write checkpoints asynchronously (torch.distributed.checkpoint async_save, DeepSpeed "
                           "checkpoint engines with a background writer) or less often; write to local NVMe and copy "
                           "off in the background; shard the state so every rank writes its part in parallel.";
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace runlens::analysis
