#include "analysis/rules/straggler_support.h"

#include <QString>
#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

namespace runlens::analysis::straggler {

namespace {

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
    const auto it =
        std::upper_bound(starts.begin(), starts.end(), std::make_pair(ts, std::numeric_limits<int64_t>::max()));
    return it == starts.begin() ? -1 : std::prev(it)->second;
}

} // namespace

// Per profiled window, the k-th collective of each name matched across the ranks; the latest rank's wait interval
// [the others' median arrival, its arrival] per instance, their union per rank and step.
Expected<std::map<int64_t, RankTrace>> traceLateness(store::TraceReader& traces,
                                                     const std::vector<store::TraceTrackInfo>& tracks,
                                                     const std::vector<Window>& windows, const RuleParams& p)
{
    std::map<int64_t, RankTrace> out;
    std::unordered_map<int64_t, const store::TraceTrackInfo*> byId;
    for (const store::TraceTrackInfo& t : tracks)
        if (t.rank >= 0) byId[t.id] = &t;
    if (byId.empty()) return out;
    store::TraceFilter filter;
    filter.categories = {store::TraceCategory::Collective, store::TraceCategory::CommKernel};
    RUNLENS_ASSIGN_OR_RETURN(auto slices, traces.slices({}, filter));
    std::vector<Arrival> all;
    for (const store::TraceSliceInfo& s : slices) {
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
        std::map<int64_t, std::vector<double>> stepSeconds;                     // N -> its durations on the ranks
        store::TraceFilter annotations;
        annotations.categories = {store::TraceCategory::UserAnnotation};
        RUNLENS_ASSIGN_OR_RETURN(auto marks, traces.slices({from, to}, annotations));
        for (const store::TraceSliceInfo& s : marks) {
            const auto it = byId.find(s.trackId);
            if (it == byId.end() || s.name.rfind("ProfilerStep#", 0) != 0) continue;
            bool ok = false;
            const int64_t n = QString::fromStdString(s.name.substr(13)).toLongLong(&ok);
            if (!ok) continue;
            stepStarts[it->second->rank].emplace_back(s.tsNs, n);
            stepSeconds[n].push_back(static_cast<double>(s.durNs) / 1e9);
        }
        const bool profiledSteps =
            std::all_of(ranks.begin(), ranks.end(), [&](int64_t r) { return stepStarts.count(r) > 0; });
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
            if (std::isfinite(stepS) && stepS > 0)
                steps = std::max<size_t>(1, static_cast<size_t>(std::llround(span / stepS)));
            else
                stepS = span;
        }
        if (!(stepS > 0)) continue;
        // Kernels when every rank has them (the GPU arrival, as NCCL waits on the GPU), else the CPU-side spans.
        const bool useKernels = kernelRanks == ranks;
        std::map<std::pair<std::string, int64_t>, std::vector<std::pair<int64_t, int64_t>>>
            arrivals; // (name, rank) -> spans in order
        for (size_t i = first; i < last; ++i)
            if (all[i].kernel == useKernels)
                arrivals[{all[i].name, all[i].rank}].emplace_back(all[i].tsNs, all[i].endNs);
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
                // One rendezvous: no rank is done before the last one arrives (a tenth of the spread for clocks).
                // Enqueue-only spans and point-to-point kernels matched out of turn are not.
                const int64_t slack = (a - earliest) / 10;
                if (std::any_of(perRank.begin(), perRank.end(),
                                [&](const auto& r) { return (*r.second)[k].second < a - slack; }))
                    continue;
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
                lateness[key.first][key.second] =
                    std::max(lateness[key.first][key.second], static_cast<double>(b - a) / 1e9);
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
                    const auto s =
                        std::find_if(starts.begin(), starts.end(), [want = step](const auto& x) { return x.second == want; });
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

} // namespace runlens::analysis::straggler
