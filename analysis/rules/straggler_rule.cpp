#include "analysis/rules/straggler_rule.h"

#include <QJsonArray>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace runlens::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// |N(0, σ)| has its lower quartile at 0.3186 σ, its median at 0.6745 σ.
constexpr double kQuartileToSigma = 1 / 0.3186;
constexpr double kMadToSigma = 1.4826;

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


// ---------------------------------------------------------------------------------------------------------------
// Ranks (docs/design.md §5, STRAGGLER).

namespace {

// A window the ranks are compared in: [from, to).
struct Window
{
    int64_t fromNs = 0, toNs = 0;
    double stepS = kNaN; // the step time there; NaN when the run has no steps
    double seconds() const { return static_cast<double>(toNs - fromNs) / 1e9; }
};

// The number after a tag ("rank 3", "pid=618") in a thread or process name.
std::optional<int64_t> taggedNumber(const std::string& text, const char* tag)
{
    const QRegularExpression re(QStringLiteral("(?:^|[^A-Za-z])%1[\\s_:=#-]*(\\d+)").arg(QLatin1String(tag)),
                                QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(QString::fromStdString(text));
    if (!m.hasMatch()) return std::nullopt;
    bool ok = false;
    const qint64 v = m.captured(1).toLongLong(&ok);
    return ok ? std::optional<int64_t>(v) : std::nullopt;
}

// What a thread is across processes: its name without rank, pid and numbers ("MainThread", "pt_autograd_").
std::string threadRole(const std::string& name)
{
    QString s = QString::fromStdString(name);
    s.remove(QRegularExpression(QStringLiteral("(?:rank|pid|tid)[\\s_:=#-]*\\d+"), QRegularExpression::CaseInsensitiveOption));
    s.remove(QRegularExpression(QStringLiteral("\\d+")));
    return s.simplified().toStdString();
}

// The steps the ranks are compared in: the most confident node's (checkpoint-long and restart-short ones left out),
// each with its step time (the trainer's logged step time where it logs one per interval of several steps); or the
// run's evidence slices when there are no steps.
std::vector<Window> rankWindows(const RunMetrics& m, const std::vector<StepTimes>& steps, const RuleParams& p, std::string* source)
{
    std::vector<Window> out;
    const StepTimes* ref = nullptr;
    for (const StepTimes& s : steps)
        if (s.startsNs.size() >= 3 && (!ref || s.confidence > ref->confidence)) ref = &s;
    if (ref) {
        std::vector<double> durations;
        for (size_t k = 0; k + 1 < ref->startsNs.size(); ++k)
            durations.push_back(static_cast<double>(ref->startsNs[k + 1] - ref->startsNs[k]) / 1e9);
        const std::vector<store::Point>* logged = nullptr;
        for (const NodeMetrics& n : m.nodes)
            if (n.node == ref->node && !n.stepTimes.empty()) logged = &n.stepTimes;
        // Long steps stay: the ranks are compared within each, and extra work that is a checkpoint is told apart.
        for (size_t k = 0; k + 1 < ref->startsNs.size(); ++k) {
            const double d = durations[k];
            if (!(d > 0)) continue;
            Window w{ref->startsNs[k], ref->startsNs[k + 1], d};
            // A trainer that logs every N steps: its logged step time (the point that closes the interval).
            if (logged) {
                const auto at = std::lower_bound(logged->begin(), logged->end(), w.toNs - 1'000'000,
                                                 [](const store::Point& pt, int64_t ts) { return pt.tsNs < ts; });
                if (at != logged->end() && at->tsNs <= w.toNs + (w.toNs - w.fromNs) && at->value > 0 && at->value < 0.9 * d)
                    w.stepS = at->value;
            }
            out.push_back(w);
        }
        *source = ref->source;
        if (!out.empty()) return out;
    }
    *source = "evidence_slices";
    const TimeGrid& g = m.grid;
    const size_t per = g.slotsPerSlice(p.get("rules.evidence_s"));
    for (size_t a = 0; a < g.size; a += per)
        out.push_back({g.slotStart(a), g.slotStart(std::min(g.size, a + per)), kNaN});
    return out;
}

struct RankUnit
{
    std::string node;
    int64_t rank = -1;
    int64_t pid = 0;
    std::string process, thread; // as stored
    std::string cohort;
    int64_t threadId = 0;
    int64_t timedSamples = 0;
    int64_t firstNs = 0, lastNs = 0;
    double nominalS = 0; // the mean interval of its samples
    std::vector<double> gaps; // intervals between its samples, as read
    double intervalS = 0;     // their median
    bool waits = false;       // seen in a wait: it takes part in the collectives
};

std::string unitName(const RankUnit& u)
{
    if (u.rank >= 0) return fmt::format("rank {}", u.rank);
    if (u.pid > 0) return fmt::format("pid {}", u.pid);
    return fmt::format("{} thread {}", u.node, u.thread);
}

// The trace evidence of one rank.
struct RankTrace
{
    std::string node;
    std::string pid;
    double steps = 0;      // profiled steps it was judged in
    double lateSteps = 0;  // ... late in
    std::vector<double> latePerStepS;
    std::vector<double> peerLateSteps;
    std::vector<Window> lateSpans; // the late steps (or profiled windows)
    double lateS = 0;      // the others' wait in them
    std::vector<std::pair<int64_t, int64_t>> collectiveSpans; // its CPU-side collectives
};

struct Arrival
{
    int64_t rank = 0;
    bool kernel = false;
    std::string name;
    int64_t tsNs = 0, endNs = 0;
};

// The step (ProfilerStep#N) a time falls in on one rank: the last one starting at or before it.
int64_t stepAt(const std::vector<std::pair<int64_t, int64_t>>& starts, int64_t ts)
{
    const auto it = std::upper_bound(starts.begin(), starts.end(), std::make_pair(ts, std::numeric_limits<int64_t>::max()));
    return it == starts.begin() ? -1 : std::prev(it)->second;
}

// Per profiled window, the k-th collective of each name matched across the ranks; the latest rank's wait interval
// [the others' median arrival, its arrival] per instance, their union per rank and step.
Expected<std::map<int64_t, RankTrace>> traceLateness(store::TraceReader& traces, const std::vector<store::TraceTrackInfo>& tracks,
                                                     const std::vector<Window>& windows, const RuleParams& p)
{
    std::map<int64_t, RankTrace> out;
    std::unordered_map<int64_t, const store::TraceTrackInfo*> byId;
    for (const store::TraceTrackInfo& t : tracks)
        if (t.rank >= 0) byId[t.id] = &t;
    if (byId.empty()) return out;
    store::TraceFilter filter;
    filter.categories = {store::TraceCategory::Collective, store::TraceCategory::CommKernel};
    auto slices = traces.slices({}, filter);
    if (!slices) return slices.error();
    std::vector<Arrival> all;
    for (const store::TraceSliceInfo& s : *slices) {
        const auto it = byId.find(s.trackId);
        if (it == byId.end()) continue;
        const bool gpu = it->second->kind == "gpu", kernel = s.category == store::TraceCategory::CommKernel;
        if (gpu != kernel) continue; // CPU-side spans on CPU tracks, kernels on GPU tracks
        RankTrace& r = out[it->second->rank];
        r.node = it->second->node;
        if (!gpu) {
            r.pid = it->second->pid;
            r.collectiveSpans.emplace_back(s.tsNs, s.tsNs + s.durNs);
        }
        all.push_back({it->second->rank, kernel, s.name, s.tsNs, s.tsNs + s.durNs});
    }
    std::sort(all.begin(), all.end(), [](const Arrival& a, const Arrival& b) { return a.tsNs < b.tsNs; });
    for (auto& [rank, r] : out)
        std::sort(r.collectiveSpans.begin(), r.collectiveSpans.end());
    // Profiled windows: collectives at most straggler.trace_gap_s apart.
    const auto gap = static_cast<int64_t>(p.get("straggler.trace_gap_s") * 1e9);
    std::vector<std::pair<size_t, size_t>> clusters; // [first, last) in `all`
    int64_t reach = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < all.size(); ++i) {
        if (clusters.empty() || all[i].tsNs > reach + gap) clusters.emplace_back(i, i);
        clusters.back().second = i + 1;
        reach = std::max(reach, all[i].endNs);
    }
    const double traceLag = p.get("straggler.trace_min_lag");
    for (const auto& [first, last] : clusters) {
        const int64_t from = all[first].tsNs;
        int64_t to = from;
        std::set<int64_t> ranks, kernelRanks;
        for (size_t i = first; i < last; ++i) {
            to = std::max(to, all[i].endNs);
            ranks.insert(all[i].rank);
            if (all[i].kernel) kernelRanks.insert(all[i].rank);
        }
        if (ranks.size() < 2) continue;
        // The profiled steps: ProfilerStep#N on each rank when every rank has them.
        std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> stepStarts; // rank -> (start, N)
        std::map<int64_t, std::vector<double>> stepSeconds;                    // N -> its durations on the ranks
        store::TraceFilter annotations;
        annotations.categories = {store::TraceCategory::UserAnnotation};
        auto marks = traces.slices({from, to}, annotations);
        if (!marks) return marks.error();
        for (const store::TraceSliceInfo& s : *marks) {
            const auto it = byId.find(s.trackId);
            if (it == byId.end() || s.name.rfind("ProfilerStep#", 0) != 0) continue;
            bool ok = false;
            const int64_t n = QString::fromStdString(s.name.substr(13)).toLongLong(&ok);
            if (!ok) continue;
            stepStarts[it->second->rank].emplace_back(s.tsNs, n);
            stepSeconds[n].push_back(static_cast<double>(s.durNs) / 1e9);
        }
        const bool profiledSteps = std::all_of(ranks.begin(), ranks.end(), [&](int64_t r) { return stepStarts.count(r) > 0; });
        for (auto& [rank, v] : stepStarts)
            std::sort(v.begin(), v.end());
        // The window's step time: the profiled steps', else the run's steps there, else the window is one step.
        double stepS = kNaN;
        size_t steps = 1;
        if (profiledSteps) {
            std::vector<double> d;
            for (const auto& [n, v] : stepSeconds)
                d.push_back(medianOf(v));
            stepS = medianOf(d);
            steps = stepSeconds.size();
        } else {
            const auto w = std::find_if(windows.begin(), windows.end(), [&](const Window& x) { return x.toNs > from; });
            if (w != windows.end() && w->fromNs <= to && std::isfinite(w->stepS)) stepS = w->stepS;
            const double span = static_cast<double>(to - from) / 1e9;
            if (std::isfinite(stepS) && stepS > 0) steps = std::max<size_t>(1, static_cast<size_t>(std::llround(span / stepS)));
            else stepS = span;
        }
        if (!(stepS > 0)) continue;
        // Kernels when every rank has them (the GPU arrival, as NCCL waits on the GPU), else the CPU-side spans.
        const bool useKernels = kernelRanks == ranks;
        std::map<std::pair<std::string, int64_t>, std::vector<std::pair<int64_t, int64_t>>> arrivals; // (name, rank) -> spans in order
        for (size_t i = first; i < last; ++i)
            if (all[i].kernel == useKernels) arrivals[{all[i].name, all[i].rank}].emplace_back(all[i].tsNs, all[i].endNs);
        // Waits per (rank late, step): [the others' median arrival, its arrival].
        std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>> late;
        const auto maxSpread = static_cast<int64_t>(1.5 * stepS * 1e9);
        for (auto it = arrivals.begin(); it != arrivals.end();) {
            const std::string name = it->first.first;
            std::vector<std::pair<int64_t, const std::vector<std::pair<int64_t, int64_t>>*>> perRank;
            for (; it != arrivals.end() && it->first.first == name; ++it)
                perRank.emplace_back(it->first.second, &it->second);
            if (perRank.size() < 2) continue;
            const size_t n = perRank.front().second->size();
            if (std::any_of(perRank.begin(), perRank.end(), [&](const auto& r) { return r.second->size() != n; })) continue; // not matched
            for (size_t k = 0; k < n; ++k) {
                size_t latest = 0;
                int64_t earliest = std::numeric_limits<int64_t>::max();
                for (size_t i = 0; i < perRank.size(); ++i) {
                    earliest = std::min(earliest, (*perRank[i].second)[k].first);
                    if ((*perRank[i].second)[k].first > (*perRank[latest].second)[k].first) latest = i;
                }
                const int64_t a = (*perRank[latest].second)[k].first;
                if (a - earliest > maxSpread) continue; // not one instance
                // One rendezvous: no rank is done before the last one arrives (a tenth of the spread for clocks).
                // Enqueue-only spans and point-to-point kernels matched out of turn are not.
                const int64_t slack = (a - earliest) / 10;
                if (std::any_of(perRank.begin(), perRank.end(), [&](const auto& r) { return (*r.second)[k].second < a - slack; })) continue;
                std::vector<double> others;
                for (size_t i = 0; i < perRank.size(); ++i)
                    if (i != latest) others.push_back(static_cast<double>((*perRank[i].second)[k].first));
                const auto m = static_cast<int64_t>(medianOf(others));
                if (a <= m) continue;
                const int64_t rank = perRank[latest].first;
                const int64_t step = profiledSteps ? stepAt(stepStarts[rank], a) : 0;
                late[{rank, step}].emplace_back(m, a);
            }
        }
        // Per rank and step: its largest wait. The waits of one step overlap (buckets enqueued as backward reaches
        // them, the first ones while the others still compute), so they are not added up.
        std::map<int64_t, std::map<int64_t, double>> lateness; // rank -> step -> seconds
        for (const auto& [key, v] : late)
            for (const auto& [a, b] : v)
                lateness[key.first][key.second] = std::max(lateness[key.first][key.second], static_cast<double>(b - a) / 1e9);
        for (int64_t rank : ranks) {
            RankTrace& r = out[rank];
            r.steps += static_cast<double>(steps);
            if (!lateness.count(rank)) continue;
            if (profiledSteps) {
                for (const auto& [step, seconds] : lateness[rank]) {
                    const auto d = stepSeconds.find(step);
                    const double own = d != stepSeconds.end() ? medianOf(d->second) : stepS;
                    if (seconds < traceLag * own) continue;
                    r.lateSteps += 1;
                    r.latePerStepS.push_back(seconds);
                    r.lateS += seconds;
                    const auto& starts = stepStarts[rank];
                    const auto s = std::find_if(starts.begin(), starts.end(), [want = step](const auto& x) { return x.second == want; });
                    const int64_t a = s != starts.end() ? s->first : from;
                    r.lateSpans.push_back({a, a + static_cast<int64_t>(own * 1e9), own});
                }
            } else {
                // The window's steps are not told apart: its largest wait stands for each of them.
                const double seconds = lateness[rank][0];
                if (seconds < traceLag * stepS) continue;
                r.lateSteps += static_cast<double>(steps);
                for (size_t k = 0; k < steps; ++k)
                    r.latePerStepS.push_back(seconds);
                r.lateS += seconds * static_cast<double>(steps);
                r.lateSpans.push_back({from, to, stepS});
            }
        }
    }
    return out;
}

enum class Kind : uint8_t
{
    Wait, // communication, GPU wait, idle, or under a collective frame
    Work,
    Checkpoint,
};

// The frame key of every catalogue frame: its name and file (one function, whatever line it was sampled at).
std::vector<int32_t> frameKeys(const store::StackCatalog& c, std::vector<std::string>* names)
{
    std::map<std::pair<std::string, std::string>, int32_t> ids;
    std::vector<int32_t> out(c.frames.size(), -1);
    std::vector<int64_t> line; // the key's one line; -1 when it was sampled at several
    for (size_t f = 1; f < c.frames.size(); ++f) {
        const store::FrameInfo& fr = c.frames[f];
        const auto [it, added] = ids.emplace(std::make_pair(fr.name, fr.file), static_cast<int32_t>(ids.size()));
        out[f] = it->second;
        if (added) line.push_back(fr.line);
        else if (line[static_cast<size_t>(it->second)] != fr.line) line[static_cast<size_t>(it->second)] = -1;
    }
    names->assign(ids.size(), std::string());
    for (const auto& [key, id] : ids) {
        const int64_t l = line[static_cast<size_t>(id)];
        (*names)[static_cast<size_t>(id)] = key.second.empty() ? key.first
                                            : l > 0 ? fmt::format("{} ({}:{})", key.first, key.second, l)
                                                    : fmt::format("{} ({})", key.first, key.second);
    }
    return out;
}

// The frame keys on a callsite's path (each once) with the depth of their outermost occurrence.
void keysOnPath(const store::StackCatalog& c, const std::vector<int32_t>& keyOf, int64_t callsite,
                std::vector<std::pair<int32_t, int32_t>>& out)
{
    out.clear();
    for (auto cs = static_cast<size_t>(callsite); cs != 0 && cs < c.callsiteCount();) {
        const int32_t key = keyOf[static_cast<size_t>(c.frame[cs])];
        const auto have = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == key; });
        if (have == out.end()) out.emplace_back(key, c.depth[cs]);
        else have->second = std::min(have->second, c.depth[cs]);
        const auto parent = static_cast<size_t>(c.parent[cs]);
        if (parent >= cs) break;
        cs = parent;
    }
}

// The timed samples of a unit's thread in [from, to), bucketed by window (windows sorted, disjoint); the gaps between
// consecutive samples go into the unit's gaps.
template <typename F>
Status readWindows(FlameSource& stacks, RankUnit& u, const std::vector<const Window*>& ws, F&& each)
{
    if (ws.empty()) return okStatus();
    auto samples = stacks.samples(u.threadId, {ws.front()->fromNs, ws.back()->toNs - 1});
    if (!samples) return samples.error();
    int64_t prev = std::numeric_limits<int64_t>::min();
    size_t w = 0;
    for (const store::StackSample& s : *samples) {
        if (prev != std::numeric_limits<int64_t>::min() && s.tsNs > prev && u.gaps.size() < 20000)
            u.gaps.push_back(static_cast<double>(s.tsNs - prev) / 1e9);
        prev = s.tsNs;
        while (w < ws.size() && ws[w]->toNs <= s.tsNs)
            ++w;
        if (w == ws.size()) break;
        if (s.tsNs >= ws[w]->fromNs) each(w, s);
    }
    return okStatus();
}

// The frames the ranks' collectives run under: per rank with profiled CPU-side collectives and stacks, the deepest
// frame on straggler.collective_frame_share of its training thread's samples taken during them (the sample just
// before a span shorter than the sampling interval). Learned from a few ranks and spans (they run the same code).
Expected<std::set<int32_t>> collectiveFrames(FlameSource& stacks, std::vector<RankUnit>& units,
                                             const std::map<int64_t, RankTrace>& traces, const store::StackCatalog& c,
                                             const std::vector<int32_t>& keyOf, const RuleParams& p)
{
    std::set<int32_t> out;
    int learned = 0;
    std::vector<std::pair<int32_t, int32_t>> path;
    for (RankUnit& u : units) {
        if (learned >= 8) break;
        const auto t = traces.find(u.rank);
        if (u.rank < 0 || t == traces.end() || t->second.node != u.node || t->second.collectiveSpans.empty()) continue;
        // The spans, joined when closer than two samples; at most 30, spread evenly.
        const auto join = static_cast<int64_t>(2 * u.nominalS * 1e9);
        std::vector<std::pair<int64_t, int64_t>> spans;
        for (const auto& s : t->second.collectiveSpans) {
            if (!spans.empty() && s.first <= spans.back().second + join) spans.back().second = std::max(spans.back().second, s.second);
            else spans.push_back(s);
        }
        const size_t take = std::min<size_t>(spans.size(), 30);
        std::map<int64_t, int64_t> counts; // callsite -> samples
        int64_t total = 0;
        for (size_t k = 0; k < take; ++k) {
            const auto& [a, b] = spans[k * spans.size() / take];
            auto samples = stacks.samples(u.threadId, {a - join, b});
            if (!samples) return samples.error();
            const store::StackSample* before = nullptr;
            int64_t inside = 0;
            for (const store::StackSample& s : *samples) {
                if (s.tsNs < a) before = &s;
                else {
                    counts[s.callsiteId] += s.count;
                    inside += s.count;
                }
            }
            if (inside == 0 && before) {
                counts[before->callsiteId] += before->count;
                inside = before->count;
            }
            total += inside;
        }
        if (total < 5) continue;
        std::map<int32_t, std::pair<int64_t, int32_t>> keys; // key -> (samples, depth)
        for (const auto& [cs, n] : counts) {
            keysOnPath(c, keyOf, cs, path);
            for (const auto& [key, depth] : path) {
                auto [it, added] = keys.emplace(key, std::make_pair(int64_t(0), depth));
                it->second.first += n;
                it->second.second = std::min(it->second.second, depth);
            }
        }
        int32_t best = -1, bestDepth = -1;
        for (const auto& [key, v] : keys)
            if (static_cast<double>(v.first) >= p.get("straggler.collective_frame_share") * static_cast<double>(total) && v.second > bestDepth) {
                best = key;
                bestDepth = v.second;
            }
        if (best >= 0) out.insert(best);
        ++learned;
    }
    return out;
}

// Per window and unit: samples of its training thread, those in work (outside the waits) and in checkpoint work.
struct Cell
{
    int64_t samples = 0, work = 0, checkpoint = 0;
};

struct RankStraggler
{
    size_t unit = 0;
    std::vector<size_t> late;   // evaluated windows
    size_t judged = 0;
    double share = 0, peerShare = 0;
    std::vector<double> lateness; // share of the window, per late window
};

} // namespace

Expected<std::vector<Finding>> rankStragglerRule(const RunMetrics& m, const std::vector<StepTimes>& steps, FlameSource& stacks,
                                                 store::TraceReader* traces, const RuleParams& p, const std::atomic<bool>* cancel)
{
    std::vector<Finding> out;
    std::string stepSource;
    const std::vector<Window> windows = rankWindows(m, steps, p, &stepSource);
    const bool haveSteps = stepSource != "evidence_slices";

    // The traces: ranks, their pids, and how late each was at the profiled collectives.
    std::vector<store::TraceTrackInfo> tracks;
    std::map<int64_t, RankTrace> traced;
    if (traces) {
        auto t = traces->tracks();
        if (!t) return t.error();
        tracks = std::move(*t);
        auto l = traceLateness(*traces, tracks, windows, p);
        if (!l) return l.error();
        traced = std::move(*l);
    }
    std::map<std::pair<std::string, int64_t>, int64_t> rankOfPid; // (node, pid) -> rank
    for (const store::TraceTrackInfo& t : tracks) {
        bool ok = false;
        const int64_t pid = QString::fromStdString(t.pid).toLongLong(&ok);
        if (t.rank >= 0 && t.kind == "cpu" && ok && pid > 0) rankOfPid[{t.node, pid}] = t.rank;
    }

    // The ranks of the stacks: one training thread per process.
    auto threads = stacks.threads({});
    if (!threads) return threads.error();
    std::map<std::string, RankUnit> byProcess;
    for (const store::StackThreadInfo& t : *threads) {
        if (t.timedSamples < 2 || !t.firstNs || !t.lastNs || *t.lastNs <= *t.firstNs) continue;
        RankUnit u;
        u.node = t.node;
        u.process = t.process;
        u.thread = t.name;
        u.threadId = t.id;
        u.timedSamples = t.timedSamples;
        u.firstNs = *t.firstNs;
        u.lastNs = *t.lastNs;
        u.nominalS = static_cast<double>(u.lastNs - u.firstNs) / 1e9 / static_cast<double>(t.timedSamples - 1);
        u.pid = t.pid > 0 ? t.pid : taggedNumber(t.name, "pid").value_or(taggedNumber(t.process, "pid").value_or(0));
        u.rank = taggedNumber(t.name, "rank").value_or(taggedNumber(t.process, "rank").value_or(-1));
        // A main thread's tid is its process's pid.
        if (u.pid == 0 && t.tid > 0 && rankOfPid.count({t.node, t.tid})) u.pid = t.tid;
        if (u.rank < 0 && u.pid > 0 && rankOfPid.count({t.node, u.pid})) u.rank = rankOfPid[{t.node, u.pid}];
        // Processes with a pid are compared whatever their busiest thread is called; threads without one by role.
        u.cohort = u.pid > 0 ? std::string() : threadRole(t.name);
        const std::string key = u.pid > 0 ? fmt::format("{}/{}", t.node, u.pid) : fmt::format("{}/thread {}", t.node, t.id);
        auto [it, added] = byProcess.emplace(key, u);
        if (!added && u.timedSamples > it->second.timedSamples) it->second = u;
    }
    std::vector<RankUnit> units;
    {
        std::map<std::string, size_t> cohortSize;
        for (const auto& [key, u] : byProcess)
            ++cohortSize[u.cohort];
        for (auto& [key, u] : byProcess)
            if (cohortSize[u.cohort] >= 2) units.push_back(std::move(u));
    }

    // What counts as waiting: communication, GPU-wait and idle frames, and the frames the collectives run under.
    std::shared_ptr<const store::StackCatalog> catalog;
    std::vector<int32_t> keyOf;
    std::vector<std::string> keyNames;
    std::vector<Kind> kinds;
    std::set<int32_t> collectiveKeys;
    std::vector<Cell> cells; // [evaluated window][unit]
    std::vector<size_t> evaluated;     // indexes into windows
    std::vector<int64_t> spanTo;       // the end of the span each evaluated window speaks for
    if (!units.empty()) {
        auto cat = stacks.catalog();
        if (!cat) return cat.error();
        catalog = *cat;
        auto phases = stacks.callsitePhases();
        if (!phases) return phases.error();
        const store::StackCatalog& c = *catalog;
        keyOf = frameKeys(c, &keyNames);
        auto learned = collectiveFrames(stacks, units, traced, c, keyOf, p);
        if (!learned) return learned.error();
        collectiveKeys = std::move(*learned);
        kinds.assign(c.callsiteCount(), Kind::Work);
        std::vector<uint8_t> under(c.callsiteCount(), 0);
        for (size_t cs = 1; cs < c.callsiteCount(); ++cs) {
            const auto parent = static_cast<size_t>(c.parent[cs]);
            under[cs] = (parent < cs && under[parent]) || collectiveKeys.count(keyOf[static_cast<size_t>(c.frame[cs])]) ? 1 : 0;
            const Phase ph = cs < (*phases)->size() ? (**phases)[cs] : Phase::Other;
            kinds[cs] = under[cs] || ph == Phase::Comm || ph == Phase::GpuWait || ph == Phase::Idle ? Kind::Wait
                        : ph == Phase::Checkpoint                                                   ? Kind::Checkpoint
                                                                                                    : Kind::Work;
        }
        kinds[0] = Kind::Wait;
    }

    // The windows: steps joined until each holds straggler.window_samples samples; only where two ranks sample.
    std::vector<Window> groups;
    if (!units.empty()) {
        double interval = 0;
        for (const RankUnit& u : units)
            interval = std::max(interval, u.nominalS);
        const double need = p.get("straggler.window_samples") * interval;
        for (size_t k = 0; k < windows.size();) {
            Window g = windows[k];
            std::vector<double> stepS{windows[k].stepS};
            size_t j = k + 1;
            while (g.seconds() < need && j < windows.size() && windows[j].fromNs == g.toNs) {
                g.toNs = windows[j].toNs;
                stepS.push_back(windows[j].stepS);
                ++j;
            }
            g.stepS = haveSteps ? medianOf(stepS) : kNaN;
            k = j;
            size_t sampled = 0;
            for (const RankUnit& u : units)
                sampled += u.firstNs <= g.fromNs && u.lastNs >= g.toNs - static_cast<int64_t>(u.nominalS * 2e9) ? 1 : 0;
            if (sampled >= 2 && g.seconds() >= 0.5 * need) groups.push_back(g);
        }
    }
    // At most straggler.max_reads thread windows and straggler.max_samples samples, spread evenly.
    if (!groups.empty()) {
        double seconds = 0, interval = std::numeric_limits<double>::max();
        for (const Window& g : groups)
            seconds += g.seconds();
        for (const RankUnit& u : units)
            interval = std::min(interval, u.nominalS);
        const double perWindow = seconds / static_cast<double>(groups.size()) / interval * static_cast<double>(units.size());
        const double budget = std::max(std::min(p.get("straggler.max_reads") / static_cast<double>(units.size()),
                                                p.get("straggler.max_samples") / perWindow),
                                       2 * p.get("straggler.min_steps"));
        const size_t take = std::min(groups.size(), static_cast<size_t>(std::max(1.0, budget)));
        for (size_t k = 0; k < take; ++k)
            evaluated.push_back(k * groups.size() / take);
        for (size_t k = 0; k < evaluated.size(); ++k)
            spanTo.push_back(k + 1 < evaluated.size() && evaluated[k + 1] > evaluated[k] + 1 ? groups[evaluated[k + 1] - 1].toNs
                                                                                           : groups[evaluated[k]].toNs);
        cells.assign(evaluated.size() * units.size(), Cell{});
        for (size_t u = 0; u < units.size(); ++u) {
            if (cancel && cancel->load()) return makeError(ErrorCode::Cancelled, "analysis cancelled");
            // Contiguous evaluated windows are read together (up to 64 at a time).
            for (size_t k = 0; k < evaluated.size();) {
                std::vector<const Window*> run{&groups[evaluated[k]]};
                size_t j = k + 1;
                while (j < evaluated.size() && run.size() < 64 && groups[evaluated[j]].fromNs == run.back()->toNs)
                    run.push_back(&groups[evaluated[j++]]);
                const size_t base = k;
                Status s = readWindows(stacks, units[u], run, [&](size_t w, const store::StackSample& smp) {
                    Cell& cell = cells[(base + w) * units.size() + u];
                    cell.samples += smp.count;
                    const auto cs = static_cast<size_t>(smp.callsiteId);
                    const Kind kind = cs < kinds.size() ? kinds[cs] : Kind::Work;
                    if (kind != Kind::Wait) cell.work += smp.count;
                    else if (cs != 0) units[u].waits = true;
                    if (kind == Kind::Checkpoint) cell.checkpoint += smp.count;
                });
                if (!s) return s.error();
                k = j;
            }
            RankUnit& unit = units[u];
            unit.intervalS = unit.gaps.empty() ? unit.nominalS : medianOf(unit.gaps);
            unit.gaps = {};
        }
    }

    // Per cohort: each rank's work share against its peers', window by window.
    std::vector<RankStraggler> found;
    std::map<std::string, std::vector<size_t>> cohorts;
    for (size_t u = 0; u < units.size(); ++u)
        if (units[u].waits || units[u].rank >= 0) cohorts[units[u].cohort].push_back(u);
    const size_t ne = evaluated.size();
    std::vector<std::vector<double>> excess(units.size(), std::vector<double>(ne, kNaN));
    for (const auto& [cohort, members] : cohorts) {
        if (members.size() < 2) continue;
        std::vector<uint8_t> checkpointWindow(ne, 0);
        for (size_t k = 0; k < ne; ++k) {
            const Window& w = groups[evaluated[k]];
            std::vector<double> work(members.size(), kNaN), ckpt(members.size(), kNaN);
            for (size_t i = 0; i < members.size(); ++i) {
                const RankUnit& u = units[members[i]];
                const Cell& cell = cells[k * units.size() + members[i]];
                // Present: sampled over the window (a waiting thread may have few samples when idle ones are dropped).
                if (cell.samples == 0 || u.firstNs > w.fromNs || u.lastNs < w.toNs - static_cast<int64_t>(2e9 * u.intervalS)) continue;
                work[i] = std::min(1.0, static_cast<double>(cell.work) * u.intervalS / w.seconds());
                ckpt[i] = std::min(1.0, static_cast<double>(cell.checkpoint) * u.intervalS / w.seconds());
            }
            for (size_t i = 0; i < members.size(); ++i) {
                if (!std::isfinite(work[i])) continue;
                const double peers = peersMedian(work, i);
                if (!std::isfinite(peers)) continue;
                excess[members[i]][k] = work[i] - peers;
                // Extra work that is a checkpoint write is CKPT_GAP's.
                if (excess[members[i]][k] > 0 && ckpt[i] - peersMedian(ckpt, i) >= 0.5 * excess[members[i]][k]) checkpointWindow[k] = 1;
            }
        }
        // The jitter scale, as for the units above (shares of the window).
        std::vector<double> aboutOwn, absolute;
        for (size_t u : members) {
            const double own = medianOf(excess[u]);
            for (size_t k = 0; k < ne; ++k)
                if (std::isfinite(excess[u][k]) && !checkpointWindow[k]) {
                    aboutOwn.push_back(std::abs(excess[u][k] - own));
                    absolute.push_back(std::abs(excess[u][k]));
                }
        }
        if (absolute.empty()) continue;
        const double sigma = std::max({std::min(kMadToSigma * medianOf(aboutOwn), kQuartileToSigma * quantile(absolute, 0.25)),
                                       p.get("straggler.scale_floor"), 1e-6});
        std::vector<RankStraggler> late(members.size());
        for (size_t i = 0; i < members.size(); ++i) {
            late[i].unit = members[i];
            for (size_t k = 0; k < ne; ++k) {
                const double e = excess[members[i]][k];
                if (!std::isfinite(e) || checkpointWindow[k]) continue;
                ++late[i].judged;
                if (e >= p.get("straggler.min_lag") && e / sigma >= p.get("straggler.z")) {
                    late[i].late.push_back(k);
                    late[i].lateness.push_back(e);
                }
            }
            late[i].share = late[i].judged ? static_cast<double>(late[i].late.size()) / static_cast<double>(late[i].judged) : 0;
        }
        for (size_t i = 0; i < members.size(); ++i) {
            RankStraggler& r = late[i];
            if (static_cast<double>(r.judged) < p.get("straggler.min_steps") || r.share < p.get("straggler.intermittent")) continue;
            std::vector<double> others;
            for (size_t j = 0; j < members.size(); ++j)
                if (j != i) others.push_back(late[j].share);
            r.peerShare = medianOf(others);
            if (r.share < p.get("straggler.dominance") * r.peerShare) continue;
            if (!units[r.unit].waits && units[r.unit].rank < 0) continue;
            found.push_back(r);
        }
    }

    // The frames a late rank spends the given windows in that its peers do not: per frame (name and file), its share
    // of the rank's samples minus the peers' median share; the first is the most exclusive of those within 80 % of
    // the largest excess, then by excess.
    const auto topFrames = [&](size_t unit, const std::vector<Window>& spans, QJsonArray* top, std::string* first) -> Status {
        if (!catalog || spans.empty()) return okStatus();
        std::vector<size_t> who{unit};
        for (size_t u = 0; u < units.size() && who.size() < 9; ++u)
            if (u != unit && units[u].cohort == units[unit].cohort && (units[u].waits || units[u].rank >= 0)) who.push_back(u);
        if (who.size() < 2) return okStatus();
        std::vector<std::map<int32_t, int64_t>> keys(who.size());
        std::vector<int64_t> totals(who.size(), 0);
        std::vector<std::pair<int32_t, int32_t>> path;
        std::map<int32_t, int32_t> depthOf;
        const size_t take = std::min<size_t>(spans.size(), 40);
        for (size_t i = 0; i < who.size(); ++i) {
            std::unordered_map<int64_t, int64_t> counts;
            for (size_t k = 0; k < take; ++k) {
                const Window& w = spans[k * spans.size() / take];
                auto samples = stacks.samples(units[who[i]].threadId, {w.fromNs, w.toNs - 1});
                if (!samples) return samples.error();
                for (const store::StackSample& s : *samples) {
                    counts[s.callsiteId] += s.count;
                    totals[i] += s.count;
                }
            }
            for (const auto& [cs, n] : counts) {
                keysOnPath(*catalog, keyOf, cs, path);
                for (const auto& [key, depth] : path) {
                    keys[i][key] += n;
                    auto [it, added] = depthOf.emplace(key, depth);
                    it->second = std::min(it->second, depth);
                }
            }
        }
        if (totals[0] == 0) return okStatus();
        // Frames that are waits themselves are not the late work.
        std::set<int32_t> waitKeys(collectiveKeys.begin(), collectiveKeys.end());
        for (size_t cs = 1; cs < catalog->callsiteCount(); ++cs) {
            const auto parent = static_cast<size_t>(catalog->parent[cs]);
            if (kinds[cs] == Kind::Wait && (parent >= cs || kinds[parent] != Kind::Wait)) waitKeys.insert(keyOf[static_cast<size_t>(catalog->frame[cs])]);
        }
        struct Candidate
        {
            int32_t key;
            double share, peers, excess;
        };
        std::vector<Candidate> cands;
        for (const auto& [key, n] : keys[0]) {
            if (waitKeys.count(key)) continue;
            const double share = static_cast<double>(n) / static_cast<double>(totals[0]);
            std::vector<double> peers;
            for (size_t i = 1; i < who.size(); ++i)
                if (totals[i] > 0) peers.push_back(keys[i].count(key) ? static_cast<double>(keys[i][key]) / static_cast<double>(totals[i]) : 0.0);
            const double peer = medianOf(peers);
            if (std::isfinite(peer) && share - peer > 0) cands.push_back({key, share, peer, share - peer});
        }
        if (cands.empty()) return okStatus();
        const double best = std::max_element(cands.begin(), cands.end(), [](const auto& a, const auto& b) { return a.excess < b.excess; })->excess;
        std::sort(cands.begin(), cands.end(), [&](const Candidate& a, const Candidate& b) {
            const bool ta = a.excess >= 0.8 * best, tb = b.excess >= 0.8 * best;
            if (ta != tb) return ta;
            if (ta && std::abs(a.peers - b.peers) > 0.01) return a.peers < b.peers;
            if (ta && depthOf[a.key] != depthOf[b.key]) return depthOf[a.key] < depthOf[b.key];
            return a.excess > b.excess;
        });
        for (size_t k = 0; k < cands.size() && top->size() < 5; ++k) {
            if (cands[k].excess < p.get("straggler.top_frame_share") * best) continue;
            top->append(QJsonObject{{QStringLiteral("frame"), QString::fromStdString(keyNames[static_cast<size_t>(cands[k].key)])},
                                    {QStringLiteral("share"), cands[k].share},
                                    {QStringLiteral("peers_share"), cands[k].peers}});
        }
        *first = keyNames[static_cast<size_t>(cands.front().key)];
        return okStatus();
    };

    QJsonArray waitFrames;
    for (int32_t key : collectiveKeys)
        waitFrames.append(QString::fromStdString(keyNames[static_cast<size_t>(key)]));
    const double wall = m.grid.seconds();
    const auto traceStraggler = [&](int64_t rank) -> const RankTrace* {
        const auto t = traced.find(rank);
        if (rank < 0 || t == traced.end() || t->second.lateSteps <= 0) return nullptr;
        const RankTrace& r = t->second;
        const double share = r.lateSteps / std::max(r.steps, 1.0);
        std::vector<double> others;
        for (const auto& [k, o] : traced)
            if (k != rank) others.push_back(o.lateSteps / std::max(o.steps, 1.0));
        if (share < p.get("straggler.intermittent") || share < p.get("straggler.dominance") * medianOf(others)) return nullptr;
        return &r;
    };
    std::set<int64_t> reported;
    const auto finish = [&](Finding& f, const std::string& who, const std::string& frame, double perStep, double stepS,
                            double share, const std::string& source) {
        f.rule = "STRAGGLER";
        f.impact = wall > 0 ? std::min(1.0, f.savingS / wall) : 0;
        f.severity = f.impact >= p.get("straggler.critical") ? "critical" : f.impact >= p.get("straggler.warn") ? "warn" : "info";
        const std::string late = std::isfinite(perStep) && std::isfinite(stepS) && stepS > 0
                                     ? fmt::format("{:.2f} s late ({:.0f} % of a {:.2f} s step)", perStep, 100 * perStep / stepS, stepS)
                                     : fmt::format("late for {:.0f} % of the time", 100 * f.evidence.value(QStringLiteral("lateness_share")).toDouble());
        f.title = fmt::format("Straggler: {} reaches the collectives {} in {:.0f} % of the {}{} while the others wait ({})", who, late,
                              100 * share, haveSteps || source == "traces" ? "steps" : "windows",
                              frame.empty() ? std::string() : fmt::format(", busy in {}", frame), source);
        f.recommendation = fmt::format(
            "Every rank waits for {} at the collectives{}. Take that work off the step's critical path: move it to a "
            "background thread or a DataLoader worker, spread it over the ranks, or do it less often; check the rank's "
            "own data (uneven shards or sequence lengths: pack or bucket by length) and its host (CPU binding, other "
            "processes on its cores).",
            who, frame.empty() ? std::string() : fmt::format(" while it runs {}", frame));
    };

    for (const RankStraggler& r : found) {
        const RankUnit& u = units[r.unit];
        const std::string who = unitName(u);
        const std::string named = u.rank >= 0 && u.pid > 0 ? fmt::format("{} (pid {})", who, u.pid) : who;
        Finding f;
        f.nodes = {u.node};
        // Episodes: the late windows (each speaking for the unread ones up to the next read), touching ones joined.
        std::vector<Window> lateWindows;
        std::vector<double> perStep, stepTimes;
        double saving = 0, stepsAffected = 0;
        for (size_t i = 0; i < r.late.size(); ++i) {
            const size_t k = r.late[i];
            const Window& w = groups[evaluated[k]];
            const Window span{w.fromNs, spanTo[k], w.stepS};
            const double seconds = r.lateness[i] * span.seconds();
            if (!f.episodes.empty() && f.episodes.back().endNs >= span.fromNs) {
                f.episodes.back().endNs = span.toNs;
                f.episodes.back().savingS += seconds;
            } else {
                f.episodes.push_back({span.fromNs, span.toNs, seconds});
            }
            saving += seconds;
            lateWindows.push_back(w);
            if (std::isfinite(w.stepS)) {
                perStep.push_back(r.lateness[i] * w.stepS);
                stepTimes.push_back(w.stepS);
                stepsAffected += span.seconds() / w.stepS;
            }
        }
        f.savingS = saving;
        const double latePerStep = medianOf(perStep), stepS = medianOf(stepTimes);
        const RankTrace* t = traceStraggler(u.rank);
        QJsonArray top;
        std::string frame;
        if (Status s = topFrames(r.unit, lateWindows, &top, &frame); !s) return s.error();
        QJsonArray peers;
        for (size_t v : cohorts[u.cohort])
            if (v != r.unit) peers.append(QString::fromStdString(unitName(units[v])));
        const std::string source = t ? "traces+stacks" : "stacks";
        f.evidence = QJsonObject{{QStringLiteral("unit"), QString::fromStdString(who)},
                                 {QStringLiteral("unit_kind"), QStringLiteral("rank")},
                                 {QStringLiteral("late_rank"), static_cast<qint64>(u.rank)},
                                 {QStringLiteral("late_process"), QString::fromStdString(u.process.empty() ? u.thread : u.process)},
                                 {QStringLiteral("pid"), static_cast<qint64>(u.pid)},
                                 {QStringLiteral("thread"), QString::fromStdString(u.thread)},
                                 {QStringLiteral("peers"), peers},
                                 {QStringLiteral("top_frames"), top},
                                 {QStringLiteral("wait_frames"), waitFrames},
                                 {QStringLiteral("lateness_share"), medianOf(r.lateness)},
                                 {QStringLiteral("type"), r.share >= p.get("straggler.persistent") ? QStringLiteral("persistent") : QStringLiteral("intermittent")},
                                 {QStringLiteral("share_of_steps"), r.share},
                                 {QStringLiteral("peers_median_share"), r.peerShare},
                                 {QStringLiteral("windows_judged"), static_cast<qint64>(r.judged)},
                                 {QStringLiteral("late_windows"), static_cast<qint64>(r.late.size())},
                                 {QStringLiteral("windows_read"), static_cast<qint64>(ne)},
                                 {QStringLiteral("windows"), static_cast<qint64>(groups.size())},
                                 {QStringLiteral("step_source"), QString::fromStdString(stepSource)},
                                 {QStringLiteral("source"), QString::fromStdString(source)},
                                 {QStringLiteral("total_lag_s"), saving}};
        if (haveSteps) {
            f.evidence.insert(QStringLiteral("lateness_per_step_s"), latePerStep);
            f.evidence.insert(QStringLiteral("median_step_s"), stepS);
            f.evidence.insert(QStringLiteral("steps"), static_cast<qint64>(std::llround(stepsAffected)));
        }
        if (t) {
            f.evidence.insert(QStringLiteral("trace_lateness_per_step_s"), medianOf(t->latePerStepS));
            f.evidence.insert(QStringLiteral("trace_steps"), t->steps);
            f.evidence.insert(QStringLiteral("trace_late_steps"), t->lateSteps);
        }
        f.confidence = t ? 0.9 : 0.75;
        finish(f, named, frame, latePerStep, stepS, r.share, source);
        if (u.rank >= 0) reported.insert(u.rank);
        out.push_back(std::move(f));
    }
    // From the traces alone: a rank late at the profiled collectives the stacks did not show (or there are none).
    for (const auto& [rank, r] : traced) {
        if (reported.count(rank) || !traceStraggler(rank) || r.steps < p.get("straggler.trace_min_steps") ||
            r.lateSteps < p.get("straggler.trace_share") * r.steps)
            continue;
        const std::string who = fmt::format("rank {}", rank);
        Finding f;
        f.nodes = {r.node};
        std::vector<Window> spans = r.lateSpans;
        std::sort(spans.begin(), spans.end(), [](const Window& a, const Window& b) { return a.fromNs < b.fromNs; });
        std::vector<double> stepTimes;
        for (const Window& w : spans) {
            if (!f.episodes.empty() && f.episodes.back().endNs >= w.fromNs) f.episodes.back().endNs = std::max(f.episodes.back().endNs, w.toNs);
            else f.episodes.push_back({w.fromNs, w.toNs, 0});
            stepTimes.push_back(w.stepS);
        }
        // Each episode saves the lateness of its steps.
        const double perStep = medianOf(r.latePerStepS), stepS = medianOf(stepTimes);
        for (FindingEpisode& e : f.episodes) {
            double n = 0;
            for (const Window& w : spans)
                if (w.fromNs >= e.startNs && w.fromNs < e.endNs) n += 1;
            e.savingS = r.lateS * n / static_cast<double>(spans.size());
        }
        f.savingS = r.lateS;
        // The frames, when its process was sampled.
        QJsonArray top;
        std::string frame;
        int64_t pid = 0;
        std::string process;
        for (size_t u = 0; u < units.size(); ++u)
            if (units[u].rank == rank && units[u].node == r.node) {
                pid = units[u].pid;
                process = units[u].process.empty() ? units[u].thread : units[u].process;
                if (Status s = topFrames(u, spans, &top, &frame); !s) return s.error();
                break;
            }
        if (pid == 0) pid = QString::fromStdString(r.pid).toLongLong();
        QJsonArray peers;
        for (const auto& [k, o] : traced)
            if (k != rank) peers.append(QString::fromStdString(fmt::format("rank {}", k)));
        f.evidence = QJsonObject{{QStringLiteral("unit"), QString::fromStdString(who)},
                                 {QStringLiteral("unit_kind"), QStringLiteral("rank")},
                                 {QStringLiteral("late_rank"), static_cast<qint64>(rank)},
                                 {QStringLiteral("late_process"), QString::fromStdString(process)},
                                 {QStringLiteral("pid"), static_cast<qint64>(pid)},
                                 {QStringLiteral("peers"), peers},
                                 {QStringLiteral("top_frames"), top},
                                 {QStringLiteral("lateness_per_step_s"), perStep},
                                 {QStringLiteral("median_step_s"), stepS},
                                 {QStringLiteral("steps"), r.lateSteps},
                                 {QStringLiteral("trace_steps"), r.steps},
                                 {QStringLiteral("trace_late_steps"), r.lateSteps},
                                 {QStringLiteral("share_of_steps"), r.lateSteps / r.steps},
                                 {QStringLiteral("lateness_share"), stepS > 0 ? perStep / stepS : kNaN},
                                 {QStringLiteral("source"), QStringLiteral("traces")},
                                 {QStringLiteral("total_lag_s"), r.lateS}};
        f.confidence = 0.7;
        finish(f, who, frame, perStep, stepS, r.lateSteps / r.steps, "traces");
        f.title = fmt::format("Straggler: {} reaches the collectives {:.2f} s late ({:.0f} % of a {:.2f} s step) in {:.0f} of {:.0f} "
                              "profiled steps{} while the others wait (traces)",
                              who, perStep, 100 * perStep / stepS, stepS, r.lateSteps, r.steps,
                              frame.empty() ? std::string() : fmt::format(", busy in {}", frame));
        out.push_back(std::move(f));
    }
    return out;
}

bool isRankStraggler(const Finding& f)
{
    return f.rule == "STRAGGLER" && f.evidence.value(QStringLiteral("unit_kind")).toString() == QLatin1String("rank");
}

namespace {

// The parts of `episodes` inside / outside the union of `by`, each part's saving the episode's in proportion to
// its length.
void cutEpisodes(const std::vector<FindingEpisode>& episodes, const std::vector<FindingEpisode>& by,
                 std::vector<FindingEpisode>& inside, std::vector<FindingEpisode>& outside)
{
    std::vector<FindingEpisode> cover = by;
    std::sort(cover.begin(), cover.end(), [](const FindingEpisode& a, const FindingEpisode& b) { return a.startNs < b.startNs; });
    for (const FindingEpisode& e : episodes) {
        const double length = static_cast<double>(e.endNs - e.startNs);
        const auto part = [&](int64_t from, int64_t to, std::vector<FindingEpisode>& into) {
            if (to <= from) return;
            const double saving = e.savingS >= 0 && length > 0 ? e.savingS * static_cast<double>(to - from) / length : -1;
            into.push_back({from, to, saving});
        };
        int64_t at = e.startNs;
        for (const FindingEpisode& c : cover) {
            if (c.endNs <= at || c.startNs >= e.endNs) continue;
            part(at, std::max(at, c.startNs), outside);
            part(std::max(at, c.startNs), std::min(e.endNs, c.endNs), inside);
            at = std::min(e.endNs, c.endNs);
        }
        part(at, e.endNs, outside);
    }
}

double secondsOf(const std::vector<FindingEpisode>& episodes)
{
    double s = 0;
    for (const FindingEpisode& e : episodes)
        s += static_cast<double>(e.endNs - e.startNs) / 1e9;
    return s;
}

} // namespace

void linkStragglerSymptoms(std::vector<Finding>& findings, const RuleParams& p)
{
    std::vector<Finding> split;
    for (const Finding& s : findings) {
        if (!isRankStraggler(s)) continue;
        const std::string who = s.evidence.value(QStringLiteral("unit")).toString().toStdString();
        std::set<std::string> nodes(s.nodes.begin(), s.nodes.end());
        for (Finding& f : findings) {
            if (f.rule != "COMM_BOUND" || !f.causedBy.empty()) continue;
            if (std::none_of(f.nodes.begin(), f.nodes.end(), [&](const std::string& n) { return nodes.count(n) > 0; })) continue;
            std::vector<FindingEpisode> in, out;
            cutEpisodes(f.episodes, s.episodes, in, out);
            const double total = secondsOf(f.episodes), inS = secondsOf(in);
            if (total <= 0 || inS <= 0) continue;

            // Communication-bound partly while the rank straggles: of the waits then, the straggler's lateness is
            // its symptom (at most what the straggler saves there); the rest, and the waits outside, are the
            // collectives' own and stay here. Split when the straggling part is long enough to be read on its own.
            if (inS < p.get("straggler.symptom_min_s") && inS / total < p.get("straggler.symptom_overlap")) continue;
            Finding symptom = f;
            symptom.episodes.clear();
            std::vector<FindingEpisode> own = out;
            const double totalSaving = f.savingS;
            for (const FindingEpisode& e : in) {
                const double saving = e.savingS >= 0 ? e.savingS : totalSaving * static_cast<double>(e.endNs - e.startNs) / 1e9 / total;
                const double late = std::min(saving, savingWithin(s, e.startNs, e.endNs));
                symptom.episodes.push_back({e.startNs, e.endNs, late});
                if (saving - late > 0) own.push_back({e.startNs, e.endNs, saving - late});
            }
            std::sort(own.begin(), own.end(), [](const FindingEpisode& a, const FindingEpisode& b) { return a.startNs < b.startNs; });
            f.episodes = own;
            symptom.causedBy = "STRAGGLER " + who;
            for (Finding* g : {&symptom, &f}) {
                double saving = 0;
                for (const FindingEpisode& e : g->episodes)
                    saving += std::max(0.0, e.savingS);
                const double seconds = secondsOf(g->episodes);
                g->impact *= seconds / total;
                g->savingS = saving;
                // The title's duration is the part's.
                const std::string was = fmt::format(" for {:.0f} s", total);
                if (const size_t at = g->title.find(was); at != std::string::npos)
                    g->title.replace(at, was.size(), fmt::format(" for {:.0f} s", seconds));
            }
            symptom.evidence.insert(QStringLiteral("split_from_straggler"), true);
            if (f.episodes.empty()) { // all of it the straggler's
                symptom.evidence.remove(QStringLiteral("split_from_straggler"));
                f = std::move(symptom);
                continue;
            }
            split.push_back(std::move(symptom));
        }
    }
    for (Finding& f : split)
        findings.push_back(std::move(f));
}

} // namespace runlens::analysis

