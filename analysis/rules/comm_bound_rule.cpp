#include "analysis/rules/comm_bound_rule.h"

#include "analysis/rules/comm_bound_finding.h"
#include "analysis/rules/comm_profile.h"
#include "analysis/rules/comm_stacks.h"
#include "analysis/rules/steady_state.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace runlens::analysis {

using namespace comm;

namespace {

// "Most of a slice" (as for the symptom, in at least half of its GPU samples): the illusion in at least half of them,
// at least half of it in measured or extrapolated steps (their share then speaks for it), at least half of it in
// steps unlike the profiled ones (the traces then do not speak for the wait inside its backward).
constexpr double kMostOfSlice = 0.5;
// A slice entirely in measured or extrapolated steps (up to the rounding of their edges): their share already speaks
// for all of it, and the stacks inside backward are not read for it.
constexpr double kFullyCovered = 0.999;
// The illusion alone (no frames, traces or steps measure the wait): the slots showing it count as half waiting. The
// kernels are resident but idle for part of the time; how much is not measured.
constexpr double kIllusionWaitShare = 0.5;

// Integer shares of a slice's GPU samples (exact).
bool atLeastHalf(size_t part, size_t whole)
{
    return part * 2 >= whole;
}

struct Slice
{
    bool symptom = false; // under-used GPUs in most of the slice (the rule judges only these)
    bool flagged = false;
    double illusion = 0;  // fraction of slots
    double commShare = 0; // of busy stack samples (with the communication wait inside backward)
    double input = 0, host = 0, checkpoint = 0, gpuWait = 0; // the other causes' shares of busy samples
    double traceShare = 0;                                   // communication kernels / collective spans
    bool hasStacks = false;
    int64_t busy = 0;       // busy stack samples
    double stepCover = 0;   // the share of the slice in measured or extrapolated steps
    double unlikeCover = 0; // the share of the slice in steps unlike the profiled ones (their signature differs)
    double stepWaitS = 0;   // their communication wait: the measured share × their time in the slice
    int measuredSteps = 0, extrapolatedSteps = 0; // steps starting in the slice
    double waitS = 0;                             // the slice's communication wait (the saving)
    bool fromSteps = false;                       // most of the slice in measured or extrapolated steps
    int carried = -1;                             // the profiling window whose step covers most of the slice
    double carriedS = 0;                          // ... that step's time in it
    // The saving's basis: the window its steps carry (fromSteps), else -1 (the other evidence); runs shorter than
    // comm_bound.basis_min_s take their neighbour's.
    int key = -1, basis = -1;
};

// The grid's evidence slices (rules.evidence_s).
struct Slicing
{
    size_t sliceSlots = 1, slices = 0;
    int64_t sliceNs = 0;
    double sliceS = 0;
};

bool positive(const SlotValues& v)
{
    return std::any_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x > 0; });
}

// What the rule reads once per run: the traces' tracks and the profiled steps per node, the stack-sampled threads,
// the nodes with GPUs, the hangs' time, and the callsites inside backward (read when first needed).
struct RunInputs
{
    std::vector<store::TraceTrackInfo> tracks;
    std::map<std::string, NodeProfile> profiles;
    std::vector<store::StackThreadInfo> threads;
    size_t gpuNodes = 0;
    // A node without its own profile reads the backward wait at the run's fraction (the ranks run the same code).
    double runBackwardFraction = kNaN;
    std::vector<Interval> hangTimes;
    std::vector<uint8_t> backwardCallsites;
};

Expected<RunInputs> runInputs(const RunMetrics& m, FlameSource& stacks, store::TraceReader* traces,
                              const std::vector<Finding>& hangs)
{
    RunInputs in;
    if (traces) {
        RUNLENS_ASSIGN_OR_RETURN(auto t, traces->tracks());
        in.tracks = std::move(t);
        RUNLENS_ASSIGN_OR_RETURN(auto measured, profileNodes(*traces, in.tracks));
        in.profiles = std::move(measured);
    }
    for (const NodeMetrics& node : m.nodes)
        in.gpuNodes +=
            std::any_of(m.gpus.begin(), m.gpus.end(), [&](const GpuMetrics& g) { return g.node == node.node; });
    if (auto t = stacks.threads({})) in.threads = std::move(*t);
    double exposed = 0, total = 0;
    for (const auto& [name, profile] : in.profiles)
        for (const ProfiledStep& s : profile.steps) {
            exposed += static_cast<double>(s.backwardExposedNs);
            total += static_cast<double>(s.backwardNs);
        }
    if (total > 0) in.runBackwardFraction = std::clamp(exposed / total, 0.0, 1.0);
    for (const Finding& h : hangs)
        for (const FindingEpisode& e : h.episodes)
            in.hangTimes.emplace_back(e.startNs, e.endNs);
    return in;
}

// Evidence that the node's training communicates at all: several nodes; collectives or communication kernels in its
// traces; InfiniBand traffic; communication frames in its stacks; more than one rank (trace ranks, or stack-sampled
// processes).
bool communicationEvidence(const NodeMetrics& node, const std::vector<const GpuMetrics*>& gpus, const RunInputs& in,
                           const PhaseSlices& phases, size_t slices)
{
    if (in.gpuNodes > 1 || positive(node.collectiveBusy)) return true;
    // InfiniBand traffic goes to other nodes' ranks (Ethernet may be storage or a metrics push: not counted).
    if (node.linkIsInfiniBand && (positive(node.linkTx) || positive(node.linkRx))) return true;
    if (std::any_of(gpus.begin(), gpus.end(), [](const GpuMetrics* g) { return positive(g->commBusy); })) return true;
    for (size_t s = 0; s < slices; ++s) {
        const SliceShares shares = phases.at(node.node, s);
        if (shares.hasBusy() && shares.share(Phase::Comm) > 0) return true;
    }
    std::set<int64_t> ranks;
    for (const store::TraceTrackInfo& t : in.tracks)
        if (t.node == node.node && t.rank >= 0) ranks.insert(t.rank);
    std::set<std::pair<std::string, int64_t>> processes;
    for (const store::StackThreadInfo& t : in.threads)
        if (t.node == node.node && t.pid != 0) processes.emplace(t.process, t.pid);
    return ranks.size() > 1 || processes.size() > 1;
}

// The node's steps with the communication share they carry (NodeSteps): those overlapping a profiled window
// (measured), those elsewhere with its signature (extrapolated); a window none of the node's steps overlaps (no steps
// found, or none logged then) stands for itself.
NodeSteps nodeSteps(const RunMetrics& m, const NodeMetrics& node, const std::vector<const GpuMetrics*>& gpus,
                    const RunInputs& in, int64_t steadyNs, const CommBoundParams& q)
{
    NodeSteps out;
    const auto it = in.profiles.find(node.node);
    if (it != in.profiles.end() && std::isfinite(it->second.share)) out.profile = &it->second;
    out.backwardFraction = it != in.profiles.end() && std::isfinite(it->second.backwardFraction)
                               ? it->second.backwardFraction
                               : in.runBackwardFraction;
    if (!out.profile) return out;
    const NodeProfile& profile = *out.profile;
    out.units = stepUnits(m, node, gpus, q);
    out.signatures = classifySteps(out.units, profile, steadyNs, in.hangTimes, q);
    for (size_t w = 0; w < profile.windows.size(); ++w) {
        if (out.signatures[w].step.used) continue;
        const Interval span = profile.windows[w].span;
        for (StepUnit& u : out.units)
            if (u.startNs < span.second && u.endNs > span.first) u.share = StepShare::None;
        StepUnit u;
        u.startNs = span.first;
        u.endNs = span.second;
        u.seconds = static_cast<double>(span.second - span.first) / 1e9;
        u.share = StepShare::Measured;
        u.commShare = profile.windows[w].share;
        u.window = w;
        out.units.push_back(u);
    }
    return out;
}

// A step of another kind than every profiled one (a step time beyond comm_bound.unlike_step_ratio of each profiled
// window's range: an input-bound phase, accumulation over micro-steps): what the traces measured does not speak for
// the waits inside its backward. Near misses of the signature (jitter, a checkpoint in the profiled step's interval)
// are not of another kind.
bool unlikeProfiled(const StepUnit& u, const std::vector<Signature>& signatures, double ratio)
{
    return std::all_of(signatures.begin(), signatures.end(), [&](const Signature& sig) {
        return sig.step.used && std::isfinite(sig.step.lo) && std::isfinite(sig.step.hi) &&
               (u.seconds > ratio * sig.step.hi || u.seconds * ratio < sig.step.lo);
    });
}

// Per slice: the share in steps carrying a communication share and their wait, the steps starting in it, the window
// carried most; and the share in steps unlike the profiled ones.
void addStepCover(std::vector<Slice>& ev, const NodeSteps& ns, const TimeGrid& grid, const Slicing& sl,
                  int64_t steadyNs, const CommBoundParams& q)
{
    for (const StepUnit& u : ns.units) {
        if (u.share == StepShare::None) {
            if (!ns.profile || u.startNs < steadyNs || !(u.seconds > 0)) continue;
            if (!unlikeProfiled(u, ns.signatures, q.unlikeStepRatio)) continue;
            for (size_t s = grid.slotOf(std::max(u.startNs, grid.startNs)) / sl.sliceSlots; s < sl.slices; ++s) {
                const int64_t from = grid.slotStart(s * sl.sliceSlots), to = from + sl.sliceNs;
                if (from >= u.endNs) break;
                ev[s].unlikeCover +=
                    static_cast<double>(std::max<int64_t>(0, std::min(to, u.endNs) - std::max(from, u.startNs))) / 1e9 /
                    sl.sliceS;
            }
            continue;
        }
        const size_t first = grid.slotOf(std::max(u.startNs, grid.startNs));
        if (first >= grid.size) continue;
        Slice& at = ev[first / sl.sliceSlots];
        (u.share == StepShare::Measured ? at.measuredSteps : at.extrapolatedSteps) += 1;
        for (size_t s = first / sl.sliceSlots; s < sl.slices; ++s) {
            const int64_t from = grid.slotStart(s * sl.sliceSlots), to = from + sl.sliceNs;
            if (from >= u.endNs) break;
            const double overlapS =
                static_cast<double>(std::max<int64_t>(0, std::min(to, u.endNs) - std::max(from, u.startNs))) / 1e9;
            ev[s].stepCover += overlapS / sl.sliceS;
            ev[s].stepWaitS += u.commShare * overlapS;
            if (overlapS > ev[s].carriedS) {
                ev[s].carriedS = overlapS;
                ev[s].carried = static_cast<int>(u.window);
            }
        }
    }
}

// The symptom per slice of the steady state outside hangs: the node's GPUs under-used in at least half its GPU
// samples; with the illusion's share, the traces' communication share and the stacks' cause shares.
void judgeSymptoms(std::vector<Slice>& ev, const NodeMetrics& node, const std::vector<const GpuMetrics*>& gpus,
                   const PhaseSlices& phases, const TimeGrid& grid, const Slicing& sl, size_t steadySlot,
                   const std::vector<Interval>& hangTimes, const CommBoundParams& q)
{
    for (size_t s = steadySlot / sl.sliceSlots; s < sl.slices; ++s) {
        const size_t a = s * sl.sliceSlots, b = std::min(grid.size, a + sl.sliceSlots);
        const int64_t from = grid.slotStart(a), to = grid.slotStart(b);
        const bool inHang = std::any_of(hangTimes.begin(), hangTimes.end(),
                                        [&](const Interval& h) { return h.first < to && h.second > from; });
        if (inHang) continue;
        size_t known = 0, under = 0, illusion = 0;
        for (size_t i = a; i < b; ++i)
            for (const GpuMetrics* g : gpus) {
                const double u = g->util[i], sm = g->smActive[i];
                if (!std::isfinite(u) || !std::isfinite(sm)) continue;
                ++known;
                under += sm < q.smMax ? 1 : 0;
                illusion += u >= q.illusionUtil && sm <= q.illusionSm && u / 100 - sm >= q.illusionGap ? 1 : 0;
            }
        if (known == 0 || !atLeastHalf(under, known)) continue;
        Slice& e = ev[s];
        e.symptom = true;
        e.illusion = static_cast<double>(illusion) / static_cast<double>(known);
        double trace = meanOf(node.collectiveBusy, a, b);
        for (const GpuMetrics* g : gpus)
            if (const double c = meanOf(g->commBusy, a, b); std::isfinite(c))
                trace = std::isfinite(trace) ? std::max(trace, c) : c;
        e.traceShare = std::isfinite(trace) ? trace : 0;
        const SliceShares shares = phases.at(node.node, s);
        if (shares.hasBusy()) {
            e.hasStacks = true;
            e.busy = shares.busy;
            e.commShare = shares.share(Phase::Comm);
            e.input = shares.share(Phase::Input);
            e.host = shares.share(Phase::Other) + shares.share(Phase::Compute);
            e.checkpoint = shares.share(Phase::Checkpoint);
            e.gpuWait = shares.share(Phase::GpuWait);
        }
    }
}

// The training thread inside backward waits for the engine; where the traces show collectives running inside
// backward, the part of that wait the profiled steps measured as exposed communication is communication wait (the
// all-reduce runs in native code, invisible to a Python stack). Read only for the slices whose steps do not carry a
// measured share already, and not where the steps are known and unlike the profiled ones: there the traces do not
// say the wait inside backward is communication.
Status addBackwardWait(std::vector<Slice>& ev, FlameSource& stacks, RunInputs& in, const std::string& node,
                       const TimeGrid& grid, const Slicing& sl, double backwardFraction)
{
    if (!(std::isfinite(backwardFraction) && backwardFraction > 0)) return okStatus();
    std::vector<std::pair<size_t, size_t>> runs; // of slices that need it
    for (size_t s = 0; s < sl.slices; ++s) {
        if (!ev[s].symptom || !ev[s].hasStacks || ev[s].stepCover >= kFullyCovered || ev[s].unlikeCover >= kMostOfSlice)
            continue;
        if (!runs.empty() && runs.back().second == s)
            runs.back().second = s + 1;
        else
            runs.emplace_back(s, s + 1);
    }
    if (runs.empty()) return okStatus();
    if (in.backwardCallsites.empty()) {
        RUNLENS_ASSIGN_OR_RETURN(auto marked, backwardWaitCallsites(stacks));
        in.backwardCallsites = std::move(marked);
    }
    RUNLENS_ASSIGN_OR_RETURN(auto waits, backwardWaitSamples(stacks, in.backwardCallsites, in.threads, node, grid,
                                                             sl.sliceSlots, sl.slices, runs));
    for (size_t s = runs.front().first; s < runs.back().second; ++s) {
        Slice& e = ev[s];
        if (!e.hasStacks || e.busy == 0) continue;
        const double moved = backwardFraction * static_cast<double>(waits[s]) / static_cast<double>(e.busy);
        e.commShare += moved;
        e.gpuWait = std::max(0.0, e.gpuWait - moved);
    }
    return okStatus();
}

// Flags the symptom slices whose evidence is communication, with the time the training waits on it there (what
// overlapping it perfectly would save, an upper bound): in steps with a measured or extrapolated share, that share
// of their time; in the rest, the training threads' share in communication frames (with the wait inside backward)
// when sampled, else the profiled collectives' share, else part of the slice for the illusion alone.
void flagSlices(std::vector<Slice>& ev, double sliceS, const CommBoundParams& q)
{
    for (Slice& e : ev) {
        if (!e.symptom) continue;
        // A rank writing a checkpoint while the others wait for it at a barrier (a communication frame) is the
        // checkpoint's time (CKPT_GAP), not communication's.
        if (e.hasStacks && e.checkpoint >= q.share) continue;
        const double stepShare = e.stepCover > 0 ? e.stepWaitS / (e.stepCover * sliceS) : 0;
        e.fromSteps = e.stepCover >= kMostOfSlice;
        e.key = e.fromSteps ? e.carried : -1;
        e.flagged = e.illusion >= kMostOfSlice || e.commShare >= q.share || e.traceShare >= q.share ||
                    (e.fromSteps && stepShare >= q.share);
        if (!e.flagged) continue;
        double rest = e.hasStacks && e.commShare > 0 ? e.commShare
                      : e.traceShare > 0             ? e.traceShare
                                                     : kIllusionWaitShare * e.illusion;
        if (rest <= 0) rest = kIllusionWaitShare * e.illusion;
        e.waitS = std::min(sliceS, e.stepWaitS) + std::max(0.0, 1 - e.stepCover) * sliceS * std::clamp(rest, 0.0, 1.0);
        // Flagged by the illusion or frames where the profiled steps measured no exposed communication: the
        // other evidence speaks for the slice (a flagged slice never saves nothing).
        if (e.waitS <= 0) e.waitS = sliceS * std::clamp(rest, 0.0, 1.0);
    }
}

// The basis of each flagged slice's saving (steps carrying one profiling window's share, or the other evidence): a
// run of one basis shorter than comm_bound.basis_min_s takes its neighbour's (the one before, else after), so that an
// episode ends only where the basis changes for that long and savingWithin reads each stretch at its own rate.
void assignBasis(std::vector<Slice>& ev, double sliceS, const CommBoundParams& q)
{
    std::vector<size_t> idx;
    for (size_t s = 0; s < ev.size(); ++s)
        if (ev[s].flagged) idx.push_back(s);
    const auto minRun = static_cast<size_t>(std::max(1.0, std::round(q.basisMinS / sliceS)));
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

void addSlice(Tally& t, const Slice& e, double sliceS)
{
    ++t.flaggedSlices;
    t.illusion += e.illusion;
    t.comm += e.commShare;
    t.otherInput += e.input;
    t.otherHost += e.host;
    t.otherCheckpoint += e.checkpoint;
    t.otherGpuWait += e.gpuWait;
    t.trace += e.traceShare;
    t.withStacks += e.hasStacks ? 1 : 0;
    t.measuredSteps += e.measuredSteps;
    t.extrapolatedSteps += e.extrapolatedSteps;
    const double fromSteps = std::min(sliceS, e.stepWaitS);
    t.stepWaitS += fromSteps;
    t.stepCoveredS += std::min(1.0, e.stepCover) * sliceS;
    t.otherWaitS += e.waitS - fromSteps;
}

// Episodes of flagged slices of one basis, joined across gaps of at most rules.episode_gap_samples slices, each with
// its saving (its slices' waits).
std::vector<FindingEpisode> flaggedEpisodes(const std::vector<Slice>& ev, const TimeGrid& grid, const Slicing& sl,
                                            const CommBoundParams& q, Tally& t)
{
    std::vector<FindingEpisode> out;
    const auto maxGap = static_cast<size_t>(std::max(0, q.common.episodeGapSamples));
    for (size_t s = 0; s < sl.slices;) {
        if (!ev[s].flagged) {
            ++s;
            continue;
        }
        size_t last = s;
        for (size_t next = last + 1; next < sl.slices && next <= last + 1 + maxGap; ++next) {
            if (ev[next].flagged && ev[next].basis != ev[s].basis) break;
            if (ev[next].flagged) last = next;
        }
        FindingEpisode episode{grid.slotStart(s * sl.sliceSlots),
                               grid.slotStart(std::min(grid.size, (last + 1) * sl.sliceSlots)), 0};
        t.spannedSlices += static_cast<double>(last - s + 1);
        for (size_t k = s; k <= last; ++k) {
            if (!ev[k].flagged) continue;
            addSlice(t, ev[k], sl.sliceS);
            episode.savingS += ev[k].waitS;
        }
        out.push_back(episode);
        s = last + 1;
    }
    return out;
}

} // namespace

CommBoundParams CommBoundParams::from(const RuleParams& p)
{
    CommBoundParams q;
    q.common = CommonParams::from(p);
    q.steps = StepParams::from(p);
    q.smMax = p.get("comm_bound.sm_max");
    q.share = p.get("comm_bound.share");
    q.unlikeStepRatio = p.get("comm_bound.unlike_step_ratio");
    q.latencyLoad = p.get("comm_bound.latency_load");
    q.bandwidthLoad = p.get("comm_bound.bandwidth_load");
    q.matchStepRel = p.get("comm_bound.match_step_rel");
    q.matchSmAbs = p.get("comm_bound.match_sm_abs");
    q.matchCpuAbs = p.get("comm_bound.match_cpu_abs");
    q.matchNetRel = p.get("comm_bound.match_net_rel");
    q.matchNetFloor = p.get("comm_bound.match_net_floor");
    q.basisMinS = p.get("comm_bound.basis_min_s");
    q.illusionUtil = p.get("comm_bound.illusion_util");
    q.illusionSm = p.get("comm_bound.illusion_sm");
    q.illusionGap = p.get("comm_bound.illusion_gap");
    q.severity = SeverityCuts::from(p, "comm_bound");
    return q;
}

Expected<std::vector<Finding>> commBoundRule(const RunMetrics& m, FlameSource& stacks, const PhaseSlices& phases,
                                             store::TraceReader* traces, const RuleParams& params,
                                             const std::vector<Finding>& hangs)
{
    const CommBoundParams q = CommBoundParams::from(params);
    RUNLENS_ASSIGN_OR_RETURN(auto in, runInputs(m, stacks, traces, hangs));
    std::vector<Finding> out;
    const TimeGrid& grid = m.grid;
    if (grid.size == 0) return out;
    Slicing sl;
    sl.sliceSlots = grid.slotsPerSlice(q.common.evidenceS);
    sl.slices = grid.sliceCount(q.common.evidenceS);
    sl.sliceNs = grid.stepNs * static_cast<int64_t>(sl.sliceSlots);
    sl.sliceS = static_cast<double>(sl.sliceNs) / 1e9;
    for (const NodeMetrics& node : m.nodes) {
        std::vector<const GpuMetrics*> gpus;
        for (const GpuMetrics& g : m.gpus)
            if (g.node == node.node) gpus.push_back(&g);
        if (gpus.empty()) continue;
        // No communication finding without communication: the illusion alone (a waiting kernel) is a symptom, and on
        // a single process with no collective anywhere it is not a network problem (LOW_SM_EFF says it then).
        if (!communicationEvidence(node, gpus, in, phases, sl.slices)) continue;
        const bool haveSm =
            std::all_of(gpus.begin(), gpus.end(), [](const GpuMetrics* g) { return !g->smActive.empty(); });
        if (!haveSm) continue; // neither the illusion nor under-use can be told from utilization alone here
        const size_t steadySlot = steadyStartSlot(m, node.node, q.common);
        const int64_t steadyNs = grid.slotStart(std::min(steadySlot, grid.size));
        const NodeSteps ns = nodeSteps(m, node, gpus, in, steadyNs, q);
        std::vector<Slice> ev(sl.slices);
        addStepCover(ev, ns, grid, sl, steadyNs, q);
        // Start-up (before the GPUs first work) is not judged.
        judgeSymptoms(ev, node, gpus, phases, grid, sl, steadySlot, in.hangTimes, q);
        RUNLENS_TRY(addBackwardWait(ev, stacks, in, node.node, grid, sl, ns.backwardFraction));
        flagSlices(ev, sl.sliceS, q);
        assignBasis(ev, sl.sliceS, q);
        Tally t;
        std::vector<FindingEpisode> episodes = flaggedEpisodes(ev, grid, sl, q, t);
        if (episodes.empty()) continue;
        RUNLENS_ASSIGN_OR_RETURN(
            auto f, nodeFinding(stacks, traces, in.tracks, node, gpus, ns, std::move(episodes), t, grid, q));
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace runlens::analysis
