#include "analysis/rules/ckpt_gap_rule.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace runlens::analysis {

CkptGapParams CkptGapParams::from(const RuleParams& p)
{
    CkptGapParams q;
    q.common = CommonParams::from(p);
    q.burstFactor = p.get("ckpt_gap.burst_factor");
    q.burstMinBytes = p.get("ckpt_gap.burst_min_bytes");
    q.burstMinSamples = p.getCount("ckpt_gap.burst_min_samples");
    q.alignSlackSamples = p.getCount("ckpt_gap.align_slack_samples");
    q.overlap = p.get("ckpt_gap.overlap");
    q.periodic = PeriodicCuts::from(p, "ckpt_gap");
    q.severity = SeverityCuts::from(p, "ckpt_gap");
    return q;
}

std::vector<uint8_t> gpuStalls(const GpuMetrics& gpu, const CommonParams& p)
{
    const size_t n = gpu.util.size();
    std::vector<uint8_t> out(n, 0);
    const bool haveSm = !gpu.smActive.empty() && std::any_of(gpu.smActive.begin(), gpu.smActive.end(),
                                                             [](double v) { return std::isfinite(v); });
    if (haveSm) {
        const double baseline = quantile(gpu.smActive.toVector(), p.stallBaselineQuantile);
        const double limit = p.stallSmFraction * baseline;
        for (size_t i = 0; i < n && i < gpu.smActive.size(); ++i)
            out[i] = std::isfinite(gpu.smActive[i]) && gpu.smActive[i] <= limit ? 1 : 0;
        return out;
    }
    for (size_t i = 0; i < n; ++i)
        out[i] = std::isfinite(gpu.util[i]) && gpu.util[i] <= p.stallUtilMax ? 1 : 0;
    return out;
}

namespace {

// Confidence: stalls judged on SM activity on every GPU of the node, or on utilization alone for some (coarser: a
// GPU waiting with a kernel resident reads as busy).
constexpr double kConfidenceWithSm = 0.9;
constexpr double kConfidenceUtilOnly = 0.7;

QJsonArray jsonTimes(const std::vector<Episode>& eps)
{
    QJsonArray a;
    for (const Episode& e : eps)
        a.append(QJsonObject{{QStringLiteral("start_ns"), static_cast<qint64>(e.startNs)},
                             {QStringLiteral("end_ns"), static_cast<qint64>(e.endNs)}});
    return a;
}

// A node's write bursts: their threshold rate, and the slots they cover widened by the alignment slack.
struct WriteBursts
{
    double median = 0, threshold = 0; // B/s
    std::vector<Episode> bursts;
    std::vector<uint8_t> covered; // per slot
    size_t slack = 0;             // slots
};

WriteBursts writeBursts(const NodeMetrics& node, const TimeGrid& grid, const CkptGapParams& q)
{
    WriteBursts out;
    std::vector<double> present;
    for (double v : node.diskWrite)
        if (std::isfinite(v)) present.push_back(v);
    out.median = quantile(present, 0.5);
    out.threshold = std::max(q.burstFactor * out.median, q.burstMinBytes);
    std::vector<uint8_t> writing(grid.size, 0);
    for (size_t i = 0; i < grid.size && i < node.diskWrite.size(); ++i)
        writing[i] = std::isfinite(node.diskWrite[i]) && node.diskWrite[i] >= out.threshold ? 1 : 0;
    // A burst writes at least burst_min_samples samples' worth at the threshold rate: two seconds at it, or one
    // flush of twice that in a single sample.
    const double stepS = static_cast<double>(grid.stepNs) / 1e9;
    for (const Episode& b : episodesOf(writing, grid, 0)) {
        double bytes = 0;
        for (size_t i = b.first; i <= b.last; ++i)
            bytes += node.diskWrite[i] * stepS;
        if (bytes >= static_cast<double>(q.burstMinSamples) * out.threshold * stepS) out.bursts.push_back(b);
    }
    out.slack = static_cast<size_t>(std::max(0, q.alignSlackSamples));
    out.covered.assign(grid.size, 0);
    for (const Episode& b : out.bursts) {
        const size_t from = b.first >= out.slack ? b.first - out.slack : 0;
        const size_t to = std::min(grid.size - 1, b.last + out.slack);
        std::fill(out.covered.begin() + static_cast<std::ptrdiff_t>(from),
                  out.covered.begin() + static_cast<std::ptrdiff_t>(to) + 1, 1);
    }
    return out;
}

// Stalls of the node's GPUs that the bursts cover: their union is the node's checkpoint gaps; *gpus the GPUs that
// stalled in them.
std::vector<Episode> checkpointGaps(const RunMetrics& m, const NodeMetrics& node, const WriteBursts& w,
                                    const CkptGapParams& q, std::vector<std::string>* gpus)
{
    const TimeGrid& grid = m.grid;
    std::vector<uint8_t> gap(grid.size, 0);
    for (const GpuMetrics& g : m.gpus) {
        if (g.node != node.node) continue;
        bool any = false;
        for (const Episode& s : episodesOf(gpuStalls(g, q.common), grid, q.common.episodeGapSamples)) {
            size_t covered = 0;
            for (size_t i = s.first; i <= s.last; ++i)
                covered += w.covered[i];
            if (static_cast<double>(covered) < q.overlap * static_cast<double>(s.last - s.first + 1)) continue;
            std::fill(gap.begin() + static_cast<std::ptrdiff_t>(s.first),
                      gap.begin() + static_cast<std::ptrdiff_t>(s.last) + 1, 1);
            any = true;
        }
        if (any) gpus->push_back(fmt::format("{}:gpu{}", g.node, g.gpu));
    }
    return episodesOf(gap, grid, 0);
}

// One finding for the node's gaps: each moved to its finer edges, the bytes written, periodicity and cost.
Finding gapFinding(const RunMetrics& m, const NodeMetrics& node, const WriteBursts& w, const std::vector<Episode>& gaps,
                   std::vector<std::string> gpus, const CkptGapParams& q, const RefineGap& refine)
{
    const double stepS = static_cast<double>(m.grid.stepNs) / 1e9, wall = m.grid.seconds();
    Finding f;
    f.rule = "CKPT_GAP";
    f.nodes = {node.node};
    f.gpus = std::move(gpus);
    double stallS = 0;
    QJsonArray events;
    for (const Episode& e : gaps) {
        FindingEpisode edges = refine ? refine(node.node, e.startNs, e.endNs) : FindingEpisode{e.startNs, e.endNs};
        edges.savingS = static_cast<double>(edges.endNs - edges.startNs) / 1e9;
        f.episodes.push_back(edges);
        stallS += edges.savingS;
        // Bytes of the bursts that overlap this gap.
        double bytes = 0;
        for (const Episode& b : w.bursts)
            if (b.last + w.slack >= e.first && b.first <= e.last + w.slack)
                for (size_t i = b.first; i <= b.last; ++i)
                    bytes += node.diskWrite[i] * stepS;
        events.append(QJsonObject{{QStringLiteral("start_ns"), static_cast<qint64>(edges.startNs)},
                                  {QStringLiteral("end_ns"), static_cast<qint64>(edges.endNs)},
                                  {QStringLiteral("stall_s"), edges.savingS},
                                  {QStringLiteral("bytes_written"), bytes}});
    }
    // Periodicity from the gaps' starts.
    const auto [period, cv] = periodOf(f.episodes);
    const bool periodic = q.periodic.holds(gaps.size(), cv);
    f.impact = wall > 0 ? stallS / wall : 0;
    f.savingS = stallS;
    f.severity = q.severity.of(f.impact);
    f.confidence = std::all_of(m.gpus.begin(), m.gpus.end(),
                               [&](const GpuMetrics& g) { return g.node != node.node || !g.smActive.empty(); })
                       ? kConfidenceWithSm
                       : kConfidenceUtilOnly;
    const double meanStall = stallS / static_cast<double>(gaps.size());
    f.title =
        periodic ? fmt::format("Checkpoint writes stall the GPUs on {} every {:.0f} s for {:.1f} s", node.node, period,
                               meanStall)
                 : (gaps.size() == 1
                        ? fmt::format("Checkpoint writes stall the GPUs on {} once, for {:.1f} s", node.node, meanStall)
                        : fmt::format("Checkpoint writes stall the GPUs on {} {} times, {:.1f} s each", node.node,
                                      gaps.size(), meanStall));
    f.evidence = QJsonObject{{QStringLiteral("events"), events},
                             {QStringLiteral("bursts"), jsonTimes(w.bursts)},
                             {QStringLiteral("write_burst_threshold_bytes_per_s"), w.threshold},
                             {QStringLiteral("disk_write_median_bytes_per_s"), w.median},
                             {QStringLiteral("periodic"), periodic},
                             {QStringLiteral("period_s"), period},
                             {QStringLiteral("interval_cv"), cv},
                             {QStringLiteral("mean_stall_s"), meanStall},
                             {QStringLiteral("total_stall_s"), stallS}};
    f.recommendation = "Write checkpoints asynchronously (torch.distributed.checkpoint async_save, DeepSpeed "
                       "checkpoint engines with a background writer) or less often; write to local NVMe and copy "
                       "off in the background; shard the state so every rank writes its part in parallel.";
    return f;
}

} // namespace

std::vector<Finding> checkpointGapRule(const RunMetrics& m, const RuleParams& params, const RefineGap& refine)
{
    const CkptGapParams q = CkptGapParams::from(params);
    std::vector<Finding> out;
    for (const NodeMetrics& node : m.nodes) {
        if (node.diskWrite.empty()) continue;
        const WriteBursts w = writeBursts(node, m.grid, q);
        if (w.bursts.empty()) continue;
        std::vector<std::string> gpus;
        const std::vector<Episode> gaps = checkpointGaps(m, node, w, q, &gpus);
        if (gaps.empty()) continue;
        out.push_back(gapFinding(m, node, w, gaps, std::move(gpus), q, refine));
    }
    return out;
}

} // namespace runlens::analysis
