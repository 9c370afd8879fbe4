#include "analysis/timeline/timeline_envelope.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

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

EnvelopeResult prepareEnvelope(const EnvelopeInput& input, size_t buckets)
{
    EnvelopeResult out;
    TimelineEnvelope& env = out.envelope;
    env.members = static_cast<int>(input.members.size());
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
    const size_t members = input.members.size();
    const int n = static_cast<int>(input.members.front()->size());
    const double range = input.valueHi > input.valueLo ? input.valueHi - input.valueLo : 0.0;
    const double floor = std::max(kSpreadFloor * range, 1e-12);
    const std::vector<int64_t>& bounds = bucketBoundaries(input.fromNs, input.toNs, n);

    // Tiles of buckets: each member's buckets of the tile are read in one sequential pass into bucket-major rows
    // (the members' values of one bucket side by side), which a per-bucket loop over 32 separate arrays is not.
    constexpr size_t kTile = 128;
    const size_t tile = std::min(kTile, std::max<size_t>(endBucket - firstBucket, 1));
    std::vector<double> mins(tile * members), maxs(tile * members), means(tile * members), sorted;
    std::vector<uint32_t> present(tile * members);
    std::vector<uint32_t> count(tile);

    // Downward deviations of the mins, upward deviations of the maxes, in robust units. No deviation can exceed
    // the spread of the values, and the unit is at least the floor: most buckets need no median at all. Past
    // the median, only members further from it than kOutlierK floors can score above kOutlierK (the only
    // scores that count), so the MAD is computed only when there is such a candidate.
    auto judge = [&](const double* values, const uint32_t* who, size_t k, double sign, double extreme) {
        // The median is more than kOutlierK floors from the extreme value only if at least half the values
        // are: a count settles most buckets without selecting the median.
        const double t = extreme - sign * kOutlierK * floor;
        size_t beyond = 0;
        for (size_t j = 0; j < k; ++j)
            beyond += sign * (t - values[j]) > 0 ? 1 : 0;
        if (2 * beyond < k) return;
        sorted.assign(values, values + k);
        const double med = median(sorted);
        bool candidate = false;
        for (size_t j = 0; j < k; ++j)
            candidate = candidate || sign * (values[j] - med) > kOutlierK * floor;
        if (!candidate) return;
        std::sort(sorted.begin(), sorted.end());
        const double mad = medianAndMad(sorted).second;
        const double spread = std::max(kMadToSigma * mad, floor);
        for (size_t j = 0; j < k; ++j) {
            const double d = sign * (values[j] - med) / spread;
            score[who[j]] = std::max(score[who[j]], d);
        }
    };

    for (size_t t0 = firstBucket; t0 < endBucket; t0 += tile) {
        const size_t t1 = std::min(endBucket, t0 + tile);
        std::fill(count.begin(), count.end(), 0);
        for (size_t m = 0; m < members; ++m) {
            const ReducedBucket* b = input.members[m]->data();
            for (size_t i = t0; i < t1; ++i) {
                if (b[i].count == 0) continue;
                const size_t row = i - t0, at = row * members + count[row]++;
                present[at] = static_cast<uint32_t>(m);
                mins[at] = b[i].minValue * input.scale;
                maxs[at] = b[i].maxValue * input.scale;
                means[at] = b[i].sum / static_cast<double>(b[i].count) * input.scale;
            }
        }
        for (size_t i = t0; i < t1; ++i) {
            const size_t row = i - t0, k = count[row];
            env.keys[i] = toSeconds(bounds[i] + (bounds[i + 1] - bounds[i]) / 2);
            if (k == 0) continue;
            double* rowMins = mins.data() + row * members;
            double* rowMaxs = maxs.data() + row * members;
            const auto [minLo, minHi] = std::minmax_element(rowMins, rowMins + k);
            const auto [maxLo, maxHi] = std::minmax_element(rowMaxs, rowMaxs + k);
            env.lo[i] = *minLo;
            env.hi[i] = *maxHi;
            const bool judgeMins = *minHi - *minLo > kOutlierK * floor;
            const bool judgeMaxs = *maxHi - *maxLo > kOutlierK * floor;
            sorted.assign(means.data() + row * members, means.data() + row * members + k);
            env.median[i] = median(sorted);
            if (static_cast<int>(k) < kOutlierMinMembers) continue;
            const uint32_t* who = present.data() + row * members;
            if (judgeMins) judge(rowMins, who, k, -1.0, *minLo);
            if (judgeMaxs) judge(rowMaxs, who, k, 1.0, *maxHi);
        }
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
    EnvelopeResult out = prepareEnvelope(input, input.members.empty() ? 0 : input.members.front()->size());
    std::vector<std::vector<double>> scores(1);
    computeEnvelopePart(input, 0, out.envelope.keys.size(), out.envelope, scores[0]);
    finishEnvelope(out, scores);
    return out;
}

} // namespace runlens::timeline
