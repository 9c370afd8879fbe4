#include "analysis/rules/comm_bound_rule.h"

#include "analysis/flame/flame_search.h"
#include "analysis/rules/steady_state.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace runlens::analysis {

namespace {

double meanOf(const std::vector<double>& v, size_t a, size_t b)
{
    double sum = 0;
    int n = 0;
    for (size_t i = a; i < b && i < v.size(); ++i)
        if (std::isfinite(v[i])) {
            sum += v[i];
            ++n;
        }
    return n ? sum / n : std::nan("");
}

struct Slice
{
    bool flagged = false;
    double illusion = 0;   // fraction of slots
    double commShare = 0;  // of busy stack samples
    double input = 0, host = 0, checkpoint = 0, gpuWait = 0; // the other causes' shares of busy samples
    double traceShare = 0; // communication kernels / collective spans
    bool hasStacks = false;
};

} // namespace

namespace {

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
    if (traces) {
        auto t = traces->tracks();
        if (!t) return t.error();
        tracks = std::move(*t);
    }
    std::vector<Finding> out;
    const TimeGrid& grid = m.grid;
    if (grid.size == 0) return out;
    const size_t sliceSlots = grid.slotsPerSlice(p.get("rules.evidence_s"));
    const size_t slices = grid.sliceCount(p.get("rules.evidence_s"));
    const double wall = grid.seconds();
    const double share = p.get("comm_bound.share");
    size_t gpuNodes = 0;
    for (const NodeMetrics& node : m.nodes)
        gpuNodes += std::any_of(m.gpus.begin(), m.gpus.end(), [&](const GpuMetrics& g) { return g.node == node.node; });
    std::vector<store::StackThreadInfo> threads;
    if (auto t = stacks.threads({})) threads = std::move(*t);
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
        std::vector<Slice> ev(slices);
        // Start-up (before the GPUs first work) is not judged.
        for (size_t s = steadyStartSlot(m, node.node, p) / sliceSlots; s < slices; ++s) {
            const size_t a = s * sliceSlots, b = std::min(grid.size, a + sliceSlots);
            const int64_t from = grid.slotStart(a), to = grid.slotStart(b);
            const bool inHang = std::any_of(hangs.begin(), hangs.end(), [&](const Finding& h) {
                return std::any_of(h.episodes.begin(), h.episodes.end(),
                                   [&](const FindingEpisode& e) { return e.startNs < to && e.endNs > from; });
            });
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
            sl.illusion = static_cast<double>(illusion) / static_cast<double>(known);
            double trace = meanOf(node.collectiveBusy, a, b);
            for (const GpuMetrics* g : gpus)
                if (const double c = meanOf(g->commBusy, a, b); std::isfinite(c)) trace = std::isfinite(trace) ? std::max(trace, c) : c;
            sl.traceShare = std::isfinite(trace) ? trace : 0;
            const SliceShares shares = phases.at(node.node, s);
            if (shares.hasBusy()) {
                sl.hasStacks = true;
                sl.commShare = shares.share(Phase::Comm);
                sl.input = shares.share(Phase::Input);
                sl.host = shares.share(Phase::Other) + shares.share(Phase::Compute);
                sl.checkpoint = shares.share(Phase::Checkpoint);
                sl.gpuWait = shares.share(Phase::GpuWait);
            }
            sl.flagged = sl.illusion >= 0.5 || sl.commShare >= share || sl.traceShare >= share;
        }
        // Episodes of flagged slices, joined across short gaps; one finding per node.
        const auto maxGap = static_cast<size_t>(std::max(0.0, p.get("rules.episode_gap_samples")));
        Finding f;
        double flaggedSlices = 0, spannedSlices = 0, illusion = 0, comm = 0, trace = 0, waitS = 0;
        double otherInput = 0, otherHost = 0, otherCheckpoint = 0, otherGpuWait = 0;
        int withStacks = 0;
        for (size_t s = 0; s < slices;) {
            if (!ev[s].flagged) {
                ++s;
                continue;
            }
            size_t t = s;
            for (size_t next = t + 1; next < slices && next <= t + 1 + maxGap; ++next)
                if (ev[next].flagged) t = next;
            const int64_t start = grid.slotStart(s * sliceSlots), end = grid.slotStart(std::min(grid.size, (t + 1) * sliceSlots));
            f.episodes.push_back({start, end});
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
                // The time the training waits on communication in this slice (what overlapping it perfectly would
                // save, an upper bound): the training threads' share in communication frames when sampled, else
                // the profiled collectives' share, else half the slice for the illusion alone.
                const double sliceS = static_cast<double>(grid.stepNs) * static_cast<double>(sliceSlots) / 1e9;
                const double wait = ev[k].hasStacks ? ev[k].commShare : ev[k].traceShare > 0 ? ev[k].traceShare : 0.5 * ev[k].illusion;
                waitS += sliceS * std::clamp(wait, 0.0, 1.0);
            }
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
                const double tx = i < node.linkTx.size() ? node.linkTx[i] : std::nan("");
                const double rx = i < node.linkRx.size() ? node.linkRx[i] : std::nan("");
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
        const double load = std::isfinite(capacity) && capacity > 0 && std::isfinite(medNet) ? medNet / capacity : std::nan("");
        const std::string subType = !std::isfinite(load)                           ? "unknown"
                                    : load <= p.get("comm_bound.latency_load")     ? "latency"
                                    : load >= p.get("comm_bound.bandwidth_load")   ? "bandwidth"
                                                                                   : "latency_and_bandwidth";
        f.rule = "COMM_BOUND";
        f.nodes = {node.node};
        for (const GpuMetrics* g : gpus)
            f.gpus.push_back(fmt::format("{}:gpu{}", g->node, g->gpu));
        f.impact = wall > 0 ? seconds / wall : 0;
        f.savingS = waitS;
        f.severity = f.impact >= 0.2 ? "critical" : f.impact >= 0.1 ? "warn" : "info";
        f.primary = flaggedSlices >= 0.8 * spannedSlices;
        // Lower without stack samples (the cause is then read from metrics and traces only) and when the link
        // capacity is unknown or estimated (the sub-type is then uncertain).
        f.confidence = (withStacks > 0 ? 0.85 : 0.7) - (subType == "unknown" ? 0.1 : 0);
        const double medUtil = quantile(util, 0.5), medSm = quantile(sm, 0.5);
        const std::string evidenceKind = illusion / n >= 0.5 ? "utilization illusion (communication kernels resident and waiting)"
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
                                 {QStringLiteral("top_comm_frames"), top}};
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
