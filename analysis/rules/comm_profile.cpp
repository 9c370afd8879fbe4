#include "analysis/rules/comm_profile.h"

#include "analysis/rules/step_detection.h"

#include <algorithm>
#include <string_view>

namespace runlens::analysis::comm {

namespace {

// ---- Intervals [start, end) in ns.

// Sorted and overlaps joined.
std::vector<Interval> merged(std::vector<Interval> v)
{
    std::sort(v.begin(), v.end());
    std::vector<Interval> out;
    for (const Interval& x : v) {
        if (x.second <= x.first) continue;
        if (!out.empty() && x.first <= out.back().second)
            out.back().second = std::max(out.back().second, x.second);
        else
            out.push_back(x);
    }
    return out;
}

int64_t lengthOf(const std::vector<Interval>& u)
{
    int64_t n = 0;
    for (const Interval& x : u)
        n += x.second - x.first;
    return n;
}

// Both merged.
int64_t overlapOf(const std::vector<Interval>& a, const std::vector<Interval>& b)
{
    int64_t n = 0;
    for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
        n += std::max<int64_t>(0, std::min(a[i].second, b[j].second) - std::max(a[i].first, b[j].first));
        if (a[i].second < b[j].second)
            ++i;
        else
            ++j;
    }
    return n;
}

std::vector<Interval> clipped(const std::vector<Interval>& u, int64_t from, int64_t to)
{
    std::vector<Interval> out;
    for (const Interval& x : u) {
        const int64_t a = std::max(x.first, from), b = std::min(x.second, to);
        if (b > a) out.emplace_back(a, b);
    }
    return out;
}

bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

Range rangeOf(const std::vector<double>& ref, double tolerance)
{
    Range r;
    for (double v : ref)
        if (std::isfinite(v)) {
            r.lo = r.used ? std::min(r.lo, v) : v;
            r.hi = r.used ? std::max(r.hi, v) : v;
            r.used = true;
        }
    if (r.used) {
        r.lo = std::max(0.0, r.lo - tolerance); // every component is a time, an activity or a rate
        r.hi += tolerance;
    }
    return r;
}

} // namespace

// ---- Communication measured in the profiled steps (docs/design.md §5, COMM_BOUND).

namespace {

using RankKey = std::pair<int64_t, int64_t>; // (node id, rank)

// Where each rank's profiled steps are: its ProfilerStep#N marks, its profiler windows, and its trace's extent.
struct RankMarks
{
    std::map<RankKey, std::string> nodeOf; // -> node name
    std::map<RankKey, std::vector<Interval>> stepMarks, windowMarks, extent;
};

Expected<RankMarks> rankMarks(store::TraceReader& traces, const std::vector<store::TraceTrackInfo>& tracks)
{
    RankMarks out;
    std::map<int64_t, const store::TraceTrackInfo*> byId;
    std::map<std::string, std::pair<int64_t, int64_t>> nodeIdAndOffset;
    for (const store::TraceTrackInfo& t : tracks) {
        byId[t.id] = &t;
        out.nodeOf[{t.nodeId, t.rank}] = t.node;
        nodeIdAndOffset[t.node] = {t.nodeId, t.clockOffsetNs};
    }
    store::TraceFilter marks;
    marks.categories = {store::TraceCategory::UserAnnotation, store::TraceCategory::Other};
    RUNLENS_ASSIGN_OR_RETURN(auto found, traces.slices({}, marks));
    for (const store::TraceSliceInfo& s : found) {
        const auto it = byId.find(s.trackId);
        if (it == byId.end() || s.durNs <= 0) continue;
        const RankKey key{it->second->nodeId, it->second->rank};
        if (startsWith(s.name, "ProfilerStep#"))
            out.stepMarks[key].emplace_back(s.tsNs, s.tsNs + s.durNs);
        else if (startsWith(s.name, "PyTorch Profiler"))
            out.windowMarks[key].emplace_back(s.tsNs, s.tsNs + s.durNs);
    }
    RUNLENS_ASSIGN_OR_RETURN(auto summary, traces.summary());
    for (const store::TraceSummaryRow& r : summary) {
        const auto node = nodeIdAndOffset.find(r.node);
        if (node == nodeIdAndOffset.end() || r.lastNs <= r.firstNs) continue;
        auto& e = out.extent[{node->second.first, r.rank}];
        const Interval x{r.firstNs + node->second.second, r.lastNs + node->second.second}; // stored times + offset
        if (e.empty())
            e.push_back(x);
        else
            e[0] = {std::min(e[0].first, x.first), std::max(e[0].second, x.second)};
    }
    return out;
}

// A rank's communication (each collective on its own, and merged), compute kernels and autograd evaluations.
struct RankActivity
{
    std::vector<Interval> commRaw, comm, compute, evals;
};

// One profiled step [w.first, w.second): its exposed communication, and the backward pass with the exposed
// communication inside it when collectives start inside backward.
ProfiledStep measureStep(int64_t rank, const Interval& w, const RankActivity& a)
{
    ProfiledStep step;
    step.rank = rank;
    step.startNs = w.first;
    step.endNs = w.second;
    const std::vector<Interval> c = clipped(a.comm, w.first, w.second), k = clipped(a.compute, w.first, w.second);
    step.exposedNs = lengthOf(c) - overlapOf(c, k);
    int64_t bwStart = std::numeric_limits<int64_t>::max(), evalEnd = std::numeric_limits<int64_t>::min();
    for (const Interval& e : a.evals)
        if (e.first >= w.first && e.first < w.second) {
            bwStart = std::min(bwStart, e.first);
            evalEnd = std::max(evalEnd, e.second);
        }
    if (bwStart < evalEnd) {
        int64_t bwEnd = evalEnd;
        bool inside = false;
        for (const Interval& x : a.commRaw)
            if (x.first >= bwStart && x.first <= evalEnd) {
                inside = true;
                bwEnd = std::max(bwEnd, x.second);
            }
        bwEnd = std::min(bwEnd, w.second);
        if (inside && bwEnd > bwStart) {
            const auto cb = clipped(c, bwStart, bwEnd), kb = clipped(k, bwStart, bwEnd);
            step.backwardNs = bwEnd - bwStart;
            step.backwardExposedNs = lengthOf(cb) - overlapOf(cb, kb);
        }
    }
    return step;
}

Expected<RankActivity> rankActivity(store::TraceReader& traces, const RankKey& key, const std::vector<Interval>& steps)
{
    store::TraceFilter filter;
    filter.nodeId = key.first;
    filter.rank = key.second;
    filter.categories = {store::TraceCategory::Collective, store::TraceCategory::CommKernel,
                         store::TraceCategory::Kernel, store::TraceCategory::CpuOp};
    RUNLENS_ASSIGN_OR_RETURN(auto slices, traces.slices({steps.front().first, steps.back().second}, filter));
    RankActivity a;
    for (const store::TraceSliceInfo& s : slices) {
        const Interval x{s.tsNs, s.tsNs + s.durNs};
        if (s.category == store::TraceCategory::Collective || s.category == store::TraceCategory::CommKernel)
            a.comm.push_back(x);
        else if (s.category == store::TraceCategory::Kernel)
            a.compute.push_back(x);
        else if (startsWith(s.name, "autograd::engine::evaluate_function"))
            a.evals.push_back(x);
    }
    a.commRaw = a.comm; // each collective on its own: those started inside backward
    a.comm = merged(std::move(a.comm));
    a.compute = merged(std::move(a.compute));
    return a;
}

// The node's shares over its steps, and its profiling windows (the steps' union over the ranks) with theirs.
void summarise(NodeProfile& profile, const std::vector<Interval>& stepSpans)
{
    double exposed = 0, total = 0, bwExposed = 0, bw = 0;
    for (const ProfiledStep& s : profile.steps) {
        exposed += static_cast<double>(s.exposedNs);
        total += static_cast<double>(s.endNs - s.startNs);
        bwExposed += static_cast<double>(s.backwardExposedNs);
        bw += static_cast<double>(s.backwardNs);
    }
    if (total > 0) profile.share = std::clamp(exposed / total, 0.0, 1.0);
    if (bw > 0) profile.backwardFraction = std::clamp(bwExposed / bw, 0.0, 1.0);
    for (const Interval& span : merged(stepSpans)) {
        ProfiledWindow w;
        w.span = span;
        double e = 0, t = 0;
        std::map<int64_t, size_t> perRank;
        for (const ProfiledStep& st : profile.steps)
            if (st.startNs >= span.first && st.endNs <= span.second) {
                e += static_cast<double>(st.exposedNs);
                t += static_cast<double>(st.endNs - st.startNs);
                ++perRank[st.rank];
            }
        for (const auto& [rank, n] : perRank)
            w.steps = std::max(w.steps, n);
        if (t > 0) w.share = std::clamp(e / t, 0.0, 1.0);
        if (!std::isfinite(w.share)) continue;
        profile.distinctSteps += w.steps;
        profile.windows.push_back(w);
    }
}

} // namespace

Expected<std::map<std::string, NodeProfile>> profileNodes(store::TraceReader& traces,
                                                          const std::vector<store::TraceTrackInfo>& tracks)
{
    std::map<std::string, NodeProfile> out;
    if (tracks.empty()) return out;
    RUNLENS_ASSIGN_OR_RETURN(auto marks, rankMarks(traces, tracks));
    std::map<std::string, std::vector<Interval>> allWindows;
    for (const auto& [key, name] : marks.nodeOf) {
        // Adjacent steps stay apart (one ends where the next begins); a mark recorded twice counts once.
        std::vector<Interval> steps = marks.stepMarks.count(key)     ? marks.stepMarks[key]
                                      : marks.windowMarks.count(key) ? marks.windowMarks[key]
                                                                     : marks.extent[key];
        std::sort(steps.begin(), steps.end());
        steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
        if (steps.empty()) continue;
        RUNLENS_ASSIGN_OR_RETURN(auto activity, rankActivity(traces, key, steps));
        NodeProfile& profile = out[name];
        for (const Interval& w : steps) {
            profile.steps.push_back(measureStep(key.second, w, activity));
            allWindows[name].push_back(w);
        }
    }
    for (auto& [name, profile] : out)
        summarise(profile, allWindows[name]);
    return out;
}

// ---- Steps and their signature.

std::vector<StepUnit> stepUnits(const RunMetrics& m, const NodeMetrics& node,
                                const std::vector<const GpuMetrics*>& gpus, const CommBoundParams& q)
{
    RunMetrics one; // only what step detection reads
    one.grid = m.grid;
    NodeMetrics n;
    n.node = node.node;
    n.stepTimes = node.stepTimes;
    n.losses = node.losses;
    one.nodes.push_back(std::move(n));
    for (const GpuMetrics* g : gpus) {
        GpuMetrics c;
        c.node = g->node;
        c.gpu = g->gpu;
        c.util = g->util;
        c.smActive = g->smActive;
        one.gpus.push_back(std::move(c));
    }
    const std::vector<StepTimes> steps = computeStepTimes(one, q.steps);
    std::vector<StepUnit> out;
    if (steps.empty() || steps[0].startsNs.empty()) return out;
    const TimeGrid& grid = m.grid;
    std::vector<double> sm(grid.size, kNaN), net(grid.size, kNaN);
    for (size_t i = 0; i < grid.size; ++i) {
        double sum = 0;
        int count = 0;
        for (const GpuMetrics* g : gpus)
            if (i < g->smActive.size() && std::isfinite(g->smActive[i])) {
                sum += g->smActive[i];
                ++count;
            }
        if (count) sm[i] = sum / count;
        const double tx = i < node.linkTx.size() ? node.linkTx[i] : kNaN,
                     rx = i < node.linkRx.size() ? node.linkRx[i] : kNaN;
        if (std::isfinite(tx) || std::isfinite(rx))
            net[i] = std::max(std::isfinite(tx) ? tx : 0, std::isfinite(rx) ? rx : 0);
    }
    const std::vector<int64_t>& starts = steps[0].startsNs;
    for (size_t k = 0; k < starts.size(); ++k) {
        StepUnit u;
        u.startNs = starts[k];
        u.endNs = k + 1 < starts.size() ? starts[k + 1] : starts[k] + std::llround(steps[0].medianStepS * 1e9);
        if (u.endNs <= u.startNs) continue;
        u.seconds = static_cast<double>(u.endNs - u.startNs) / 1e9;
        const size_t a = grid.slotOf(std::max(u.startNs, grid.startNs));
        const size_t b = std::min(grid.size, grid.slotOf(u.endNs - 1) + 1);
        if (a >= grid.size) continue;
        u.sm = meanOf(sm, a, b);
        u.cpu = meanOf(node.cpuUtil, a, b);
        u.net = meanOf(net, a, b);
        out.push_back(u);
    }
    return out;
}

// Marks the steps that overlap a profiled window's steps (measured, with its share) and those elsewhere with a
// window's signature (extrapolated, with its share; the window whose step time is nearest when several match); steps
// before the steady state or in a hang keep None. Returns each window's signature (unused: no steps overlap it).
std::vector<Signature> classifySteps(std::vector<StepUnit>& units, const NodeProfile& profile, int64_t steadyNs,
                                     const std::vector<Interval>& hangs, const CommBoundParams& q)
{
    std::vector<Signature> out(profile.windows.size());
    for (size_t w = 0; w < profile.windows.size(); ++w) {
        const Interval span = profile.windows[w].span;
        std::vector<double> seconds, sm, cpu, net;
        for (StepUnit& u : units) {
            // Overlapping the window by at least half of the shorter of the two (ranks start a step microseconds
            // apart, and the step before or after is not a profiled one).
            const int64_t overlap = std::min(span.second, u.endNs) - std::max(span.first, u.startNs);
            if (overlap <= 0 || 2 * overlap < std::min(span.second - span.first, u.endNs - u.startNs) ||
                u.share != StepShare::None)
                continue;
            u.share = StepShare::Measured;
            u.commShare = profile.windows[w].share;
            u.window = w;
            seconds.push_back(u.seconds);
            sm.push_back(u.sm);
            cpu.push_back(u.cpu);
            net.push_back(u.net);
        }
        if (seconds.empty()) continue; // the profiled steps are not among the node's steps: nothing to compare with
        Signature& sig = out[w];
        sig.step = rangeOf(seconds, q.matchStepRel * quantile(seconds, 0.5));
        sig.sm = rangeOf(sm, q.matchSmAbs);
        sig.cpu = rangeOf(cpu, q.matchCpuAbs);
        sig.net = rangeOf(net, std::max(q.matchNetRel * quantile(net, 0.5), q.matchNetFloor));
    }
    for (StepUnit& u : units) {
        if (u.share != StepShare::None || u.startNs < steadyNs) continue;
        if (std::any_of(hangs.begin(), hangs.end(),
                        [&](const Interval& h) { return h.first < u.endNs && h.second > u.startNs; }))
            continue;
        double best = std::numeric_limits<double>::infinity();
        for (size_t w = 0; w < out.size(); ++w) {
            const Signature& sig = out[w];
            if (!sig.step.used || !sig.matches(u)) continue;
            const double distance = std::abs(u.seconds - 0.5 * (sig.step.lo + sig.step.hi));
            if (distance >= best) continue;
            best = distance;
            u.share = StepShare::Extrapolated;
            u.commShare = profile.windows[w].share;
            u.window = w;
        }
    }
    return out;
}

// ---- The evidence.

QJsonArray windowsJson(const NodeProfile& profile, const std::vector<Signature>& signatures)
{
    QJsonArray windows;
    for (size_t w = 0; w < profile.windows.size(); ++w) {
        const ProfiledWindow& pw = profile.windows[w];
        QJsonObject o{{QStringLiteral("start_ns"), static_cast<qint64>(pw.span.first)},
                      {QStringLiteral("end_ns"), static_cast<qint64>(pw.span.second)},
                      {QStringLiteral("comm_share"), pw.share},
                      {QStringLiteral("steps"), static_cast<qint64>(pw.steps)}};
        if (signatures[w].step.used)
            o.insert(QStringLiteral("step_signature"), signatures[w].json());
        else
            o.insert(QStringLiteral("step_signature"),
                     QStringLiteral("none: no step of the node overlaps it, it stands for itself"));
        windows.append(o);
    }
    return windows;
}

Expected<QJsonArray> topCommKernels(store::TraceReader& traces, const std::vector<store::TraceTrackInfo>& tracks,
                                    const std::vector<FindingEpisode>& episodes, const std::string& node, size_t count)
{
    // Only the node's own tracks are read: none, nothing to read (a run without traces, or not on this node).
    const auto mine =
        std::find_if(tracks.begin(), tracks.end(), [&](const store::TraceTrackInfo& tr) { return tr.node == node; });
    std::map<std::string, int64_t> byName;
    for (const FindingEpisode& e : episodes) {
        if (mine == tracks.end()) break;
        store::TraceFilter filter;
        filter.categories = {store::TraceCategory::CommKernel, store::TraceCategory::Collective};
        filter.nodeId = mine->nodeId;
        RUNLENS_ASSIGN_OR_RETURN(auto found, traces.slices({e.startNs, e.endNs}, filter));
        for (const store::TraceSliceInfo& sl : found)
            byName[sl.name] += sl.durNs;
    }
    return topAmounts(byName, count, QStringLiteral("name"), QStringLiteral("total_s"), 1e9);
}

} // namespace runlens::analysis::comm
