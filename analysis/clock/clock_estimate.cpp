#include "analysis/clock/clock_estimate.h"

#include "analysis/clock/clock_align.h"
#include "analysis/store/node_clock.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/run_settings.h"
#include "analysis/store/saturating.h"
#include "analysis/store/trace_reader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace runlens::analysis {
namespace {

using store::TraceCategory;

// What a node offers to line it up: its ranks' collective ends per category, and its mean GPU activity.
struct NodeData
{
    int64_t id = 0;
    std::string name;
    std::map<int64_t, CollectiveEnds> commKernels; // by rank
    std::map<int64_t, CollectiveEnds> collectives;
    int64_t traceEnds = 0;
    std::string metric; // gpu.sm_active or gpu.util
    std::vector<TimedValues> gpus;
    int64_t gpuPoints = 0;
    int64_t intervalNs = 0;
    int64_t firstNs = 0, lastNs = 0;
};

std::vector<CollectiveEnds> ranksOf(const std::map<int64_t, CollectiveEnds>& byRank)
{
    std::vector<CollectiveEnds> out;
    out.reserve(byRank.size());
    for (const auto& [rank, ends] : byRank)
        out.push_back(ends);
    return out;
}

Status readTraces(store::RunDatabase& db, std::map<int64_t, NodeData>& nodes)
{
    store::TraceReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto tracks, reader.tracks());
    std::map<int64_t, const store::TraceTrackInfo*> byId;
    for (const store::TraceTrackInfo& t : tracks)
        byId[t.id] = &t;
    for (auto& [id, n] : nodes) {
        store::TraceFilter filter;
        filter.categories = {TraceCategory::CommKernel, TraceCategory::Collective};
        filter.nodeId = id;
        RUNLENS_ASSIGN_OR_RETURN(auto slices, reader.slices(store::TimeWindow{}, filter));
        for (const store::TraceSliceInfo& s : slices) {
            const auto t = byId.find(s.trackId);
            if (t == byId.end()) continue;
            auto& byRank = s.category == TraceCategory::CommKernel ? n.commKernels : n.collectives;
            // The end as imported: the reader added the node's current offset.
            byRank[t->second->rank][s.name].push_back(
                store::saturatingAdd(store::saturatingSub(s.tsNs, t->second->clockOffsetNs), s.durNs));
            ++n.traceEnds;
        }
        for (auto* byRank : {&n.commKernels, &n.collectives})
            for (auto& [rank, ends] : *byRank)
                for (auto& [name, list] : ends)
                    std::sort(list.begin(), list.end());
    }
    return okStatus();
}

Status readActivity(store::RunDatabase& db, std::map<int64_t, NodeData>& nodes,
                    const std::map<int64_t, int64_t>& offsets)
{
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto series, reader.series());
    for (const store::SeriesInfo& s : series) {
        auto it = nodes.find(s.nodeId);
        if (it == nodes.end() || s.metric != it->second.metric) continue;
        NodeData& n = it->second;
        RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readPoints(s.id, store::TimeWindow{}));
        TimedValues v;
        const int64_t offset = offsets.at(s.nodeId);
        for (const store::Point& p : points) {
            v.ts.push_back(store::saturatingSub(p.tsNs, offset));
            v.values.push_back(p.missing ? std::nan("") : p.value);
        }
        if (v.ts.size() < 2) continue;
        n.firstNs = n.gpus.empty() ? v.ts.front() : std::min(n.firstNs, v.ts.front());
        n.lastNs = n.gpus.empty() ? v.ts.back() : std::max(n.lastNs, v.ts.back());
        n.gpuPoints += static_cast<int64_t>(v.ts.size());
        const int64_t interval = medianInterval(v.ts);
        n.intervalNs = n.intervalNs == 0 ? interval : std::min(n.intervalNs, interval);
        n.gpus.push_back(std::move(v));
    }
    return okStatus();
}

// The run setting that keeps what the last estimate read and found.
constexpr const char* kClockInputsSetting = "clock.inputs";
// Changed when the estimate changes: the results kept from an estimate made another way are not reused.
constexpr int kEstimateVersion = 1;

std::string methodOf(const ClockParams& p)
{
    return fmt::format("{} {} {} {} {} {} {} {} {} {}", kEstimateVersion, p.minTraceMatches, p.maxTraceResidualNs,
                       p.maxTraceNameSpreadRatio, p.minTraceUncertaintyNs, p.maxMetricLagNs, p.minMetricOverlap,
                       p.minMetricPeak, p.minMetricPeakMargin, p.maxMetricGridSamples);
}

// What the last estimate kept (applyClockEstimates writes it).
struct KeptEstimate
{
    std::string method;
    ClockInputs inputs;
    std::map<std::string, std::string> foundFrom;
    std::string reference;
    int64_t referenceOffsetNs = 0; // as stored after the estimate
    std::string referenceSource;
};

std::string encodeKept(const KeptEstimate& k)
{
    QJsonArray rows;
    for (const auto& [node, c] : k.inputs) {
        const auto found = k.foundFrom.find(node);
        rows.append(QJsonArray{QString::fromStdString(node), static_cast<double>(c.traceEnds),
                               QString::fromStdString(c.metric), static_cast<double>(c.gpuSeries),
                               static_cast<double>(c.gpuPoints),
                               QString::fromStdString(found == k.foundFrom.end() ? "" : found->second)});
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("method"), QString::fromStdString(k.method)},
                                     {QStringLiteral("reference"), QString::fromStdString(k.reference)},
                                     {QStringLiteral("reference_offset_ns"),
                                      QString::fromStdString(std::to_string(k.referenceOffsetNs))},
                                     {QStringLiteral("reference_source"), QString::fromStdString(k.referenceSource)},
                                     {QStringLiteral("nodes"), rows}})
        .toJson(QJsonDocument::Compact)
        .toStdString();
}

// A count as encodeKept writes it: a whole number from 0 to 2^53.
std::optional<int64_t> keptCount(const QJsonValue& v)
{
    if (!v.isDouble()) return std::nullopt;
    const double d = v.toDouble();
    if (!(d >= 0 && d <= 9007199254740992.0) || d != std::floor(d)) return std::nullopt;
    return static_cast<int64_t>(d);
}

// nullopt when the text is not what encodeKept writes.
std::optional<KeptEstimate> decodeKept(const std::string& text)
{
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(text));
    if (!doc.isObject()) return std::nullopt;
    const QJsonObject o = doc.object();
    KeptEstimate k;
    k.method = o.value(QStringLiteral("method")).toString().toStdString();
    k.reference = o.value(QStringLiteral("reference")).toString().toStdString();
    k.referenceSource = o.value(QStringLiteral("reference_source")).toString().toStdString();
    bool ok = false;
    k.referenceOffsetNs = o.value(QStringLiteral("reference_offset_ns")).toString().toLongLong(&ok);
    if (!ok || !o.value(QStringLiteral("nodes")).isArray()) return std::nullopt;
    for (const auto& v : o.value(QStringLiteral("nodes")).toArray()) {
        const QJsonArray row = v.toArray();
        if (row.size() != 6 || !row[0].isString() || !row[2].isString() || !row[5].isString()) return std::nullopt;
        const auto ends = keptCount(row[1]), series = keptCount(row[3]), points = keptCount(row[4]);
        if (!ends || !series || !points) return std::nullopt;
        const std::string node = row[0].toString().toStdString();
        k.inputs[node] = ClockInputCounts{*ends, row[2].toString().toStdString(), *series, *points};
        k.foundFrom[node] = row[5].toString().toStdString();
    }
    return k;
}

// The reference by the inputs: the most trace ends, then the most GPU points, then the first in the list (by name);
// nullptr when no node has either.
const store::NodeInfo* referenceOf(const std::vector<store::NodeInfo>& nodeList, const ClockInputs& inputs)
{
    static const ClockInputCounts kNone;
    const store::NodeInfo* ref = nullptr;
    const ClockInputCounts* best = &kNone;
    for (const store::NodeInfo& info : nodeList) {
        const auto it = inputs.find(info.name);
        const ClockInputCounts& c = it == inputs.end() ? kNone : it->second;
        if (!ref || c.traceEnds > best->traceEnds ||
            (c.traceEnds == best->traceEnds && c.gpuPoints > best->gpuPoints)) {
            ref = &info;
            best = &c;
        }
    }
    return best->traceEnds == 0 && best->gpuPoints == 0 ? nullptr : ref;
}

// Which nodes to estimate, and what the others found last time.
struct EstimatePlan
{
    std::set<std::string> chosen;
    std::map<std::string, std::string> lastFound; // the nodes not chosen: the source their estimate came from
};

// With ClockScope::Changed and the last estimate kept: the reference and the nodes whose inputs differ, when the
// estimate is made the same way and the reference is the same node with the same inputs, GPU activity (or no node
// has any) and the same stored offset and source; else every node.
Expected<EstimatePlan> planEstimate(store::RunDatabase& db, const std::vector<store::NodeInfo>& nodeList,
                                    const ClockInputs& inputs, const store::NodeInfo* ref, const std::string& method,
                                    ClockScope scope)
{
    EstimatePlan all;
    for (const store::NodeInfo& n : nodeList)
        all.chosen.insert(n.name);
    if (scope == ClockScope::All || !ref) return all;
    RUNLENS_ASSIGN_OR_RETURN(auto settings, store::loadRunSettings(db));
    const auto setting = settings.find(kClockInputsSetting);
    if (setting == settings.end()) return all;
    const std::optional<KeptEstimate> last = decodeKept(setting->second);
    if (!last || last->method != method || last->reference != ref->name ||
        last->referenceOffsetNs != ref->clockOffsetNs || last->referenceSource != ref->clockOffsetSource)
        return all;
    for (const auto& [node, c] : last->inputs)
        if (!all.chosen.count(node)) return all; // a node has gone
    // Nodes lined up by metrics need the reference's activity (else a node lined up by traces stands in for it).
    const bool anyActivity =
        std::any_of(inputs.begin(), inputs.end(), [](const auto& node) { return node.second.gpuPoints > 0; });
    const auto then = last->inputs.find(ref->name);
    if (then == last->inputs.end() || !(then->second == inputs.at(ref->name)) ||
        (then->second.gpuPoints == 0 && anyActivity))
        return all;
    EstimatePlan changed;
    changed.chosen.insert(ref->name);
    for (const auto& [node, c] : inputs)
        if (const auto it = last->inputs.find(node); it == last->inputs.end() || !(it->second == c))
            changed.chosen.insert(node);
    for (const auto& [node, source] : last->foundFrom)
        if (!changed.chosen.count(node)) changed.lastFound[node] = source;
    return changed;
}

std::string seconds(int64_t ns)
{
    return formatClockDuration(ns, false);
}

} // namespace

std::string formatClockDuration(int64_t ns, bool sign)
{
    const double a = std::fabs(static_cast<double>(ns));
    const char* s = sign ? (ns < 0 ? "-" : "+") : (ns < 0 ? "-" : "");
    if (a >= 1e9) return fmt::format("{}{:.3f} s", s, a / 1e9);
    if (a >= 1e6) return fmt::format("{}{:.3f} ms", s, a / 1e6);
    if (a >= 1e3) return fmt::format("{}{:.1f} µs", s, a / 1e3);
    return fmt::format("{}{} ns", s, static_cast<int64_t>(a));
}

std::optional<int64_t> parseClockDuration(std::string_view text)
{
    std::string t(text);
    t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
    struct Unit
    {
        const char* suffix;
        double ns;
    };
    double scale = 1e9; // bare numbers are seconds
    for (const Unit& u : {Unit{"ms", 1e6}, Unit{"us", 1e3}, Unit{"µs", 1e3}, Unit{"ns", 1.0}, Unit{"s", 1e9}}) {
        const std::string_view suffix(u.suffix);
        if (t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0) {
            t.resize(t.size() - suffix.size());
            scale = u.ns;
            break;
        }
    }
    if (t.empty()) return std::nullopt;
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(t, &used);
    } catch (...) {
        return std::nullopt;
    }
    if (used != t.size() || !std::isfinite(v) || std::fabs(v * scale) > 9e18) return std::nullopt;
    return static_cast<int64_t>(std::llround(v * scale));
}

namespace {

// The estimate of a node listed in out.
ClockEstimate& estimateIn(ClockEstimates& out, const std::string& name)
{
    return *std::find_if(out.nodes.begin(), out.nodes.end(), [&](const ClockEstimate& e) { return e.node == name; });
}

// Traces first: the end of the same collective on every rank.
void alignNodesByTraces(std::map<int64_t, NodeData>& nodes, const NodeData* ref, const ClockParams& params,
                        ClockEstimates& out)
{
    const auto estimateOf = [&](const std::string& name) -> ClockEstimate& { return estimateIn(out, name); };
    for (auto& [id, n] : nodes) {
        if (&n == ref) continue;
        ClockEstimate& e = estimateOf(n.name);
        for (const auto& [kind, mine, theirs] : {std::tuple{"NCCL kernels", &n.commKernels, &ref->commKernels},
                                                 std::tuple{"collectives", &n.collectives, &ref->collectives}}) {
            if (mine->empty() || theirs->empty()) continue;
            const TraceAlignment a = alignByCollectives(ranksOf(*mine), ranksOf(*theirs), params);
            if (!a.found) {
                e.method = fmt::format("too few {} matched with {}'s", kind, ref->name);
                continue;
            }
            e = ClockEstimate{n.name,
                              true,
                              a.offsetNs,
                              a.uncertaintyNs,
                              std::string(store::kClockSourceTraces),
                              false,
                              a.matches,
                              fmt::format("ends of {} {} ({} name{}) matched with {}'s over {} rank pair{} (spread {})",
                                          a.matches, kind, a.names, a.names == 1 ? "" : "s", ref->name, a.rankPairs,
                                          a.rankPairs == 1 ? "" : "s", seconds(a.spreadNs))};
            break;
        }
    }
}

// Metrics for the rest: against the reference, or a node already lined up by its traces, with GPU activity.
void alignNodesByMetrics(std::map<int64_t, NodeData>& nodes, const NodeData* ref, const ClockParams& params,
                         ClockEstimates& out)
{
    const auto estimateOf = [&](const std::string& name) -> ClockEstimate& { return estimateIn(out, name); };
    const NodeData* anchor = nullptr;
    if (!ref->gpus.empty()) anchor = ref;
    for (const auto& [id, n] : nodes)
        if (!anchor && !n.gpus.empty() && estimateOf(n.name).found) anchor = &n;
    for (auto& [id, n] : nodes) {
        ClockEstimate& e = estimateOf(n.name);
        if (&n == ref || e.found || n.gpus.empty()) continue;
        if (!anchor) {
            e.method = fmt::format("no GPU activity on {} or a node lined up with it", ref->name);
            continue;
        }
        const ClockEstimate& base = estimateOf(anchor->name);
        const int64_t interval = std::max(n.intervalNs, anchor->intervalNs);
        if (interval <= 0) continue;
        const int64_t origin = std::min(n.firstNs, anchor->firstNs) / interval * interval;
        const auto span = store::checkedSub(std::max(n.lastNs, anchor->lastNs), origin);
        if (!span || *span / interval >= params.maxMetricGridSamples) {
            e.method = fmt::format("{} and {} span more than {} samples of {} s: not aligned by metrics", n.name,
                                   anchor->name, params.maxMetricGridSamples, static_cast<double>(interval) / 1e9);
            continue;
        }
        const auto count = static_cast<size_t>(*span / interval + 1);
        const int64_t maxGap = 3 * interval; // a longer gap is missing data, not a slow sample
        const MetricAlignment m = alignByActivity(meanOnGrid(n.gpus, origin, interval, count, maxGap),
                                                  meanOnGrid(anchor->gpus, origin, interval, count, maxGap), params);
        const std::string what = fmt::format("mean {} cross-correlated with {}'s at {}: peak r = {:.2f}, next {:.2f}",
                                             n.metric, anchor->name, seconds(interval), m.peak, m.secondPeak);
        if (!m.found) {
            e.method = what + " (no clear peak)";
            continue;
        }
        e = ClockEstimate{n.name,
                          true,
                          store::saturatingAdd(base.offsetNs, m.offsetNs),
                          store::saturatingAdd(base.uncertaintyNs, interval),
                          std::string(store::kClockSourceMetrics),
                          false,
                          m.overlap,
                          fmt::format("{} over {} samples", what, m.overlap)};
    }
}

} // namespace

Expected<ClockInputs> readClockInputs(store::RunDatabase& db)
{
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto nodeList, reader.nodes());
    RUNLENS_ASSIGN_OR_RETURN(auto series, reader.series());
    std::map<int64_t, std::string> names;
    ClockInputs out;
    for (const store::NodeInfo& n : nodeList) {
        names[n.id] = n.name;
        out[n.name] = ClockInputCounts{0, "gpu.util", 0, 0};
    }
    for (const store::SeriesInfo& s : series)
        if (s.metric == "gpu.sm_active" && s.points > s.missingPoints && names.count(s.nodeId))
            out[names[s.nodeId]].metric = "gpu.sm_active";
    for (const store::SeriesInfo& s : series)
        if (const auto it = names.find(s.nodeId); it != names.end()) {
            ClockInputCounts& c = out[it->second];
            if (s.metric != c.metric || s.points < 2) continue;
            ++c.gpuSeries;
            c.gpuPoints += s.points;
        }
    store::TraceReader traces(db);
    RUNLENS_ASSIGN_OR_RETURN(auto summary, traces.summary());
    for (const store::TraceSummaryRow& row : summary)
        if ((row.category == TraceCategory::CommKernel || row.category == TraceCategory::Collective) &&
            out.count(row.node))
            out[row.node].traceEnds += row.slices;
    return out;
}

Expected<ClockEstimates> estimateClockOffsets(store::RunDatabase& db, const ClockParams& params, ClockScope scope)
{
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto nodeList, reader.nodes());
    ClockEstimates out;
    RUNLENS_ASSIGN_OR_RETURN(out.inputs, readClockInputs(db));
    const store::NodeInfo* refInfo = nodeList.size() < 2 ? nullptr : referenceOf(nodeList, out.inputs);
    out.method = methodOf(params);
    if (refInfo) out.inputsReference = refInfo->name;
    RUNLENS_ASSIGN_OR_RETURN(const EstimatePlan plan,
                             planEstimate(db, nodeList, out.inputs, refInfo, out.method, scope));
    const std::set<std::string>& chosen = plan.chosen;
    out.unchangedFoundFrom = plan.lastFound;
    std::map<int64_t, NodeData> nodes;
    std::map<int64_t, int64_t> offsets;
    for (const store::NodeInfo& n : nodeList) {
        if (!chosen.count(n.name)) {
            ++out.unchanged;
            continue;
        }
        out.nodes.push_back({n.name, false, 0, 0, "", false, 0, "nothing to align it by"});
        nodes[n.id] = NodeData{n.id, n.name, {}, {}, 0, out.inputs.at(n.name).metric, {}, 0, 0, 0, 0};
        offsets[n.id] = n.clockOffsetNs;
    }
    if (!refInfo) return out;
    RUNLENS_TRY(readTraces(db, nodes));
    RUNLENS_TRY(readActivity(db, nodes, offsets));
    const NodeData* ref = &nodes.at(refInfo->id);
    const auto estimateOf = [&](const std::string& name) -> ClockEstimate& { return estimateIn(out, name); };

    alignNodesByTraces(nodes, ref, params, out);
    alignNodesByMetrics(nodes, ref, params, out);

    // Whether any other node is lined up (the nodes not estimated again: as they were last time), and by traces.
    bool any = false, anyTraces = false;
    for (const ClockEstimate& e : out.nodes) {
        any = any || (e.found && e.node != ref->name);
        anyTraces = anyTraces || (e.found && e.source == store::kClockSourceTraces);
    }
    for (const auto& [node, source] : plan.lastFound) {
        any = any || !source.empty();
        anyTraces = anyTraces || source == store::kClockSourceTraces;
    }
    if (!any) return out;
    out.reference = ref->name;
    ClockEstimate& r = estimateOf(ref->name);
    r = ClockEstimate{ref->name,
                      true,
                      0,
                      0,
                      std::string(anyTraces ? store::kClockSourceTraces : store::kClockSourceMetrics),
                      true,
                      0,
                      "the reference: the others are lined up with it"};
    return out;
}

Expected<std::vector<ClockChange>> applyClockEstimates(store::RunDatabase& db, const ClockEstimates& estimates,
                                                       bool force)
{
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto nodes, reader.nodes());
    std::map<std::string, const store::NodeInfo*> byName;
    for (const store::NodeInfo& n : nodes)
        byName[n.name] = &n;
    // A user-set reference that is kept: the others are placed relative to it.
    int64_t base = 0;
    if (const auto it = byName.find(estimates.reference);
        !force && it != byName.end() && it->second->clockOffsetSource == store::kClockSourceUser)
        base = it->second->clockOffsetNs;

    std::vector<ClockChange> changes;
    RUNLENS_ASSIGN_OR_RETURN(store::Transaction tx, db.transaction());
    for (const ClockEstimate& e : estimates.nodes) {
        const auto it = byName.find(e.node);
        if (it == byName.end()) continue;
        const store::NodeInfo& n = *it->second;
        ClockChange c{e.node, false, false, n.clockOffsetNs, n.clockOffsetUncertaintyNs, n.clockOffsetSource, e.method};
        if (n.clockOffsetSource == store::kClockSourceUser && !force) {
            c.keptUser = true;
        } else if (e.found) {
            c = ClockChange{e.node,          true,     false,   store::saturatingAdd(base, e.offsetNs),
                            e.uncertaintyNs, e.source, e.method};
            RUNLENS_TRY(store::setNodeClockOffset(db, e.node, c.offsetNs, c.uncertaintyNs, c.source));
        }
        changes.push_back(std::move(c));
    }
    // What the next estimate needs to know of this one, with the reference's offset and source as they now stand.
    KeptEstimate kept{
        estimates.method, estimates.inputs, estimates.unchangedFoundFrom, estimates.inputsReference, 0, ""};
    for (const ClockEstimate& e : estimates.nodes)
        kept.foundFrom[e.node] = e.found ? e.source : "";
    if (const auto it = byName.find(kept.reference); it != byName.end()) {
        kept.referenceOffsetNs = it->second->clockOffsetNs;
        kept.referenceSource = it->second->clockOffsetSource;
        for (const ClockChange& c : changes)
            if (c.node == kept.reference) {
                kept.referenceOffsetNs = c.offsetNs;
                kept.referenceSource = c.source;
            }
    }
    RUNLENS_TRY(store::storeRunSettingsInTransaction(db, {{kClockInputsSetting, encodeKept(kept)}}));
    RUNLENS_TRY(tx.commit());
    return changes;
}

} // namespace runlens::analysis
