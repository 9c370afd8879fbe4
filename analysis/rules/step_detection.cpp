#include "analysis/rules/step_detection.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <system_error>
#include <thread>

namespace runlens::analysis {

namespace {

// Nodes searched for steps at once, a thread each (at most the cores; memory: an activity series each).
constexpr size_t kMaxStepThreads = 8;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// More steps than this between two logged lines is not a logging interval (a gap in the log, a restart, a counter
// that jumped): the line stands for its last step only.
constexpr int64_t kMaxStepsPerLine = 10'000;
// A line covers several steps when the step numbers advanced by at least this (rounded: 2 or more).
constexpr double kMinStepsPerLine = 1.5;
// Confidence of trainer-log steps: logged step times are the steps themselves; loss lines may each close several.
constexpr double kConfidenceStepTimes = 0.95;
constexpr double kConfidenceLossTimes = 0.7;
// A period is a lag of at least two slots (one slot apart is the signal's own smoothness), and repeats at least
// twice whatever steps.min_cycles says (one cycle has no interval).
constexpr double kMinLagSlots = 2;
constexpr double kMinCyclesFloor = 2;
// The activity's busy and low levels, for the contrast (steps.min_contrast) and the dips' depth.
constexpr double kHighQuantile = 0.9, kLowQuantile = 0.1;
// A regular step interval is within this share of the period (steps.min_regular counts them).
constexpr double kRegularTolerance = 0.25;
// A peak found may be up to this many periods (k = 4, 3, 2 are tried); a fraction of it is the period when its own
// peak is at least this share of the found one's.
constexpr int kMaxPeriodsInPeak = 4;
constexpr double kFractionPeakShare = 0.5;
// A later multiple (up to this one) refines the period when its peak moves it by at most this many slots.
constexpr int kMaxRefiningMultiple = 8;
constexpr double kMaxRefineShiftSlots = 0.5;
// A step starts where the activity crosses this share of the way from the dip (or the low level) to the busy level.
constexpr double kRiseShare = 0.5;
// Narrow dips win over the autocorrelation's period when theirs is below this share of it (a period well below:
// the autocorrelation found checkpoint stalls every N steps; about the same period stays the autocorrelation's).
constexpr double kFinerPeriodShare = 0.75;
// Utilization periodicity is less sure than SM activity's: a spinning communication kernel reads as busy.
constexpr double kUtilizationConfidence = 0.8;

// The minimum (or maximum) of the finite values in [i - before, i + after] for every i; NaN counts as absent.
std::vector<double> slidingExtreme(const std::vector<double>& v, size_t before, size_t after, bool minimum)
{
    const size_t n = v.size();
    std::vector<double> out(n, kNaN);
    std::deque<size_t> window; // indices of finite values, their values monotone
    auto worse = [&](double a, double b) { return minimum ? a >= b : a <= b; };
    size_t next = 0; // the next index to enter the window
    for (size_t i = 0; i < n; ++i) {
        const size_t last = std::min(n - 1, i + after);
        for (; next <= last; ++next) {
            if (!std::isfinite(v[next])) continue;
            while (!window.empty() && worse(v[window.back()], v[next]))
                window.pop_back();
            window.push_back(next);
        }
        while (!window.empty() && window.front() + before < i)
            window.pop_front();
        if (!window.empty()) out[i] = v[window.front()];
    }
    return out;
}

// The vertex of the parabola through (l-1, a), (l, b), (l+1, c), as an offset from l in (-0.5, 0.5).
double parabolicOffset(double a, double b, double c)
{
    const double den = a - 2 * b + c;
    if (!(std::abs(den) > 1e-12)) return 0;
    return std::clamp(0.5 * (a - c) / den, -0.5, 0.5);
}

// The cycles a period must repeat (steps.min_cycles, at least kMinCyclesFloor).
double cyclesNeeded(const StepParams& q)
{
    return std::max(kMinCyclesFloor, static_cast<double>(q.minCycles));
}

// Steps from logged step times: a point at each logged line, holding the mean step time since the line before. A
// trainer that logs every N steps (logging_steps, log_interval) covers N steps with one line, as its step numbers
// (train.step at the same moments) say. Each of those steps gets its start, the line's mean its length. Without step
// numbers a line is one step.
StepTimes fromStepTimes(const NodeMetrics& node, size_t minSteps)
{
    StepTimes out;
    out.node = node.node;
    std::map<int64_t, double> stepAt;
    for (const store::Point& pt : node.stepNumbers)
        stepAt[pt.tsNs] = pt.value;
    std::vector<double> seconds;
    std::optional<double> previousStep;
    for (const store::Point& pt : node.stepTimes) {
        if (!(pt.value > 0)) continue;
        const double stepNs = pt.value * 1e9;
        int64_t steps = 1;
        const auto number = stepAt.find(pt.tsNs);
        if (number != stepAt.end() && previousStep) {
            const double between = number->second - *previousStep;
            if (between >= kMinStepsPerLine && between <= static_cast<double>(kMaxStepsPerLine))
                steps = std::llround(between);
        }
        previousStep = number != stepAt.end() ? std::optional<double>(number->second) : std::nullopt;
        for (int64_t j = steps; j >= 1; --j) {
            seconds.push_back(pt.value);
            out.startsNs.push_back(pt.tsNs - std::llround(static_cast<double>(j) * stepNs));
        }
    }
    if (seconds.size() < minSteps) return {};
    std::sort(out.startsNs.begin(), out.startsNs.end());
    out.medianStepS = quantile(seconds, 0.5);
    out.source = "trainer_log";
    out.confidence = kConfidenceStepTimes;
    return out;
}

StepTimes fromTrainerLog(const NodeMetrics& node, const StepParams& q)
{
    const auto minSteps = static_cast<size_t>(std::max(2, q.minLogged));
    if (node.stepTimes.size() >= minSteps) return fromStepTimes(node, minSteps);
    if (node.losses.size() >= minSteps) {
        // Only the times the loss was logged: one step ends at each (a trainer that logs every N steps makes
        // these N-step spans, hence the lower confidence).
        StepTimes out;
        out.node = node.node;
        std::vector<double> intervals;
        for (size_t k = 1; k < node.losses.size(); ++k)
            intervals.push_back(static_cast<double>(node.losses[k].tsNs - node.losses[k - 1].tsNs) / 1e9);
        const double median = quantile(intervals, 0.5);
        if (!(median > 0)) return {};
        out.startsNs.push_back(node.losses.front().tsNs - std::llround(median * 1e9));
        for (size_t k = 0; k + 1 < node.losses.size(); ++k)
            out.startsNs.push_back(node.losses[k].tsNs);
        out.medianStepS = median;
        out.source = "trainer_log";
        out.confidence = kConfidenceLossTimes;
        return out;
    }
    return {};
}

// Steps whose starts repeat at the period (seconds): at least steps.min_cycles of them, and steps.min_regular of
// their intervals within a quarter of the period (a checkpoint stall makes one long interval); the median step is
// that of the regular intervals. Empty when not; *regularity is the share of regular intervals.
StepTimes keepRegular(StepTimes out, double periodS, const StepParams& q, double* regularity)
{
    if (static_cast<double>(out.startsNs.size()) < cyclesNeeded(q)) return {};
    std::vector<double> regular;
    for (size_t k = 1; k < out.startsNs.size(); ++k) {
        const double s = static_cast<double>(out.startsNs[k] - out.startsNs[k - 1]) / 1e9;
        if (std::abs(s - periodS) <= kRegularTolerance * periodS) regular.push_back(s);
    }
    *regularity = static_cast<double>(regular.size()) / static_cast<double>(out.startsNs.size() - 1);
    if (*regularity < q.minRegular) return {};
    out.medianStepS = quantile(regular, 0.5);
    return out;
}

// The autocorrelation of a window of the activity, mean-free (unknown slots count as the mean), unbiased per lag.
class Autocorrelation
{
public:
    explicit Autocorrelation(const std::vector<double>& w) : m_y(w.size(), 0.0)
    {
        double mean = 0;
        size_t present = 0;
        for (double v : w)
            if (std::isfinite(v)) {
                mean += v;
                ++present;
            }
        mean /= static_cast<double>(present);
        for (size_t i = 0; i < w.size(); ++i) {
            m_y[i] = std::isfinite(w[i]) ? w[i] - mean : 0.0;
            m_var += m_y[i] * m_y[i];
        }
        m_var /= static_cast<double>(w.size());
    }
    bool varies() const { return m_var > 0; }
    double at(size_t lag) const
    {
        const size_t len = m_y.size();
        if (lag >= len) return 0.0;
        double s = 0;
        for (size_t i = 0; i + lag < len; ++i)
            s += m_y[i] * m_y[i + lag];
        return s / static_cast<double>(len - lag) / m_var;
    }
    // r[lag] = at(lag) for every lag in [1, last]: four lags per pass over the series, each lag's sum taken in the
    // same order as at() takes it (the same values), the series read once for the four.
    void fill(std::vector<double>& r, size_t last) const
    {
        const size_t len = m_y.size();
        const double* y = m_y.data();
        size_t lag = 1;
        for (; lag + 3 <= last && lag + 3 < len; lag += 4) {
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            const size_t common = len - (lag + 3); // every i with i + lag + 3 < len
            for (size_t i = 0; i < common; ++i) {
                const double v = y[i];
                s0 += v * y[i + lag];
                s1 += v * y[i + lag + 1];
                s2 += v * y[i + lag + 2];
                s3 += v * y[i + lag + 3];
            }
            for (size_t i = common; i + lag + 2 < len; ++i)
                s2 += y[i] * y[i + lag + 2];
            for (size_t i = common; i + lag + 1 < len; ++i)
                s1 += y[i] * y[i + lag + 1];
            for (size_t i = common; i + lag < len; ++i)
                s0 += y[i] * y[i + lag];
            r[lag] = s0 / static_cast<double>(len - lag) / m_var;
            r[lag + 1] = s1 / static_cast<double>(len - lag - 1) / m_var;
            r[lag + 2] = s2 / static_cast<double>(len - lag - 2) / m_var;
            r[lag + 3] = s3 / static_cast<double>(len - lag - 3) / m_var;
        }
        for (; lag <= last; ++lag)
            r[lag] = at(lag);
    }

private:
    std::vector<double> m_y;
    double m_var = 0;
};

// The first clear peak of r over [minLag, maxLag]: a local maximum high enough, close to the highest (not one of its
// multiples), and rising out of a trough (not a wiggle on the slope of a slow signal); 0 when there is none.
size_t firstClearPeak(const std::vector<double>& r, size_t minLag, size_t maxLag, const StepParams& q)
{
    std::vector<size_t> peaks;
    for (size_t lag = minLag; lag <= maxLag; ++lag)
        if (r[lag] >= r[lag - 1] && r[lag] > r[lag + 1]) peaks.push_back(lag);
    double best = -1;
    for (size_t lag : peaks)
        best = std::max(best, r[lag]);
    double trough = 1;
    size_t scanned = 1;
    for (size_t k : peaks) {
        for (; scanned <= k; ++scanned)
            trough = std::min(trough, r[scanned]);
        if (r[k] >= q.minAcf && r[k] >= q.peakShare * best && r[k] - trough >= q.minProminence) return k;
    }
    return 0;
}

// The period (slots, fractional) at the peak at `lag`, and its autocorrelation.
struct Period
{
    double slots = 0, acf = 0;
};

// A period that is not a whole number of slots peaks lower at the slots either side of it than at a multiple that
// is: the peak found may be k periods. A fraction of it with a peak of its own is the period. Then a later multiple of
// the period pins it down more finely (the error divides by the multiple).
Period refinePeriod(const Autocorrelation& acf, const std::vector<double>& r, size_t lag, size_t minLag, size_t maxLag,
                    size_t len, const StepParams& q)
{
    Period p{static_cast<double>(lag) + parabolicOffset(r[lag - 1], r[lag], r[lag + 1]), r[lag]};
    for (int k = kMaxPeriodsInPeak; k >= 2; --k) {
        const double part = p.slots / k;
        if (part < static_cast<double>(minLag) - 0.5) continue; // a fraction that rounds to minLag still counts
        const auto from = static_cast<size_t>(std::max<double>(static_cast<double>(minLag), std::floor(part - 1)));
        const auto to = static_cast<size_t>(std::ceil(part + 1));
        double top = -2;
        for (size_t l = from; l <= to && l <= maxLag; ++l)
            if (r[l] >= r[l - 1] && r[l] >= r[l + 1]) top = std::max(top, r[l]);
        if (top >= q.minAcf && top >= kFractionPeakShare * p.acf) {
            p = {part, top};
            break;
        }
    }
    for (int k = kMaxRefiningMultiple; k >= 2; --k) {
        const double at = k * p.slots;
        if (at + k + 1 >= static_cast<double>(len) / 2) continue; // lags beyond half the window: too few pairs
        const auto from = static_cast<size_t>(std::max(1.0, std::floor(at - k / 2.0)));
        const auto to = static_cast<size_t>(std::ceil(at + k / 2.0));
        size_t top = from;
        double topR = -2;
        for (size_t l = from; l <= to; ++l)
            if (const double v = acf.at(l); v > topR) {
                topR = v;
                top = l;
            }
        if (top == from || top == to || topR < q.minAcf) continue;
        const double refined = (static_cast<double>(top) + parabolicOffset(acf.at(top - 1), topR, acf.at(top + 1))) / k;
        if (std::abs(refined - p.slots) <= kMaxRefineShiftSlots) {
            p.slots = refined;
            break;
        }
    }
    return p;
}

// The step starts in the busy part x[a..b] (w its copy) at the period: the recurring dips are slots lowest within
// half a period either side that the GPUs rise out of within a period (dips closer than half a period are one: the
// lowest, the later on ties, as a stall ends at its last low slot). Each step starts where the GPUs cross halfway out
// of the dip, placed within the slot by the slot's mean (a slot half busy started half way through).
std::vector<int64_t> dipStarts(const std::vector<double>& x, size_t a, const std::vector<double>& w, double period,
                               double high, double low, const TimeGrid& grid, const StepParams& q)
{
    const size_t len = w.size();
    const auto half = static_cast<size_t>(std::max(1.0, std::floor(period / 2)));
    const auto whole = static_cast<size_t>(std::max(1.0, std::ceil(period)));
    const std::vector<double> lowest = slidingExtreme(w, half, half, true);
    const std::vector<double> ahead = slidingExtreme(w, 0, whole, false);
    const double depth = q.minDipDepth * (high - low);
    std::vector<size_t> dips;
    for (size_t i = 0; i < len; ++i) {
        if (!std::isfinite(w[i]) || w[i] > lowest[i] || !(ahead[i] - w[i] >= depth)) continue;
        if (!dips.empty() && static_cast<double>(i - dips.back()) < period / 2) {
            if (w[i] <= w[dips.back()]) dips.back() = i;
            continue;
        }
        dips.push_back(i);
    }
    auto busyShare = [&](size_t i) {
        return std::isfinite(w[i]) ? std::clamp((w[i] - low) / (high - low), 0.0, 1.0) : 0.0;
    };
    std::vector<int64_t> starts;
    // The first step starts as the GPUs leave idle (the slot before the busy part is known and idle).
    if (a > 0 && std::isfinite(x[a - 1])) {
        const size_t end = dips.empty() ? len : dips.front();
        size_t j = 0;
        while (j < end && !(std::isfinite(w[j]) && w[j] >= low + kRiseShare * (high - low)))
            ++j;
        if (j < end) {
            const double before = j > 0 ? busyShare(j - 1) : 0.0;
            starts.push_back(grid.slotStart(a + j) +
                             std::llround(((1 - busyShare(j)) - before) * static_cast<double>(grid.stepNs)));
        }
    }
    for (size_t k = 0; k < dips.size(); ++k) {
        const size_t d = dips[k], end = k + 1 < dips.size() ? dips[k + 1] : len;
        const double level = w[d] + kRiseShare * (high - w[d]);
        size_t j = d + 1;
        while (j < end && !(std::isfinite(w[j]) && w[j] >= level))
            ++j;
        if (j >= end) continue;
        const double before = j - 1 > d ? busyShare(j - 1) : 0.0;
        const double offset = (1 - busyShare(j)) - before;
        const int64_t ts = grid.slotStart(a + j) + std::llround(offset * static_cast<double>(grid.stepNs));
        if (starts.empty() || ts > starts.back()) starts.push_back(ts);
    }
    return starts;
}

// The period from the autocorrelation of the busy part x[a..b] (a signal that spends a fair share of each step low),
// and the steps from its recurring dips.
StepTimes fromAutocorrelation(const std::vector<double>& x, size_t a, size_t b, const TimeGrid& grid,
                              const StepParams& q)
{
    const double stepS = static_cast<double>(grid.stepNs) / 1e9;
    const size_t len = b - a + 1;
    const std::vector<double> w(x.begin() + static_cast<std::ptrdiff_t>(a),
                                x.begin() + static_cast<std::ptrdiff_t>(b) + 1);
    const double high = quantile(w, kHighQuantile), low = quantile(w, kLowQuantile);
    if (!(high - low >= q.minContrast)) return {};
    const Autocorrelation acf(w);
    if (!acf.varies()) return {};
    const auto minLag = static_cast<size_t>(std::max(kMinLagSlots, std::ceil(q.minPeriodS / stepS)));
    const auto maxLag = static_cast<size_t>(
        std::min(std::floor(q.maxPeriodS / stepS), std::floor(static_cast<double>(len) / cyclesNeeded(q))));
    if (maxLag <= minLag) return {};
    std::vector<double> r(maxLag + 2, 1.0);
    acf.fill(r, maxLag + 1);
    const size_t lag = firstClearPeak(r, minLag, maxLag, q);
    if (lag == 0) return {};
    const Period period = refinePeriod(acf, r, lag, minLag, maxLag, len, q);
    StepTimes out;
    out.startsNs = dipStarts(x, a, w, period.slots, high, low, grid, q);
    double regularity = 0;
    out = keepRegular(std::move(out), period.slots * stepS, q, &regularity);
    if (out.startsNs.empty()) return {};
    out.confidence = std::clamp(period.acf, 0.0, 1.0) * regularity;
    return out;
}

// Narrow dips in a flat level, as the one-sample wait at each step's collective of a ZeRO-3 run at 1 s sampling:
// too few slots for the percentiles' contrast and too little variance for the autocorrelation (and split over two
// lags when the period is not a whole number of slots), so they are found by their own statistic. The level is the
// busy part's median, its noise the robust standard deviation (1.4826 MAD); a dip is a run of slots more than
// steps.dip_noise_z noise below the level that takes at least steps.min_dip_area (activity × slots) out of it. A dip
// is read as the rectangle as deep as its deepest slot with the run's area and centroid: the step after it starts at
// the rectangle's end (right for a dip split across two slots, for a wait of several slots and for a checkpoint
// stall). The period is the median interval between the starts; the dips must be narrow, their median width at most
// steps.max_dip_share of it (wider dips are the autocorrelation's, and random busy and idle stretches are wide).
StepTimes fromNarrowDips(const std::vector<double>& x, size_t a, size_t b, const TimeGrid& grid, const StepParams& q)
{
    const double stepS = static_cast<double>(grid.stepNs) / 1e9;
    const std::vector<double> w(x.begin() + static_cast<std::ptrdiff_t>(a),
                                x.begin() + static_cast<std::ptrdiff_t>(b) + 1);
    const double level = quantile(w, 0.5);
    std::vector<double> spread;
    spread.reserve(w.size());
    for (double v : w)
        if (std::isfinite(v)) spread.push_back(std::abs(v - level));
    const double noise = kMadToSigma * quantile(spread, 0.5);
    const double threshold = q.dipNoiseZ * noise, minArea = q.minDipArea;
    // From the idle slot before the busy part when it is known: the first step starts as the GPUs leave it.
    const size_t from = a > 0 && std::isfinite(x[a - 1]) ? a - 1 : a;
    auto low = [&](size_t i) { return std::isfinite(x[i]) && level - x[i] > threshold; };
    StepTimes out;
    std::vector<double> widths; // slots
    for (size_t i = from; i <= b;) {
        if (!low(i)) {
            ++i;
            continue;
        }
        size_t j = i;
        double area = 0, moment = 0, deepest = 0;
        for (; j <= b && low(j); ++j) {
            const double depth = level - x[j];
            area += depth;
            moment += depth * (static_cast<double>(j - i) + 0.5);
            deepest = std::max(deepest, depth);
        }
        // A dip the GPUs do not visibly rise out of (the end of the busy part, an unknown slot) starts no step.
        const bool risen = j <= b && std::isfinite(x[j]);
        if (risen && area >= minArea) {
            const double width = area / deepest;
            const double end = moment / area + width / 2; // slots from i
            widths.push_back(width);
            const int64_t ts = grid.slotStart(i) + std::llround(end * static_cast<double>(grid.stepNs));
            if (out.startsNs.empty() || ts > out.startsNs.back()) out.startsNs.push_back(ts);
        }
        i = j;
    }
    if (out.startsNs.size() < 2) return {};
    std::vector<double> intervals;
    for (size_t k = 1; k < out.startsNs.size(); ++k)
        intervals.push_back(static_cast<double>(out.startsNs[k] - out.startsNs[k - 1]) / 1e9);
    const double periodS = quantile(intervals, 0.5);
    const double busyS = static_cast<double>(b - a + 1) * stepS;
    if (!(periodS >= q.minPeriodS && periodS <= q.maxPeriodS) || busyS < cyclesNeeded(q) * periodS ||
        quantile(widths, 0.5) * stepS > q.maxDipShare * periodS)
        return {};
    double regularity = 0;
    out = keepRegular(std::move(out), periodS, q, &regularity);
    if (out.startsNs.empty()) return {};
    // Confidence: regular, and a dip at (nearly) every boundary the busy part has room for.
    const double found = std::min(1.0, static_cast<double>(out.startsNs.size()) * periodS / busyS);
    out.confidence = regularity * found;
    return out;
}

// The node's GPUs' mean SM activity per slot (haveSm), else their mean utilization as a fraction.
std::vector<double> nodeActivity(const RunMetrics& m, const std::vector<const GpuMetrics*>& gpus, bool haveSm)
{
    std::vector<double> activity(m.grid.size, kNaN);
    for (size_t i = 0; i < m.grid.size; ++i) {
        double sum = 0;
        int count = 0;
        for (const GpuMetrics* g : gpus) {
            const SlotValues& v = haveSm ? g->smActive : g->util;
            if (i < v.size() && std::isfinite(v[i])) {
                sum += haveSm ? v[i] : v[i] / 100;
                ++count;
            }
        }
        if (count > 0) activity[i] = sum / count;
    }
    return activity;
}

} // namespace

StepParams StepParams::from(const RuleParams& p)
{
    StepParams q;
    q.minLogged = p.getCount("steps.min_logged");
    q.idleLevel = p.get("steps.idle_level");
    q.minContrast = p.get("steps.min_contrast");
    q.minPeriodS = p.get("steps.min_period_s");
    q.maxPeriodS = p.get("steps.max_period_s");
    q.minCycles = p.getCount("steps.min_cycles");
    q.minAcf = p.get("steps.min_acf");
    q.peakShare = p.get("steps.peak_share");
    q.minProminence = p.get("steps.min_prominence");
    q.minDipDepth = p.get("steps.min_dip_depth");
    q.minRegular = p.get("steps.min_regular");
    q.dipNoiseZ = p.get("steps.dip_noise_z");
    q.minDipArea = p.get("steps.min_dip_area");
    q.maxDipShare = p.get("steps.max_dip_share");
    return q;
}

StepTimes stepTimesFromActivity(const std::vector<double>& x, const TimeGrid& grid, const RuleParams& p)
{
    return stepTimesFromActivity(x, grid, StepParams::from(p));
}

StepTimes stepTimesFromActivity(const std::vector<double>& x, const TimeGrid& grid, const StepParams& q)
{
    const size_t n = std::min(x.size(), grid.size);
    // The busy part of the run: from the first to the last slot above the idle level.
    size_t a = n, b = 0;
    for (size_t i = 0; i < n; ++i)
        if (std::isfinite(x[i]) && x[i] > q.idleLevel) {
            a = std::min(a, i);
            b = i;
        }
    if (a >= n) return {};
    // Both: regular checkpoint stalls every N steps of narrow dips give the autocorrelation their period, and the
    // steps are the finer one (a period well below it: the same period stays the autocorrelation's).
    StepTimes steps = fromAutocorrelation(x, a, b, grid, q);
    StepTimes dips = fromNarrowDips(x, a, b, grid, q);
    if (!dips.startsNs.empty() && (steps.startsNs.empty() || dips.medianStepS < kFinerPeriodShare * steps.medianStepS))
        return dips;
    return steps;
}

std::vector<StepTimes> computeStepTimes(const RunMetrics& m, const RuleParams& p)
{
    return computeStepTimes(m, StepParams::from(p));
}

std::vector<StepTimes> computeStepTimes(const RunMetrics& m, const StepParams& q)
{
    // Per node: its trainer log's steps, else the steps its GPUs' activity shows. The search in the activity is the
    // costly part and reads only that node's activity: it runs on every core, a batch of nodes at a time (memory:
    // one activity series per core).
    struct NodeSteps
    {
        StepTimes steps;
        std::vector<double> activity; // to search, when the log gave no steps
        bool haveSm = false;
    };
    std::vector<NodeSteps> found(m.nodes.size());
    const size_t batch = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, kMaxStepThreads);
    for (size_t first = 0; first < m.nodes.size(); first += batch) {
        const size_t last = std::min(m.nodes.size(), first + batch);
        std::vector<size_t> search;
        for (size_t k = first; k < last; ++k) {
            const NodeMetrics& node = m.nodes[k];
            NodeSteps& n = found[k];
            n.steps = fromTrainerLog(node, q);
            if (!n.steps.startsNs.empty()) continue;
            // The node's GPUs: their mean SM activity, else their mean utilization (as a fraction).
            std::vector<const GpuMetrics*> gpus;
            for (const GpuMetrics& g : m.gpus)
                if (g.node == node.node) {
                    gpus.push_back(&g);
                    n.haveSm = n.haveSm || std::any_of(g.smActive.begin(), g.smActive.end(),
                                                       [](double v) { return std::isfinite(v); });
                }
            if (gpus.empty()) continue;
            n.activity = nodeActivity(m, gpus, n.haveSm);
            search.push_back(k);
        }
        std::vector<std::exception_ptr> failed(search.size()); // rethrown here (out of memory)
        const auto run = [&](size_t i) {
            try {
                NodeSteps& n = found[search[i]];
                n.steps = stepTimesFromActivity(n.activity, m.grid, q);
                n.steps.node = m.nodes[search[i]].node;
                n.steps.source = n.haveSm ? "sm_periodicity" : "utilization_periodicity";
                if (!n.haveSm) n.steps.confidence *= kUtilizationConfidence;
                n.activity = {};
            } catch (...) {
                failed[i] = std::current_exception();
            }
        };
        std::vector<std::thread> threads;
        threads.reserve(search.size());
        for (size_t i = 1; i < search.size(); ++i) {
            try {
                threads.emplace_back(run, i);
            } catch (const std::system_error&) { // no thread to be had (a process limit): on this one
                run(i);
            }
        }
        if (!search.empty()) run(0);
        for (std::thread& t : threads)
            t.join();
        for (const std::exception_ptr& e : failed)
            if (e) std::rethrow_exception(e);
    }
    std::vector<StepTimes> out;
    for (NodeSteps& n : found)
        if (!n.steps.startsNs.empty()) out.push_back(std::move(n.steps));
    return out;
}

} // namespace runlens::analysis
