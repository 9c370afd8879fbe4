#include "analysis/rules/straggler_support.h"

#include <QString>
#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

namespace runlens::analysis::straggler {

namespace {

// Collectives of one name that start further apart than this many step times are not one instance.
constexpr double kMaxInstanceSpreadSteps = 1.5;
// One rendezvous: no rank is done before the last one arrives, up to this fraction of the arrivals' spread (the
// ranks' clocks are aligned only so well).
constexpr int64_t kClockSlackDivisor = 10;

struct Arrival
{
    int64_t rank = 0;
    bool kernel = false;
    std::string name;
    int64_t tsNs = 0, endNs = 0;
};

using Spans = std::vector<std::pair<int64_t, int64_t>>;

// The step (ProfilerStep#N) a time falls in on one rank: the last one starting at or before it.
int64_t stepAt(const std::vector<std::pair<int64_t, int64_t>>& starts, int64_t ts)
{
    const auto it =
        std::upper_bound(starts.begin(), starts.end(), std::make_pair(ts, std::numeric_limits<int64_t>::max()));
    return it == starts.begin() ? -1 : std::prev(it)->second;
}

// Every ranked collective and communication kernel, in time order (CPU-side spans on CPU tracks, kernels on GPU
// tracks); each rank's node, pid and CPU-side spans go into `out`.
Expected<std::vector<Arrival>> arrivals(store::TraceReader& traces,
                                        const std::unordered_map<int64_t, const store::TraceTrackInfo*>& byId,
                                        std::map<int64_t, RankTrace>& out)
{
    store::TraceFilter filter;
    filter.categories = {store::TraceCategory::Collective, store::TraceCategory::CommKernel};
    RUNLENS_ASSIGN_OR_RETURN(auto slices, traces.slices({}, filter));
    std::vector<Arrival> all;
    for (const store::TraceSliceInfo& s : slices) {
        const auto it = byId.find(s.trackId);
        if (it == byId.end()) continue;
        const bool gpu = it->second->kind == "gpu", kernel = s.category == store::TraceCategory::CommKernel;
        if (gpu != kernel) continue;
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
    return all;
}

// Profiled windows: collectives at most straggler.trace_gap_s apart, as [first, last) in `all`.
std::vector<std::pair<size_t, size_t>> profiledWindows(const std::vector<Arrival>& all, const StragglerParams& q)
{
    const auto gap = static_cast<int64_t>(q.traceGapS * 1e9);
    std::vector<std::pair<size_t, size_t>> clusters;
    int64_t reach = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < all.size(); ++i) {
        if (clusters.empty() || all[i].tsNs > reach + gap) clusters.emplace_back(i, i);
        clusters.back().second = i + 1;
        reach = std::max(reach, all[i].endNs);
    }
    return clusters;
}

// A profiled window [from, to]: its ranks, its profiled steps (ProfilerStep#N on each rank when every rank has them)
// and its step time (the profiled steps', else the run's steps there, else the window is one step).
struct TraceWindow
{
    int64_t from = 0, to = 0;
    std::set<int64_t> ranks, kernelRanks;
    std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> stepStarts; // rank -> (start, N)
    std::map<int64_t, std::vector<double>> stepSeconds;                     // N -> its durations on the ranks
    bool profiledSteps = false;
    double stepS = kNaN;
    size_t steps = 1;
};

Status readSteps(store::TraceReader& traces, const std::unordered_map<int64_t, const store::TraceTrackInfo*>& byId,
                 const std::vector<Window>& windows, TraceWindow& pw)
{
    store::TraceFilter annotations;
    annotations.categories = {store::TraceCategory::UserAnnotation};
    RUNLENS_ASSIGN_OR_RETURN(auto marks, traces.slices({pw.from, pw.to}, annotations));
    const std::string prefix = "ProfilerStep#";
    for (const store::TraceSliceInfo& s : marks) {
        const auto it = byId.find(s.trackId);
        if (it == byId.end() || s.name.rfind(prefix, 0) != 0) continue;
        bool ok = false;
        const int64_t n = QString::fromStdString(s.name.substr(prefix.size())).toLongLong(&ok);
        if (!ok) continue;
        pw.stepStarts[it->second->rank].emplace_back(s.tsNs, n);
        pw.stepSeconds[n].push_back(static_cast<double>(s.durNs) / 1e9);
    }
    pw.profiledSteps =
        std::all_of(pw.ranks.begin(), pw.ranks.end(), [&](int64_t r) { return pw.stepStarts.count(r) > 0; });
    for (auto& [rank, v] : pw.stepStarts)
        std::sort(v.begin(), v.end());
    if (pw.profiledSteps) {
        std::vector<double> d;
        d.reserve(pw.stepSeconds.size());
        for (const auto& [n, v] : pw.stepSeconds)
            d.push_back(medianOf(v));
        pw.stepS = medianOf(d);
        pw.steps = pw.stepSeconds.size();
    } else {
        const auto w = std::find_if(windows.begin(), windows.end(), [&](const Window& x) { return x.toNs > pw.from; });
        if (w != windows.end() && w->fromNs <= pw.to && std::isfinite(w->stepS)) pw.stepS = w->stepS;
        const double span = static_cast<double>(pw.to - pw.from) / 1e9;
        if (std::isfinite(pw.stepS) && pw.stepS > 0)
            pw.steps = std::max<size_t>(1, static_cast<size_t>(std::llround(span / pw.stepS)));
        else
            pw.stepS = span;
    }
    return okStatus();
}

// The waits per (rank late, step) in the window: the k-th collective of a name is one instance on every rank
// (kernels when every rank has them: the GPU arrival, as NCCL waits on the GPU; else the CPU-side spans); the latest
// rank makes the others wait from their median arrival to its own.
std::map<std::pair<int64_t, int64_t>, Spans> lateWaits(const std::vector<Arrival>& all, size_t first, size_t last,
                                                       TraceWindow& pw)
{
    const bool useKernels = pw.kernelRanks == pw.ranks;
    std::map<std::pair<std::string, int64_t>, Spans> arrivals; // (name, rank) -> spans in order
    for (size_t i = first; i < last; ++i)
        if (all[i].kernel == useKernels) arrivals[{all[i].name, all[i].rank}].emplace_back(all[i].tsNs, all[i].endNs);
    std::map<std::pair<int64_t, int64_t>, Spans> late;
    const auto maxSpread = static_cast<int64_t>(kMaxInstanceSpreadSteps * pw.stepS * 1e9);
    for (auto it = arrivals.begin(); it != arrivals.end();) {
        const std::string name = it->first.first;
        std::vector<std::pair<int64_t, const Spans*>> perRank;
        for (; it != arrivals.end() && it->first.first == name; ++it)
            perRank.emplace_back(it->first.second, &it->second);
        if (perRank.size() < 2) continue;
        const size_t n = perRank.front().second->size();
        if (std::any_of(perRank.begin(), perRank.end(), [&](const auto& r) { return r.second->size() != n; }))
            continue; // not matched
        for (size_t k = 0; k < n; ++k) {
            size_t latest = 0;
            int64_t earliest = std::numeric_limits<int64_t>::max();
            for (size_t i = 0; i < perRank.size(); ++i) {
                earliest = std::min(earliest, (*perRank[i].second)[k].first);
                if ((*perRank[i].second)[k].first > (*perRank[latest].second)[k].first) latest = i;
            }
            const int64_t a = (*perRank[latest].second)[k].first;
            if (a - earliest > maxSpread) continue; // not one instance
            // Enqueue-only spans and point-to-point kernels matched out of turn are not one rendezvous.
            const int64_t slack = (a - earliest) / kClockSlackDivisor;
            if (std::any_of(perRank.begin(), perRank.end(),
                            [&](const auto& r) { return (*r.second)[k].second < a - slack; }))
                continue;
            std::vector<double> others;
            for (size_t i = 0; i < perRank.size(); ++i)
                if (i != latest) others.push_back(static_cast<double>((*perRank[i].second)[k].first));
            const auto m = static_cast<int64_t>(medianOf(others));
            if (a <= m) continue;
            const int64_t rank = perRank[latest].first;
            const int64_t step = pw.profiledSteps ? stepAt(pw.stepStarts[rank], a) : 0;
            late[{rank, step}].emplace_back(m, a);
        }
    }
    return late;
}

// Per rank and step: its largest wait (the waits of one step overlap: buckets enqueued as backward reaches them, the
// first ones while the others still compute, so they are not added up); late from straggler.trace_min_lag of the
// step.
void addLateness(std::map<int64_t, RankTrace>& out, TraceWindow& pw,
                 const std::map<std::pair<int64_t, int64_t>, Spans>& late, const StragglerParams& q)
{
    std::map<int64_t, std::map<int64_t, double>> lateness; // rank -> step -> seconds
    for (const auto& [key, v] : late)
        for (const auto& [a, b] : v)
            lateness[key.first][key.second] =
                std::max(lateness[key.first][key.second], static_cast<double>(b - a) / 1e9);
    for (int64_t rank : pw.ranks) {
        RankTrace& r = out[rank];
        r.steps += static_cast<double>(pw.steps);
        if (!lateness.count(rank)) continue;
        if (pw.profiledSteps) {
            for (const auto& [step, seconds] : lateness[rank]) {
                const auto d = pw.stepSeconds.find(step);
                const double own = d != pw.stepSeconds.end() ? medianOf(d->second) : pw.stepS;
                if (seconds < q.traceMinLag * own) continue;
                r.lateSteps += 1;
                r.latePerStepS.push_back(seconds);
                r.lateS += seconds;
                const auto& starts = pw.stepStarts[rank];
                const auto s = std::find_if(starts.begin(), starts.end(),
                                            [want = step](const auto& x) { return x.second == want; });
                const int64_t a = s != starts.end() ? s->first : pw.from;
                r.lateSpans.push_back({a, a + static_cast<int64_t>(own * 1e9), own});
            }
        } else {
            // The window's steps are not told apart: its largest wait stands for each of them.
            const double seconds = lateness[rank][0];
            if (seconds < q.traceMinLag * pw.stepS) continue;
            r.lateSteps += static_cast<double>(pw.steps);
            for (size_t k = 0; k < pw.steps; ++k)
                r.latePerStepS.push_back(seconds);
            r.lateS += seconds * static_cast<double>(pw.steps);
            r.lateSpans.push_back({pw.from, pw.to, pw.stepS});
        }
    }
}

} // namespace

// Per profiled window, the k-th collective of each name matched across the ranks; the latest rank's wait interval
// [the others' median arrival, its arrival] per instance, their union per rank and step.
Expected<std::map<int64_t, RankTrace>> traceLateness(store::TraceReader& traces,
                                                     const std::vector<store::TraceTrackInfo>& tracks,
                                                     const std::vector<Window>& windows, const StragglerParams& q)
{
    std::map<int64_t, RankTrace> out;
    std::unordered_map<int64_t, const store::TraceTrackInfo*> byId;
    for (const store::TraceTrackInfo& t : tracks)
        if (t.rank >= 0) byId[t.id] = &t;
    if (byId.empty()) return out;
    RUNLENS_ASSIGN_OR_RETURN(auto all, arrivals(traces, byId, out));
    for (const auto& [first, last] : profiledWindows(all, q)) {
        TraceWindow pw;
        pw.from = all[first].tsNs;
        pw.to = pw.from;
        for (size_t i = first; i < last; ++i) {
            pw.to = std::max(pw.to, all[i].endNs);
            pw.ranks.insert(all[i].rank);
            if (all[i].kernel) pw.kernelRanks.insert(all[i].rank);
        }
        if (pw.ranks.size() < 2) continue;
        RUNLENS_TRY(readSteps(traces, byId, windows, pw));
        if (!(pw.stepS > 0)) continue;
        addLateness(out, pw, lateWaits(all, first, last, pw), q);
    }
    return out;
}

} // namespace runlens::analysis::straggler
