#include "analysis/rules/comm_bound_rule.h"

#include "analysis/flame/flame_search.h"
#include "analysis/rules/steady_state.h"
#include "analysis/rules/step_detection.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <string_view>

namespace runlens::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double meanOf(const std::vector<double>& v, size_t a, size_t b)
{
    double sum = 0;
    int n = 0;
    for (size_t i = a; i < b && i < v.size(); ++i)
        if (std::isfinite(v[i])) {
            sum += v[i];
            ++n;
        }
    return n ? sum / n : kNaN;
}

// ---- Intervals [start, end) in ns.

using Interval = std::pair<int64_t, int64_t>;

// Sorted and overlaps joined.
std::vector<Interval> merged(std::vector<Interval> v)
{
    std::sort(v.begin(), v.end());
    std::vector<Interval> out;
    for (const Interval& x : v) {
        if (x.second <= x.first) continue;
        if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
        else out.push_back(x);
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
        if (a[i].second < b[j].second) ++i;
        else ++j;
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

// ---- Communication measured in the profiled steps (docs/design.md §5, COMM_BOUND).

// One profiled step of one rank.
struct ProfiledStep
{
    int64_t rank = -1;
    int64_t startNs = 0, endNs = 0;
    int64_t exposedNs = 0; // communication on the critical path: in flight while no compute kernel of the rank runs
    // The backward pass (from the autograd engine's first evaluate_function to the end of the collectives started
    // in it) when collectives run inside it, and the exposed communication inside it; 0 otherwise.
    int64_t backwardNs = 0, backwardExposedNs = 0;
};

// A profiling window: consecutive profiled steps (of every rank), which share one communication share. A run
// profiled at several times (before and after a change, in each phase) has one per time, each carried to the
// steps like its own.
struct ProfiledWindow
{
    Interval span;
    double share = kNaN; // Σ exposed / Σ step time over its ranks' steps
    size_t steps = 0;    // the most any rank profiled in it (the ranks profile the same steps)
};

struct NodeProfile
{
    std::vector<ProfiledStep> steps;      // every rank's
    std::vector<ProfiledWindow> windows; // the steps' union over the ranks, in time order
    size_t distinctSteps = 0;             // Σ over the windows
    double share = kNaN;                  // Σ exposed / Σ step time
    double backwardFraction = kNaN;       // Σ exposed in backward / Σ backward time; NaN without collectives in backward
};

bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// The profiled steps of every rank: ProfilerStep#N annotations, else each profiler window ("PyTorch Profiler (N)")
// as one step, else the rank's whole trace.
Expected<std::map<std::string, NodeProfile>> profileNodes(store::TraceReader& traces,
                                                          const std::vector<store::TraceTrackInfo>& tracks)
{
    std::map<std::string, NodeProfile> out;
    if (tracks.empty()) return out;
    std::map<int64_t, const store::TraceTrackInfo*> byId;
    std::map<std::pair<int64_t, int64_t>, std::string> nodeOf; // (node id, rank) -> node name
    std::map<std::string, std::pair<int64_t, int64_t>> nodeIdAndOffset;
    for (const store::TraceTrackInfo& t : tracks) {
        byId[t.id] = &t;
        nodeOf[{t.nodeId, t.rank}] = t.node;
        nodeIdAndOffset[t.node] = {t.nodeId, t.clockOffsetNs};
    }
    std::map<std::pair<int64_t, int64_t>, std::vector<Interval>> stepMarks, windowMarks, extent;
    store::TraceFilter marks;
    marks.categories = {store::TraceCategory::UserAnnotation, store::TraceCategory::Other};
    auto found = traces.slices({}, marks);
    if (!found) return found.error();
    for (const store::TraceSliceInfo& s : *found) {
        const auto it = byId.find(s.trackId);
        if (it == byId.end() || s.durNs <= 0) continue;
        const std::pair<int64_t, int64_t> key{it->second->nodeId, it->second->rank};
        if (startsWith(s.name, "ProfilerStep#")) stepMarks[key].emplace_back(s.tsNs, s.tsNs + s.durNs);
        else if (startsWith(s.name, "PyTorch Profiler")) windowMarks[key].emplace_back(s.tsNs, s.tsNs + s.durNs);
    }
    auto summary = traces.summary();
    if (!summary) return summary.error();
    for (const store::TraceSummaryRow& r : *summary) {
        const auto node = nodeIdAndOffset.find(r.node);
        if (node == nodeIdAndOffset.end() || r.lastNs <= r.firstNs) continue;
        auto& e = extent[{node->second.first, r.rank}];
        const Interval x{r.firstNs + node->second.second, r.lastNs + node->second.second}; // stored times + offset
        if (e.empty()) e.push_back(x);
        else e[0] = {std::min(e[0].first, x.first), std::max(e[0].second, x.second)};
    }
    std::map<std::string, std::vector<Interval>> allWindows;
    for (const auto& [key, name] : nodeOf) {
        // Adjacent steps stay apart (one ends where the next begins); a mark recorded twice counts once.
        std::vector<Interval> steps = stepMarks.count(key) ? stepMarks[key] : windowMarks.count(key) ? windowMarks[key] : extent[key];
        std::sort(steps.begin(), steps.end());
        steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
        if (steps.empty()) continue;
        store::TraceFilter filter;
        filter.nodeId = key.first;
        filter.rank = key.second;
        filter.categories = {store::TraceCategory::Collective, store::TraceCategory::CommKernel, store::TraceCategory::Kernel,
                             store::TraceCategory::CpuOp};
        auto slices = traces.slices({steps.front().first, steps.back().second}, filter);
        if (!slices) return slices.error();
        std::vector<Interval> comm, compute, evals;
        for (const store::TraceSliceInfo& s : *slices) {
            const Interval x{s.tsNs, s.tsNs + s.durNs};
            if (s.category == store::TraceCategory::Collective || s.category == store::TraceCategory::CommKernel) comm.push_back(x);
            else if (s.category == store::TraceCategory::Kernel) compute.push_back(x);
            else if (startsWith(s.name, "autograd::engine::evaluate_function")) evals.push_back(x);
        }
        const std::vector<Interval> commRaw = comm; // each collective on its own: those started inside backward
        comm = merged(std::move(comm));
        compute = merged(std::move(compute));
        NodeProfile& profile = out[name];
        for (const Interval& w : steps) {
            ProfiledStep step;
            step.rank = key.second;
            step.startNs = w.first;
            step.endNs = w.second;
            const std::vector<Interval> c = clipped(comm, w.first, w.second), k = clipped(compute, w.first, w.second);
            step.exposedNs = lengthOf(c) - overlapOf(c, k);
            int64_t bwStart = std::numeric_limits<int64_t>::max(), evalEnd = std::numeric_limits<int64_t>::min();
            for (const Interval& e : evals)
                if (e.first >= w.first && e.first < w.second) {
                    bwStart = std::min(bwStart, e.first);
                    evalEnd = std::max(evalEnd, e.second);
                }
            if (bwStart < evalEnd) {
                int64_t bwEnd = evalEnd;
                bool inside = false;
                for (const Interval& x : commRaw)
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
            profile.steps.push_back(step);
            allWindows[name].push_back(w);
        }
    }
    for (auto& [name, profile] : out) {
        double exposed = 0, total = 0, bwExposed = 0, bw = 0;
        for (const ProfiledStep& s : profile.steps) {
            exposed += static_cast<double>(s.exposedNs);
            total += static_cast<double>(s.endNs - s.startNs);
            bwExposed += static_cast<double>(s.backwardExposedNs);
            bw += static_cast<double>(s.backwardNs);
        }
        if (total > 0) profile.share = std::clamp(exposed / total, 0.0, 1.0);
        if (bw > 0) profile.backwardFraction = std::clamp(bwExposed / bw, 0.0, 1.0);
        for (const Interval& span : merged(allWindows[name])) {
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
    return out;
}

// ---- Steps and their signature.

enum class StepShare : uint8_t
{
    None,
    Measured,     // overlaps a profiled step
    Extrapolated, // outside the profiled steps, with their signature
};

struct StepUnit
{
    int64_t startNs = 0, endNs = 0;
    double seconds = 0, sm = kNaN, cpu = kNaN, net = kNaN;
    StepShare share = StepShare::None;
    double commShare = 0; // the communication share it carries (its profiling window's)
    size_t window = 0;    // which profiling window it carries
};

// A signature component's accepted range: the reference steps' [min, max] widened by the tolerance.
struct Range
{
    bool used = false;
    double lo = kNaN, hi = kNaN;
    bool accepts(double v) const { return !used || !std::isfinite(v) || (v >= lo && v <= hi); }
    QJsonArray json() const { return QJsonArray{lo, hi}; }
};

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

struct Signature
{
    Range step, sm, cpu, net;
    bool matches(const StepUnit& u) const
    {
        return step.accepts(u.seconds) && sm.accepts(u.sm) && cpu.accepts(u.cpu) && net.accepts(u.net);
    }
    QJsonObject json() const
    {
        QJsonObject o;
        if (step.used) o.insert(QStringLiteral("step_s"), step.json());
        if (sm.used) o.insert(QStringLiteral("sm_active"), sm.json());
        if (cpu.used) o.insert(QStringLiteral("cpu_util_pct"), cpu.json());
        if (net.used) o.insert(QStringLiteral("link_bytes_per_s"), net.json());
        return o;
    }
};

// The node's steps (trainer log or periodicity, as computeStepTimes finds them) with their signature: step time, and
// the node's mean SM activity, CPU utilization and link rate over the slots they cover.
std::vector<StepUnit> stepUnits(const RunMetrics& m, const NodeMetrics& node, const std::vector<const GpuMetrics*>& gpus,
                                const RuleParams& p)
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
    const std::vector<StepTimes> steps = computeStepTimes(one, p);
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
        const double tx = i < node.linkTx.size() ? node.linkTx[i] : kNaN, rx = i < node.linkRx.size() ? node.linkRx[i] : kNaN;
        if (std::isfinite(tx) || std::isfinite(rx)) net[i] = std::max(std::isfinite(tx) ? tx : 0, std::isfinite(rx) ? rx : 0);
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
                                     const std::vector<Interval>& hangs, const RuleParams& p)
{
    std::vector<Signature> out(profile.windows.size());
    for (size_t w = 0; w < profile.windows.size(); ++w) {
        const Interval span = profile.windows[w].span;
        std::vector<double> seconds, sm, cpu, net;
        for (StepUnit& u : units) {
            // Overlapping the window by at least half of the shorter of the two (ranks start a step microseconds
            // apart, and the step before or after is not a profiled one).
            const int64_t overlap = std::min(span.second, u.endNs) - std::max(span.first, u.startNs);
            if (overlap <= 0 || 2 * overlap < std::min(span.second - span.first, u.endNs - u.startNs) || u.share != StepShare::None)
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
        sig.step = rangeOf(seconds, p.get("comm_bound.match_step_rel") * quantile(seconds, 0.5));
        sig.sm = rangeOf(sm, p.get("comm_bound.match_sm_abs"));
        sig.cpu = rangeOf(cpu, p.get("comm_bound.match_cpu_abs"));
        sig.net = rangeOf(net, std::max(p.get("comm_bound.match_net_rel") * quantile(net, 0.5), p.get("comm_bound.match_net_floor")));
    }
    for (StepUnit& u : units) {
        if (u.share != StepShare::None || u.startNs < steadyNs) continue;
        if (std::any_of(hangs.begin(), hangs.end(), [&](const Interval& h) { return h.first < u.endNs && h.second > u.startNs; }))
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

// ---- Stack samples inside backward.

// A frame of the call into the autograd engine: the training thread waits there while the engine runs the backward
// pass (and, with DDP or FSDP, the gradient collectives it launches) in native code its Python stack cannot show.
bool isBackwardFrame(const store::FrameInfo& f)
{
    const auto endsWith = [](const std::string& s, std::string_view suffix) {
        return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (f.name == "_engine_run_backward") return endsWith(f.file, "torch/autograd/graph.py");
    if (f.name == "backward") return endsWith(f.file, "torch/autograd/__init__.py");
    return f.name == "THPEngine_run_backward";
}

// Per callsite, whether the stack is inside backward with the phase packs calling it gpu_wait (a communication frame
// below the backward frame makes it communication already).
Expected<std::vector<uint8_t>> backwardWaitCallsites(FlameSource& stacks)
{
    auto catalog = stacks.catalog();
    if (!catalog) return catalog.error();
    auto phases = stacks.callsitePhases();
    if (!phases) return phases.error();
    const store::StackCatalog& c = **catalog;
    // 0 unknown, 1 no, 2 yes; a callsite is inside backward when it or an ancestor is a backward frame.
    std::vector<uint8_t> inBackward(c.callsiteCount(), 0);
    if (!inBackward.empty()) inBackward[0] = 1;
    for (size_t cs = 1; cs < c.callsiteCount(); ++cs) {
        std::vector<size_t> path;
        size_t at = cs;
        while (inBackward[at] == 0) {
            path.push_back(at);
            const auto parent = static_cast<size_t>(c.parent[at]);
            if (parent == at || parent >= c.callsiteCount()) break;
            at = parent;
        }
        uint8_t state = inBackward[at] == 0 ? 1 : inBackward[at];
        for (auto it = path.rbegin(); it != path.rend(); ++it) {
            const auto frame = static_cast<size_t>(c.frame[*it]);
            if (state == 1 && frame < c.frames.size() && isBackwardFrame(c.frames[frame])) state = 2;
            inBackward[*it] = state;
        }
    }
    std::vector<uint8_t> out(c.callsiteCount(), 0);
    for (size_t cs = 0; cs < out.size() && cs < (*phases)->size(); ++cs)
        out[cs] = inBackward[cs] == 2 && (**phases)[cs] == Phase::GpuWait ? 1 : 0;
    return out;
}

// Per evidence slice, the node's stack samples at the callsites marked in `waits`, over the runs of slices
// [first, end) given.
Expected<std::vector<int64_t>> backwardWaitSamples(FlameSource& stacks, const std::vector<uint8_t>& waits,
                                                   const std::vector<store::StackThreadInfo>& threads, const std::string& node,
                                                   const TimeGrid& grid, size_t sliceSlots, size_t slices,
                                                   const std::vector<std::pair<size_t, size_t>>& runs)
{
    std::vector<int64_t> out(slices, 0);
    const int64_t sliceNs = grid.stepNs * static_cast<int64_t>(sliceSlots);
    for (const store::StackThreadInfo& t : threads) {
        if (t.node != node || t.timedSamples == 0) continue;
        for (const auto& [first, end] : runs) {
            const store::TimeWindow window{grid.slotStart(first * sliceSlots), grid.slotStart(std::min(grid.size, end * sliceSlots)) - 1};
            auto samples = stacks.samples(t.id, window);
            if (!samples) return samples.error();
            for (const store::StackSample& s : *samples) {
                const auto cs = static_cast<size_t>(s.callsiteId);
                if (cs >= waits.size() || !waits[cs]) continue;
                const auto slice = static_cast<size_t>((s.tsNs - grid.startNs) / sliceNs);
                if (slice < slices) out[slice] += s.count;
            }
        }
    }
    return out;
}

struct Slice
{
    bool symptom = false;  // under-used GPUs in most of the slice (the rule judges only these)
    bool flagged = false;
    double illusion = 0;   // fraction of slots
    double commShare = 0;  // of busy stack samples (with the communication wait inside backward)
    double input = 0, host = 0, checkpoint = 0, gpuWait = 0; // the other causes' shares of busy samples
    double traceShare = 0; // communication kernels / collective spans
    bool hasStacks = false;
    int64_t busy = 0;            // busy stack samples
    double stepCover = 0;        // the share of the slice in measured or extrapolated steps
    double unlikeCover = 0;      // the share of the slice in steps unlike the profiled ones (their signature differs)
    double stepWaitS = 0;        // their communication wait: the measured share × their time in the slice
    int measuredSteps = 0, extrapolatedSteps = 0; // steps starting in the slice
    double waitS = 0;            // the slice's communication wait (the saving)
    bool fromSteps = false;      // most of the slice in measured or extrapolated steps
    int carried = -1;            // the profiling window whose step covers most of the slice
    double carriedS = 0;         // ... that step's time in it
    // The saving's basis: the window its steps carry (fromSteps), else -1 (the other evidence); runs shorter than
    // comm_bound.basis_min_s take their neighbour's.
    int key = -1, basis = -1;
};

bool positive(const std::vector<double>& v)
{
    return std::any_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x > 0; });
}

// Evidence that the node's training communicates at all: several nodes; collectives or communication kernels in its
// traces; InfiniBand traffic; communication frames in its stacks; more than one rank (trace ranks, or stack-sampled
// processes).
bool communicationEvidence(const NodeMetrics& node, const std::vector<const GpuMetrics*>& gpus, size_t gpuNodes,
                           const std::vector<store::TraceTrackInfo>& tracks,
                           const std::vector<store::StackThreadInfo>& threads, const PhaseSlices& phases, size_t slices)
{
    if (gpuNodes > 1 || positive(node.collectiveBusy)) return true;
    // InfiniBand traffic goes to other nodes' ranks (Ethernet may be storage or a metrics push: not counted).
    if (node.linkIsInfiniBand && (positive(node.linkTx) || positive(node.linkRx))) return true;
    if (std::any_of(gpus.begin(), gpus.end(), [](const GpuMetrics* g) { return positive(g->commBusy); })) return true;
    for (size_t s = 0; s < slices; ++s) {
        const SliceShares shares = phases.at(node.node, s);
        if (shares.hasBusy() && shares.share(Phase::Comm) > 0) return true;
    }
    std::set<int64_t> ranks;
    for (const store::TraceTrackInfo& t : tracks)
        if (t.node == node.node && t.rank >= 0) ranks.insert(t.rank);
    std::set<std::pair<std::string, int64_t>> processes;
    for (const store::StackThreadInfo& t : threads)
        if (t.node == node.node && t.pid != 0) processes.emplace(t.process, t.pid);
    return ranks.size() > 1 || processes.size() > 1;
}

} // namespace

Expected<std::vector<Finding>> commBoundRule(const RunMetrics& m, FlameSource& stacks, const PhaseSlices& phases,
                                             store::TraceReader* traces, const RuleParams& p,
                                             const std::vector<Finding>& hangs)
{
    std::vector<store::TraceTrackInfo> tracks;
    std::map<std::string, NodeProfile> profiles;
    if (traces) {
        auto t = traces->tracks();
        if (!t) return t.error();
        tracks = std::move(*t);
        auto measured = profileNodes(*traces, tracks);
        if (!measured) return measured.error();
        profiles = std::move(*measured);
    }
    std::vector<Finding> out;
    const TimeGrid& grid = m.grid;
    if (grid.size == 0) return out;
    const size_t sliceSlots = grid.slotsPerSlice(p.get("rules.evidence_s"));
    const size_t slices = grid.sliceCount(p.get("rules.evidence_s"));
    const int64_t sliceNs = grid.stepNs * static_cast<int64_t>(sliceSlots);
    const double sliceS = static_cast<double>(sliceNs) / 1e9;
    const double wall = grid.seconds();
    const double share = p.get("comm_bound.share");
    size_t gpuNodes = 0;
    for (const NodeMetrics& node : m.nodes)
        gpuNodes += std::any_of(m.gpus.begin(), m.gpus.end(), [&](const GpuMetrics& g) { return g.node == node.node; });
    std::vector<store::StackThreadInfo> threads;
    if (auto t = stacks.threads({})) threads = std::move(*t);
    std::vector<uint8_t> backwardCallsites; // read when first needed
    // A node without its own profile reads the backward wait at the run's fraction (the ranks run the same code).
    double runBackwardFraction = kNaN;
    {
        double exposed = 0, total = 0;
        for (const auto& [name, profile] : profiles)
            for (const ProfiledStep& s : profile.steps) {
                exposed += static_cast<double>(s.backwardExposedNs);
                total += static_cast<double>(s.backwardNs);
            }
        if (total > 0) runBackwardFraction = std::clamp(exposed / total, 0.0, 1.0);
    }
    std::vector<Interval> hangTimes;
    for (const Finding& h : hangs)
        for (const FindingEpisode& e : h.episodes)
            hangTimes.emplace_back(e.startNs, e.endNs);
    for (const NodeMetrics& node : m.nodes) {
        std::vector<const GpuMetrics*> gpus;
        for (const GpuMetrics& g : m.gpus)
            if (g.node == node.node) gpus.push_back(&g);
        if (gpus.empty()) continue;
        // No communication finding without communication: the illusion alone (a waiting kernel) is a symptom, and on
        // a single process with no collective anywhere it is not a network problem (LOW_SM_EFF says it then).
        if (!communicationEvidence(node, gpus, gpuNodes, tracks, threads, phases, slices)) continue;
        const bool haveSm = std::all_of(gpus.begin(), gpus.end(), [](const GpuMetrics* g) { return !g->smActive.empty(); });
        if (!haveSm) continue; // neither the illusion nor under-use can be told from utilization alone here
        const size_t steadySlot = steadyStartSlot(m, node.node, p);

        // The communication share of the profiled steps, carried to the node's steps that overlap them (measured)
        // and to the steps elsewhere with their signature (extrapolated).
        const auto profileIt = profiles.find(node.node);
        const NodeProfile* profile = profileIt != profiles.end() && std::isfinite(profileIt->second.share) ? &profileIt->second : nullptr;
        std::vector<StepUnit> units;
        std::vector<Signature> signatures;
        if (profile) {
            units = stepUnits(m, node, gpus, p);
            signatures = classifySteps(units, *profile, grid.slotStart(std::min(steadySlot, grid.size)), hangTimes, p);
            // A window none of the node's steps overlaps (no steps found, or none logged then) stands for itself.
            for (size_t w = 0; w < profile->windows.size(); ++w) {
                if (signatures[w].step.used) continue;
                const Interval span = profile->windows[w].span;
                for (StepUnit& u : units)
                    if (u.startNs < span.second && u.endNs > span.first) u.share = StepShare::None;
                StepUnit u;
                u.startNs = span.first;
                u.endNs = span.second;
                u.seconds = static_cast<double>(span.second - span.first) / 1e9;
                u.share = StepShare::Measured;
                u.commShare = profile->windows[w].share;
                u.window = w;
                units.push_back(u);
            }
        }
        std::vector<Slice> ev(slices);
        for (const StepUnit& u : units) {
            if (u.share == StepShare::None) {
                // A step of another kind than every profiled one (a step time beyond comm_bound.unlike_step_ratio
                // of each profiled window's range: an input-bound phase, accumulation over micro-steps): what the
                // traces measured does not speak for the waits inside its backward. Near misses of the signature
                // (jitter, a checkpoint in the profiled step's interval) are not of another kind.
                if (!profile || u.startNs < grid.slotStart(std::min(steadySlot, grid.size)) || !(u.seconds > 0)) continue;
                const double ratio = p.get("comm_bound.unlike_step_ratio");
                const bool unlike = std::all_of(signatures.begin(), signatures.end(), [&](const Signature& sig) {
                    return sig.step.used && std::isfinite(sig.step.lo) && std::isfinite(sig.step.hi) &&
                           (u.seconds > ratio * sig.step.hi || u.seconds * ratio < sig.step.lo);
                });
                if (!unlike) continue;
                for (size_t s = grid.slotOf(std::max(u.startNs, grid.startNs)) / sliceSlots; s < slices; ++s) {
                    const int64_t from = grid.slotStart(s * sliceSlots), to = from + sliceNs;
                    if (from >= u.endNs) break;
                    ev[s].unlikeCover += static_cast<double>(std::max<int64_t>(0, std::min(to, u.endNs) - std::max(from, u.startNs))) / 1e9 / sliceS;
                }
                continue;
            }
            const size_t first = grid.slotOf(std::max(u.startNs, grid.startNs));
            if (first >= grid.size) continue;
            Slice& at = ev[first / sliceSlots];
            (u.share == StepShare::Measured ? at.measuredSteps : at.extrapolatedSteps) += 1;
            for (size_t s = first / sliceSlots; s < slices; ++s) {
                const int64_t from = grid.slotStart(s * sliceSlots), to = from + sliceNs;
                if (from >= u.endNs) break;
                const double overlapS = static_cast<double>(std::max<int64_t>(0, std::min(to, u.endNs) - std::max(from, u.startNs))) / 1e9;
                ev[s].stepCover += overlapS / sliceS;
                ev[s].stepWaitS += u.commShare * overlapS;
                if (overlapS > ev[s].carriedS) {
                    ev[s].carriedS = overlapS;
                    ev[s].carried = static_cast<int>(u.window);
                }
            }
        }

        // Start-up (before the GPUs first work) is not judged.
        for (size_t s = steadySlot / sliceSlots; s < slices; ++s) {
            const size_t a = s * sliceSlots, b = std::min(grid.size, a + sliceSlots);
            const int64_t from = grid.slotStart(a), to = grid.slotStart(b);
            const bool inHang = std::any_of(hangTimes.begin(), hangTimes.end(), [&](const Interval& h) { return h.first < to && h.second > from; });
            if (inHang) continue;
            size_t known = 0, under = 0, illusion = 0;
            for (size_t i = a; i < b; ++i)
                for (const GpuMetrics* g : gpus) {
                    const double u = g->util[i], sm = g->smActive[i];
                    if (!std::isfinite(u) || !std::isfinite(sm)) continue;
                    ++known;
                    under += sm < p.get("comm_bound.sm_max") ? 1 : 0;
                    illusion += u >= 90 && sm <= 0.5 && u / 100 - sm >= 0.5 ? 1 : 0;
                }
            if (known == 0 || under * 2 < known) continue;
            Slice& sl = ev[s];
            sl.symptom = true;
            sl.illusion = static_cast<double>(illusion) / static_cast<double>(known);
            double trace = meanOf(node.collectiveBusy, a, b);
            for (const GpuMetrics* g : gpus)
                if (const double c = meanOf(g->commBusy, a, b); std::isfinite(c)) trace = std::isfinite(trace) ? std::max(trace, c) : c;
            sl.traceShare = std::isfinite(trace) ? trace : 0;
            const SliceShares shares = phases.at(node.node, s);
            if (shares.hasBusy()) {
                sl.hasStacks = true;
                sl.busy = shares.busy;
                sl.commShare = shares.share(Phase::Comm);
                sl.input = shares.share(Phase::Input);
                sl.host = shares.share(Phase::Other) + shares.share(Phase::Compute);
                sl.checkpoint = shares.share(Phase::Checkpoint);
                sl.gpuWait = shares.share(Phase::GpuWait);
            }
        }
        // The training thread inside backward waits for the engine; where the traces show collectives running
        // inside backward, the part of that wait the profiled steps measured as exposed communication is
        // communication wait (the all-reduce runs in native code, invisible to a Python stack). Read only for the
        // slices whose steps do not carry a measured share already.
        const double backwardFraction =
            profileIt != profiles.end() && std::isfinite(profileIt->second.backwardFraction) ? profileIt->second.backwardFraction : runBackwardFraction;
        if (std::isfinite(backwardFraction) && backwardFraction > 0) {
            std::vector<std::pair<size_t, size_t>> runs; // of slices that need it
            for (size_t s = 0; s < slices; ++s) {
                // Not where the steps are known and unlike the profiled ones: there the traces do not say the wait
                // inside backward is communication.
                if (!ev[s].symptom || !ev[s].hasStacks || ev[s].stepCover >= 0.999 || ev[s].unlikeCover >= 0.5) continue;
                if (!runs.empty() && runs.back().second == s) runs.back().second = s + 1;
                else runs.emplace_back(s, s + 1);
            }
            if (!runs.empty() && backwardCallsites.empty()) {
                auto marked = backwardWaitCallsites(stacks);
                if (!marked) return marked.error();
                backwardCallsites = std::move(*marked);
            }
            if (!runs.empty()) {
                auto waits = backwardWaitSamples(stacks, backwardCallsites, threads, node.node, grid, sliceSlots, slices, runs);
                if (!waits) return waits.error();
                for (size_t s = runs.front().first; s < runs.back().second; ++s) {
                    Slice& sl = ev[s];
                    if (!sl.hasStacks || sl.busy == 0) continue;
                    const double moved = backwardFraction * static_cast<double>((*waits)[s]) / static_cast<double>(sl.busy);
                    sl.commShare += moved;
                    sl.gpuWait = std::max(0.0, sl.gpuWait - moved);
                }
            }
        }
        for (Slice& sl : ev) {
            if (!sl.symptom) continue;
            // A rank writing a checkpoint while the others wait for it at a barrier (a communication frame) is the
            // checkpoint's time (CKPT_GAP), not communication's.
            if (sl.hasStacks && sl.checkpoint >= share) continue;
            const double stepShare = sl.stepCover > 0 ? sl.stepWaitS / (sl.stepCover * sliceS) : 0;
            sl.fromSteps = sl.stepCover >= 0.5;
            sl.key = sl.fromSteps ? sl.carried : -1;
            sl.flagged = sl.illusion >= 0.5 || sl.commShare >= share || sl.traceShare >= share || (sl.fromSteps && stepShare >= share);
            if (!sl.flagged) continue;
            // The time the training waits on communication in this slice (what overlapping it perfectly would save,
            // an upper bound): in steps with a measured or extrapolated share, that share of their time; in the
            // rest, the training threads' share in communication frames (with the wait inside backward) when
            // sampled, else the profiled collectives' share, else half the slice for the illusion alone.
            double rest = sl.hasStacks && sl.commShare > 0 ? sl.commShare : sl.traceShare > 0 ? sl.traceShare : 0.5 * sl.illusion;
            if (rest <= 0) rest = 0.5 * sl.illusion;
            sl.waitS = std::min(sliceS, sl.stepWaitS) + std::max(0.0, 1 - sl.stepCover) * sliceS * std::clamp(rest, 0.0, 1.0);
            // Flagged by the illusion or frames where the profiled steps measured no exposed communication: the
            // other evidence speaks for the slice (a flagged slice never saves nothing).
            if (sl.waitS <= 0) sl.waitS = sliceS * std::clamp(rest, 0.0, 1.0);
        }
        // Episodes of flagged slices, joined across short gaps; one finding per node. An episode also ends where the
        // basis of its saving (steps carrying one profiling window's share, or the other evidence) changes for at
        // least comm_bound.basis_min_s, so that savingWithin reads each stretch at its own rate; shorter runs of
        // another basis stay inside (their slices still count at their own rate).
        {
            std::vector<size_t> idx;
            for (size_t s = 0; s < slices; ++s)
                if (ev[s].flagged) idx.push_back(s);
            const auto minRun = static_cast<size_t>(std::max(1.0, std::round(p.get("comm_bound.basis_min_s") / sliceS)));
            int previous = -1;
            bool havePrevious = false;
            for (size_t k = 0; k < idx.size();) {
                size_t e = k;
                while (e < idx.size() && ev[idx[e]].key == ev[idx[k]].key)
                    ++e;
                int basis = ev[idx[k]].key;
                if (e - k < minRun) basis = havePrevious ? previous : e < idx.size() ? ev[idx[e]].key : basis;
                for (size_t j = k; j < e; ++j)
                    ev[idx[j]].basis = basis;
                previous = basis;
                havePrevious = true;
                k = e;
            }
        }
        const auto maxGap = static_cast<size_t>(std::max(0.0, p.get("rules.episode_gap_samples")));
        Finding f;
        double flaggedSlices = 0, spannedSlices = 0, illusion = 0, comm = 0, trace = 0, stepWaitS = 0, stepCoveredS = 0, otherWaitS = 0;
        double otherInput = 0, otherHost = 0, otherCheckpoint = 0, otherGpuWait = 0;
        int withStacks = 0, measuredSteps = 0, extrapolatedSteps = 0;
        for (size_t s = 0; s < slices;) {
            if (!ev[s].flagged) {
                ++s;
                continue;
            }
            size_t t = s;
            for (size_t next = t + 1; next < slices && next <= t + 1 + maxGap; ++next) {
                if (ev[next].flagged && ev[next].basis != ev[s].basis) break;
                if (ev[next].flagged) t = next;
            }
            const int64_t start = grid.slotStart(s * sliceSlots), end = grid.slotStart(std::min(grid.size, (t + 1) * sliceSlots));
            FindingEpisode episode{start, end, 0};
            spannedSlices += static_cast<double>(t - s + 1);
            for (size_t k = s; k <= t; ++k) {
                if (!ev[k].flagged) continue;
                ++flaggedSlices;
                illusion += ev[k].illusion;
                comm += ev[k].commShare;
                otherInput += ev[k].input;
                otherHost += ev[k].host;
                otherCheckpoint += ev[k].checkpoint;
                otherGpuWait += ev[k].gpuWait;
                trace += ev[k].traceShare;
                withStacks += ev[k].hasStacks ? 1 : 0;
                measuredSteps += ev[k].measuredSteps;
                extrapolatedSteps += ev[k].extrapolatedSteps;
                episode.savingS += ev[k].waitS;
                const double fromSteps = std::min(sliceS, ev[k].stepWaitS);
                stepWaitS += fromSteps;
                stepCoveredS += std::min(1.0, ev[k].stepCover) * sliceS;
                otherWaitS += ev[k].waitS - fromSteps;
            }
            f.episodes.push_back(episode);
            s = t + 1;
        }
        if (f.episodes.empty()) continue;
        double seconds = 0;
        for (const FindingEpisode& e : f.episodes)
            seconds += static_cast<double>(e.endNs - e.startNs) / 1e9;
        const double n = std::max(flaggedSlices, 1.0);
        // Medians of the GPUs over the episodes, and the link load when a capacity is known.
        std::vector<double> util, sm, net;
        for (const FindingEpisode& e : f.episodes)
            for (size_t i = grid.slotOf(e.startNs); i < grid.size && grid.slotStart(i) < e.endNs; ++i) {
                for (const GpuMetrics* g : gpus) {
                    util.push_back(g->util[i]);
                    sm.push_back(g->smActive[i]);
                }
                const double tx = i < node.linkTx.size() ? node.linkTx[i] : kNaN;
                const double rx = i < node.linkRx.size() ? node.linkRx[i] : kNaN;
                if (std::isfinite(tx) || std::isfinite(rx)) net.push_back(std::max(std::isfinite(tx) ? tx : 0, std::isfinite(rx) ? rx : 0));
            }
        // Link load L = the busier direction's rate / the capacity per direction. Without a recorded capacity the
        // sub-type stays open: the run's own peak would make any steady traffic look like a full link.
        const double capacity = node.linkCapacity;
        const std::string capacitySource =
            std::isfinite(capacity) ? node.linkCapacitySource
                                    : std::string("unknown: no link capacity in the run (import with the link_capacity "
                                                  "option, e.g. 4x200Gb/s)");
        const double medNet = quantile(net, 0.5);
        const double load = std::isfinite(capacity) && capacity > 0 && std::isfinite(medNet) ? medNet / capacity : kNaN;
        const std::string subType = !std::isfinite(load)                           ? "unknown"
                                    : load <= p.get("comm_bound.latency_load")     ? "latency"
                                    : load >= p.get("comm_bound.bandwidth_load")   ? "bandwidth"
                                                                                   : "latency_and_bandwidth";
        // Where the saving's share comes from: the profiled steps themselves, or steps with their signature.
        const std::string shareSource = extrapolatedSteps > 0 ? "extrapolated" : measuredSteps > 0 ? "measured" : "none";
        f.rule = "COMM_BOUND";
        f.nodes = {node.node};
        for (const GpuMetrics* g : gpus)
            f.gpus.push_back(fmt::format("{}:gpu{}", g->node, g->gpu));
        f.impact = wall > 0 ? seconds / wall : 0;
        f.savingS = 0;
        for (const FindingEpisode& e : f.episodes)
            f.savingS += e.savingS;
        f.severity = f.impact >= 0.2 ? "critical" : f.impact >= 0.1 ? "warn" : "info";
        f.primary = flaggedSlices >= 0.8 * spannedSlices;
        // Lower without stack samples or a profiled step (the cause is then read from metrics alone), when the
        // share is carried to steps that were not profiled, and when the link capacity is unknown or estimated (the
        // sub-type is then uncertain).
        f.confidence = 0.7 + (withStacks > 0 || measuredSteps > 0 ? 0.15 : 0) - (shareSource == "extrapolated" ? 0.1 : 0) -
                       (subType == "unknown" ? 0.1 : 0);
        const double medUtil = quantile(util, 0.5), medSm = quantile(sm, 0.5);
        const bool fromProfile = stepWaitS > 0 && stepCoveredS > 0;
        const std::string evidenceKind =
            illusion / n >= 0.5 ? "utilization illusion (communication kernels resident and waiting)"
            : fromProfile       ? fmt::format("profiled steps: {:.0f} % of each step waits on communication{}", 100 * stepWaitS / stepCoveredS,
                                              shareSource == "extrapolated" ? ", extrapolated to steps like them" : "")
            : comm / n >= share ? "communication frames in the stack samples"
                                : "profiled collectives";
        const std::string kind = subType == "latency"     ? "latency/sync-bound"
                                 : subType == "bandwidth" ? "bandwidth-bound"
                                 : subType == "unknown"   ? "link capacity unknown"
                                                          : "between latency- and bandwidth-bound";
        f.title = fmt::format("Communication-bound on {} ({}{}): GPU utilization {:.0f} % but SM activity {:.2f} for {:.0f} s ({})",
                              node.node, kind, std::isfinite(load) ? fmt::format(", link load {:.2f}", load) : std::string(),
                              medUtil, medSm, seconds, evidenceKind);
        // The top communication frames of the episodes.
        QJsonArray top;
        if (withStacks > 0) {
            FlameQuery q;
            q.window = {f.episodes.front().startNs, f.episodes.back().endNs - 1};
            q.nodes = {node.node};
            q.untimed = UntimedStacks::Exclude;
            auto tree = stacks.tree(q);
            if (!tree) return tree.error();
            // Shares of the busy (non-idle) samples; one function reached along several call paths counts once
            // per outermost occurrence, summed.
            const auto byPhase = phaseSamples(**tree);
            const double busy = static_cast<double>(std::max<int64_t>(
                (*tree)->totalSamples() - byPhase[static_cast<size_t>(Phase::Idle)], 1));
            std::map<std::string, int64_t> commFrames; // label -> samples under its outermost comm occurrences
            addOutermostFrames(**tree, Phase::Comm, commFrames);
            std::vector<std::pair<int64_t, std::string>> ranked;
            for (const auto& [label, samples] : commFrames)
                ranked.emplace_back(samples, label);
            std::sort(ranked.rbegin(), ranked.rend());
            for (size_t k = 0; k < ranked.size() && k < 5; ++k)
                top.append(QJsonObject{{QStringLiteral("frame"), QString::fromStdString(ranked[k].second)},
                                       {QStringLiteral("share"), static_cast<double>(ranked[k].first) / busy}});
        }
        // The communication kernels and collective spans profiled in the episodes, by total time.
        QJsonArray kernels;
        if (traces) {
            std::map<std::string, int64_t> byName;
            for (const FindingEpisode& e : f.episodes) {
                store::TraceFilter filter;
                filter.categories = {store::TraceCategory::CommKernel, store::TraceCategory::Collective};
                auto found = traces->slices({e.startNs, e.endNs}, filter);
                if (!found) return found.error();
                for (const store::TraceSliceInfo& sl : *found) {
                    const auto track = std::find_if(tracks.begin(), tracks.end(), [&](const auto& tr) { return tr.id == sl.trackId; });
                    if (track != tracks.end() && track->node != node.node) continue;
                    byName[sl.name] += sl.durNs;
                }
            }
            std::vector<std::pair<int64_t, std::string>> ranked;
            for (const auto& [name, ns] : byName)
                ranked.emplace_back(ns, name);
            std::sort(ranked.rbegin(), ranked.rend());
            for (size_t k = 0; k < ranked.size() && k < 5; ++k)
                kernels.append(QJsonObject{{QStringLiteral("name"), QString::fromStdString(ranked[k].second)},
                                           {QStringLiteral("total_s"), static_cast<double>(ranked[k].first) / 1e9}});
        }
        f.evidence = QJsonObject{{QStringLiteral("median_gpu_util_pct"), medUtil},
                                 {QStringLiteral("top_comm_kernels"), kernels},
                                 {QStringLiteral("median_sm_active"), medSm},
                                 {QStringLiteral("illusion_share"), illusion / n},
                                 {QStringLiteral("comm_frame_share"), comm / n},
                                 {QStringLiteral("trace_comm_share"), trace / n},
                                 {QStringLiteral("median_link_bytes_per_s"), medNet},
                                 {QStringLiteral("link_capacity_bytes_per_s"), capacity},
                                 {QStringLiteral("link_capacity_source"), QString::fromStdString(capacitySource)},
                                 {QStringLiteral("link_load"), load},
                                 {QStringLiteral("sub_type"), QString::fromStdString(subType)},
                                 {QStringLiteral("top_comm_frames"), top},
                                 {QStringLiteral("comm_share_source"), QString::fromStdString(shareSource)},
                                 {QStringLiteral("saving_from_steps_s"), stepWaitS},
                                 {QStringLiteral("saving_from_other_evidence_s"), otherWaitS}};
        if (profile) {
            // The profiled steps: their communication share, and the steps it was carried to.
            std::vector<double> stepWaits;
            for (const StepUnit& u : units)
                if (u.share != StepShare::None &&
                    std::any_of(f.episodes.begin(), f.episodes.end(), [&](const FindingEpisode& e) { return u.startNs >= e.startNs && u.startNs < e.endNs; }))
                    stepWaits.push_back(u.commShare * u.seconds);
            f.evidence.insert(QStringLiteral("measured_comm_share"), profile->share);
            f.evidence.insert(QStringLiteral("profiled_steps"), static_cast<qint64>(profile->distinctSteps));
            f.evidence.insert(QStringLiteral("measured_steps"), measuredSteps);
            f.evidence.insert(QStringLiteral("extrapolated_steps"), extrapolatedSteps);
            f.evidence.insert(QStringLiteral("wait_per_step_s"), quantile(stepWaits, 0.5));
            QJsonArray windows;
            for (size_t w = 0; w < profile->windows.size(); ++w) {
                const ProfiledWindow& pw = profile->windows[w];
                QJsonObject o{{QStringLiteral("start_ns"), static_cast<qint64>(pw.span.first)},
                              {QStringLiteral("end_ns"), static_cast<qint64>(pw.span.second)},
                              {QStringLiteral("comm_share"), pw.share},
                              {QStringLiteral("steps"), static_cast<qint64>(pw.steps)}};
                if (signatures[w].step.used) o.insert(QStringLiteral("step_signature"), signatures[w].json());
                else o.insert(QStringLiteral("step_signature"), QStringLiteral("none: no step of the node overlaps it, it stands for itself"));
                windows.append(o);
            }
            f.evidence.insert(QStringLiteral("profiled_windows"), windows);
        }
        if (std::isfinite(backwardFraction))
            f.evidence.insert(QStringLiteral("backward_comm_fraction"), backwardFraction);
        // The causes the stack samples show in the episodes (shares of the busy samples): a finding that is not
        // primary is "mixed", and these say with what.
        if (withStacks > 0)
            f.evidence.insert(QStringLiteral("cause_shares"),
                              QJsonObject{{QStringLiteral("communication"), comm / n},
                                          {QStringLiteral("input"), otherInput / n},
                                          {QStringLiteral("host_compute"), otherHost / n},
                                          {QStringLiteral("checkpoint"), otherCheckpoint / n},
                                          {QStringLiteral("gpu_wait"), otherGpuWait / n}});
        const std::string knobs =
            "ZeRO-3: stage3_prefetch_bucket_size, reduce_bucket_size, stage3_param_persistence_threshold, "
            "stage3_max_live_parameters, stage3_max_reuse_distance, sub_group_size, overlap_comm=true; FSDP: "
            "forward/backward prefetch, reshard_after_forward=False for the layers that fit";
        f.recommendation =
            subType == "bandwidth"
                ? fmt::format("The links are near their capacity: send less or spread it. A TP/PP/DP layout that keeps "
                              "the heavy collectives inside a node (NVLink), hierarchical collectives, gradient "
                              "accumulation to reduce less often, lower-precision communication (bf16/fp8 gradients); then "
                              "overlap what remains ({}).",
                              knobs)
            : subType == "unknown"
                ? fmt::format("Overlap and batch the collectives: {}; gradient accumulation to synchronise less often. "
                              "The link load is unknown (no capacity recorded), so latency and bandwidth cannot be told "
                              "apart: import with the link_capacity option (e.g. 4x200Gb/s) and analyze again.",
                              knobs)
                : fmt::format("The links are far from full (link load {:.2f}): the time goes to many small, unoverlapped "
                              "collectives (latency and synchronisation), not to bandwidth. Fewer, larger and earlier "
                              "collectives: {}; gradient accumulation; check that no rank arrives late at the collectives.",
                              load, knobs);
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace runlens::analysis
