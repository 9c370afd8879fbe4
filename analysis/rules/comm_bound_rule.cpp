#include "analysis/rules/comm_bound_rule.h"

#include "analysis/flame/flame_search.h"
#include "analysis/rules/comm_profile.h"
#include "analysis/rules/comm_stacks.h"
#include "analysis/rules/steady_state.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace runlens::analysis {

using namespace comm;

namespace {

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
        RUNLENS_ASSIGN_OR_RETURN(auto t, traces->tracks());
        tracks = std::move(t);
        RUNLENS_ASSIGN_OR_RETURN(auto measured, profileNodes(*traces, tracks));
        profiles = std::move(measured);
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
                RUNLENS_ASSIGN_OR_RETURN(auto marked, backwardWaitCallsites(stacks));
                backwardCallsites = std::move(marked);
            }
            if (!runs.empty()) {
                RUNLENS_ASSIGN_OR_RETURN(auto waits, backwardWaitSamples(stacks, backwardCallsites, threads, node.node, grid, sliceSlots, slices, runs));
                for (size_t s = runs.front().first; s < runs.back().second; ++s) {
                    Slice& sl = ev[s];
                    if (!sl.hasStacks || sl.busy == 0) continue;
                    const double moved = backwardFraction * static_cast<double>(waits[s]) / static_cast<double>(sl.busy);
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
            RUNLENS_ASSIGN_OR_RETURN(auto tree, stacks.tree(q));
            // Shares of the busy (non-idle) samples; one function reached along several call paths counts once
            // per outermost occurrence, summed.
            const auto byPhase = phaseSamples(*tree);
            const double busy = static_cast<double>(std::max<int64_t>(
                tree->totalSamples() - byPhase[static_cast<size_t>(Phase::Idle)], 1));
            std::map<std::string, int64_t> commFrames; // label -> samples under its outermost comm occurrences
            addOutermostFrames(*tree, Phase::Comm, commFrames);
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
                RUNLENS_ASSIGN_OR_RETURN(auto found, traces->slices({e.startNs, e.endNs}, filter));
                for (const store::TraceSliceInfo& sl : found) {
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