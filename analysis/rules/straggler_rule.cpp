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
    std::sort(peers.begin(), peers.end());
    const size_t n = peers.size();
    return n % 2 ? peers[n / 2] : 0.5 * (peers[n / 2 - 1] + peers[n / 2]);
}

} // namespace straggler

using straggler::kMadToSigma;
using straggler::kNaN;
using straggler::kQuartileToSigma;
using straggler::medianOf;
using straggler::peersMedian;

namespace {

// One GPU's activity (SM activity, else utilization as a fraction) scaled to its busy share: 0 at its low level
// (1st percentile: a run that waits one sample a step, as ZeRO-3 does at 1 s, has its waits in the lowest
// percents only), 1 at its busy level (90th); empty when the two are too close to tell compute from waiting.
std::vector<double> busyShares(const GpuMetrics& g, const RuleParams& p)
{
    const bool haveSm = std::any_of(g.smActive.begin(), g.smActive.end(), [](double v) { return std::isfinite(v); });
    std::vector<double> v = haveSm ? g.smActive : g.util;
    if (!haveSm)
        for (double& x : v)
            x /= 100;
    const double high = quantile(v, 0.9), low = quantile(v, 0.01);
    if (!(high - low >= p.get("steps.min_contrast"))) return {};
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
        if (!(std::isfinite(busy[i]) && busy[i] >= 0.5)) continue;
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

} // namespace

std::vector<Finding> stragglerRule(const RunMetrics& m, const std::vector<StepTimes>& steps, const RuleParams& p)
{
    std::vector<Finding> out;
    const TimeGrid& grid = m.grid;
    // The run's steps: those of the most confident node (the ranks step together through the collective).
    const StepTimes* ref = nullptr;
    for (const StepTimes& s : steps)
        if (!s.startsNs.empty() && (!ref || s.confidence > ref->confidence)) ref = &s;
    if (!ref || !(ref->medianStepS > 0)) return out;
    const double stepS = ref->medianStepS, gridS = static_cast<double>(grid.stepNs) / 1e9;
    if (stepS < p.get("straggler.min_step_samples") * gridS) return out; // too coarse to time an arrival
    std::vector<std::pair<int64_t, int64_t>> windows;
    for (size_t k = 0; k + 1 < ref->startsNs.size(); ++k) {
        const double s = static_cast<double>(ref->startsNs[k + 1] - ref->startsNs[k]) / 1e9;
        if (s <= p.get("straggler.max_step_factor") * stepS && s >= stepS / p.get("straggler.max_step_factor"))
            windows.emplace_back(ref->startsNs[k], ref->startsNs[k + 1]);
    }
    if (static_cast<double>(windows.size()) < p.get("straggler.min_steps")) return out;

    // Arrivals per GPU and step.
    std::vector<std::vector<double>> gpuArrival(m.gpus.size());
    std::map<std::string, std::vector<size_t>> byNode;
    bool haveSm = true;
    for (size_t g = 0; g < m.gpus.size(); ++g) {
        const std::vector<double> busy = busyShares(m.gpus[g], p);
        if (busy.empty()) continue;
        haveSm = haveSm && !m.gpus[g].smActive.empty();
        gpuArrival[g].resize(windows.size());
        for (size_t k = 0; k < windows.size(); ++k)
            gpuArrival[g][k] = arrival(busy, grid, windows[k].first, windows[k].second);
        byNode[m.gpus[g].node].push_back(g);
    }
    // The units: nodes when several have GPUs to time, else the GPUs of the one node.
    std::vector<Unit> units;
    if (byNode.size() >= 2) {
        for (const auto& [node, gpus] : byNode)
            units.push_back({node, gpus});
    } else if (byNode.size() == 1 && byNode.begin()->second.size() >= 2) {
        for (size_t g : byNode.begin()->second)
            units.push_back({m.gpus[g].node, {g}});
    }
    if (units.size() < 2) return out;
    const bool nodeUnits = byNode.size() >= 2;
    const size_t nu = units.size(), ns = windows.size();
    std::vector<std::vector<double>> arrive(ns, std::vector<double>(nu, kNaN)), lag(nu, std::vector<double>(ns, kNaN));
    for (size_t k = 0; k < ns; ++k)
        for (size_t u = 0; u < nu; ++u)
            for (size_t g : units[u].gpus)
                if (std::isfinite(gpuArrival[g][k]) && !(gpuArrival[g][k] <= arrive[k][u])) arrive[k][u] = gpuArrival[g][k];
    for (size_t k = 0; k < ns; ++k)
        for (size_t u = 0; u < nu; ++u)
            if (std::isfinite(arrive[k][u])) lag[u][k] = (arrive[k][u] - peersMedian(arrive[k], u)) / 1e9;

    // The jitter scale σ.
    std::vector<double> aboutOwn, absolute;
    for (size_t u = 0; u < nu; ++u) {
        const double own = medianOf(lag[u]);
        for (double l : lag[u])
            if (std::isfinite(l)) {
                aboutOwn.push_back(std::abs(l - own));
                absolute.push_back(std::abs(l));
            }
    }
    if (absolute.empty()) return out;
    const double sigma = std::max({std::min(kMadToSigma * medianOf(aboutOwn), kQuartileToSigma * quantile(absolute, 0.25)),
                                   p.get("straggler.scale_floor") * stepS, 1e-9});

    struct Late
    {
        size_t steps = 0;
        std::vector<size_t> late;
        double share = 0;
    };
    std::vector<Late> late(nu);
    for (size_t u = 0; u < nu; ++u) {
        for (size_t k = 0; k < ns; ++k) {
            if (!std::isfinite(lag[u][k])) continue;
            ++late[u].steps;
            if (lag[u][k] > 0 && lag[u][k] / sigma >= p.get("straggler.z")) late[u].late.push_back(k);
        }
        late[u].share = late[u].steps ? static_cast<double>(late[u].late.size()) / static_cast<double>(late[u].steps) : 0;
    }
    const double wall = grid.seconds();
    for (size_t u = 0; u < nu; ++u) {
        const Late& l = late[u];
        if (l.share < p.get("straggler.intermittent") || l.late.empty()) continue;
        std::vector<double> others;
        for (size_t v = 0; v < nu; ++v)
            if (v != u) others.push_back(late[v].share);
        const double peerShare = medianOf(others);
        if (l.share < p.get("straggler.dominance") * peerShare) continue;
        std::vector<double> lags, zs;
        double lagSum = 0;
        for (size_t k : l.late) {
            lags.push_back(lag[u][k]);
            zs.push_back(lag[u][k] / sigma);
            lagSum += lag[u][k];
        }
        const double medianLag = medianOf(lags);
        if (medianLag < p.get("straggler.min_lag") * stepS) continue;
        const bool persistent = l.share >= p.get("straggler.persistent");

        Finding f;
        f.rule = "STRAGGLER";
        f.nodes = {units[u].node};
        // Its GPUs that are late themselves (against the median of the other units in the late steps).
        QJsonArray gpus;
        for (size_t g : units[u].gpus) {
            std::vector<double> own;
            for (size_t k : l.late)
                if (std::isfinite(gpuArrival[g][k])) own.push_back((gpuArrival[g][k] - peersMedian(arrive[k], u)) / 1e9);
            const double gl = medianOf(own);
            const std::string name = fmt::format("{}:gpu{}", m.gpus[g].node, m.gpus[g].gpu);
            QJsonObject o{{QStringLiteral("gpu"), QString::fromStdString(name)}};
            if (std::isfinite(gl)) o.insert(QStringLiteral("median_lag_s"), gl);
            gpus.append(o);
            if (std::isfinite(gl) && gl >= p.get("straggler.min_lag") * stepS) f.gpus.push_back(name);
        }
        // The late steps, touching ones joined.
        for (size_t k : l.late) {
            if (!f.episodes.empty() && f.episodes.back().endNs == windows[k].first) f.episodes.back().endNs = windows[k].second;
            else f.episodes.push_back({windows[k].first, windows[k].second});
        }
        f.savingS = lagSum;
        f.impact = wall > 0 ? lagSum / wall : 0;
        f.severity = f.impact >= p.get("straggler.critical") ? "critical" : f.impact >= p.get("straggler.warn") ? "warn" : "info";
        f.confidence = std::clamp(ref->confidence, 0.0, 1.0) * (nodeUnits ? 0.9 : 0.8) * (haveSm ? 1.0 : 0.7);
        const std::string who = nodeUnits ? units[u].node : fmt::format("{}:gpu{}", units[u].node, m.gpus[units[u].gpus[0]].gpu);
        f.title = fmt::format("Straggler: {} reaches the step's collective {:.2f} s late ({:.0f} % of a {:.2f} s step) in "
                              "{:.0f} % of the steps ({})",
                              who, medianLag, 100 * medianLag / stepS, stepS, 100 * l.share, persistent ? "persistent" : "intermittent");
        f.evidence = QJsonObject{{QStringLiteral("unit"), QString::fromStdString(who)},
                                 {QStringLiteral("unit_kind"), nodeUnits ? QStringLiteral("node") : QStringLiteral("gpu")},
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
                                 {QStringLiteral("step_source"), QString::fromStdString(ref->source)},
                                 {QStringLiteral("gpus"), gpus},
                                 {QStringLiteral("total_lag_s"), lagSum}};
        f.recommendation = fmt::format(
            "Every rank waits for {} at each step's collective. Check its GPUs for throttling (THROTTLE findings; "
            "nvidia-smi -q -d PERFORMANCE,CLOCK,TEMPERATURE), its data loading (per-rank DataLoader wait, uneven shards "
            "or sequence lengths: pack or bucket by length), and the parallel layout (uneven pipeline stages: balance "
            "the layers per stage; a TP group split across nodes); if it stays slow, reboot or replace the node, or "
            "leave it out of the job.",
            who);
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace runlens::analysis
