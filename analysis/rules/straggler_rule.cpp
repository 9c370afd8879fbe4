#include "analysis/rules/straggler_rule.h"

#include "analysis/rules/straggler_support.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace runlens::analysis {

namespace straggler {

double medianOf(std::vector<double> v)
{
    return quantile(std::move(v), 0.5);
}

// The median of the finite values except index `skip`.
double peersMedian(const std::vector<double>& v, size_t skip)
{
    std::vector<double> peers;
    for (size_t i = 0; i < v.size(); ++i)
        if (i != skip && std::isfinite(v[i])) peers.push_back(v[i]);
    if (peers.empty()) return kNaN;
    // The true median (the mean of the middle two for an even count): with two peers either is as likely late.
    return medianInPlace(peers);
}

PeersMedians::PeersMedians(const std::vector<double>& v)
{
    for (double x : v)
        if (std::isfinite(x)) m_sorted.push_back(x);
    std::sort(m_sorted.begin(), m_sorted.end());
}

double PeersMedians::without(double value) const
{
    // Leaving out the first sorted value equal to value (equal values are interchangeable); a value that is not
    // finite was never among them.
    const size_t left =
        std::isfinite(value)
            ? static_cast<size_t>(std::lower_bound(m_sorted.begin(), m_sorted.end(), value) - m_sorted.begin())
            : m_sorted.size();
    const size_t n = left < m_sorted.size() ? m_sorted.size() - 1 : m_sorted.size();
    if (n == 0) return kNaN;
    auto rest = [&](size_t t) { return t < left ? m_sorted[t] : m_sorted[t + 1]; };
    // As medianInPlace: the middle value, or the mean of the middle two for an even count.
    const double upper = rest(n / 2);
    return n % 2 == 1 ? upper : (rest(n / 2 - 1) + upper) / 2;
}

bool lateBeyondChance(size_t late, size_t judged, size_t othersLate, size_t othersJudged, size_t units,
                      double significance)
{
    if (late == 0 || late > judged) return false;
    // The peers' rate of late windows, with one late and one on time added (two ranks never late do not make the
    // rate zero, which any lateness would beat).
    const double p = (static_cast<double>(othersLate) + 1) / (static_cast<double>(othersJudged) + 2);
    // P(X >= late) for X ~ Binomial(judged, p), summed in logs.
    const auto n = static_cast<double>(judged);
    double tail = 0;
    for (size_t k = late; k <= judged; ++k) {
        const auto kd = static_cast<double>(k);
        tail += std::exp(std::lgamma(n + 1) - std::lgamma(kd + 1) - std::lgamma(n - kd + 1) + kd * std::log(p) +
                         (n - kd) * std::log1p(-p));
    }
    return tail <= significance / static_cast<double>(std::max<size_t>(units, 1));
}

} // namespace straggler

using straggler::kNaN;
using straggler::kQuartileToSigma;
using straggler::medianOf;
using straggler::peersMedian;
using straggler::PeersMedians;

namespace {

// A GPU's activity is scaled to its busy share between its low level, this low quantile (a run that waits one sample a
// step, as ZeRO-3 does at 1 s, has its waits in the lowest percents only), and its busy level, this high one.
constexpr double kLowLevelQuantile = 0.01, kBusyLevelQuantile = 0.9;
// A GPU computes in a slot at least this busy (of its busy share): its arrival is after the last such slot.
constexpr double kComputingShare = 0.5;
// The jitter scale is at least this (s): perfectly regular arrivals do not divide by zero.
constexpr double kMinScaleS = 1e-9;
// Confidence: the step detection's, times: nodes compared (their last GPU arrives) or GPUs of one node (one GPU's
// arrival is noisier); SM activity, or utilization alone (a spinning kernel reads as busy, blurring the arrival).
constexpr double kConfidenceNodes = 0.9, kConfidenceGpus = 0.8, kConfidenceUtilOnly = 0.7;

// One GPU's activity (SM activity, else utilization as a fraction) scaled to its busy share: 0 at its low level, 1 at
// its busy level; empty when the two are too close to tell compute from waiting.
std::vector<double> busyShares(const GpuMetrics& g, const StragglerParams& q)
{
    const bool haveSm = std::any_of(g.smActive.begin(), g.smActive.end(), [](double v) { return std::isfinite(v); });
    std::vector<double> v = (haveSm ? g.smActive : g.util).toVector();
    if (!haveSm)
        for (double& x : v)
            x /= 100;
    const double high = quantile(v, kBusyLevelQuantile), low = quantile(v, kLowLevelQuantile);
    if (!(high - low >= q.steps.minContrast)) return {};
    for (double& x : v)
        x = std::isfinite(x) ? std::clamp((x - low) / (high - low), 0.0, 1.0) : kNaN;
    return v;
}

// When the GPU left its last compute in the step [from, to): the end of the last slot at least half busy, moved back
// by the idle part of that slot and on by the busy part of the slot after it, in ns from the grid's start. NaN when
// it did not compute.
double arrival(const std::vector<double>& busy, const TimeGrid& grid, int64_t from, int64_t to)
{
    const size_t first = grid.slotOf(from), next = grid.slotOf(to);
    if (first >= grid.size || next >= grid.size || next <= first) return kNaN;
    auto share = [&](size_t i) { return std::isfinite(busy[i]) ? busy[i] : 0.0; };
    for (size_t i = next; i-- > first;) {
        if (!(std::isfinite(busy[i]) && busy[i] >= kComputingShare)) continue;
        const double after = i + 1 < next ? share(i + 1) : 0.0;
        const double step = static_cast<double>(grid.stepNs);
        return (static_cast<double>(i + 1) + after - (1 - busy[i])) * step; // from the grid's start: exact when shifted
    }
    return kNaN;
}

struct Unit
{
    std::string node;
    std::vector<size_t> gpus; // indexes into RunMetrics::gpus
};

// The run's timed steps: those of the most confident node (the ranks step together through the collective) no longer
// than straggler.max_step_factor median steps nor shorter than one over it.
std::vector<std::pair<int64_t, int64_t>> timedSteps(const StepTimes& ref, double stepS, const StragglerParams& q)
{
    std::vector<std::pair<int64_t, int64_t>> windows;
    for (size_t k = 0; k + 1 < ref.startsNs.size(); ++k) {
        const double s = static_cast<double>(ref.startsNs[k + 1] - ref.startsNs[k]) / 1e9;
        if (s <= q.maxStepFactor * stepS && s >= stepS / q.maxStepFactor)
            windows.emplace_back(ref.startsNs[k], ref.startsNs[k + 1]);
    }
    return windows;
}

// The arrivals per unit and step, and each unit's lag behind its peers' median arrival (s).
struct Lags
{
    std::vector<Unit> units;
    bool nodeUnits = false, haveSm = true;
    std::vector<std::vector<double>> gpuArrival; // [gpu][step]
    std::vector<std::vector<double>> arrive;     // [step][unit]
    std::vector<std::vector<double>> lag;        // [unit][step]
};

Lags lagsOf(const RunMetrics& m, const std::vector<std::pair<int64_t, int64_t>>& windows, const StragglerParams& q)
{
    Lags out;
    out.gpuArrival.resize(m.gpus.size());
    std::map<std::string, std::vector<size_t>> byNode;
    for (size_t g = 0; g < m.gpus.size(); ++g) {
        const std::vector<double> busy = busyShares(m.gpus[g], q);
        if (busy.empty()) continue;
        out.haveSm = out.haveSm && !m.gpus[g].smActive.empty();
        out.gpuArrival[g].resize(windows.size());
        for (size_t k = 0; k < windows.size(); ++k)
            out.gpuArrival[g][k] = arrival(busy, m.grid, windows[k].first, windows[k].second);
        byNode[m.gpus[g].node].push_back(g);
    }
    // The units: nodes when several have GPUs to time (a node arrives with its last GPU), else the GPUs of the one
    // node.
    if (byNode.size() >= 2) {
        for (const auto& [node, gpus] : byNode)
            out.units.push_back({node, gpus});
    } else if (byNode.size() == 1 && byNode.begin()->second.size() >= 2) {
        for (size_t g : byNode.begin()->second)
            out.units.push_back({m.gpus[g].node, {g}});
    }
    out.nodeUnits = byNode.size() >= 2;
    const size_t nu = out.units.size(), ns = windows.size();
    out.arrive.assign(ns, std::vector<double>(nu, kNaN));
    out.lag.assign(nu, std::vector<double>(ns, kNaN));
    for (size_t k = 0; k < ns; ++k)
        for (size_t u = 0; u < nu; ++u)
            for (size_t g : out.units[u].gpus)
                if (std::isfinite(out.gpuArrival[g][k]) && !(out.gpuArrival[g][k] <= out.arrive[k][u]))
                    out.arrive[k][u] = out.gpuArrival[g][k];
    for (size_t k = 0; k < ns; ++k) {
        const PeersMedians peers(out.arrive[k]);
        for (size_t u = 0; u < nu; ++u)
            if (std::isfinite(out.arrive[k][u]))
                out.lag[u][k] = (out.arrive[k][u] - peers.without(out.arrive[k][u])) / 1e9;
    }
    return out;
}

// The jitter scale σ: the smaller of two MAD-consistent scales (each unit's lags about their own median, pooled; the
// lower quartile of all |lags|), at least straggler.scale_floor × the step time; NaN without lags.
double jitterScale(const std::vector<std::vector<double>>& lag, double stepS, const StragglerParams& q)
{
    std::vector<double> aboutOwn, absolute;
    for (const std::vector<double>& unit : lag) {
        const double own = medianOf(unit);
        for (double l : unit)
            if (std::isfinite(l)) {
                aboutOwn.push_back(std::abs(l - own));
                absolute.push_back(std::abs(l));
            }
    }
    if (absolute.empty()) return kNaN;
    return std::max({std::min(kMadToSigma * medianOf(aboutOwn), kQuartileToSigma * quantile(absolute, 0.25)),
                     q.scaleFloor * stepS, kMinScaleS});
}

// A unit's late steps (lag ≥ straggler.z σ) and their share of its timed steps.
struct Late
{
    size_t steps = 0;
    std::vector<size_t> late;
    double share = 0;
};

// The finding of a straggling unit: its late steps (touching ones joined), its GPUs that are late themselves (against
// the median of the other units in the late steps), the summed lag as its saving.
Finding unitFinding(const RunMetrics& m, const StepTimes& ref, const std::vector<std::pair<int64_t, int64_t>>& windows,
                    const Lags& lags, size_t u, const Late& l, double peerShare, double sigma, double stepS,
                    const StragglerParams& q)
{
    std::vector<double> lagsOfLate, zs;
    double lagSum = 0;
    for (size_t k : l.late) {
        lagsOfLate.push_back(lags.lag[u][k]);
        zs.push_back(lags.lag[u][k] / sigma);
        lagSum += lags.lag[u][k];
    }
    const double medianLag = medianOf(lagsOfLate), wall = m.grid.seconds();
    const bool persistent = l.share >= q.persistent;
    const Unit& unit = lags.units[u];
    Finding f;
    f.rule = "STRAGGLER";
    f.nodes = {unit.node};
    QJsonArray gpus;
    for (size_t g : unit.gpus) {
        std::vector<double> own;
        for (size_t k : l.late)
            if (std::isfinite(lags.gpuArrival[g][k]))
                own.push_back((lags.gpuArrival[g][k] - peersMedian(lags.arrive[k], u)) / 1e9);
        const double gl = medianOf(own);
        const std::string name = fmt::format("{}:gpu{}", m.gpus[g].node, m.gpus[g].gpu);
        QJsonObject o{{QStringLiteral("gpu"), QString::fromStdString(name)}};
        if (std::isfinite(gl)) o.insert(QStringLiteral("median_lag_s"), gl);
        gpus.append(o);
        if (std::isfinite(gl) && gl >= q.minLag * stepS) f.gpus.push_back(name);
    }
    for (size_t k : l.late) {
        if (!f.episodes.empty() && f.episodes.back().endNs == windows[k].first)
            f.episodes.back().endNs = windows[k].second;
        else
            f.episodes.push_back({windows[k].first, windows[k].second});
    }
    f.savingS = lagSum;
    f.impact = wall > 0 ? lagSum / wall : 0;
    f.severity = q.severity.of(f.impact);
    f.confidence = std::clamp(ref.confidence, 0.0, 1.0) * (lags.nodeUnits ? kConfidenceNodes : kConfidenceGpus) *
                   (lags.haveSm ? 1.0 : kConfidenceUtilOnly);
    const std::string who = lags.nodeUnits ? unit.node : fmt::format("{}:gpu{}", unit.node, m.gpus[unit.gpus[0]].gpu);
    f.title = fmt::format("Straggler: {} reaches the step's collective {:.2f} s late ({:.0f} % of a {:.2f} s step) in "
                          "{:.0f} % of the steps ({})",
                          who, medianLag, 100 * medianLag / stepS, stepS, 100 * l.share,
                          persistent ? "persistent" : "intermittent");
    f.evidence = QJsonObject{
        {QStringLiteral("unit"), QString::fromStdString(who)},
        {QStringLiteral("unit_kind"), lags.nodeUnits ? QStringLiteral("node") : QStringLiteral("gpu")},
        {QStringLiteral("type"), persistent ? QStringLiteral("persistent") : QStringLiteral("intermittent")},
        {QStringLiteral("share_of_steps"), l.share},
        {QStringLiteral("steps"), static_cast<qint64>(l.steps)},
        {QStringLiteral("late_steps"), static_cast<qint64>(l.late.size())},
        {QStringLiteral("peers_median_share"), peerShare},
        {QStringLiteral("median_lag_s"), medianLag},
        {QStringLiteral("median_lag_fraction"), medianLag / stepS},
        {QStringLiteral("median_z"), medianOf(zs)},
        {QStringLiteral("scale_s"), sigma},
        {QStringLiteral("median_step_s"), stepS},
        {QStringLiteral("step_source"), QString::fromStdString(ref.source)},
        {QStringLiteral("gpus"), gpus},
        {QStringLiteral("total_lag_s"), lagSum}};
    f.recommendation = fmt::format(
        "Every rank waits for {} at each step's collective. Check its GPUs for throttling (THROTTLE findings; "
        "nvidia-smi -q -d PERFORMANCE,CLOCK,TEMPERATURE), its data loading (per-rank DataLoader wait, uneven shards "
        "or sequence lengths: pack or bucket by length), and the parallel layout (uneven pipeline stages: balance "
        "the layers per stage; a TP group split across nodes); if it stays slow, reboot or replace the node, or "
        "leave it out of the job.",
        who);
    return f;
}

} // namespace

StragglerParams StragglerParams::from(const RuleParams& p)
{
    StragglerParams q;
    q.common = CommonParams::from(p);
    q.steps = StepParams::from(p);
    q.maxStepFactor = p.get("straggler.max_step_factor");
    q.minStepSamples = p.getCount("straggler.min_step_samples");
    q.minSteps = p.getCount("straggler.min_steps");
    q.scaleFloor = p.get("straggler.scale_floor");
    q.z = p.get("straggler.z");
    q.persistent = p.get("straggler.persistent");
    q.intermittent = p.get("straggler.intermittent");
    q.dominance = p.get("straggler.dominance");
    q.significance = p.get("straggler.significance");
    q.minLag = p.get("straggler.min_lag");
    q.severity = SeverityCuts::from(p, "straggler");
    q.windowSamples = p.getCount("straggler.window_samples");
    q.maxReads = p.getCount("straggler.max_reads");
    q.maxSamples = p.getCount("straggler.max_samples");
    q.collectiveFrameShare = p.get("straggler.collective_frame_share");
    q.traceGapS = p.get("straggler.trace_gap_s");
    q.traceMinLag = p.get("straggler.trace_min_lag");
    q.traceMinSteps = p.getCount("straggler.trace_min_steps");
    q.traceShare = p.get("straggler.trace_share");
    q.topFrameShare = p.get("straggler.top_frame_share");
    q.symptomOverlap = p.get("straggler.symptom_overlap");
    q.symptomMinS = p.get("straggler.symptom_min_s");
    return q;
}

std::vector<Finding> stragglerRule(const RunMetrics& m, const std::vector<StepTimes>& steps, const RuleParams& params)
{
    const StragglerParams q = StragglerParams::from(params);
    std::vector<Finding> out;
    // The run's steps: those of the most confident node (the ranks step together through the collective).
    const StepTimes* ref = nullptr;
    for (const StepTimes& s : steps)
        if (!s.startsNs.empty() && (!ref || s.confidence > ref->confidence)) ref = &s;
    if (!ref || !(ref->medianStepS > 0)) return out;
    const double stepS = ref->medianStepS, gridS = static_cast<double>(m.grid.stepNs) / 1e9;
    if (stepS < q.minStepSamples * gridS) return out; // too coarse to time an arrival
    const std::vector<std::pair<int64_t, int64_t>> windows = timedSteps(*ref, stepS, q);
    if (static_cast<double>(windows.size()) < q.minSteps) return out;
    const Lags lags = lagsOf(m, windows, q);
    if (lags.units.size() < 2) return out;
    const double sigma = jitterScale(lags.lag, stepS, q);
    if (!std::isfinite(sigma)) return out;
    const size_t nu = lags.units.size();
    std::vector<Late> late(nu);
    for (size_t u = 0; u < nu; ++u) {
        for (size_t k = 0; k < windows.size(); ++k) {
            if (!std::isfinite(lags.lag[u][k])) continue;
            ++late[u].steps;
            if (lags.lag[u][k] > 0 && lags.lag[u][k] / sigma >= q.z) late[u].late.push_back(k);
        }
        late[u].share =
            late[u].steps ? static_cast<double>(late[u].late.size()) / static_cast<double>(late[u].steps) : 0;
    }
    // A straggler: late often enough, far more often than its median peer (a different unit late every step is
    // jitter), by enough of the step.
    size_t allLate = 0, allSteps = 0;
    for (const Late& l : late) {
        allLate += l.late.size();
        allSteps += l.steps;
    }
    for (size_t u = 0; u < nu; ++u) {
        const Late& l = late[u];
        if (l.share < q.intermittent || l.late.empty()) continue;
        if (!straggler::lateBeyondChance(l.late.size(), l.steps, allLate - l.late.size(), allSteps - l.steps, nu,
                                         q.significance))
            continue;
        std::vector<double> others;
        for (size_t v = 0; v < nu; ++v)
            if (v != u) others.push_back(late[v].share);
        const double peerShare = medianOf(others);
        if (l.share < q.dominance * peerShare) continue;
        std::vector<double> lateLags;
        lateLags.reserve(l.late.size());
        for (size_t k : l.late)
            lateLags.push_back(lags.lag[u][k]);
        if (medianOf(lateLags) < q.minLag * stepS) continue;
        out.push_back(unitFinding(m, *ref, windows, lags, u, l, peerShare, sigma, stepS, q));
    }
    return out;
}

} // namespace runlens::analysis
