#include "analysis/rules/comm_bound_finding.h"

#include "analysis/rules/comm_stacks.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace runlens::analysis::comm {

namespace {

// The finding lists the top few communication frames and kernels.
constexpr size_t kTopEntries = 5;
// The title names the illusion as the evidence when it shows in at least half of the flagged slices' GPU samples on
// average (as it flags a slice on its own).
constexpr double kIllusionEvidence = 0.5;
// Confidence: from metrics alone the base; stack samples or a profiled step show the cause (plus); a share carried to
// steps that were not profiled, and a link capacity unknown (the sub-type is then open), each lower it.
constexpr double kConfidenceBase = 0.7, kConfidenceCauseSeen = 0.15;
constexpr double kConfidenceExtrapolated = 0.1, kConfidenceNoCapacity = 0.1;

// The GPUs' medians over the episodes, and the link load L (the busier direction's median rate / the capacity per
// direction) with the sub-type it gives. Without a recorded capacity the sub-type stays open: the run's own peak would
// make any steady traffic look like a full link.
struct LinkLoad
{
    double medUtil = kNaN, medSm = kNaN, medNet = kNaN, capacity = kNaN, load = kNaN;
    std::string capacitySource, subType;
};

LinkLoad linkLoad(const std::vector<FindingEpisode>& episodes, const NodeMetrics& node,
                  const std::vector<const GpuMetrics*>& gpus, const TimeGrid& grid, const CommBoundParams& q)
{
    std::vector<double> util, sm, net;
    for (const FindingEpisode& e : episodes)
        for (size_t i = grid.slotOf(e.startNs); i < grid.size && grid.slotStart(i) < e.endNs; ++i) {
            for (const GpuMetrics* g : gpus) {
                util.push_back(g->util[i]);
                sm.push_back(g->smActive[i]);
            }
            const double tx = i < node.linkTx.size() ? node.linkTx[i] : kNaN;
            const double rx = i < node.linkRx.size() ? node.linkRx[i] : kNaN;
            if (std::isfinite(tx) || std::isfinite(rx))
                net.push_back(std::max(std::isfinite(tx) ? tx : 0, std::isfinite(rx) ? rx : 0));
        }
    LinkLoad out;
    out.capacity = node.linkCapacity;
    out.capacitySource = std::isfinite(out.capacity)
                             ? node.linkCapacitySource
                             : std::string("unknown: no link capacity in the run (import with the "
                                           "link_capacity option, e.g. 4x200Gb/s)");
    out.medNet = quantile(net, 0.5);
    out.load =
        std::isfinite(out.capacity) && out.capacity > 0 && std::isfinite(out.medNet) ? out.medNet / out.capacity : kNaN;
    out.subType = !std::isfinite(out.load)      ? "unknown"
                  : out.load <= q.latencyLoad   ? "latency"
                  : out.load >= q.bandwidthLoad ? "bandwidth"
                                                : "latency_and_bandwidth";
    out.medUtil = quantile(util, 0.5);
    out.medSm = quantile(sm, 0.5);
    return out;
}

// The profiled steps: their communication share, and the steps it was carried to.
void addProfileEvidence(QJsonObject& evidence, const NodeSteps& ns, const std::vector<FindingEpisode>& episodes,
                        const Tally& t)
{
    const NodeProfile& profile = *ns.profile;
    std::vector<double> stepWaits;
    for (const StepUnit& u : ns.units)
        if (u.share != StepShare::None && std::any_of(episodes.begin(), episodes.end(), [&](const FindingEpisode& e) {
                return u.startNs >= e.startNs && u.startNs < e.endNs;
            }))
            stepWaits.push_back(u.commShare * u.seconds);
    evidence.insert(QStringLiteral("measured_comm_share"), profile.share);
    evidence.insert(QStringLiteral("profiled_steps"), static_cast<qint64>(profile.distinctSteps));
    evidence.insert(QStringLiteral("measured_steps"), t.measuredSteps);
    evidence.insert(QStringLiteral("extrapolated_steps"), t.extrapolatedSteps);
    evidence.insert(QStringLiteral("wait_per_step_s"), quantile(stepWaits, 0.5));
    evidence.insert(QStringLiteral("profiled_windows"), windowsJson(profile, ns.signatures));
}

std::string recommendationFor(const std::string& subType, double load)
{
    const std::string knobs =
        "ZeRO-3: stage3_prefetch_bucket_size, reduce_bucket_size, stage3_param_persistence_threshold, "
        "stage3_max_live_parameters, stage3_max_reuse_distance, sub_group_size, overlap_comm=true; FSDP: "
        "forward/backward prefetch, reshard_after_forward=False for the layers that fit";
    if (subType == "bandwidth")
        return fmt::format(
            "The links are near their capacity: send less or spread it. A TP/PP/DP layout that keeps "
            "the heavy collectives inside a node (NVLink), hierarchical collectives, gradient "
            "accumulation to reduce less often, lower-precision communication (bf16/fp8 gradients); then "
            "overlap what remains ({}).",
            knobs);
    if (subType == "unknown")
        return fmt::format("Overlap and batch the collectives: {}; gradient accumulation to synchronise less often. "
                           "The link load is unknown (no capacity recorded), so latency and bandwidth cannot be told "
                           "apart: import with the link_capacity option (e.g. 4x200Gb/s) and analyze again.",
                           knobs);
    return fmt::format("The links are far from full (link load {:.2f}): the time goes to many small, unoverlapped "
                       "collectives (latency and synchronisation), not to bandwidth. Fewer, larger and earlier "
                       "collectives: {}; gradient accumulation; check that no rank arrives late at the collectives.",
                       load, knobs);
}

// The finding's numbers, role and title from its episodes' tally and link load.
void describe(Finding& f, const NodeMetrics& node, const std::vector<const GpuMetrics*>& gpus, const Tally& t,
              const LinkLoad& link, double wall, const CommBoundParams& q)
{
    double seconds = 0;
    for (const FindingEpisode& e : f.episodes)
        seconds += static_cast<double>(e.endNs - e.startNs) / 1e9;
    const double n = std::max(t.flaggedSlices, 1.0);
    // Where the saving's share comes from: the profiled steps themselves, or steps with their signature.
    const std::string shareSource = t.extrapolatedSteps > 0 ? "extrapolated"
                                    : t.measuredSteps > 0   ? "measured"
                                                            : "none";
    f.rule = "COMM_BOUND";
    f.nodes = {node.node};
    for (const GpuMetrics* g : gpus)
        f.gpus.push_back(fmt::format("{}:gpu{}", g->node, g->gpu));
    f.impact = wall > 0 ? seconds / wall : 0;
    f.savingS = 0;
    for (const FindingEpisode& e : f.episodes)
        f.savingS += e.savingS;
    f.severity = q.severity.of(f.impact);
    f.primary = t.flaggedSlices >= kPrimaryCover * t.spannedSlices;
    // Lower without stack samples or a profiled step (the cause is then read from metrics alone), when the share is
    // carried to steps that were not profiled, and when the link capacity is unknown or estimated (the sub-type is
    // then uncertain).
    f.confidence = kConfidenceBase + (t.withStacks > 0 || t.measuredSteps > 0 ? kConfidenceCauseSeen : 0) -
                   (shareSource == "extrapolated" ? kConfidenceExtrapolated : 0) -
                   (link.subType == "unknown" ? kConfidenceNoCapacity : 0);
    const bool fromProfile = t.stepWaitS > 0 && t.stepCoveredS > 0;
    const std::string evidenceKind =
        t.illusion / n >= kIllusionEvidence ? "utilization illusion (communication kernels resident and waiting)"
        : fromProfile           ? fmt::format("profiled steps: {:.0f} % of each step waits on communication{}",
                                              100 * t.stepWaitS / t.stepCoveredS,
                                    shareSource == "extrapolated" ? ", extrapolated to steps like them" : "")
        : t.comm / n >= q.share ? "communication frames in the stack samples"
                                : "profiled collectives";
    const std::string kind = link.subType == "latency"     ? "latency/sync-bound"
                             : link.subType == "bandwidth" ? "bandwidth-bound"
                             : link.subType == "unknown"   ? "link capacity unknown"
                                                           : "between latency- and bandwidth-bound";
    f.title = fmt::format(
        "Communication-bound on {} ({}{}): GPU utilization {:.0f} % but SM activity {:.2f} for {:.0f} s ({})",
        node.node, kind, std::isfinite(link.load) ? fmt::format(", link load {:.2f}", link.load) : std::string(),
        link.medUtil, link.medSm, seconds, evidenceKind);
    f.evidence.insert(QStringLiteral("comm_share_source"), QString::fromStdString(shareSource));
}

} // namespace

// The evidence: medians, link load, the top frames and kernels, the profiled steps, the causes the stacks show.
Expected<Finding> nodeFinding(FlameSource& stacks, store::TraceReader* traces,
                              const std::vector<store::TraceTrackInfo>& tracks, const NodeMetrics& node,
                              const std::vector<const GpuMetrics*>& gpus, const NodeSteps& ns,
                              std::vector<FindingEpisode> episodes, const Tally& t, const TimeGrid& grid,
                              const CommBoundParams& q)
{
    Finding f;
    f.episodes = std::move(episodes);
    const LinkLoad link = linkLoad(f.episodes, node, gpus, grid, q);
    describe(f, node, gpus, t, link, grid.seconds(), q);
    const double n = std::max(t.flaggedSlices, 1.0);
    QJsonArray top, kernels;
    if (t.withStacks > 0) {
        RUNLENS_ASSIGN_OR_RETURN(auto frames, topCommFrames(stacks, f.episodes, node.node, kTopEntries));
        top = std::move(frames);
    }
    if (traces) {
        RUNLENS_ASSIGN_OR_RETURN(auto profiled, topCommKernels(*traces, tracks, f.episodes, node.node, kTopEntries));
        kernels = std::move(profiled);
    }
    const QJsonObject evidence{{QStringLiteral("median_gpu_util_pct"), link.medUtil},
                               {QStringLiteral("top_comm_kernels"), kernels},
                               {QStringLiteral("median_sm_active"), link.medSm},
                               {QStringLiteral("illusion_share"), t.illusion / n},
                               {QStringLiteral("comm_frame_share"), t.comm / n},
                               {QStringLiteral("trace_comm_share"), t.trace / n},
                               {QStringLiteral("median_link_bytes_per_s"), link.medNet},
                               {QStringLiteral("link_capacity_bytes_per_s"), link.capacity},
                               {QStringLiteral("link_capacity_source"), QString::fromStdString(link.capacitySource)},
                               {QStringLiteral("link_load"), link.load},
                               {QStringLiteral("sub_type"), QString::fromStdString(link.subType)},
                               {QStringLiteral("top_comm_frames"), top},
                               {QStringLiteral("saving_from_steps_s"), t.stepWaitS},
                               {QStringLiteral("saving_from_other_evidence_s"), t.otherWaitS}};
    for (auto it = evidence.begin(); it != evidence.end(); ++it)
        f.evidence.insert(it.key(), it.value());
    if (ns.profile) addProfileEvidence(f.evidence, ns, f.episodes, t);
    if (std::isfinite(ns.backwardFraction))
        f.evidence.insert(QStringLiteral("backward_comm_fraction"), ns.backwardFraction);
    // The causes the stack samples show in the episodes (shares of the busy samples): a finding that is not
    // primary is "mixed", and these say with what.
    if (t.withStacks > 0)
        f.evidence.insert(QStringLiteral("cause_shares"),
                          QJsonObject{{QStringLiteral("communication"), t.comm / n},
                                      {QStringLiteral("input"), t.otherInput / n},
                                      {QStringLiteral("host_compute"), t.otherHost / n},
                                      {QStringLiteral("checkpoint"), t.otherCheckpoint / n},
                                      {QStringLiteral("gpu_wait"), t.otherGpuWait / n}});
    f.recommendation = recommendationFor(link.subType, link.load);
    return f;
}

} // namespace runlens::analysis::comm
