#include "analysis/timeline/timeline_lod.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace runlens::timeline {
namespace {

__extension__ using Wide = __int128;

constexpr int64_t kMinLevelWidthNs = int64_t{1} << 10;
constexpr int kLevelFactor = 4;
constexpr size_t kCoarsestBuckets = 16; // no level above one this small
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int64_t floorDiv(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void addValue(ReducedBucket& b, double v)
{
    if (b.count == 0) {
        b.minValue = b.maxValue = v;
        b.maxFirst = false;
    } else if (v < b.minValue) {
        b.minValue = v;
        b.maxFirst = true; // the max (seen before) came first
    } else if (v > b.maxValue) {
        b.maxValue = v;
        b.maxFirst = false;
    }
    ++b.count;
    b.sum += v;
}

// Merges b (later in time) into a.
void mergeLater(ReducedBucket& a, const ReducedBucket& b)
{
    if (b.count == 0) return;
    if (a.count == 0) {
        a = b;
        return;
    }
    bool minFromB = b.minValue<a.minValue, maxFromB = b.maxValue> a.maxValue;
    const bool aMaxFirst = a.maxFirst, bMaxFirst = b.maxFirst;
    if (minFromB) a.minValue = b.minValue;
    if (maxFromB) a.maxValue = b.maxValue;
    if (minFromB && maxFromB)
        a.maxFirst = bMaxFirst;
    else if (minFromB)
        a.maxFirst = true;
    else if (maxFromB)
        a.maxFirst = false;
    else
        a.maxFirst = aMaxFirst;
    a.count += b.count;
    a.sum += b.sum;
}

ReducedBucket fromPyramid(const PyramidBucket& p)
{
    ReducedBucket r;
    r.count = p.count();
    r.minValue = p.minValue;
    r.maxValue = p.maxValue;
    r.sum = static_cast<double>(p.mean) * static_cast<double>(r.count);
    r.maxFirst = p.maxFirst();
    return r;
}

PyramidBucket toPyramid(const ReducedBucket& r)
{
    PyramidBucket p;
    if (r.count == 0) return p;
    p.minValue = static_cast<float>(r.minValue);
    p.maxValue = static_cast<float>(r.maxValue);
    p.mean = static_cast<float>(r.sum / static_cast<double>(r.count));
    const auto n = static_cast<uint32_t>(std::min<int64_t>(r.count, 0x7fffffff));
    p.countAndOrder = n | (r.maxFirst ? 0x80000000u : 0u);
    return p;
}

} // namespace

size_t SeriesPyramid::bytes() const
{
    size_t n = sizeof(*this);
    for (const PyramidLevel& l : levels)
        n += sizeof(l) + l.buckets.capacity() * sizeof(PyramidBucket);
    return n;
}

const PyramidLevel* SeriesPyramid::levelFor(int64_t displayWidthNs) const
{
    const PyramidLevel* best = nullptr;
    for (const PyramidLevel& l : levels)
        if (l.widthNs <= displayWidthNs) best = &l;
    return best;
}

int64_t typicalIntervalNs(int64_t points, int64_t firstNs, int64_t lastNs)
{
    if (points < 2 || lastNs <= firstNs) return 1'000'000'000;
    return std::max<int64_t>(1, (lastNs - firstNs) / (points - 1));
}

int64_t pyramidBaseWidthNs(int64_t intervalNs)
{
    int shift = 0;
    while (shift < 58 && (int64_t{1} << shift) < std::max(kMinLevelWidthNs, 16 * intervalNs))
        ++shift;
    return int64_t{1} << shift;
}

PyramidBuilder::PyramidBuilder(int64_t intervalNs, int64_t firstNs, int64_t lastNs) : m_intervalNs(intervalNs)
{
    while ((int64_t{1} << m_shift) < pyramidBaseWidthNs(intervalNs))
        ++m_shift;
    m_firstIndex = firstNs >> m_shift; // an arithmetic shift: floor division by the power of two
    if (lastNs >= firstNs) m_acc.resize(static_cast<size_t>((lastNs >> m_shift) - m_firstIndex + 1));
}

void PyramidBuilder::add(const std::vector<store::Point>& points)
{
    const auto n = static_cast<int64_t>(m_acc.size());
    for (const store::Point& pt : points) {
        if (pt.missing || std::isnan(pt.value)) continue;
        const int64_t i = (pt.tsNs >> m_shift) - m_firstIndex;
        if (i < 0 || i >= n) continue; // outside the series' stated range: not expected
        addValue(m_acc[static_cast<size_t>(i)], pt.value);
        m_any = true;
    }
}

SeriesPyramid PyramidBuilder::finish()
{
    SeriesPyramid p;
    p.intervalNs = m_intervalNs;
    if (!m_any) return p;
    // Level 0 from the points, in double precision, then each level from the one below.
    std::vector<ReducedBucket> acc = std::move(m_acc);
    int64_t width = int64_t{1} << m_shift;
    int64_t firstIndex = m_firstIndex;
    for (;;) {
        PyramidLevel level;
        level.widthNs = width;
        level.firstIndex = firstIndex;
        level.buckets.reserve(acc.size());
        for (const ReducedBucket& r : acc)
            level.buckets.push_back(toPyramid(r));
        p.levels.push_back(std::move(level));
        if (acc.size() <= kCoarsestBuckets || width > std::numeric_limits<int64_t>::max() / (int64_t{2} * kLevelFactor))
            break;
        const int64_t upperFirst = floorDiv(firstIndex, kLevelFactor);
        const int64_t upperLast = floorDiv(firstIndex + static_cast<int64_t>(acc.size()) - 1, kLevelFactor);
        std::vector<ReducedBucket> upper(static_cast<size_t>(upperLast - upperFirst + 1));
        for (size_t i = 0; i < acc.size(); ++i)
            mergeLater(
                upper[static_cast<size_t>(floorDiv(firstIndex + static_cast<int64_t>(i), kLevelFactor) - upperFirst)],
                acc[i]);
        acc = std::move(upper);
        firstIndex = upperFirst;
        width *= kLevelFactor;
    }
    return p;
}

SeriesPyramid buildPyramid(const std::vector<store::Point>& points, int64_t intervalNs)
{
    if (points.empty()) return SeriesPyramid{intervalNs, {}};
    PyramidBuilder b(intervalNs, points.front().tsNs, points.back().tsNs);
    b.add(points);
    return b.finish();
}

int64_t bucketBoundary(int64_t fromNs, int64_t toNs, int buckets, int i)
{
    // 64-bit arithmetic when span × buckets fits (any window shorter than ~13 days at 8192 pixels), else 128-bit.
    const uint64_t span64 = static_cast<uint64_t>(toNs) - static_cast<uint64_t>(fromNs) + 1;
    if (buckets > 0 && i >= 0 && i <= buckets && toNs >= fromNs &&
        span64 <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / static_cast<uint64_t>(buckets))
        return fromNs + static_cast<int64_t>(span64 * static_cast<uint64_t>(i) / static_cast<uint64_t>(buckets));
    const Wide span = static_cast<Wide>(toNs) - static_cast<Wide>(fromNs) + 1;
    return static_cast<int64_t>(static_cast<Wide>(fromNs) + span * i / buckets);
}

const std::vector<int64_t>& bucketBoundaries(int64_t fromNs, int64_t toNs, int buckets)
{
    struct Grid
    {
        int64_t fromNs = 0, toNs = -1;
        int buckets = -1;
        std::vector<int64_t> bounds;
    };
    thread_local Grid grids[2];
    thread_local int nextSlot = 0;
    for (const Grid& g : grids)
        if (g.fromNs == fromNs && g.toNs == toNs && g.buckets == buckets) return g.bounds;
    Grid& g = grids[nextSlot];
    nextSlot = 1 - nextSlot;
    g.fromNs = fromNs;
    g.toNs = toNs;
    g.buckets = buckets;
    g.bounds.resize(static_cast<size_t>(std::max(buckets, 0)) + 1);
    for (int i = 0; i <= buckets; ++i)
        g.bounds[static_cast<size_t>(i)] = bucketBoundary(fromNs, toNs, buckets, i);
    return g.bounds;
}

std::vector<ReducedBucket> reducePoints(const std::vector<store::Point>& points, int64_t fromNs, int64_t toNs,
                                        int buckets)
{
    std::vector<ReducedBucket> out(static_cast<size_t>(std::max(buckets, 0)));
    if (buckets <= 0 || toNs < fromNs) return out;
    const std::vector<int64_t>& bounds = bucketBoundaries(fromNs, toNs, buckets);
    int i = 0;
    int64_t next = bounds[1];
    for (const store::Point& pt : points) {
        if (pt.tsNs < fromNs || pt.tsNs > toNs || pt.missing || std::isnan(pt.value)) continue;
        while (i + 1 < buckets && pt.tsNs >= next) {
            ++i;
            next = bounds[static_cast<size_t>(i) + 1];
        }
        addValue(out[static_cast<size_t>(i)], pt.value);
    }
    return out;
}

std::vector<ReducedBucket> reduceSpans(const std::vector<PointSpan>& spans, int64_t fromNs, int64_t toNs, int buckets)
{
    std::vector<ReducedBucket> out(static_cast<size_t>(std::max(buckets, 0)));
    if (buckets <= 0 || toNs < fromNs) return out;
    const std::vector<int64_t>& bounds = bucketBoundaries(fromNs, toNs, buckets);
    int i = 0;
    int64_t next = bounds[1];
    for (const PointSpan& span : spans) {
        for (size_t k = 0; k < span.count; ++k) {
            const int64_t ts = span.ts[k];
            const float v = span.values[k];
            if (ts < fromNs || ts > toNs || std::isnan(v)) continue;
            while (i + 1 < buckets && ts >= next) {
                ++i;
                next = bounds[static_cast<size_t>(i) + 1];
            }
            addValue(out[static_cast<size_t>(i)], static_cast<double>(v));
        }
    }
    return out;
}

std::vector<ReducedBucket> reduceLevel(const PyramidLevel& level, int64_t fromNs, int64_t toNs, int buckets)
{
    std::vector<ReducedBucket> out(static_cast<size_t>(std::max(buckets, 0)));
    if (buckets <= 0 || toNs < fromNs || level.buckets.empty()) return out;
    const int64_t w = level.widthNs;
    // Level buckets whose start k·w lies in [fromNs, toNs].
    const int64_t kFrom = std::max(level.firstIndex, floorDiv(fromNs, w) + (floorDiv(fromNs, w) * w < fromNs ? 1 : 0));
    const int64_t kTo = std::min(level.firstIndex + static_cast<int64_t>(level.buckets.size()) - 1, floorDiv(toNs, w));
    const std::vector<int64_t>& bounds = bucketBoundaries(fromNs, toNs, buckets);
    int i = 0;
    int64_t next = bounds[1];
    for (int64_t k = kFrom; k <= kTo; ++k) {
        const PyramidBucket& b = level.buckets[static_cast<size_t>(k - level.firstIndex)];
        if (b.count() == 0) continue;
        const int64_t start = k * w;
        while (i + 1 < buckets && start >= next) {
            ++i;
            next = bounds[static_cast<size_t>(i) + 1];
        }
        mergeLater(out[static_cast<size_t>(i)], fromPyramid(b));
    }
    return out;
}

double toSeconds(int64_t ns)
{
    const int64_t s = floorDiv(ns, 1'000'000'000);
    return static_cast<double>(s) + static_cast<double>(ns - s * 1'000'000'000) / 1e9;
}

void appendBucketLine(const std::vector<ReducedBucket>& buckets, int64_t fromNs, int64_t toNs, double scale,
                      std::vector<double>& keys, std::vector<double>& values)
{
    const int n = static_cast<int>(buckets.size());
    const std::vector<int64_t>& bounds = bucketBoundaries(fromNs, toNs, n);
    bool inGap = false;
    for (int i = 0; i < n; ++i) {
        const ReducedBucket& b = buckets[static_cast<size_t>(i)];
        const int64_t start = bounds[static_cast<size_t>(i)], end = bounds[static_cast<size_t>(i) + 1];
        const int64_t width = end - start;
        if (b.count == 0) {
            if (!inGap) {
                keys.push_back(toSeconds(start + width / 2));
                values.push_back(kNaN);
            }
            inGap = true;
            continue;
        }
        inGap = false;
        if (b.minValue == b.maxValue) {
            keys.push_back(toSeconds(start + width / 2));
            values.push_back(b.minValue * scale);
            continue;
        }
        keys.push_back(toSeconds(start + width / 4));
        values.push_back((b.maxFirst ? b.maxValue : b.minValue) * scale);
        keys.push_back(toSeconds(start + width - width / 4));
        values.push_back((b.maxFirst ? b.minValue : b.maxValue) * scale);
    }
}

void appendRawLine(const std::vector<store::Point>& points, int64_t intervalNs, double scale, std::vector<double>& keys,
                   std::vector<double>& values)
{
    const Wide gapNs = static_cast<Wide>(intervalNs) * 3;
    bool inGap = false;
    bool havePrev = false;
    int64_t prevTs = 0;
    for (const store::Point& pt : points) {
        const bool missing = pt.missing || std::isnan(pt.value);
        if (missing) {
            if (!inGap) {
                keys.push_back(toSeconds(pt.tsNs));
                values.push_back(kNaN);
            }
            inGap = true;
            continue;
        }
        if (havePrev && !inGap && static_cast<Wide>(pt.tsNs) - static_cast<Wide>(prevTs) > gapNs) {
            keys.push_back(toSeconds(prevTs + (pt.tsNs - prevTs) / 2));
            values.push_back(kNaN);
        }
        keys.push_back(toSeconds(pt.tsNs));
        values.push_back(pt.value * scale);
        inGap = false;
        havePrev = true;
        prevTs = pt.tsNs;
    }
}

} // namespace runlens::timeline
