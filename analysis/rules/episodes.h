#pragma once

// Metrics on one time grid, and episodes: the shared vocabulary of the rules. A grid is equal slots from a start;
// a series resampled onto it holds the mean of its present samples per slot (NaN where it has none). An episode
// is a maximal run of flagged slots, joined across gaps of at most `maxGap` unflagged or unknown slots.

#include "analysis/store/chunk_codec.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace runlens::analysis {

struct TimeGrid
{
    int64_t startNs = 0;
    int64_t stepNs = 1'000'000'000;
    size_t size = 0;
    int64_t slotStart(size_t i) const { return startNs + static_cast<int64_t>(i) * stepNs; }
    // The slot holding ts, or size when outside.
    size_t slotOf(int64_t ts) const;
    // The slots overlapping [fromNs, toNs), as [first, end): from the slot holding fromNs (the first slot when
    // fromNs is before the grid) to the first slot starting at or after toNs.
    std::pair<size_t, size_t> slotsOverlapping(int64_t fromNs, int64_t toNs) const;
    double seconds() const { return static_cast<double>(size) * static_cast<double>(stepNs) / 1e9; }
    // Evidence slices of about `seconds` each: how many slots one holds (at least 1), and how many slices.
    size_t slotsPerSlice(double seconds) const;
    size_t sliceCount(double seconds) const;
};

// Adds the points' present values into per-slot sums and counts (several series of one metric and device add up).
void accumulate(const std::vector<store::Point>& points, const TimeGrid& grid, std::vector<double>& sum,
                std::vector<int>& count);
// sum / count per slot, NaN where count is 0, in place: sum becomes the means.
void meansInPlace(std::vector<double>& sum, const std::vector<int>& count);

struct Episode
{
    size_t first = 0, last = 0;     // slots, inclusive
    int64_t startNs = 0, endNs = 0; // [start of the first slot, end of the last)
    double seconds() const { return static_cast<double>(endNs - startNs) / 1e9; }
};

std::vector<Episode> episodesOf(const std::vector<uint8_t>& flagged, const TimeGrid& grid, int maxGap);

// The q-quantile (0..1) of the finite values, NaN when there are none.
double quantile(std::vector<double> values, double q);

// quantile(values, 0.5) of finite values with one of them left out, for any of them in O(1) once made in O(n):
// the lower median takes the same slot of the sorted values with one left out, so only the two values around it
// and the count matter (equal values are interchangeable).
class MedianLeavingOneOut
{
public:
    MedianLeavingOneOut() = default;
    // Drops the values that are not finite; values is reordered.
    explicit MedianLeavingOneOut(std::vector<double>& values);
    // quantile(values, 0.5): NaN without values.
    double all() const;
    // quantile(values, 0.5) with one value equal to v left out (v must be one of the finite values): NaN with one.
    double without(double v) const;

private:
    size_t m_count = 0;
    // With two or more values, the k-th and (k+1)-th smallest for k = (count - 2) / 2; with one, lower is it.
    double m_lower = std::numeric_limits<double>::quiet_NaN(), m_upper = std::numeric_limits<double>::quiet_NaN();
};

// The median of values, which must not be empty: the middle value, or the mean of the middle two for an even count.
// values is reordered.
double medianInPlace(std::vector<double>& values);

// The median absolute deviation of normal noise times this is its standard deviation (a robust σ).
inline constexpr double kMadToSigma = 1.4826;

// The mean of the finite values in [first, end), NaN when there are none (of a vector or a grid series).
template <typename Values> double meanOf(const Values& values, size_t first, size_t end)
{
    double sum = 0;
    int n = 0;
    for (size_t i = first; i < end && i < values.size(); ++i)
        if (const double v = values[i]; std::isfinite(v)) {
            sum += v;
            ++n;
        }
    return n ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

} // namespace runlens::analysis
