#pragma once

// The envelope of many series of one metric (e.g. 32 GPUs' utilization) per display bucket: the lowest min,
// the median of the members' means and the highest max, and the members that stand out.
//
// Outliers (docs/timeline.md, "Outliers"): the window is cut into judging cells of kOutlierCellSeconds (60 s;
// a fifth of the window when the window is shorter than 5 min), aligned to multiples of their length in
// absolute time, so a pan over the same data judges the same cells. In each cell every member with data has a
// mean; its deviation from the members' median is measured in spreads, spread = max(1.4826 × MAD of the means,
// floor), floor = max(kSpreadFloorOfMedian × |median|, kSpreadFloorOfRange × the members' value range). A member
// is an outlier when it lies more than kOutlierK spreads from the median, on the same side, in at least
// kOutlierMinCells consecutive cells where it has data: a deviation that lasts. A one-sample spike or dip shows in
// the band but does not flag its GPU, and a dip that every member shares (a checkpoint) moves the median with it.
// Cells wider than a display bucket are judged on the same 60 s means at every zoom, so the flags do not change
// with the zoom level.

#include "analysis/timeline/timeline_lod.h"
#include "analysis/timeline/timeline_source.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace runlens::timeline {

inline constexpr double kOutlierK = 5.0;             // spreads from the median
inline constexpr int64_t kOutlierCellSeconds = 60;   // judging cell at zoom levels of 5 min and wider
inline constexpr int kOutlierCellsPerWindow = 5;     // below 5 min, cells of a fifth of the window
inline constexpr int kOutlierMinCells = 2;           // consecutive cells beyond kOutlierK: "lasts"
inline constexpr double kSpreadFloorOfMedian = 0.01; // spread at least 1 % of the median's magnitude
inline constexpr double kSpreadFloorOfRange = 0.005; // and 0.5 % of the members' value range
inline constexpr int kOutlierMinMembers = 3;         // cells where fewer members have data are not judged

struct EnvelopeInput
{
    int64_t fromNs = 0;
    int64_t toNs = 0;
    double scale = 1;
    std::vector<const std::vector<ReducedBucket>*> members;   // each: one bucket per pixel (same count)
    double valueLo = std::numeric_limits<double>::infinity(); // of the members' values, scaled
    double valueHi = -std::numeric_limits<double>::infinity();
};

struct EnvelopeOutlier
{
    size_t member = 0;
    double sigma = 0;     // mean deviation over its strongest stretch (largest sum), in spreads; < 0: below the median
    double deviation = 0; // the same in the members' (scaled) unit
    int64_t fromNs = 0;   // the stretch: start of its first cell, end of its last
    int64_t toNs = 0;
};

struct EnvelopeResult
{
    TimelineEnvelope envelope;             // metric and label left to the caller
    std::vector<EnvelopeOutlier> outliers; // strongest |sigma| first

    // Working state of the parts (see computeEnvelopePart).
    struct Beyond
    {
        uint32_t cell = 0, member = 0;
        float sigma = 0, deviation = 0;
    };
    std::vector<size_t> cellStart;           // first bucket of each judging cell, then the bucket count
    std::vector<uint8_t> cellState;          // cells × members: 0 no data or not judged, 1 within, 2 beyond
    std::vector<std::vector<Beyond>> beyond; // per part
};

EnvelopeResult computeEnvelope(const EnvelopeInput& input);

// The same in parts, for several threads: prepareEnvelope sizes the result and cuts the judging cells,
// computeEnvelopePart fills buckets [firstBucket, endBucket) and judges the cells that start there (writing only
// those cells and its own part's list), finishEnvelope picks the outliers.
EnvelopeResult prepareEnvelope(const EnvelopeInput& input, size_t buckets, size_t parts);
void computeEnvelopePart(const EnvelopeInput& input, size_t part, size_t firstBucket, size_t endBucket,
                         EnvelopeResult& result);
void finishEnvelope(const EnvelopeInput& input, EnvelopeResult& result);

// Judging cell length for a window (ns).
int64_t outlierCellNs(int64_t fromNs, int64_t toNs);

} // namespace runlens::timeline
