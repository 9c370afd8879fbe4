#pragma once

// Reducing one series to a pixel grid: per-series level-of-detail pyramids (aligned buckets, a factor of 4
// per level, built once from the decoded chunks) and the bucket and line reductions the timeline draws.
// Internal to TimelineSource.

#include "analysis/store/chunk_codec.h"
#include "analysis/store/error.h"
#include "analysis/store/run_reader.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace runlens::timeline {

// Min, max, sum and count of the present values per bucket; count 0 = no data.
struct BucketGrid
{
    int64_t fromNs = 0, toNs = 0; // inclusive
    int buckets = 0;
    std::vector<double> mn, mx, sum;
    std::vector<int64_t> count;
    // Bucket i is [starts[i], starts[i + 1]); starts[buckets] = toNs + 1. Shared by the grids of one request.
    std::shared_ptr<const std::vector<int64_t>> starts;

    BucketGrid() = default;
    BucketGrid(int64_t from, int64_t to, int n, std::shared_ptr<const std::vector<int64_t>> boundaries = nullptr);
    int bucketOf(int64_t ts) const; // clamped to the grid
    int64_t bucketStart(int i) const { return (*starts)[static_cast<size_t>(i)]; }
    void add(int i, double lo, double hi, double s, int64_t n);
};

// The boundaries of n equal buckets over [from, to] (integer arithmetic: epoch nanoseconds exceed double precision).
std::shared_ptr<const std::vector<int64_t>> bucketBoundaries(int64_t from, int64_t to, int n);

// What is kept in memory per series: all its points when it is small, else a pyramid.
struct SeriesLod
{
    struct Level
    {
        int64_t width = 0;      // ns, a power of two
        int64_t firstIndex = 0; // bucket i covers [(firstIndex + i) * width, ... + width)
        std::vector<float> mn, mx, mean;
        std::vector<uint32_t> count;
    };
    bool raw = false;
    std::vector<store::Point> points; // raw: every point, time order
    std::vector<Level> levels;        // finest first
    int64_t intervalNs = 0;           // typical distance between points
    size_t bytes() const;
};

inline constexpr int64_t kRawCachePoints = 16384; // series up to this size are kept whole

// Builds the level of detail of a series from its points (offset applied, time order).
std::shared_ptr<const SeriesLod> buildSeriesLod(std::vector<store::Point> points, int64_t intervalNs);

// Adds the series' values in [grid.fromNs, grid.toNs] to the grid from its pyramid, when a level at most one grid
// bucket wide exists; returns false when the store must be read instead (the window is finer than the pyramid).
bool reduceFromLod(const SeriesLod& lod, BucketGrid& grid);
// Adds points (only those inside the grid's window, missing ones skipped) to the grid.
void reducePoints(const std::vector<store::Point>& points, BucketGrid& grid);

// A line in drawing form from a grid: per bucket with data its min then max at the bucket centre (epoch seconds),
// one NaN where the data stops for longer than gapNs.
void gridToLine(const BucketGrid& grid, double scale, int64_t gapNs, std::vector<double>& keys,
                std::vector<double>& values);
// A line from points (inside [from, to]): a NaN at missing points and where consecutive points are more than
// gapNs apart.
void pointsToLine(const std::vector<store::Point>& points, int64_t from, int64_t to, double scale, int64_t gapNs,
                  std::vector<double>& keys, std::vector<double>& values);

} // namespace runlens::timeline
