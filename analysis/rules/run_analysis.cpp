#include "analysis/rules/run_analysis.h"

#include "analysis/clock/clock_estimate.h"
#include "analysis/rules/ckpt_gap_rule.h"
#include "analysis/rules/comm_bound_rule.h"
#include "analysis/rules/hang_rule.h"
#include "analysis/rules/host_stall_rule.h"
#include "analysis/rules/input_stall_rule.h"
#include "analysis/rules/low_sm_eff_rule.h"
#include "analysis/rules/phase_slices.h"
#include "analysis/rules/stall_bounds.h"
#include "analysis/rules/steady_state.h"
#include "analysis/rules/step_detection.h"
#include "analysis/rules/straggler_rule.h"
#include "analysis/rules/throttle_rule.h"
#include "analysis/store/finding_store.h"
#include "analysis/store/node_clock.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/trace_reader.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iterator>
#include <map>

namespace runlens::analysis {

namespace {

// The checkpoint frames listed per CKPT_GAP finding: from its first episodes, the top few.
constexpr size_t kCheckpointEpisodes = 20;
constexpr size_t kCheckpointFrames = 5;

// The episodes' union, in time order.
std::vector<FindingEpisode> unionOf(std::vector<FindingEpisode> e)
{
    std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.startNs < b.startNs; });
    std::vector<FindingEpisode> out;
    for (const FindingEpisode& x : e) {
        if (!out.empty() && x.startNs <= out.back().endNs) {
            out.back().endNs = std::max(out.back().endNs, x.endNs);
            // Nodes that wait together save the same seconds: the larger saving speaks for the union.
            out.back().savingS =
                (out.back().savingS < 0 || x.savingS < 0) ? -1 : std::max(out.back().savingS, x.savingS);
        } else {
            out.push_back(x);
        }
    }
    return out;
}

// Findings of one rule with the same character (sub-type or sub-cause) on several nodes are one finding: data-
// parallel ranks wait together, and "communication-bound on 4 nodes" is the diagnosis, not four of them. The
// strongest node's finding speaks for the group; its scope, episodes and impact become the group's, the saving
// the largest of the nodes' (they wait at the same time, so their savings do not add up), and the evidence keeps
// each node's impact and saving.
std::vector<Finding> mergeAcrossNodes(std::vector<Finding> findings, double wallS, size_t nodeCount)
{
    const auto character = [](const Finding& f) {
        for (const char* key : {"sub_type", "sub_cause"})
            if (f.evidence.contains(QString::fromLatin1(key)))
                return f.evidence.value(QString::fromLatin1(key)).toString().toStdString();
        return std::string();
    };
    std::vector<Finding> out;
    std::vector<bool> used(findings.size(), false);
    for (size_t i = 0; i < findings.size(); ++i) {
        if (used[i]) continue;
        std::vector<size_t> group{i};
        for (size_t j = i + 1; j < findings.size(); ++j)
            if (!used[j] && findings[j].rule == findings[i].rule && findings[j].primary == findings[i].primary &&
                character(findings[j]) == character(findings[i]) && findings[j].nodes.size() == 1 &&
                findings[i].nodes.size() == 1)
                group.push_back(j);
        for (size_t k : group)
            used[k] = true;
        if (group.size() == 1) {
            out.push_back(std::move(findings[i]));
            continue;
        }
        const size_t lead = *std::max_element(
            group.begin(), group.end(), [&](size_t a, size_t b) { return findings[a].impact < findings[b].impact; });
        Finding f = findings[lead];
        std::vector<FindingEpisode> all;
        QJsonArray perNode;
        f.nodes.clear();
        f.gpus.clear();
        for (size_t k : group) {
            const Finding& g = findings[k];
            f.nodes.insert(f.nodes.end(), g.nodes.begin(), g.nodes.end());
            f.gpus.insert(f.gpus.end(), g.gpus.begin(), g.gpus.end());
            all.insert(all.end(), g.episodes.begin(), g.episodes.end());
            f.savingS = std::max(f.savingS, g.savingS);
            f.confidence = std::min(f.confidence, g.confidence);
            if (severityRank(g.severity) < severityRank(f.severity)) f.severity = g.severity;
            perNode.append(QJsonObject{{QStringLiteral("node"), QString::fromStdString(g.nodes.front())},
                                       {QStringLiteral("impact"), g.impact},
                                       {QStringLiteral("saving_s"), g.savingS}});
        }
        std::sort(f.nodes.begin(), f.nodes.end());
        std::sort(f.gpus.begin(), f.gpus.end());
        f.episodes = unionOf(std::move(all));
        double seconds = 0;
        for (const FindingEpisode& e : f.episodes)
            seconds += static_cast<double>(e.endNs - e.startNs) / 1e9;
        f.impact = wallS > 0 ? std::min(1.0, seconds / wallS) : 0;
        const std::string leadNode = findings[lead].nodes.front();
        const std::string scope = f.nodes.size() == nodeCount ? fmt::format("all {} nodes", nodeCount)
                                                              : fmt::format("nodes {}", fmt::join(f.nodes, ", "));
        if (const size_t at = f.title.find("on " + leadNode); at != std::string::npos)
            f.title.replace(at + 3, leadNode.size(), scope);
        f.evidence.insert(QStringLiteral("per_node"), perNode);
        f.evidence.insert(QStringLiteral("shown_node"), QString::fromStdString(leadNode));
        out.push_back(std::move(f));
    }
    return out;
}

// The checkpoint frames the stack samples show in a checkpoint gap's episodes (the first 20; shares of their busy
// samples): what wrote the checkpoint, e.g. save_checkpoint → torch.save. Empty without stacks.
Expected<QJsonArray> checkpointFrames(FlameSource& stacks, const Finding& f)
{
    std::map<std::string, int64_t> samples;
    int64_t busy = 0;
    for (size_t k = 0; k < f.episodes.size() && k < kCheckpointEpisodes; ++k) {
        FlameQuery q;
        q.window = {f.episodes[k].startNs, f.episodes[k].endNs - 1};
        q.nodes = f.nodes;
        q.untimed = UntimedStacks::Exclude;
        RUNLENS_ASSIGN_OR_RETURN(auto tree, stacks.tree(q));
        const auto byPhase = phaseSamples(*tree);
        busy += tree->totalSamples() - byPhase[static_cast<size_t>(Phase::Idle)];
        addOutermostFrames(*tree, Phase::Checkpoint, samples);
    }
    if (busy <= 0) return QJsonArray();
    return topAmounts(samples, kCheckpointFrames, QStringLiteral("frame"), QStringLiteral("share"),
                      static_cast<double>(busy));
}

// The goodput waterfall of each node with GPUs, from the per-node findings (before they are merged).
std::vector<TimeBudget> budgetsOf(const RunMetrics& m, const std::vector<Finding>& findings, const CommonParams& p)
{
    std::vector<TimeBudget> out;
    const TimeGrid& grid = m.grid;
    const double slotS = static_cast<double>(grid.stepNs) / 1e9;
    for (const NodeMetrics& node : m.nodes) {
        const std::vector<const GpuMetrics*> gpus = gpusOf(m, node.node);
        if (gpus.empty()) continue;
        TimeBudget b;
        b.node = node.node;
        b.wallS = grid.seconds();
        const size_t start = steadyStartSlot(m, node.node, p);
        b.startupS = static_cast<double>(start) * slotS;
        // Slots a stall-type finding covers (hang, checkpoint) are not counted again as idle.
        std::vector<uint8_t> covered(grid.size, 0);
        const auto on = [&](const Finding& f) {
            return std::find(f.nodes.begin(), f.nodes.end(), node.node) != f.nodes.end();
        };
        for (const Finding& f : findings) {
            if (!on(f)) continue;
            if (f.rule == "HANG" || f.rule == "CKPT_GAP") {
                double seconds = 0;
                for (const FindingEpisode& e : f.episodes)
                    coverEpisode(grid, e, start, grid.size, covered, seconds);
                (f.rule == "HANG" ? b.hangS : b.checkpointS) += seconds;
            } else if (f.rule == "INPUT_STALL") {
                b.inputS += f.savingS;
            } else if (f.rule == "COMM_BOUND") {
                b.commWaitS += f.savingS;
            }
        }
        for (size_t i = start; i < grid.size; ++i)
            if (!covered[i] && gpusIdleAt(gpus, i, p.stallUtilMax)) b.idleS += slotS;
        const double accounted = b.startupS + b.hangS + b.checkpointS + b.inputS + b.commWaitS + b.idleS;
        if (accounted > b.wallS) { // the estimates overlap: scale the waits down to fit
            const double waits = b.inputS + b.commWaitS, room = std::max(0.0, b.wallS - (accounted - waits));
            if (waits > 0) {
                b.inputS *= room / waits;
                b.commWaitS *= room / waits;
            }
        }
        b.computeS = std::max(0.0, b.wallS - (b.startupS + b.hangS + b.checkpointS + b.inputS + b.commWaitS + b.idleS));
        out.push_back(b);
    }
    return out;
}

} // namespace

std::vector<const GpuMetrics*> gpusOf(const RunMetrics& m, const std::string& node)
{
    std::vector<const GpuMetrics*> gpus;
    for (const GpuMetrics& g : m.gpus)
        if (g.node == node) gpus.push_back(&g);
    return gpus;
}

void coverEpisode(const TimeGrid& grid, const FindingEpisode& e, size_t from, size_t last,
                  std::vector<uint8_t>& covered, double& seconds)
{
    const double slotS = static_cast<double>(grid.stepNs) / 1e9;
    const auto [first, end] = grid.slotsOverlapping(e.startNs, e.endNs);
    for (size_t i = std::max(from, first); i < std::min(last, end); ++i)
        if (!covered[i]) {
            covered[i] = 1;
            seconds += slotS;
        }
}

bool gpusIdleAt(const std::vector<const GpuMetrics*>& gpus, size_t slot, double utilMax)
{
    double sum = 0;
    int n = 0;
    for (const GpuMetrics* g : gpus)
        if (std::isfinite(g->util[slot])) {
            sum += g->util[slot];
            ++n;
        }
    return n == 0 || sum / n <= utilMax;
}

QJsonObject toJson(const TimeBudget& b)
{
    return QJsonObject{{QStringLiteral("node"), QString::fromStdString(b.node)},
                       {QStringLiteral("wall_s"), b.wallS},
                       {QStringLiteral("startup_s"), b.startupS},
                       {QStringLiteral("hang_s"), b.hangS},
                       {QStringLiteral("checkpoint_s"), b.checkpointS},
                       {QStringLiteral("input_s"), b.inputS},
                       {QStringLiteral("comm_wait_s"), b.commWaitS},
                       {QStringLiteral("idle_s"), b.idleS},
                       {QStringLiteral("compute_s"), b.computeS}};
}

int severityRank(const std::string& severity)
{
    return severity == "critical" ? 0 : severity == "warn" ? 1 : 2;
}

namespace {

// Reports progress between rules and stops when cancelled.
class Steps
{
public:
    Steps(const AnalysisProgress& progress, const std::atomic<bool>* cancel, int total)
        : m_progress(progress), m_cancel(cancel), m_total(total)
    {
    }
    Status next(const std::string& what)
    {
        if (m_cancel && m_cancel->load()) return makeError(ErrorCode::Cancelled, "analysis cancelled");
        if (m_progress) m_progress(m_done++, m_total, what);
        return okStatus();
    }
    void done()
    {
        if (m_progress) m_progress(m_total, m_total, "done");
    }

private:
    const AnalysisProgress& m_progress;
    const std::atomic<bool>* m_cancel;
    int m_total, m_done = 0;
};

// The metrics on the rules' grid; what the run lacks that the rules would use goes into out.missing.
Expected<RunMetrics> loadMetrics(store::RunDatabase& db, const CommonParams& c, RunAnalysis& out)
{
    RUNLENS_ASSIGN_OR_RETURN(auto metrics, loadRunMetrics(db, static_cast<int64_t>(c.gridS * 1e9)));
    out.wallS = metrics.grid.seconds();
    out.startNs = metrics.grid.startNs;
    out.endNs = metrics.grid.slotStart(metrics.grid.size);
    out.gpus = metrics.gpus.size();
    out.nodes = metrics.nodes.size();
    if (metrics.gpus.empty())
        out.missing.emplace_back("no GPU metrics: no rule can judge the GPUs");
    else if (std::none_of(metrics.gpus.begin(), metrics.gpus.end(),
                          [](const GpuMetrics& g) { return !g.smActive.empty(); }))
        out.missing.emplace_back(
            "no SM activity (DCGM 1002 or nvidia-smi dmon --gpm-metrics): the utilization illusion cannot "
            "be told and stalls are judged on utilization alone");
    return metrics;
}

// CKPT_GAP with its episodes' edges from the finest source and the checkpoint frames the stacks show, and HOST_STALL
// (which leaves checkpoint gaps and hangs alone), added to the findings.
Status stallRules(store::RunDatabase& db, const RunMetrics& metrics, FlameSource& stacks,
                  const std::vector<ThreadScan>& threadScans, const RuleParams& params, Steps& steps,
                  std::vector<Finding>& findings)
{
    RUNLENS_TRY(steps.next("CKPT_GAP"));
    store::RunReader boundsReader(db);
    StallBounds bounds(metrics, stacks, threadScans, boundsReader, params);
    std::optional<Error> boundsError;
    const RefineGap refine = [&](const std::string& node, int64_t startNs, int64_t endNs) {
        auto edges = bounds.checkpoint(node, startNs, endNs);
        if (edges) return *edges;
        if (!boundsError) boundsError = edges.error();
        return FindingEpisode{startNs, endNs};
    };
    auto gaps = checkpointGapRule(metrics, params, refine);
    if (boundsError) return *boundsError;
    for (auto& f : gaps) {
        RUNLENS_ASSIGN_OR_RETURN(auto frames, checkpointFrames(stacks, f));
        if (!frames.isEmpty()) f.evidence.insert(QStringLiteral("top_checkpoint_frames"), frames);
        findings.push_back(std::move(f));
    }
    RUNLENS_TRY(steps.next("HOST_STALL"));
    RUNLENS_ASSIGN_OR_RETURN(auto hostStalls, hostStallRule(metrics, stacks, threadScans, params, findings));
    for (auto& f : hostStalls)
        findings.push_back(std::move(f));
    return okStatus();
}

// Every rule in order (HANG first: the others leave its time alone; LOW_SM_EFF last: it needs the others); the
// detected steps go into out.steps.
Expected<std::vector<Finding>> runRules(store::RunDatabase& db, const RunMetrics& metrics, const RuleParams& params,
                                        const CommonParams& c, Steps& steps, const std::atomic<bool>* cancel,
                                        RunAnalysis& out)
{
    RUNLENS_TRY(steps.next("HANG"));
    std::vector<Finding> findings = hangRule(metrics, params);
    RUNLENS_ASSIGN_OR_RETURN(auto classifier, PhaseClassifier::builtIn());
    FlameSource stacks(db, std::make_shared<PhaseClassifier>(std::move(classifier)));
    // One read of every thread's samples: the phases per evidence slice and HOST_STALL's scan of each thread.
    RUNLENS_ASSIGN_OR_RETURN(auto callsitePhases, stacks.callsitePhases());
    PhaseSliceCounter counter(metrics.grid, metrics.grid.slotsPerSlice(c.evidenceS), callsitePhases);
    RUNLENS_ASSIGN_OR_RETURN(auto threadScans, scanThreads(stacks, params, cancel, &counter));
    const PhaseSlices phases = counter.finish();
    if (auto threads = stacks.threads({});
        threads && std::none_of(threads->begin(), threads->end(), [](const auto& t) { return t.timedSamples > 0; }))
        out.missing.emplace_back("no timed stack samples: causes are judged from metrics and traces only");
    store::TraceReader traces(db);
    RUNLENS_TRY(steps.next("COMM_BOUND"));
    RUNLENS_ASSIGN_OR_RETURN(auto comm, commBoundRule(metrics, stacks, phases, &traces, params, findings));
    RUNLENS_TRY(steps.next("INPUT_STALL"));
    RUNLENS_ASSIGN_OR_RETURN(auto input, inputStallRule(metrics, stacks, phases, params));
    for (auto& f : comm)
        findings.push_back(std::move(f));
    for (auto& f : input)
        findings.push_back(std::move(f));
    RUNLENS_TRY(stallRules(db, metrics, stacks, threadScans, params, steps, findings));
    RUNLENS_TRY(steps.next("STRAGGLER"));
    out.steps = computeStepTimes(metrics, params);
    for (auto& f : stragglerRule(metrics, out.steps, params))
        findings.push_back(std::move(f));
    RUNLENS_ASSIGN_OR_RETURN(auto ranks, rankStragglerRule(metrics, out.steps, stacks, &traces, params, cancel));
    for (auto& f : ranks)
        findings.push_back(std::move(f));
    RUNLENS_TRY(steps.next("THROTTLE"));
    for (auto& f : throttleRule(metrics, params))
        findings.push_back(std::move(f));
    RUNLENS_TRY(steps.next("LOW_SM_EFF"));
    for (auto& f : lowSmEfficiencyRule(metrics, params, findings, &phases)) // last: it needs the others
        findings.push_back(std::move(f));
    return findings;
}

// Findings of several nodes merged (a rank straggler names one process: it is not merged), then the waits a late rank
// causes linked to it as its symptoms (after all rules).
std::vector<Finding> mergeFindings(std::vector<Finding> findings, const RunMetrics& metrics, double wallS,
                                   const RuleParams& params)
{
    size_t gpuNodes = 0;
    for (const NodeMetrics& n : metrics.nodes)
        gpuNodes +=
            std::any_of(metrics.gpus.begin(), metrics.gpus.end(), [&](const GpuMetrics& g) { return g.node == n.node; })
                ? 1
                : 0;
    const auto ranked =
        std::stable_partition(findings.begin(), findings.end(), [](const Finding& f) { return !isRankStraggler(f); });
    std::vector<Finding> rankFindings(std::make_move_iterator(ranked), std::make_move_iterator(findings.end()));
    findings.erase(ranked, findings.end());
    findings = mergeAcrossNodes(std::move(findings), wallS, gpuNodes);
    findings.insert(findings.end(), std::make_move_iterator(rankFindings.begin()),
                    std::make_move_iterator(rankFindings.end()));
    linkStragglerSymptoms(findings, params);
    return findings;
}

// A finding over several nodes compares their times: say when those rest on estimated clock offsets.
void noteClockOffsets(store::RunDatabase& db, std::vector<Finding>& findings)
{
    store::RunReader reader(db);
    auto nodes = reader.nodes();
    if (!nodes) return;
    for (Finding& f : findings) {
        if (f.nodes.size() < 2) continue;
        std::vector<std::string> estimated;
        for (const store::NodeInfo& n : *nodes)
            if (std::find(f.nodes.begin(), f.nodes.end(), n.name) != f.nodes.end() &&
                (n.clockOffsetSource == store::kClockSourceTraces ||
                 n.clockOffsetSource == store::kClockSourceMetrics) &&
                n.clockOffsetUncertaintyNs && n.clockOffsetNs != 0)
                estimated.push_back(fmt::format("{} {} ±{} ({})", n.name, formatClockDuration(n.clockOffsetNs),
                                                formatClockDuration(*n.clockOffsetUncertaintyNs, false),
                                                n.clockOffsetSource));
        if (!estimated.empty())
            f.evidence.insert(QStringLiteral("estimated_clock_offsets"),
                              QString::fromStdString(fmt::format("{}", fmt::join(estimated, ", "))));
    }
}

} // namespace

Expected<RunAnalysis> analyzeRun(store::RunDatabase& db, const RuleParams& params, const AnalysisProgress& progress,
                                 const std::atomic<bool>* cancel)
{
    const CommonParams c = CommonParams::from(params);
    RunAnalysis out;
    out.params = params;
    out.rules = {"HANG", "COMM_BOUND", "INPUT_STALL", "CKPT_GAP", "HOST_STALL", "STRAGGLER", "THROTTLE", "LOW_SM_EFF"};
    Steps steps(progress, cancel, static_cast<int>(out.rules.size()) + 1);
    RUNLENS_TRY(steps.next("metrics"));
    RUNLENS_ASSIGN_OR_RETURN(auto metrics, loadMetrics(db, c, out));
    RUNLENS_ASSIGN_OR_RETURN(auto findings, runRules(db, metrics, params, c, steps, cancel, out));
    steps.done();
    out.budgets = budgetsOf(metrics, findings, c);
    findings = mergeFindings(std::move(findings), metrics, out.wallS, params);
    noteClockOffsets(db, findings);
    // Primary findings first (a contributing one is explained by another), then by severity and impact.
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
        // A symptom follows the findings that stand on their own, as a contributing one does.
        const bool ownA = a.primary && a.causedBy.empty(), ownB = b.primary && b.causedBy.empty();
        if (ownA != ownB) return ownA;
        const int ra = severityRank(a.severity), rb = severityRank(b.severity);
        return ra != rb ? ra < rb : a.impact > b.impact;
    });
    out.findings = std::move(findings);
    return out;
}

namespace {

QJsonObject summaryOf(const RunAnalysis& a)
{
    QJsonArray missing;
    for (const std::string& m : a.missing)
        missing.append(QString::fromStdString(m));
    QJsonArray steps;
    for (const StepTimes& st : a.steps)
        steps.append(QJsonObject{{QStringLiteral("node"), QString::fromStdString(st.node)},
                                 {QStringLiteral("source"), QString::fromStdString(st.source)},
                                 {QStringLiteral("median_step_s"), st.medianStepS},
                                 {QStringLiteral("steps"), static_cast<qint64>(st.startsNs.size())},
                                 {QStringLiteral("confidence"), st.confidence}});
    QJsonArray budgets;
    for (const TimeBudget& b : a.budgets)
        budgets.append(toJson(b));
    return QJsonObject{{QStringLiteral("steps"), steps},
                       {QStringLiteral("time_budget"), budgets},
                       {QStringLiteral("wall_s"), a.wallS},
                       {QStringLiteral("start_ns"), static_cast<qint64>(a.startNs)},
                       {QStringLiteral("end_ns"), static_cast<qint64>(a.endNs)},
                       {QStringLiteral("gpus"), static_cast<qint64>(a.gpus)},
                       {QStringLiteral("nodes"), static_cast<qint64>(a.nodes)},
                       {QStringLiteral("missing"), missing}};
}

std::string compact(const QJsonValue& v)
{
    if (v.isArray()) return QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact).toStdString();
    return QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact).toStdString();
}

} // namespace

Status storeAnalysis(store::RunDatabase& db, const RunAnalysis& a, const std::map<std::string, double>& overrides)
{
    store::StoredAnalysis s;
    s.ranAtNs = QDateTime::currentMSecsSinceEpoch() * 1'000'000;
    s.programVersion = RUNLENS_VERSION;
    QJsonArray rules;
    for (const std::string& r : a.rules)
        rules.append(QString::fromStdString(r));
    s.rulesJson = compact(rules);
    QJsonObject values, set;
    for (const RuleParam& p : a.params.all())
        values.insert(QString::fromStdString(p.name), p.value);
    for (const auto& [name, value] : overrides)
        set.insert(QString::fromStdString(name), value);
    s.parametersJson = compact(values);
    s.overridesJson = compact(set);
    s.summaryJson = compact(summaryOf(a));
    for (const Finding& f : a.findings) {
        store::StoredFinding sf;
        sf.rule = f.rule;
        sf.severity = f.severity;
        sf.title = f.title;
        sf.confidence = f.confidence;
        sf.impact = f.impact;
        sf.savingS = f.savingS;
        sf.primary = f.primary;
        if (!f.episodes.empty()) {
            sf.startNs = f.episodes.front().startNs;
            sf.endNs = f.episodes.back().endNs;
        }
        sf.json = compact(toJson(f));
        s.findings.push_back(std::move(sf));
    }
    for (const StepTimes& st : a.steps)
        for (size_t i = 0; i < st.startsNs.size(); ++i) {
            const double seconds = i + 1 < st.startsNs.size()
                                       ? static_cast<double>(st.startsNs[i + 1] - st.startsNs[i]) / 1e9
                                       : st.medianStepS;
            s.steps.push_back({st.node, st.source, st.startsNs[i], seconds});
        }
    return store::replaceAnalysis(db, s);
}

Expected<std::optional<StoredRunAnalysis>> loadStoredAnalysis(store::RunDatabase& db)
{
    RUNLENS_ASSIGN_OR_RETURN(auto stored, store::loadAnalysis(db));
    if (!stored) return std::optional<StoredRunAnalysis>{};
    const store::StoredAnalysis& s = *stored;
    StoredRunAnalysis out;
    out.ranAtNs = s.ranAtNs;
    out.programVersion = s.programVersion;
    RunAnalysis& a = out.analysis;
    a.params = RuleParams::defaults();
    const QJsonObject set = QJsonDocument::fromJson(QByteArray::fromStdString(s.overridesJson)).object();
    for (auto it = set.begin(); it != set.end(); ++it) {
        // A parameter this version no longer knows is dropped, not an error.
        if (a.params.set(fmt::format("{}={}", it.key().toStdString(), it.value().toDouble())))
            out.overrides[it.key().toStdString()] = it.value().toDouble();
    }
    for (const auto& r : QJsonDocument::fromJson(QByteArray::fromStdString(s.rulesJson)).array())
        a.rules.push_back(r.toString().toStdString());
    const QJsonObject summary = QJsonDocument::fromJson(QByteArray::fromStdString(s.summaryJson)).object();
    a.wallS = summary.value(QStringLiteral("wall_s")).toDouble();
    a.startNs = summary.value(QStringLiteral("start_ns")).toInteger();
    a.endNs = summary.value(QStringLiteral("end_ns")).toInteger();
    a.gpus = static_cast<size_t>(summary.value(QStringLiteral("gpus")).toInteger());
    a.nodes = static_cast<size_t>(summary.value(QStringLiteral("nodes")).toInteger());
    for (const auto& v : summary.value(QStringLiteral("steps")).toArray()) {
        StepTimes st;
        const QJsonObject o = v.toObject();
        st.node = o.value(QStringLiteral("node")).toString().toStdString();
        st.source = o.value(QStringLiteral("source")).toString().toStdString();
        st.medianStepS = o.value(QStringLiteral("median_step_s")).toDouble();
        st.confidence = o.value(QStringLiteral("confidence")).toDouble();
        for (const store::StoredStep& kept : s.steps)
            if (kept.node == st.node) st.startsNs.push_back(kept.startNs);
        a.steps.push_back(std::move(st));
    }
    for (const auto& v : summary.value(QStringLiteral("time_budget")).toArray()) {
        const QJsonObject o = v.toObject();
        TimeBudget b;
        b.node = o.value(QStringLiteral("node")).toString().toStdString();
        b.wallS = o.value(QStringLiteral("wall_s")).toDouble();
        b.startupS = o.value(QStringLiteral("startup_s")).toDouble();
        b.hangS = o.value(QStringLiteral("hang_s")).toDouble();
        b.checkpointS = o.value(QStringLiteral("checkpoint_s")).toDouble();
        b.inputS = o.value(QStringLiteral("input_s")).toDouble();
        b.commWaitS = o.value(QStringLiteral("comm_wait_s")).toDouble();
        b.idleS = o.value(QStringLiteral("idle_s")).toDouble();
        b.computeS = o.value(QStringLiteral("compute_s")).toDouble();
        a.budgets.push_back(std::move(b));
    }
    for (const auto& m : summary.value(QStringLiteral("missing")).toArray())
        a.missing.push_back(m.toString().toStdString());
    for (const store::StoredFinding& f : s.findings)
        a.findings.push_back(findingFromJson(QJsonDocument::fromJson(QByteArray::fromStdString(f.json)).object()));
    return std::optional<StoredRunAnalysis>{std::move(out)};
}

} // namespace runlens::analysis
