#include "analysis/rules/steady_state.h"

#include <algorithm>
#include <cmath>

namespace runlens::analysis {

namespace {

// "Most slots" of the hold window: at least 4 in 5 of its known slots working (a brief burst of work during start-up
// is not the steady state yet, and a dip or two inside the window does not delay it). Integers: exact.
constexpr size_t kWorkingOf = 4, kWorkingIn = 5;

} // namespace

size_t steadyStartSlot(const RunMetrics& m, const std::string& node, const RuleParams& p)
{
    return steadyStartSlot(m, node, CommonParams::from(p));
}

size_t steadyStartSlot(const RunMetrics& m, const std::string& node, const CommonParams& p)
{
    const TimeGrid& grid = m.grid;
    std::vector<double> sum(grid.size, 0.0);
    std::vector<int> count(grid.size, 0);
    for (const GpuMetrics& g : m.gpus) {
        if (g.node != node) continue;
        for (size_t i = 0; i < grid.size && i < g.util.size(); ++i)
            if (std::isfinite(g.util[i])) {
                sum[i] += g.util[i];
                ++count[i];
            }
    }
    if (std::all_of(count.begin(), count.end(), [](int c) { return c == 0; })) return 0;
    const double threshold = p.warmupUtil;
    const auto hold =
        static_cast<size_t>(std::max(1.0, std::round(p.warmupHoldS * 1e9 / static_cast<double>(grid.stepNs))));
    // Prefix counts of working and known slots: a window is working when ≥ 80 % of its known slots are.
    std::vector<size_t> working(grid.size + 1, 0), known(grid.size + 1, 0);
    for (size_t i = 0; i < grid.size; ++i) {
        known[i + 1] = known[i] + (count[i] > 0 ? 1 : 0);
        working[i + 1] = working[i] + (count[i] > 0 && sum[i] / count[i] >= threshold ? 1 : 0);
    }
    for (size_t i = 0; i < grid.size; ++i) {
        if (count[i] == 0 || sum[i] / count[i] < threshold) continue;
        const size_t end = std::min(grid.size, i + hold);
        const size_t k = known[end] - known[i], w = working[end] - working[i];
        if (k > 0 && w * kWorkingIn >= k * kWorkingOf) return i;
    }
    return grid.size;
}

} // namespace runlens::analysis
