#include "analysis/report/key_metrics.h"

#include "analysis/rules/episodes.h"
#include "analysis/rules/steady_state.h"

#include <algorithm>
#include <cmath>

namespace runlens::analysis {

namespace {

struct Range
{
    size_t first = 0, end = 0;
};

// The values are a grid series (SlotValues) or a vector of doubles.
template <typename Values> double mean(const Values& v, Range r)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = r.first; i < r.end && i < v.size(); ++i)
        if (std::isfinite(v[i])) {
            sum += v[i];
            ++n;
        }
    return n ? sum / static_cast<double>(n) : NodeKeyMetrics::kNone;
}

template <typename Values> double peak(const Values& v, Range r)
{
    double best = NodeKeyMetrics::kNone;
    for (size_t i = r.first; i < r.end && i < v.size(); ++i)
        if (std::isfinite(v[i]) && !(v[i] <= best)) best = v[i];
    return best;
}

void append(std::vector<double>& into, const SlotValues& v, Range r)
{
    for (size_t i = r.first; i < r.end && i < v.size(); ++i)
        if (std::isfinite(v[i])) into.push_back(v[i]);
}

} // namespace

std::vector<NodeKeyMetrics> keyMetrics(const RunMetrics& m, const RuleParams& params, int64_t fromNs, int64_t toNs)
{
    std::vector<NodeKeyMetrics> out;
    const TimeGrid& grid = m.grid;
    const auto slotAt = [&](int64_t ns) {
        if (ns <= grid.startNs) return size_t{0};
        return std::min(grid.size, static_cast<size_t>((ns - grid.startNs + grid.stepNs - 1) / grid.stepNs));
    };
    const Range window{slotAt(fromNs), slotAt(toNs)};
    for (const NodeMetrics& node : m.nodes) {
        NodeKeyMetrics k;
        k.node = node.node;
        std::vector<const GpuMetrics*> gpus;
        for (const GpuMetrics& g : m.gpus)
            if (g.node == node.node) gpus.push_back(&g);
        k.gpus = gpus.size();
        // The steady state only: the GPUs idle while the job starts are not what the run is like.
        Range r = window;
        if (!gpus.empty()) r.first = std::max(r.first, steadyStartSlot(m, node.node, params));
        if (r.first >= r.end) r = window; // never started in the window: report the window as it is
        k.steadyS = static_cast<double>(r.end - r.first) * static_cast<double>(grid.stepNs) / 1e9;
        std::vector<double> util, sm, tensor;
        for (const GpuMetrics* g : gpus) {
            append(util, g->util, r);
            append(sm, g->smActive, r);
            append(tensor, g->tensorActive, r);
        }
        k.utilPct = quantile(std::move(util), 0.5);
        k.smActive = quantile(std::move(sm), 0.5);
        k.tensorActive = quantile(std::move(tensor), 0.5);
        std::vector<double> link(std::max(node.linkTx.size(), node.linkRx.size()), NodeKeyMetrics::kNone);
        for (size_t i = 0; i < link.size(); ++i) {
            const double tx = i < node.linkTx.size() ? node.linkTx[i] : NodeKeyMetrics::kNone;
            const double rx = i < node.linkRx.size() ? node.linkRx[i] : NodeKeyMetrics::kNone;
            if (std::isfinite(tx) || std::isfinite(rx))
                link[i] = std::max(std::isfinite(tx) ? tx : 0.0, std::isfinite(rx) ? rx : 0.0);
        }
        k.linkMean = mean(link, r);
        k.linkPeak = peak(link, r);
        k.linkCapacity = node.linkCapacity;
        k.linkCapacitySource = std::isfinite(node.linkCapacity) ? node.linkCapacitySource : std::string();
        k.diskWriteMean = mean(node.diskWrite, r);
        k.diskWritePeak = peak(node.diskWrite, r);
        k.diskReadMean = mean(node.diskRead, r);
        k.diskReadPeak = peak(node.diskRead, r);
        std::vector<double> cpu;
        append(cpu, node.cpuUtil, r);
        k.cpuUtilPct = quantile(std::move(cpu), 0.5);
        const bool anything = !gpus.empty() || std::isfinite(k.linkMean) || std::isfinite(k.diskWriteMean) ||
                              std::isfinite(k.diskReadMean) || std::isfinite(k.cpuUtilPct);
        if (anything) out.push_back(std::move(k));
    }
    std::stable_partition(out.begin(), out.end(), [](const NodeKeyMetrics& k) { return k.gpus > 0; });
    return out;
}

} // namespace runlens::analysis
