#include "analysis/clock/clock_align.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace runlens::analysis {
namespace {

constexpr double kMadToSigma = 1.4826;       // MAD × this estimates σ of a normal spread
constexpr double kMedianEfficiency = 1.2533; // the median's standard error is this × σ/√n
constexpr double kTwoSided95 = 1.96;

template <typename T> T median(std::vector<T> v)
{
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const T upper = v[mid];
    if (v.size() % 2 == 1) return upper;
    const T lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
    return lower + (upper - lower) / 2;
}

int64_t medianAbsDeviation(const std::vector<int64_t>& v, int64_t center)
{
    std::vector<int64_t> dev;
    dev.reserve(v.size());
    for (int64_t x : v)
        dev.push_back(x > center ? x - center : center - x);
    return median(std::move(dev));
}

struct Pearson
{
    double r = 0;
    int64_t n = 0;
};

// Pearson r of node[k + lag] against reference[k] over the indices where both are present.
Pearson correlate(const std::vector<double>& node, const std::vector<double>& ref, int64_t lag)
{
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    int64_t n = 0;
    const auto size = static_cast<int64_t>(ref.size());
    const int64_t from = std::max<int64_t>(0, -lag), to = std::min(size, static_cast<int64_t>(node.size()) - lag);
    for (int64_t k = from; k < to; ++k) {
        const double x = node[static_cast<size_t>(k + lag)], y = ref[static_cast<size_t>(k)];
        if (std::isnan(x) || std::isnan(y)) continue;
        sx += x;
        sy += y;
        sxx += x * x;
        syy += y * y;
        sxy += x * y;
        ++n;
    }
    if (n < 2) return {0, n};
    const double dn = static_cast<double>(n);
    const double vx = sxx - sx * sx / dn, vy = syy - sy * sy / dn;
    if (vx <= 0 || vy <= 0) return {0, n}; // a flat signal correlates with nothing
    return {(sxy - sx * sy / dn) / std::sqrt(vx * vy), n};
}

} // namespace

int64_t medianInterval(const std::vector<int64_t>& ts)
{
    if (ts.size() < 2) return 0;
    std::vector<int64_t> gaps;
    gaps.reserve(ts.size() - 1);
    for (size_t i = 1; i < ts.size(); ++i)
        if (ts[i] > ts[i - 1]) gaps.push_back(ts[i] - ts[i - 1]);
    return gaps.empty() ? 0 : median(std::move(gaps));
}

namespace {

// The matched differences of one name over every rank pair: in order first, then each end (moved by the in-order
// median) with the nearest reference end, kept when close.
std::vector<int64_t> matchName(const std::string& name, const std::vector<CollectiveEnds>& node,
                               const std::vector<CollectiveEnds>& reference, const ClockParams& params, int& rankPairs)
{
    std::vector<int64_t> inOrder;
    rankPairs = 0;
    for (const CollectiveEnds& a : node)
        for (const CollectiveEnds& r : reference) {
            const auto mine = a.find(name), theirs = r.find(name);
            if (mine == a.end() || theirs == r.end()) continue;
            const size_t n = std::min(mine->second.size(), theirs->second.size());
            for (size_t k = 0; k < n; ++k)
                inOrder.push_back(theirs->second[k] - mine->second[k]);
            rankPairs += n > 0 ? 1 : 0;
        }
    if (static_cast<int64_t>(inOrder.size()) < params.minTraceMatches) return {};
    const int64_t first = median(inOrder);
    std::vector<int64_t> nearest;
    for (const CollectiveEnds& a : node)
        for (const CollectiveEnds& r : reference) {
            const auto mine = a.find(name), theirs = r.find(name);
            if (mine == a.end() || theirs == r.end() || theirs->second.empty()) continue;
            const std::vector<int64_t>& ref = theirs->second;
            for (int64_t end : mine->second) {
                const int64_t moved = end + first;
                auto j = std::lower_bound(ref.begin(), ref.end(), moved);
                int64_t best = std::numeric_limits<int64_t>::max();
                if (j != ref.end()) best = *j - moved;
                if (j != ref.begin() && moved - *std::prev(j) < std::llabs(best)) best = *std::prev(j) - moved;
                if (std::llabs(best) <= params.maxTraceResidualNs) nearest.push_back(moved + best - end);
            }
        }
    return nearest;
}

} // namespace

TraceAlignment alignByCollectives(const std::vector<CollectiveEnds>& node, const std::vector<CollectiveEnds>& reference,
                                  const ClockParams& params)
{
    // Each name on its own: the ends of a real collective agree to µs, the return of an asynchronous launch
    // (c10d::allreduce_ beside gloo:all_reduce) does not, and must not be pooled with them.
    struct Name
    {
        std::vector<int64_t> diffs;
        int64_t median = 0, spread = 0;
        int rankPairs = 0;
    };
    std::set<std::string> names;
    for (const CollectiveEnds& a : node)
        for (const auto& [name, ends] : a)
            names.insert(name);
    std::vector<Name> matched;
    for (const std::string& name : names) {
        Name n;
        n.diffs = matchName(name, node, reference, params, n.rankPairs);
        if (static_cast<int64_t>(n.diffs.size()) < params.minTraceMatches) continue;
        n.median = median(n.diffs);
        n.spread = static_cast<int64_t>(kMadToSigma * static_cast<double>(medianAbsDeviation(n.diffs, n.median)));
        matched.push_back(std::move(n));
    }
    TraceAlignment out;
    if (matched.empty()) return out;
    const Name& tightest = *std::min_element(matched.begin(), matched.end(),
                                             [](const Name& a, const Name& b) { return a.spread < b.spread; });
    // Pooled: the names that agree with the tightest one as closely as it agrees with itself.
    const int64_t tolerance = static_cast<int64_t>(
        params.maxTraceNameSpreadRatio * static_cast<double>(std::max(tightest.spread, params.minTraceUncertaintyNs)));
    std::vector<int64_t> pooled;
    for (const Name& n : matched)
        if (n.spread <= tolerance && std::llabs(n.median - tightest.median) <= tolerance) {
            pooled.insert(pooled.end(), n.diffs.begin(), n.diffs.end());
            out.rankPairs = std::max(out.rankPairs, n.rankPairs);
            ++out.names;
        }
    out.offsetNs = median(pooled);
    out.matches = static_cast<int64_t>(pooled.size());
    out.spreadNs = static_cast<int64_t>(kMadToSigma * static_cast<double>(medianAbsDeviation(pooled, out.offsetNs)));
    // The same instance is counted once per rank pair, so the independent count is per pair.
    const double independent = std::max(1.0, static_cast<double>(out.matches) / std::max(1, out.rankPairs));
    const auto se = static_cast<int64_t>(kTwoSided95 * kMedianEfficiency * static_cast<double>(out.spreadNs) /
                                         std::sqrt(independent));
    out.uncertaintyNs = std::max(se, params.minTraceUncertaintyNs);
    out.found = true;
    return out;
}

ActivityGrid meanOnGrid(const std::vector<TimedValues>& series, int64_t originNs, int64_t intervalNs, size_t n,
                        int64_t maxGapNs)
{
    ActivityGrid grid{originNs, intervalNs, std::vector<double>(n, std::numeric_limits<double>::quiet_NaN())};
    std::vector<double> sum(n, 0.0);
    std::vector<int> count(n, 0);
    for (const TimedValues& s : series) {
        size_t i = 0;
        for (size_t k = 0; k < n; ++k) {
            const int64_t t = originNs + static_cast<int64_t>(k) * intervalNs;
            while (i + 1 < s.ts.size() && s.ts[i + 1] <= t)
                ++i;
            if (i + 1 >= s.ts.size() || s.ts[i] > t) continue;
            const int64_t t0 = s.ts[i], t1 = s.ts[i + 1];
            const double v0 = s.values[i], v1 = s.values[i + 1];
            if (t1 - t0 > maxGapNs || std::isnan(v0) || std::isnan(v1)) continue;
            const double f = static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
            sum[k] += v0 + f * (v1 - v0);
            ++count[k];
        }
    }
    for (size_t k = 0; k < n; ++k)
        if (count[k] > 0) grid.values[k] = sum[k] / count[k];
    return grid;
}

MetricAlignment alignByActivity(const ActivityGrid& node, const ActivityGrid& reference, const ClockParams& params)
{
    MetricAlignment out;
    if (node.intervalNs <= 0 || node.intervalNs != reference.intervalNs || node.originNs != reference.originNs)
        return out;
    const int64_t maxLag = params.maxMetricLagNs / node.intervalNs;
    const int64_t lags = 2 * maxLag + 1;
    std::vector<double> r(static_cast<size_t>(lags), -2.0); // -2: too little overlap
    std::vector<int64_t> overlap(static_cast<size_t>(lags), 0);
    for (int64_t l = -maxLag; l <= maxLag; ++l) {
        const Pearson p = correlate(node.values, reference.values, l);
        if (p.n >= params.minMetricOverlap) r[static_cast<size_t>(l + maxLag)] = p.r;
        overlap[static_cast<size_t>(l + maxLag)] = p.n;
    }
    const auto best = static_cast<int64_t>(std::max_element(r.begin(), r.end()) - r.begin());
    out.peak = r[static_cast<size_t>(best)];
    out.overlap = overlap[static_cast<size_t>(best)];
    out.secondPeak = -1;
    for (int64_t i = 0; i < lags; ++i) {
        if (std::llabs(i - best) <= 2) continue;
        const double v = r[static_cast<size_t>(i)];
        const bool localMax =
            (i == 0 || v >= r[static_cast<size_t>(i - 1)]) && (i + 1 == lags || v >= r[static_cast<size_t>(i + 1)]);
        if (localMax) out.secondPeak = std::max(out.secondPeak, v);
    }
    if (out.peak < params.minMetricPeak || out.peak - out.secondPeak < params.minMetricPeakMargin) return out;
    // A parabola through the peak and its neighbours places it between grid samples.
    double delta = 0;
    if (best > 0 && best + 1 < lags && r[static_cast<size_t>(best - 1)] > -2 && r[static_cast<size_t>(best + 1)] > -2) {
        const double a = r[static_cast<size_t>(best - 1)], b = out.peak, c = r[static_cast<size_t>(best + 1)];
        const double denom = a - 2 * b + c;
        if (denom < 0) delta = std::clamp(0.5 * (a - c) / denom, -0.5, 0.5);
    }
    // node[k + lag] matches reference[k]: the node's clock reads lag later, so its offset is -lag.
    const double lagNs = (static_cast<double>(best - maxLag) + delta) * static_cast<double>(node.intervalNs);
    out.offsetNs = -static_cast<int64_t>(std::llround(lagNs));
    out.found = true;
    return out;
}

} // namespace runlens::analysis
