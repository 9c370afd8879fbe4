#include "analysis/timeline/series_reduction.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace runlens::timeline {

namespace {
__extension__ using Wide = __int128;

int64_t floorDiv(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kCoarsestBuckets = 64;

double seconds(int64_t ns)
{
    return static_cast<double>(ns) * 1e-9;
}
} // namespace

std::shared_ptr<const std::vector<int64_t>> bucketBoundaries(int64_t from, int64_t to, int n)
{
    auto out = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(n) + 1);
    const Wide span = static_cast<Wide>(to) - from + 1;
    for (int i = 0; i <= n; ++i)
        (*out)[static_cast<size_t>(i)] = static_cast<int64_t>(from + span * i / n);
    return out;
}

BucketGrid::BucketGrid(int64_t from, int64_t to, int n, std::shared_ptr<const std::vector<int64_t>> boundaries)
    : fromNs(from), toNs(to), buckets(n), mn(static_cast<size_t>(n), 0), mx(static_cast<size_t>(n), 0),
      sum(static_cast<size_t>(n), 0), count(static_cast<size_t>(n), 0),
      starts(boundaries ? std::move(boundaries) : bucketBoundaries(from, to, n))
{
}

int BucketGrid::bucketOf(int64_t ts) const
{
    // The last start <= ts: an estimate from the bucket width, corrected by a step or two.
    const double width = (static_cast<double>(toNs) - static_cast<double>(fromNs) + 1) / buckets;
    int i = static_cast<int>(std::clamp((static_cast<double>(ts) - static_cast<double>(fromNs)) / width, 0.0,
                                        static_cast<double>(buckets - 1)));
    const auto& s = *starts;
    while (i > 0 && ts < s[static_cast<size_t>(i)])
        --i;
    while (i + 1 < buckets && ts >= s[static_cast<size_t>(i) + 1])
        ++i;
    return i;
}

void BucketGrid::add(int i, double lo, double hi, double s, int64_t n)
{
    if (n <= 0) return;
    const auto u = static_cast<size_t>(i);
    if (count[u] == 0) {
        mn[u] = lo;
        mx[u] = hi;
    } else {
        mn[u] = std::min(mn[u], lo);
        mx[u] = std::max(mx[u], hi);
    }
    sum[u] += s;
    count[u] += n;
}

size_t SeriesLod::bytes() const
{
    size_t n = points.size() * sizeof(store::Point);
    for (const Level& l : levels)
        n += l.mn.size() * (3 * sizeof(float) + sizeof(uint32_t));
    return n;
}

std::shared_ptr<const SeriesLod> buildSeriesLod(std::vector<store::Point> points, int64_t intervalNs)
{
    auto lod = std::make_shared<SeriesLod>();
    lod->intervalNs = std::max<int64_t>(1, intervalNs);
    if (points.size() <= static_cast<size_t>(kRawCachePoints) || points.empty()) {
        lod->raw = true;
        lod->points = std::move(points);
        return lod;
    }
    // The finest level holds about four points per bucket: a pixel of a window that uses it has at least that many.
    const auto base = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(4 * intervalNs, 1 << 20))));
    SeriesLod::Level level;
    level.width = base;
    level.firstIndex = floorDiv(points.front().tsNs, base);
    const int64_t lastIndex = floorDiv(points.back().tsNs, base);
    const auto n = static_cast<size_t>(lastIndex - level.firstIndex + 1);
    std::vector<double> sums(n, 0);
    level.mn.assign(n, 0);
    level.mx.assign(n, 0);
    level.count.assign(n, 0);
    for (const store::Point& p : points) {
        if (p.missing) continue;
        const auto i = static_cast<size_t>(floorDiv(p.tsNs, base) - level.firstIndex);
        const auto v = static_cast<float>(p.value);
        if (level.count[i] == 0) {
            level.mn[i] = level.mx[i] = v;
        } else {
            level.mn[i] = std::min(level.mn[i], v);
            level.mx[i] = std::max(level.mx[i], v);
        }
        sums[i] += p.value;
        ++level.count[i];
    }
    level.mean.resize(n);
    for (size_t i = 0; i < n; ++i)
        level.mean[i] = level.count[i] ? static_cast<float>(sums[i] / level.count[i]) : 0.0f;
    lod->levels.push_back(std::move(level));
    while (lod->levels.back().mn.size() > kCoarsestBuckets) {
        const SeriesLod::Level& fine = lod->levels.back();
        SeriesLod::Level coarse;
        coarse.width = fine.width * 4;
        coarse.firstIndex = floorDiv(fine.firstIndex, 4);
        const int64_t last = floorDiv(fine.firstIndex + static_cast<int64_t>(fine.mn.size()) - 1, 4);
        const auto m = static_cast<size_t>(last - coarse.firstIndex + 1);
        coarse.mn.assign(m, 0);
        coarse.mx.assign(m, 0);
        coarse.mean.assign(m, 0);
        coarse.count.assign(m, 0);
        std::vector<double> s(m, 0);
        for (size_t i = 0; i < fine.mn.size(); ++i) {
            if (fine.count[i] == 0) continue;
            const auto j = static_cast<size_t>(floorDiv(fine.firstIndex + static_cast<int64_t>(i), 4) - coarse.firstIndex);
            if (coarse.count[j] == 0) {
                coarse.mn[j] = fine.mn[i];
                coarse.mx[j] = fine.mx[i];
            } else {
                coarse.mn[j] = std::min(coarse.mn[j], fine.mn[i]);
                coarse.mx[j] = std::max(coarse.mx[j], fine.mx[i]);
            }
            s[j] += static_cast<double>(fine.mean[i]) * fine.count[i];
            coarse.count[j] += fine.count[i];
        }
        for (size_t j = 0; j < m; ++j)
            coarse.mean[j] = coarse.count[j] ? static_cast<float>(s[j] / coarse.count[j]) : 0.0f;
        lod->levels.push_back(std::move(coarse));
    }
    return lod;
}

void reducePoints(const std::vector<store::Point>& points, BucketGrid& grid)
{
    auto lo = std::lower_bound(points.begin(), points.end(), grid.fromNs,
                               [](const store::Point& p, int64_t t) { return p.tsNs < t; });
    if (lo == points.end() || lo->tsNs > grid.toNs) return;
    // Points come in time order: walk the buckets along with them.
    const auto& s = *grid.starts;
    int b = grid.bucketOf(lo->tsNs);
    for (auto it = lo; it != points.end() && it->tsNs <= grid.toNs; ++it) {
        while (b + 1 < grid.buckets && it->tsNs >= s[static_cast<size_t>(b) + 1])
            ++b;
        if (!it->missing) grid.add(b, it->value, it->value, it->value, 1);
    }
}

bool reduceFromLod(const SeriesLod& lod, BucketGrid& grid)
{
    if (lod.raw) {
        reducePoints(lod.points, grid);
        return true;
    }
    const Wide span = static_cast<Wide>(grid.toNs) - grid.fromNs + 1;
    const auto bucketNs = static_cast<int64_t>(span / std::max(1, grid.buckets));
    const SeriesLod::Level* use = nullptr;
    for (const SeriesLod::Level& l : lod.levels)
        if (l.width <= bucketNs) use = &l;
    if (!use) return false;
    // A level bucket goes to the grid bucket of its start (clamped to the window): at most one pixel off.
    const int64_t first = std::max(floorDiv(grid.fromNs, use->width), use->firstIndex);
    const int64_t last = std::min(floorDiv(grid.toNs, use->width), use->firstIndex + static_cast<int64_t>(use->mn.size()) - 1);
    if (first > last) return true;
    const auto& s = *grid.starts;
    int b = grid.bucketOf(std::max(first * use->width, grid.fromNs));
    for (int64_t idx = first; idx <= last; ++idx) {
        const auto i = static_cast<size_t>(idx - use->firstIndex);
        if (use->count[i] == 0) continue;
        const int64_t start = std::max(idx * use->width, grid.fromNs);
        while (b + 1 < grid.buckets && start >= s[static_cast<size_t>(b) + 1])
            ++b;
        grid.add(b, use->mn[i], use->mx[i], static_cast<double>(use->mean[i]) * use->count[i], use->count[i]);
    }
    return true;
}

void gridToLine(const BucketGrid& grid, double scale, int64_t gapNs, std::vector<double>& keys,
                std::vector<double>& values)
{
    bool any = false;
    int64_t lastEnd = 0;
    for (int i = 0; i < grid.buckets; ++i) {
        const auto u = static_cast<size_t>(i);
        if (grid.count[u] == 0) continue;
        const int64_t start = grid.bucketStart(i);
        const int64_t end = grid.bucketStart(i + 1);
        if (any && start - lastEnd > gapNs) {
            keys.push_back(seconds(lastEnd + (start - lastEnd) / 2));
            values.push_back(kNan);
        }
        const double key = seconds(start + (end - start) / 2);
        keys.push_back(key);
        values.push_back(grid.mn[u] * scale);
        if (grid.mx[u] != grid.mn[u]) {
            keys.push_back(key);
            values.push_back(grid.mx[u] * scale);
        }
        any = true;
        lastEnd = end;
    }
}

void pointsToLine(const std::vector<store::Point>& points, int64_t from, int64_t to, double scale, int64_t gapNs,
                  std::vector<double>& keys, std::vector<double>& values)
{
    auto lo = std::lower_bound(points.begin(), points.end(), from,
                               [](const store::Point& p, int64_t t) { return p.tsNs < t; });
    bool havePrev = false, prevNan = true;
    int64_t prevTs = 0;
    for (auto it = lo; it != points.end() && it->tsNs <= to; ++it) {
        if (it->missing) {
            if (!prevNan) {
                keys.push_back(seconds(it->tsNs));
                values.push_back(kNan);
                prevNan = true;
            }
            havePrev = false;
            continue;
        }
        if (havePrev && it->tsNs - prevTs > gapNs && !prevNan) {
            keys.push_back(seconds(prevTs + (it->tsNs - prevTs) / 2));
            values.push_back(kNan);
        }
        keys.push_back(seconds(it->tsNs));
        values.push_back(it->value * scale);
        havePrev = true;
        prevNan = false;
        prevTs = it->tsNs;
    }
}

} // namespace runlens::timeline
