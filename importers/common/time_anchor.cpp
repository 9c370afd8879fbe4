#include "importers/common/time_anchor.h"

#include "analysis/store/run_reader.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <fmt/format.h>
#include <limits>

namespace runlens::importers::anchor {
namespace {

using Complex = std::complex<double>;

// In-place iterative radix-2 FFT; a.size() is a power of two.
void fft(std::vector<Complex>& a, bool inverse)
{
    const size_t n = a.size();
    for (size_t i = 1, j = 0; i < n; ++i) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) std::swap(a[i], a[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        const double angle = 2 * M_PI / static_cast<double>(len) * (inverse ? 1 : -1);
        const Complex wl(std::cos(angle), std::sin(angle));
        for (size_t i = 0; i < n; i += len) {
            Complex w(1);
            for (size_t k = 0; k < len / 2; ++k) {
                const Complex u = a[i + k], v = a[i + k + len / 2] * w;
                a[i + k] = u + v;
                a[i + k + len / 2] = u - v;
                w *= wl;
            }
        }
    }
    if (inverse)
        for (Complex& x : a)
            x /= static_cast<double>(n);
}

// c[k] = sum_j x[j] * y[j + k] for every k in [-(x.size() - 1), y.size() - 1], returned at index k + x.size() - 1.
class Correlator
{
public:
    Correlator(size_t nx, size_t ny) : m_nx(nx), m_ny(ny)
    {
        m_n = 1;
        while (m_n < nx + ny)
            m_n <<= 1;
    }
    std::vector<Complex> spectrum(const std::vector<double>& v) const
    {
        std::vector<Complex> a(m_n);
        std::copy(v.begin(), v.end(), a.begin());
        fft(a, false);
        return a;
    }
    std::vector<double> correlate(const std::vector<Complex>& fx, const std::vector<Complex>& fy) const
    {
        std::vector<Complex> prod(m_n);
        for (size_t i = 0; i < m_n; ++i)
            prod[i] = std::conj(fx[i]) * fy[i];
        fft(prod, true);
        std::vector<double> out(m_nx + m_ny - 1);
        for (size_t i = 0; i < out.size(); ++i) {
            const auto k = static_cast<int64_t>(i) - static_cast<int64_t>(m_nx - 1);
            out[i] = prod[static_cast<size_t>((k + static_cast<int64_t>(m_n)) % static_cast<int64_t>(m_n))].real();
        }
        return out;
    }

private:
    size_t m_nx, m_ny, m_n = 1;
};

// The GPUs' activity of one node as (time on the node's clock, 0..1) samples, all GPUs together.
struct GpuActivity
{
    std::vector<std::pair<int64_t, double>> samples; // sorted by time
    int64_t intervalNs = 0;                          // median spacing of one GPU's samples
    std::string signal;
};

// The median spacing of ascending times (0 for fewer than two).
int64_t medianSpacing(const std::vector<int64_t>& times)
{
    std::vector<int64_t> d;
    for (size_t i = 1; i < times.size(); ++i)
        if (times[i] > times[i - 1]) d.push_back(times[i] - times[i - 1]);
    if (d.empty()) return 0;
    std::nth_element(d.begin(), d.begin() + static_cast<long>(d.size() / 2), d.end());
    return d[d.size() / 2];
}

Expected<GpuActivity> readGpuActivity(store::RunDatabase& db, int64_t nodeId, double busyFraction)
{
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto nodes, reader.nodes());
    int64_t offset = 0;
    for (const store::NodeInfo& n : nodes)
        if (n.id == nodeId) offset = n.clockOffsetNs;
    auto series = reader.series();
    if (!series) return series.error();

    // The GPU series of the node, by source: the finest in time wins (nvidia-smi's 250 ms utilization places a
    // pause better than a 1 s GPM reading, whose samples can lag a whole interval), SM activity on a tie.
    struct Source
    {
        std::string metric, source;
        std::vector<std::pair<int64_t, double>> samples;
        std::vector<int64_t> devices;
        int64_t intervalNs = 0;
    };
    std::vector<Source> sources;
    // The node's own GPUs; a node without any (a trainer log filed under a folder of its own) is matched against
    // every node's, which step together in synchronous training.
    bool everyNode = std::none_of(series->begin(), series->end(), [&](const store::SeriesInfo& s) {
        return s.nodeId == nodeId && (s.metric == "gpu.sm_active" || s.metric == "gpu.util") &&
               s.points > s.missingPoints;
    });
    for (const store::SeriesInfo& s : *series) {
        if ((!everyNode && s.nodeId != nodeId) || (s.metric != "gpu.sm_active" && s.metric != "gpu.util") ||
            s.points == s.missingPoints)
            continue;
        RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readPoints(s.id, {}));
        std::vector<int64_t> times;
        std::vector<double> values;
        const double scale = s.metric == "gpu.util" ? 0.01 : 1.0;
        for (const store::Point& pt : points)
            if (!pt.missing && std::isfinite(pt.value)) {
                times.push_back(pt.tsNs - offset);
                values.push_back(std::clamp(pt.value * scale, 0.0, 1.0));
            }
        if (times.size() < 3) continue;
        auto it = std::find_if(sources.begin(), sources.end(),
                               [&](const Source& x) { return x.metric == s.metric && x.source == s.source; });
        if (it == sources.end()) it = sources.insert(sources.end(), Source{s.metric, s.source, {}, {}, 0});
        // A utilization or SM-activity sample is the mean over the period before it: centred on that period.
        const int64_t interval = medianSpacing(times);
        for (size_t k = 0; k < times.size(); ++k)
            it->samples.emplace_back(times[k] - interval / 2, values[k]);
        it->intervalNs = std::max(it->intervalNs, interval);
        if (std::find(it->devices.begin(), it->devices.end(), s.deviceId) == it->devices.end())
            it->devices.push_back(s.deviceId);
    }
    GpuActivity out;
    if (sources.empty()) return out;
    const auto best = std::min_element(sources.begin(), sources.end(), [](const Source& a, const Source& b) {
        if (a.intervalNs != b.intervalNs) return a.intervalNs < b.intervalNs;
        return a.metric == "gpu.sm_active" && b.metric != "gpu.sm_active";
    });
    out.samples = std::move(best->samples);
    out.intervalNs = best->intervalNs;
    out.signal =
        fmt::format("{} of {} GPU{}{} ({}, {:g} s)", best->metric == "gpu.util" ? "utilization" : "SM activity",
                    best->devices.size(), best->devices.size() == 1 ? "" : "s", everyNode ? " of every node" : "",
                    best->source, static_cast<double>(best->intervalNs) / 1e9);
    std::sort(out.samples.begin(), out.samples.end());
    // Busy, not how busy: the level while steps run differs by phase (small launch-bound kernels at SM activity
    // 0.2, large matrix products at 0.9), so activity counts fully from a fraction of the node's high level.
    std::vector<double> values;
    values.reserve(out.samples.size());
    for (const auto& [t, v] : out.samples)
        values.push_back(v);
    const size_t k95 = values.size() * 95 / 100;
    std::nth_element(values.begin(), values.begin() + static_cast<long>(k95), values.end());
    const double busy = busyFraction * values[k95];
    if (busy > 0)
        for (auto& [t, v] : out.samples)
            v = std::min(1.0, v / busy);
    return out;
}

// The activity on a grid of binNs from fromNs: the mean of the samples in each bin; a bin without samples holds
// the previous value for up to `hold`, then is missing (NaN).
std::vector<double> gridOf(const GpuActivity& a, int64_t fromNs, size_t bins, int64_t binNs)
{
    std::vector<double> sum(bins, 0.0);
    std::vector<int> count(bins, 0);
    for (const auto& [t, v] : a.samples) {
        if (t < fromNs) continue;
        const auto b = static_cast<size_t>((t - fromNs) / binNs);
        if (b >= bins) break;
        sum[b] += v;
        ++count[b];
    }
    const int64_t hold = std::max<int64_t>(3 * a.intervalNs, binNs);
    std::vector<double> out(bins, std::numeric_limits<double>::quiet_NaN());
    double last = 0;
    int64_t lastAt = std::numeric_limits<int64_t>::min() / 2;
    for (size_t b = 0; b < bins; ++b) {
        const int64_t t = fromNs + static_cast<int64_t>(b) * binNs;
        if (count[b] > 0) {
            out[b] = last = sum[b] / count[b];
            lastAt = t;
        } else if (t - lastAt <= hold) {
            out[b] = last;
        }
    }
    return out;
}

std::vector<double> logGrid(const LogActivity& log, int64_t fromNs, size_t bins, int64_t binNs)
{
    std::vector<double> out(bins, 0.0);
    for (const auto& [a, b] : log.active)
        for (int64_t t = std::max(a, fromNs) / binNs * binNs; t < b; t += binNs) {
            const int64_t mid = t + binNs / 2;
            if (mid < a || mid >= b || mid < fromNs) continue;
            const auto i = static_cast<size_t>((mid - fromNs) / binNs);
            if (i < bins) out[i] = 1.0;
        }
    return out;
}

struct Score
{
    double r = -1;
    double coverage = 0;
};

Score pearson(double n, double sl, double sg, double sg2, double slg, double sll, double activeValid, double active)
{
    Score s;
    s.coverage = active > 0 ? activeValid / active : 0;
    const double vl = n * sll - sl * sl, vg = n * sg2 - sg * sg;
    if (n < 3 || vl <= 0 || vg <= 1e-12 * n * n) return s;
    s.r = (n * slg - sl * sg) / std::sqrt(vl * vg);
    return s;
}

} // namespace

LogActivity activityFromSteps(const std::vector<int64_t>& relNs, const std::vector<int64_t>& steps,
                              int64_t resolutionNs, const Parameters& p)
{
    LogActivity out;
    out.resolutionNs = resolutionNs;
    if (relNs.empty()) return out;
    // Seconds per step of each interval (NaN where the step did not move), and their median over the neighbouring
    // intervals: the pace changes between phases of a run (batch size, accumulation), a pause stands out of its own.
    const size_t n = relNs.size();
    std::vector<double> perStep(n, std::numeric_limits<double>::quiet_NaN());
    for (size_t i = 1; i < n; ++i)
        if (steps[i] > steps[i - 1] && relNs[i] > relNs[i - 1])
            perStep[i] = static_cast<double>(relNs[i] - relNs[i - 1]) / static_cast<double>(steps[i] - steps[i - 1]);
    auto localMedian = [&](size_t i) {
        std::vector<double> around;
        const size_t from = i > p.paceWindow ? i - p.paceWindow : 1, to = std::min(n, i + p.paceWindow + 1);
        for (size_t j = from; j < to; ++j)
            if (std::isfinite(perStep[j])) around.push_back(perStep[j]);
        if (around.empty()) return 0.0;
        std::nth_element(around.begin(), around.begin() + static_cast<long>(around.size() / 2), around.end());
        return around[around.size() / 2];
    };
    const auto paced = [](double pace, int64_t k) {
        return static_cast<int64_t>(std::llround(pace * static_cast<double>(k)));
    };
    // Before the first record: its steps at the local pace (a fresh run's first logged interval).
    const double firstPace = localMedian(std::min<size_t>(1, n - 1));
    const int64_t lead = paced(firstPace, std::max<int64_t>(steps.front(), 1));
    int64_t from = relNs.front() - (relNs.front() > 0 ? std::min(lead, relNs.front()) : lead);
    out.fromNs = from;
    for (size_t i = 1; i < n; ++i) {
        if (!std::isfinite(perStep[i])) continue;
        const double pace = localMedian(i);
        if (pace > 0 && perStep[i] > p.pauseFactor * pace) {
            out.active.emplace_back(from, relNs[i - 1]);
            from = relNs[i] - paced(pace, steps[i] - steps[i - 1]);
            ++out.pauses;
        }
    }
    out.active.emplace_back(from, relNs.back());
    out.toNs = relNs.back();
    return out;
}

namespace {

// Start-up and teardown keep GPUs partly busy for a while beyond the first and last logged steps: those spans say
// nothing either way.
bool inEdgeGuard(const LogActivity& log, const Parameters& p, int64_t t)
{
    return (t < log.fromNs && t >= log.fromNs - p.edgeGuardNs) || (t >= log.toNs && t < log.toNs + p.edgeGuardNs);
}

// The coarse search: the log's steps against the GPU activity at every offset at once, on p.coarseBinNs bins.
struct CoarseMatch
{
    std::string why; // set when there is no match
    int64_t margin = 0, lFrom = 0, gFrom = 0;
    size_t lBins = 0;
    std::vector<double> r;  // per offset index: the correlation, -1 where the GPU data covers too little of the log
    std::vector<double> sl; // per offset index: the log's active bins with GPU data
    double active = 0;      // the log's active bins
    size_t best = 0;
    double nextBest = -1; // the best other local maximum, away from the best one's own peak

    // start(k) = gFrom - lFrom + k * bin for index i = k + lBins - 1.
    int64_t startOf(size_t i, int64_t bin) const
    {
        return gFrom - lFrom + (static_cast<int64_t>(i) - static_cast<int64_t>(lBins - 1)) * bin;
    }
};

CoarseMatch coarseMatch(const GpuActivity& gpu, const LogActivity& log, const Parameters& p)
{
    CoarseMatch m;
    // The log's window: its span with idle margins on both sides (training starts from idle and ends in it).
    const int64_t span = log.toNs - log.fromNs;
    m.margin = std::max(p.minMarginNs, span / 10);
    const int64_t bin = p.coarseBinNs;
    m.lFrom = (log.fromNs - m.margin) / bin * bin - (log.fromNs - m.margin < 0 ? bin : 0);
    m.lBins = static_cast<size_t>((log.toNs + m.margin - m.lFrom) / bin + 1);
    m.gFrom = gpu.samples.front().first / bin * bin;
    const auto gBins = static_cast<size_t>((gpu.samples.back().first - m.gFrom) / bin + 1);
    if (m.lBins + gBins > (size_t(1) << 24)) {
        m.why = "the log or the GPU data is too long to match at a 1 s grid";
        return m;
    }
    const std::vector<double> g = gridOf(gpu, m.gFrom, gBins, bin);
    const std::vector<double> l = logGrid(log, m.lFrom, m.lBins, bin);
    std::vector<double> gv(gBins), g2(gBins), valid(gBins), window(m.lBins, 1.0);
    for (size_t j = 0; j < m.lBins; ++j)
        if (inEdgeGuard(log, p, m.lFrom + static_cast<int64_t>(j) * bin + bin / 2)) window[j] = 0;
    for (size_t i = 0; i < gBins; ++i) {
        valid[i] = std::isnan(g[i]) ? 0.0 : 1.0;
        gv[i] = std::isnan(g[i]) ? 0.0 : g[i];
        g2[i] = gv[i] * gv[i];
    }
    for (double v : l)
        m.active += v;
    const Correlator c(m.lBins, gBins);
    const auto fl = c.spectrum(l), fw = c.spectrum(window);
    const auto fgv = c.spectrum(gv), fg2 = c.spectrum(g2), fv = c.spectrum(valid);
    const auto slg = c.correlate(fl, fgv), sg = c.correlate(fw, fgv), sg2 = c.correlate(fw, fg2),
               n = c.correlate(fw, fv);
    m.sl = c.correlate(fl, fv);
    m.r.assign(slg.size(), -1);
    for (size_t i = 0; i < m.r.size(); ++i) {
        const Score s = pearson(std::round(n[i]), m.sl[i], sg[i], sg2[i], slg[i], m.sl[i], m.sl[i], m.active);
        if (s.coverage >= p.minCoverage) m.r[i] = s.r;
    }
    for (size_t i = 1; i < m.r.size(); ++i)
        if (m.r[i] > m.r[m.best]) m.best = i;
    if (m.r[m.best] <= -1) {
        m.why = fmt::format("at no offset does the recorded GPU data cover {:.0f} % of the log's steps",
                            p.minCoverage * 100);
        return m;
    }
    const auto peakHalfWidth = static_cast<size_t>(std::max<int64_t>(3, p.fineRangeNs / bin));
    for (size_t i = 1; i + 1 < m.r.size(); ++i) {
        if (m.r[i] <= -1 || (i + peakHalfWidth >= m.best && i <= m.best + peakHalfWidth)) continue;
        if (m.r[i] >= m.r[i - 1] && m.r[i] >= m.r[i + 1]) m.nextBest = std::max(m.nextBest, m.r[i]);
    }
    return m;
}

// The fine search around the coarse best, directly on p.fineBinNs bins.
struct FineMatch
{
    double best = -1;
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min(); // equally good
    int64_t chosen = 0;
};

FineMatch refineMatch(const GpuActivity& gpu, const LogActivity& log, const Parameters& p, const CoarseMatch& m,
                      std::optional<int64_t> priorStartNs)
{
    const int64_t fine = p.fineBinNs, bin = p.coarseBinNs;
    const int64_t coarseStart = m.startOf(m.best, bin);
    const int64_t lf = m.lFrom / fine * fine;
    const auto lfBins = static_cast<size_t>((log.toNs + m.margin - lf) / fine + 1);
    const std::vector<double> lfine = logGrid(log, lf, lfBins, fine);
    const int64_t gfFrom = (coarseStart + lf - p.fineRangeNs - bin) / fine * fine;
    const auto gfBins =
        static_cast<size_t>((static_cast<int64_t>(lfBins) * fine + 2 * p.fineRangeNs + 2 * bin) / fine + 1);
    const std::vector<double> gfine = gridOf(gpu, gfFrom, gfBins, fine);
    std::vector<std::pair<int64_t, double>> refined; // (start, r)
    for (int64_t start = coarseStart - p.fineRangeNs; start <= coarseStart + p.fineRangeNs; start += fine) {
        double nn = 0, sL = 0, sG = 0, sG2 = 0, sLG = 0;
        for (size_t j = 0; j < lfBins; ++j) {
            if (inEdgeGuard(log, p, lf + static_cast<int64_t>(j) * fine + fine / 2)) continue;
            const int64_t gi = (lf + static_cast<int64_t>(j) * fine + start - gfFrom) / fine;
            if (gi < 0 || gi >= static_cast<int64_t>(gfBins)) continue;
            const double gval = gfine[static_cast<size_t>(gi)];
            if (std::isnan(gval)) continue;
            nn += 1;
            sL += lfine[j];
            sG += gval;
            sG2 += gval * gval;
            sLG += lfine[j] * gval;
        }
        const Score s = pearson(nn, sL, sG, sG2, sLG, sL, 0, 0);
        refined.emplace_back(start, s.r);
    }
    FineMatch f;
    for (const auto& [start, rr] : refined)
        f.best = std::max(f.best, rr);
    // Offsets that agree as well as the best (within a hair) are equally likely: the prior chooses among them,
    // else their middle.
    constexpr double kTie = 0.002;
    for (const auto& [start, rr] : refined)
        if (rr >= f.best - kTie) {
            f.lo = std::min(f.lo, start);
            f.hi = std::max(f.hi, start);
        }
    f.chosen = f.lo + (f.hi - f.lo) / 2;
    if (priorStartNs) {
        int64_t bestDist = std::numeric_limits<int64_t>::max();
        for (const auto& [start, rr] : refined)
            if (rr >= f.best - kTie && std::llabs(start - *priorStartNs) < bestDist) {
                bestDist = std::llabs(start - *priorStartNs);
                f.chosen = start;
            }
    }
    return f;
}

// The mean activity of the samples in [from, to), if any.
std::optional<double> meanOver(const GpuActivity& gpu, int64_t from, int64_t to)
{
    auto it = std::lower_bound(gpu.samples.begin(), gpu.samples.end(), std::make_pair(from, -1.0));
    double sum = 0;
    int count = 0;
    for (; it != gpu.samples.end() && it->first < to; ++it) {
        sum += it->second;
        ++count;
    }
    if (count == 0) return std::nullopt;
    return sum / count;
}

// What the log calls a pause must be idle on the GPUs: the mean activity inside each pause long enough to be seen
// at the metric resolution, against the mean over the log's active time.
void checkPausesIdle(const GpuActivity& gpu, const LogActivity& log, const Parameters& p, Placement& out)
{
    const int64_t chosen = out.startNs;
    double activeSum = 0, activeNs = 0;
    for (const auto& [a, b] : log.active)
        if (auto m = meanOver(gpu, chosen + a, chosen + b)) {
            activeSum += *m * static_cast<double>(b - a);
            activeNs += static_cast<double>(b - a);
        }
    const double activeMean = activeNs > 0 ? activeSum / activeNs : 0;
    const int64_t edge = gpu.intervalNs / 2 + log.resolutionNs / 2;
    const int64_t minPause = std::max<int64_t>(p.minCheckedPauseNs, gpu.intervalNs) + 2 * edge;
    for (size_t i = 1; i < log.active.size(); ++i) {
        const int64_t a = log.active[i - 1].second, b = log.active[i].first;
        if (b - a < minPause) continue;
        const auto m = meanOver(gpu, chosen + a + edge, chosen + b - edge);
        if (!m) continue;
        ++out.pausesChecked;
        if (*m <= p.pauseIdleRatio * activeMean) ++out.pausesIdle;
    }
}

// And the other way round: the GPUs' idle runs inside the log's span (long enough to be more than a slow step) must
// fall on the log's pauses.
void checkIdleRunsInPauses(const GpuActivity& gpu, const LogActivity& log, const Parameters& p, Placement& out)
{
    const int64_t chosen = out.startNs;
    const int64_t edge = gpu.intervalNs / 2 + log.resolutionNs / 2;
    std::vector<std::pair<int64_t, int64_t>> pauses; // absolute
    for (size_t i = 1; i < log.active.size(); ++i)
        pauses.emplace_back(chosen + log.active[i - 1].second, chosen + log.active[i].first);
    const int64_t from = chosen + log.fromNs + p.edgeGuardNs, to = chosen + log.toNs - p.edgeGuardNs;
    auto flush = [&](int64_t a, int64_t b) {
        if (b - a < std::max(p.minIdleRunNs, 2 * gpu.intervalNs) || a < from || b > to) return;
        ++out.idleRuns;
        const int64_t slack = edge + gpu.intervalNs;
        for (const auto& [pa, pb] : pauses)
            if (pa < b + slack && pb > a - slack) {
                ++out.idleRunsInPauses;
                return;
            }
    };
    std::optional<int64_t> runStart;
    int64_t lastIdle = 0;
    for (const auto& [t, v] : gpu.samples) {
        if (v < 0.5) {
            if (!runStart) runStart = t;
            lastIdle = t;
        } else if (runStart) {
            flush(*runStart, lastIdle + gpu.intervalNs);
            runStart.reset();
        }
    }
    if (runStart) flush(*runStart, lastIdle + gpu.intervalNs);
}

// The verdict and its one-line method and reason, from the correlations and the pause checks.
void decide(const LogActivity& log, const Parameters& p, Placement& out)
{
    const bool pausesAgree =
        (out.pausesChecked == 0 ||
         static_cast<double>(out.pausesIdle) >= p.minPauseAgreement * static_cast<double>(out.pausesChecked)) &&
        (out.idleRuns == 0 ||
         static_cast<double>(out.idleRunsInPauses) >= p.minPauseAgreement * static_cast<double>(out.idleRuns));
    const bool clear = out.nextBest < out.correlation - p.minMargin;
    out.anchored = out.correlation >= p.minCorrelation && clear && pausesAgree;
    out.method =
        fmt::format("matched its steps and {} pause{} against the {} (correlation {:.2f}, best other "
                    "offset {:.2f}; {} of {} long pauses idle on the GPUs, {} of {} idle runs in pauses)",
                    log.pauses, log.pauses == 1 ? "" : "s", out.signal, out.correlation, std::max(out.nextBest, 0.0),
                    out.pausesIdle, out.pausesChecked, out.idleRunsInPauses, out.idleRuns);
    if (out.anchored) return;
    out.why = !pausesAgree ? fmt::format("its pauses and the GPUs' idle times disagree at the best offset ({} of "
                                         "{} long pauses idle on the {}, {} of {} idle runs in pauses, "
                                         "correlation {:.2f})",
                                         out.pausesIdle, out.pausesChecked, out.signal, out.idleRunsInPauses,
                                         out.idleRuns, out.correlation)
              : out.correlation < p.minCorrelation
                  ? fmt::format("its steps match the {} at no offset (best correlation {:.2f}, {:.2f} needed)",
                                out.signal, out.correlation, p.minCorrelation)
                  : fmt::format("its steps match the {} about as well at two offsets (correlation {:.2f} and "
                                "{:.2f})",
                                out.signal, out.correlation, out.nextBest);
}

} // namespace

Expected<Placement> placeOnNode(store::RunDatabase& db, int64_t nodeId, const LogActivity& log,
                                std::optional<int64_t> priorStartNs, const Parameters& p)
{
    Placement out;
    if (log.active.empty() || log.toNs <= log.fromNs) {
        out.why = "the log has no span of steps to match";
        return out;
    }
    RUNLENS_ASSIGN_OR_RETURN(auto gpu, readGpuActivity(db, nodeId, p.busyFraction));
    out.signal = gpu.signal;
    if (gpu.samples.size() < 3) {
        out.why = "the run has no GPU utilization or SM activity recorded to match it against";
        return out;
    }
    const CoarseMatch coarse = coarseMatch(gpu, log, p);
    if (!coarse.why.empty()) {
        out.why = coarse.why;
        return out;
    }
    const FineMatch fine = refineMatch(gpu, log, p, coarse, priorStartNs);
    out.startNs = fine.chosen;
    // The spread of equally good offsets, plus how finely either side gives its times.
    out.uncertaintyNs = (fine.hi - fine.lo) / 2 + std::max({log.resolutionNs / 2, gpu.intervalNs / 2, p.fineBinNs});
    checkPausesIdle(gpu, log, p, out);
    checkIdleRunsInPauses(gpu, log, p, out);
    out.correlation = std::max(fine.best, coarse.r[coarse.best]);
    out.nextBest = coarse.nextBest;
    out.coverage = coarse.sl[coarse.best] / std::max(coarse.active, 1.0);
    decide(log, p, out);
    return out;
}

} // namespace runlens::importers::anchor
