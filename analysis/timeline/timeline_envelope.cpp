#include "analysis/timeline/timeline_envelope.h"

#include <algorithm>
#include <cmath>

namespace runlens::timeline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMadToSigma = 1.4826;

// Median of v (reordered); v not empty.
double median(std::vector<double>& v)
{
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const double upper = v[mid];
    if (v.size() % 2 == 1) return upper;
    const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lower + upper) / 2;
}

// Median and median absolute deviation of sorted values: the distances from the median, walked outwards from the
// middle, come in increasing order from one side or the other (a merge, no second sort).
std::pair<double, double> medianAndMad(const std::vector<double>& sorted)
{
    const size_t n = sorted.size();
    const double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    std::ptrdiff_t left = static_cast<std::ptrdiff_t>((n - 1) / 2), right = static_cast<std::ptrdiff_t>(n / 2);
    if (left == right) { // odd: the median itself is the first distance (0)
        --left;
        ++right;
    }
    double prev = 0, last = 0;
    size_t taken = n % 2 ? 1 : 0;
    const size_t want = n / 2 + 1; // the (n/2)-th and (n/2 + 1)-th smallest distances (1-based) decide the median
    while (taken < want) {
        const double dl = left >= 0 ? med - sorted[static_cast<size_t>(left)] : INFINITY;
        const double dr = right < static_cast<std::ptrdiff_t>(n) ? sorted[static_cast<size_t>(right)] - med : INFINITY;
        prev = last;
        if (dl <= dr) {
            last = dl;
            --left;
        } else {
            last = dr;
            ++right;
        }
        ++taken;
    }
    if (n == 1) return {med, 0.0};
    return {med, n % 2 ? last : (prev + last) / 2};
}

} // namespace

EnvelopeResult prepareEnvelope(const EnvelopeInput& input)
{
    EnvelopeResult out;
    TimelineEnvelope& env = out.envelope;
    env.members = static_cast<int>(input.members.size());
    const size_t buckets = input.members.empty() ? 0 : input.members.front()->size();
    env.keys.assign(buckets, kNaN);
    env.lo.assign(buckets, kNaN);
    env.median.assign(buckets, kNaN);
    env.hi.assign(buckets, kNaN);
    return out;
}

void computeEnvelopePart(const EnvelopeInput& input, size_t firstBucket, size_t endBucket, TimelineEnvelope& env,
                         std::vector<double>& score)
{
    score.assign(input.members.size(), 0.0);
    if (input.members.empty()) return;
    const int n = static_cast<int>(input.members.front()->size());
    const double range = input.valueHi > input.valueLo ? input.valueHi - input.valueLo : 0.0;
    const double floor = std::max(kSpreadFloor * range, 1e-12);
    std::vector<size_t> present;
    std::vector<double> mins, maxs, means, sorted;
    const std::vector<int64_t>& bounds = bucketBoundaries(input.fromNs, input.toNs, n);
    for (size_t i = firstBucket; i < endBucket; ++i) {
        const int64_t start = bounds[i], end = bounds[i + 1];
        env.keys[i] = toSeconds(start + (end - start) / 2);
        present.clear();
        mins.clear();
        maxs.clear();
        means.clear();
        for (size_t m = 0; m < input.members.size(); ++m) {
            const ReducedBucket& b = (*input.members[m])[i];
            if (b.count == 0) continue;
            present.push_back(m);
            mins.push_back(b.minValue * input.scale);
            maxs.push_back(b.maxValue * input.scale);
            means.push_back(b.sum / static_cast<double>(b.count) * input.scale);
        }
        if (present.empty()) continue;
        const auto [minLo, minHi] = std::minmax_element(mins.begin(), mins.end());
        const auto [maxLo, maxHi] = std::minmax_element(maxs.begin(), maxs.end());
        env.lo[i] = *minLo;
        env.hi[i] = *maxHi;
        const bool judgeMins = *minHi - *minLo > kOutlierK * floor, judgeMaxs = *maxHi - *maxLo > kOutlierK * floor;
        env.median[i] = median(means);
        if (static_cast<int>(present.size()) < kOutlierMinMembers) continue;

        // Downward deviations of the mins, upward deviations of the maxes, in robust units. No deviation can exceed
        // the spread of the values, and the unit is at least the floor: most buckets need no median at all. Past
        // the median, only members further from it than kOutlierK floors can score above kOutlierK (the only
        // scores that count), so the MAD is computed only when there is such a candidate.
        auto judge = [&](const std::vector<double>& values, double sign, double extreme) {
            // The median is more than kOutlierK floors from the extreme value only if at least half the values
            // are: a count settles most buckets without selecting the median.
            const double t = extreme - sign * kOutlierK * floor;
            size_t beyond = 0;
            for (double v : values)
                beyond += sign * (t - v) > 0 ? 1 : 0;
            if (2 * beyond < values.size()) return;
            sorted.assign(values.begin(), values.end());
            const double med = median(sorted);
            bool candidate = false;
            for (double v : values)
                candidate = candidate || sign * (v - med) > kOutlierK * floor;
            if (!candidate) return;
            std::sort(sorted.begin(), sorted.end());
            const double mad = medianAndMad(sorted).second;
            const double spread = std::max(kMadToSigma * mad, floor);
            for (size_t k = 0; k < present.size(); ++k) {
                const double d = sign * (values[k] - med) / spread;
                score[present[k]] = std::max(score[present[k]], d);
            }
        };
        if (judgeMins) judge(mins, -1.0, *minLo);
        if (judgeMaxs) judge(maxs, 1.0, *maxHi);
    }
}

void finishEnvelope(EnvelopeResult& out, const std::vector<std::vector<double>>& partScores)
{
    out.outliers.clear();
    const size_t members = static_cast<size_t>(out.envelope.members);
    for (size_t m = 0; m < members; ++m) {
        double score = 0;
        for (const auto& part : partScores)
            if (m < part.size()) score = std::max(score, part[m]);
        if (score > kOutlierK) out.outliers.emplace_back(m, score);
    }
    std::stable_sort(out.outliers.begin(), out.outliers.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
}

EnvelopeResult computeEnvelope(const EnvelopeInput& input)
{
    EnvelopeResult out = prepareEnvelope(input);
    std::vector<std::vector<double>> scores(1);
    computeEnvelopePart(input, 0, out.envelope.keys.size(), out.envelope, scores[0]);
    finishEnvelope(out, scores);
    return out;
}

} // namespace runlens::timeline
