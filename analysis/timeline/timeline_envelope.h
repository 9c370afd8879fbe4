#pragma once

// The envelope of many series of one metric (e.g. 32 GPUs' utilization) per display bucket: the lowest min,
// the median of the members' means and the highest max, and the members that stand out.
//
// A member is an outlier in a bucket when its min lies far below the median of the members' mins (or its max far
// above the median of their maxes): deviation > kOutlierK (6) × spread, with spread = max(1.4826 × MAD of those mins
// (maxes) across the members, kSpreadFloor × the value range of the members). The floor keeps flat, identical
// data free of outliers, and a dip that every member shares (a checkpoint) moves the median with it, so it is
// no outlier either. A member's score is its largest deviation / spread over the buckets.

#include "analysis/timeline/timeline_lod.h"
#include "analysis/timeline/timeline_source.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace runlens::timeline {

inline constexpr double kOutlierK = 6.0;
inline constexpr double kSpreadFloor = 0.02;
inline constexpr int kOutlierMinMembers = 3; // buckets where fewer members have data are not judged

struct EnvelopeInput
{
    int64_t fromNs = 0;
    int64_t toNs = 0;
    double scale = 1;
    std::vector<const std::vector<ReducedBucket>*> members;   // each: one bucket per pixel (same count)
    double valueLo = std::numeric_limits<double>::infinity(); // of the members' values, scaled
    double valueHi = -std::numeric_limits<double>::infinity();
};

struct EnvelopeResult
{
    TimelineEnvelope envelope;                       // metric and label left to the caller
    std::vector<std::pair<size_t, double>> outliers; // member index and score, strongest first, score > kOutlierK
};

EnvelopeResult computeEnvelope(const EnvelopeInput& input);

// The same in parts, for several threads: prepareEnvelope sizes the result, computeEnvelopePart fills buckets
// [firstBucket, endBucket) and raises scores (one per member, its own per part), finishEnvelope picks the outliers.
EnvelopeResult prepareEnvelope(const EnvelopeInput& input, size_t buckets); // each member has `buckets` buckets
void computeEnvelopePart(const EnvelopeInput& input, size_t firstBucket, size_t endBucket, TimelineEnvelope& envelope,
                         std::vector<double>& scores);
void finishEnvelope(EnvelopeResult& result, const std::vector<std::vector<double>>& partScores);

} // namespace runlens::timeline
