#include "analysis/timeline/timeline_envelope.h"

#include "analysis/rules/episodes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

namespace runlens::timeline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMadToSigma = 1.4826;

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

int64_t outlierCellNs(int64_t fromNs, int64_t toNs)
{
    const int64_t window = std::max<int64_t>(toNs - fromNs, 1);
    return std::max<int64_t>(std::min(kOutlierCellSeconds * 1'000'000'000, window / kOutlierCellsPerWindow), 1);
}

EnvelopeResult prepareEnvelope(const EnvelopeInput& input, size_t buckets, size_t parts)
{
    EnvelopeResult out;
    TimelineEnvelope& env = out.envelope;
    env.members = static_cast<int>(input.members.size());
    env.keys.assign(buckets, kNaN);
    env.lo.assign(buckets, kNaN);
    env.median.assign(buckets, kNaN);
    env.hi.assign(buckets, kNaN);
    // Judging cells: consecutive buckets whose starts fall in the same multiple of the cell length.
    const int64_t cell = outlierCellNs(input.fromNs, input.toNs);
    const int n = static_cast<int>(buckets);
    int64_t lastId = 0;
    for (int i = 0; i < n; ++i) {
        const int64_t start = bucketBoundary(input.fromNs, input.toNs, n, i);
        const int64_t id = start / cell - (start % cell < 0 ? 1 : 0);
        if (i == 0 || id != lastId) out.cellStart.push_back(static_cast<size_t>(i));
        lastId = id;
    }
    out.cellStart.push_back(buckets);
    out.cellState.assign((out.cellStart.size() - 1) * input.members.size(), 0);
    out.beyond.resize(std::max<size_t>(parts, 1));
    return out;
}

void computeEnvelopePart(const EnvelopeInput& input, size_t part, size_t firstBucket, size_t endBucket,
                         EnvelopeResult& result)
{
    if (input.members.empty()) return;
    TimelineEnvelope& env = result.envelope;
    const size_t members = input.members.size();
    const int n = static_cast<int>(input.members.front()->size());
    const std::vector<int64_t>& bounds = bucketBoundaries(input.fromNs, input.toNs, n);

    // Tiles of buckets: each member's buckets of the tile are read in one sequential pass into bucket-major rows
    // (the members' values of one bucket side by side), which a per-bucket loop over 32 separate arrays is not.
    constexpr size_t kTile = 128;
    const size_t tile = std::min(kTile, std::max<size_t>(endBucket - firstBucket, 1));
    std::vector<double> mins(tile * members), maxs(tile * members), means(tile * members), sorted;
    std::vector<uint32_t> count(tile);
    for (size_t t0 = firstBucket; t0 < endBucket; t0 += tile) {
        const size_t t1 = std::min(endBucket, t0 + tile);
        std::fill(count.begin(), count.end(), 0);
        for (size_t m = 0; m < members; ++m) {
            const ReducedBucket* b = input.members[m]->data();
            for (size_t i = t0; i < t1; ++i) {
                if (b[i].count == 0) continue;
                const size_t row = i - t0, at = row * members + count[row]++;
                mins[at] = b[i].minValue * input.scale;
                maxs[at] = b[i].maxValue * input.scale;
                means[at] = b[i].sum / static_cast<double>(b[i].count) * input.scale;
            }
        }
        for (size_t i = t0; i < t1; ++i) {
            const size_t row = i - t0, k = count[row];
            env.keys[i] = toSeconds(bounds[i] + (bounds[i + 1] - bounds[i]) / 2);
            if (k == 0) continue;
            env.lo[i] = *std::min_element(mins.data() + row * members, mins.data() + row * members + k);
            env.hi[i] = *std::max_element(maxs.data() + row * members, maxs.data() + row * members + k);
            sorted.assign(means.data() + row * members, means.data() + row * members + k);
            env.median[i] = analysis::medianInPlace(sorted);
        }
    }

    // The judging cells that start in this part.
    const double range = input.valueHi > input.valueLo ? input.valueHi - input.valueLo : 0.0;
    const auto firstCell = static_cast<size_t>(
        std::lower_bound(result.cellStart.begin(), result.cellStart.end() - 1, firstBucket) - result.cellStart.begin());
    std::vector<double> cellMeans(members);
    std::vector<uint32_t> who;
    std::vector<double> values;
    for (size_t c = firstCell; c + 1 < result.cellStart.size() && result.cellStart[c] < endBucket; ++c) {
        who.clear();
        values.clear();
        for (size_t m = 0; m < members; ++m) {
            const ReducedBucket* b = input.members[m]->data();
            double sum = 0;
            int64_t cnt = 0;
            for (size_t i = result.cellStart[c]; i < result.cellStart[c + 1]; ++i) {
                if (b[i].repeat) continue; // the same data as the pixel before: counted once
                sum += b[i].sum;
                cnt += b[i].count;
            }
            if (cnt == 0) continue;
            who.push_back(static_cast<uint32_t>(m));
            values.push_back(sum / static_cast<double>(cnt) * input.scale);
        }
        const size_t k = values.size();
        if (static_cast<int>(k) < kOutlierMinMembers) continue;
        sorted.assign(values.begin(), values.end());
        const double med = analysis::medianInPlace(sorted);
        const double floor = std::max({kSpreadFloorOfMedian * std::abs(med), kSpreadFloorOfRange * range, 1e-12});
        uint8_t* state = result.cellState.data() + c * members;
        const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
        for (uint32_t m : who)
            state[m] = 1;
        // No deviation exceeds the spread of the values, and the unit is at least the floor: most cells need no
        // MAD at all.
        if (std::max(*hi - med, med - *lo) <= kOutlierK * floor) continue;
        std::sort(sorted.begin(), sorted.end());
        const double spread = std::max(kMadToSigma * medianAndMad(sorted).second, floor);
        for (size_t j = 0; j < k; ++j) {
            const double d = values[j] - med;
            if (std::abs(d) <= kOutlierK * spread) continue;
            state[who[j]] = 2;
            result.beyond[part].push_back(
                {static_cast<uint32_t>(c), who[j], static_cast<float>(d / spread), static_cast<float>(d)});
        }
    }
}

void finishEnvelope(const EnvelopeInput& input, EnvelopeResult& out)
{
    out.outliers.clear();
    const size_t members = input.members.size();
    if (members == 0 || out.cellStart.size() < 2) return;
    const size_t cells = out.cellStart.size() - 1;
    std::vector<EnvelopeResult::Beyond> all;
    for (const auto& p : out.beyond)
        all.insert(all.end(), p.begin(), p.end());
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return a.member != b.member ? a.member < b.member : a.cell < b.cell;
    });
    const int n = static_cast<int>(out.envelope.keys.size());
    auto cellBound = [&](size_t c) {
        return bucketBoundary(input.fromNs, input.toNs, n, static_cast<int>(out.cellStart[c]));
    };
    size_t next = 0;
    for (size_t m = 0; m < members; ++m) {
        struct Stretch
        {
            size_t first = 0, last = 0;
            int cells = 0;
            double sigma = 0, deviation = 0; // sums
        };
        std::optional<Stretch> run, best;
        auto close = [&] {
            if (run && run->cells >= kOutlierMinCells && (!best || std::abs(run->sigma) > std::abs(best->sigma)))
                best = run;
            run.reset();
        };
        for (size_t c = 0; c < cells; ++c) {
            const uint8_t state = out.cellState[c * members + m];
            if (state == 0) continue; // no data here: neither extends nor ends a stretch
            if (state == 1) {
                close();
                continue;
            }
            while (next < all.size() && (all[next].member < m || (all[next].member == m && all[next].cell < c)))
                ++next;
            const EnvelopeResult::Beyond& b = all[next];
            if (run && (run->sigma > 0) != (b.sigma > 0)) close();
            if (!run) run = Stretch{c, c, 0, 0, 0};
            run->last = c;
            ++run->cells;
            run->sigma += b.sigma;
            run->deviation += b.deviation;
        }
        close();
        if (!best) continue;
        out.outliers.push_back({m, best->sigma / best->cells, best->deviation / best->cells, cellBound(best->first),
                                cellBound(best->last + 1)});
    }
    std::stable_sort(out.outliers.begin(), out.outliers.end(),
                     [](const auto& a, const auto& b) { return std::abs(a.sigma) > std::abs(b.sigma); });
    out.cellState = {};
    out.beyond = {};
}

EnvelopeResult computeEnvelope(const EnvelopeInput& input)
{
    const size_t buckets = input.members.empty() ? 0 : input.members.front()->size();
    EnvelopeResult out = prepareEnvelope(input, buckets, 1);
    computeEnvelopePart(input, 0, 0, buckets, out);
    finishEnvelope(input, out);
    return out;
}

} // namespace runlens::timeline
