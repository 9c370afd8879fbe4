#pragma once

// Level-of-detail reduction of one series for the timeline: exact per-pixel buckets of decoded points, and a
// per-series pyramid of aligned buckets built once from all the points, so that a wide window is answered
// without decoding any chunk.
//
// Pyramid: level 0 buckets are [k·w, (k+1)·w) with w the smallest power of two nanoseconds ≥ 16 × the series'
// typical interval; each further level is 4 × wider (aligned, so a level bucket is exactly 4 of the level
// below). A bucket holds the float min, max and mean of its present values, their count, and whether the max
// came before the min. A display bucket [b_i, b_{i+1}) is answered from the coarsest level whose width ≤ the
// display bucket width, as the merge of the level buckets whose start lies in it: a point at time t counts in
// the display bucket containing floor(t / w) · w, so a value can move at most one level width (< the display
// bucket width) earlier. That is the only approximation (besides float rounding of the values).

#include "analysis/store/chunk_codec.h"

#include <cstdint>
#include <vector>

namespace runlens::timeline {

struct PyramidBucket
{
    float minValue = 0;
    float maxValue = 0;
    float mean = 0;
    uint32_t countAndOrder = 0; // low 31 bits: present values; top bit: the max came before the min

    uint32_t count() const { return countAndOrder & 0x7fffffffu; }
    bool maxFirst() const { return (countAndOrder & 0x80000000u) != 0; }
};

struct PyramidLevel
{
    int64_t widthNs = 0;
    int64_t firstIndex = 0; // buckets[i] covers [(firstIndex + i) · widthNs, (firstIndex + i + 1) · widthNs)
    std::vector<PyramidBucket> buckets;
};

struct SeriesPyramid
{
    int64_t intervalNs = 0;
    std::vector<PyramidLevel> levels; // finest first
    size_t bytes() const;
    // The coarsest level with widthNs ≤ displayWidthNs, or null when even the finest is wider.
    const PyramidLevel* levelFor(int64_t displayWidthNs) const;
};

// The typical interval of a series: (last - first) / (points - 1), at least 1 ns (1 s for fewer than 2 points).
int64_t typicalIntervalNs(int64_t points, int64_t firstNs, int64_t lastNs);

// The width of level 0 for a series of this typical interval.
int64_t pyramidBaseWidthNs(int64_t intervalNs);

// Builds the pyramid of points (in time order, missing ones flagged and skipped).
SeriesPyramid buildPyramid(const std::vector<store::Point>& points, int64_t intervalNs);

// One display bucket: the present values in it.
struct ReducedBucket
{
    int64_t count = 0;
    double minValue = 0;
    double maxValue = 0;
    double sum = 0;
    bool maxFirst = false;
    bool repeat = false; // a copy of the bucket before (a coarser grid spread over pixels): the same points
};

// The same, one decoded chunk at a time, for a series whose points lie in [firstNs, lastNs].
class PyramidBuilder
{
public:
    PyramidBuilder(int64_t intervalNs, int64_t firstNs, int64_t lastNs);
    void add(const std::vector<store::Point>& points);
    SeriesPyramid finish();

private:
    int64_t m_intervalNs;
    int m_shift = 0; // level 0 width = 2^m_shift ns
    int64_t m_firstIndex = 0;
    std::vector<ReducedBucket> m_acc;
    bool m_any = false;
};

// Display bucket i of `buckets` equal buckets over [fromNs, toNs] starts at bucketBoundary(fromNs, toNs, buckets, i)
// (integer arithmetic, as store::RunReader::readEnvelope).
int64_t bucketBoundary(int64_t fromNs, int64_t toNs, int buckets, int i);
// All buckets + 1 boundaries at once (the last is toNs + 1). Computed once per window and thread: the reductions of
// one fetch share them (a reference valid until this thread asks for two other grids).
const std::vector<int64_t>& bucketBoundaries(int64_t fromNs, int64_t toNs, int buckets);

// Exact reduction of points (time order) into display buckets.
std::vector<ReducedBucket> reducePoints(const std::vector<store::Point>& points, int64_t fromNs, int64_t toNs,
                                        int buckets);
// Points held elsewhere (decoded chunks), as parallel arrays; NaN = missing.
struct PointSpan
{
    const int64_t* ts = nullptr;
    const float* values = nullptr;
    size_t count = 0;
};
// The same reduction over spans that follow each other in time.
std::vector<ReducedBucket> reduceSpans(const std::vector<PointSpan>& spans, int64_t fromNs, int64_t toNs, int buckets);
// Reduction from one pyramid level (see the file comment for where a level bucket goes).
std::vector<ReducedBucket> reduceLevel(const PyramidLevel& level, int64_t fromNs, int64_t toNs, int buckets);

// Epoch seconds of a nanosecond time, without losing the sub-second part to the int64 → double conversion.
double toSeconds(int64_t ns);

// A line of at most two points per bucket: min and max in the order they came, one point when they are equal,
// one NaN for each run of empty buckets. The first value sits at a quarter of the bucket, the second at three
// quarters (a single one at the centre). Values × scale.
void appendBucketLine(const std::vector<ReducedBucket>& buckets, int64_t fromNs, int64_t toNs, double scale,
                      std::vector<double>& keys, std::vector<double>& values);
// The points themselves, NaN for missing points (one per run) and between present points more than
// 3 × intervalNs apart. Values × scale.
void appendRawLine(const std::vector<store::Point>& points, int64_t intervalNs, double scale, std::vector<double>& keys,
                   std::vector<double>& values);

} // namespace runlens::timeline
