#include "analysis/rules/stall_bounds.h"

#include <algorithm>
#include <cmath>

namespace runlens::analysis {

namespace {

int64_t overlapNs(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
    return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

// Of spans sorted by start, joined where at most joinNs apart, the joined span that overlaps [from, to) the most.
std::optional<FindingEpisode> bestCluster(std::vector<std::pair<int64_t, int64_t>> spans, int64_t joinNs, int64_t from,
                                          int64_t to)
{
    std::sort(spans.begin(), spans.end());
    std::optional<FindingEpisode> best;
    int64_t bestOverlap = 0;
    for (size_t i = 0; i < spans.size();) {
        FindingEpisode c{spans[i].first, spans[i].second};
        size_t j = i + 1;
        for (; j < spans.size() && spans[j].first <= c.endNs + joinNs; ++j)
            c.endNs = std::max(c.endNs, spans[j].second);
        if (const int64_t o = overlapNs(c.startNs, c.endNs, from, to); o > bestOverlap) {
            bestOverlap = o;
            best = c;
        }
        i = j;
    }
    return best;
}

} // namespace

Expected<std::optional<FindingEpisode>> StallBounds::fromStacks(const std::string& node, int64_t startNs, int64_t endNs)
{
    const auto pad = static_cast<int64_t>(m_params.boundsSearchS * 1e9);
    RUNLENS_ASSIGN_OR_RETURN(auto phases, m_stacks.callsitePhases());
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const ThreadScan& t : m_threads) {
        if (t.thread.node != node || !t.training) continue;
        RUNLENS_ASSIGN_OR_RETURN(auto samples, m_stacks.samples(t.thread.id, {startNs - pad, endNs + pad}));
        for (const store::StackSample& s : samples) {
            const auto c = static_cast<size_t>(s.callsiteId);
            if (c < phases->size() && (*phases)[c] == Phase::Checkpoint)
                spans.emplace_back(s.tsNs, s.tsNs + t.periodNs);
        }
    }
    return bestCluster(std::move(spans), static_cast<int64_t>(m_params.boundsJoinGapS * 1e9), startNs, endNs);
}

Expected<std::optional<FindingEpisode>> StallBounds::fromUtilization(const std::string& node, int64_t startNs,
                                                                     int64_t endNs)
{
    if (!m_finestUtil) {
        auto series = m_reader.series();
        if (!series) return series.error();
        RUNLENS_ASSIGN_OR_RETURN(auto devices, m_reader.devices());
        RUNLENS_ASSIGN_OR_RETURN(auto nodes, m_reader.nodes());
        std::map<int64_t, const store::DeviceInfo*> deviceById;
        for (const store::DeviceInfo& d : devices)
            deviceById[d.id] = &d;
        std::map<int64_t, std::string> nodeName;
        for (const store::NodeInfo& n : nodes)
            nodeName[n.id] = n.name;
        std::map<std::pair<std::string, std::string>, std::pair<double, int64_t>> best; // rate, series id
        for (const store::SeriesInfo& si : *series) {
            if (si.metric != "gpu.util" || !si.firstNs || !si.lastNs || *si.lastNs <= *si.firstNs) continue;
            const auto d = deviceById.find(si.deviceId);
            if (d == deviceById.end() || d->second->kind != "gpu" || !nodeName.count(si.nodeId)) continue;
            const double rate = static_cast<double>(si.points) / static_cast<double>(*si.lastNs - *si.firstNs);
            auto& slot = best[{nodeName[si.nodeId], d->second->name}];
            if (rate > slot.first) slot = {rate, si.id};
        }
        m_finestUtil.emplace();
        for (const auto& [key, v] : best)
            (*m_finestUtil)[key] = v.second;
    }
    const auto pad = static_cast<int64_t>(m_params.boundsSearchS * 1e9);
    const double utilMax = m_params.stallUtilMax;
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const GpuMetrics& g : m_metrics.gpus) {
        if (g.node != node) continue;
        const auto finest = m_finestUtil->find({node, g.gpu});
        if (finest == m_finestUtil->end()) continue;
        RUNLENS_ASSIGN_OR_RETURN(auto points, m_reader.readPoints(finest->second, {startNs - pad, endNs + pad}));
        const std::vector<store::Point>& pts = points;
        // Idle stretches, each edge halfway between the last busy sample and the first idle one.
        std::vector<std::pair<int64_t, int64_t>> idle;
        for (size_t i = 0; i < pts.size(); ++i) {
            if (pts[i].missing || pts[i].value > utilMax) continue;
            size_t j = i;
            while (j + 1 < pts.size() && !pts[j + 1].missing && pts[j + 1].value <= utilMax)
                ++j;
            const int64_t from = i > 0 ? (pts[i - 1].tsNs + pts[i].tsNs) / 2 : pts[i].tsNs;
            const int64_t to = j + 1 < pts.size() ? (pts[j].tsNs + pts[j + 1].tsNs) / 2 : pts[j].tsNs;
            idle.emplace_back(from, to);
            i = j;
        }
        if (auto c = bestCluster(std::move(idle), 0, startNs, endNs)) spans.emplace_back(c->startNs, c->endNs);
    }
    // The node stalls while any of its GPUs does (the rule's union of GPU stalls).
    return bestCluster(std::move(spans), 0, startNs, endNs);
}

Expected<FindingEpisode> StallBounds::checkpoint(const std::string& node, int64_t startNs, int64_t endNs)
{
    auto stacks = fromStacks(node, startNs, endNs);
    if (!stacks) return stacks.error();
    // The stacks say when the training threads wrote; the GPUs stay idle until the write is flushed (an fsync in
    // the user's own code is not a checkpoint frame): the stall is the union of the two where they overlap.
    const FindingEpisode around = *stacks ? **stacks : FindingEpisode{startNs, endNs};
    RUNLENS_ASSIGN_OR_RETURN(auto util, fromUtilization(node, around.startNs, around.endNs));
    if (*stacks && util)
        return FindingEpisode{std::min(around.startNs, util->startNs), std::max(around.endNs, util->endNs)};
    if (*stacks) return **stacks;
    if (util) return *util;
    return FindingEpisode{startNs, endNs};
}

} // namespace runlens::analysis
