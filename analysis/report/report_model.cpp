#include "analysis/report/report_model.h"

#include "analysis/phase/phase_classifier.h"
#include "analysis/store/run_database.h"

#include <QDateTime>
#include <QJsonArray>
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <set>

namespace runlens::analysis {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& x)
{
    return std::find(v.begin(), v.end(), x) != v.end();
}

bool overlaps(const FindingEpisode& e, int64_t fromNs, int64_t toNs)
{
    return e.endNs > fromNs && e.startNs < toNs;
}

// Whether the finding is asked for by --findings: its report number or its rule.
bool wanted(const std::vector<std::string>& asked, int number, const std::string& rule)
{
    if (asked.empty()) return true;
    for (const std::string& a : asked)
        if (a == std::to_string(number) || a == rule) return true;
    return false;
}

Expected<std::shared_ptr<const timeline::TimelineFrame>>
fetchFigure(timeline::TimelineSource& source, const timeline::RunCatalog& catalog, const ReportTimeline& figure,
            const std::vector<std::string>& nodes, const std::vector<std::string>& gpus, int pixels)
{
    if (figure.lanes.empty()) return std::shared_ptr<const timeline::TimelineFrame>{};
    timeline::TimelineRequest request;
    request.fromNs = figure.fromNs;
    request.toNs = figure.toNs;
    request.pixels = pixels;
    request.lanes = figure.lanes;
    // Only the series of the nodes (and GPUs) in question, as the GUI shows a finding's scope.
    request.hiddenSeries = timeline::seriesOutside(catalog, nodes, gpus);
    return source.fetch(request);
}

ReportFlame flameFigure(FlameSource& stacks, const Finding& f, int64_t fromNs, int64_t toNs)
{
    ReportFlame out;
    out.fromNs = fromNs;
    out.toNs = toNs;
    out.evidenceFrame = evidenceFrame(f);
    FlameQuery q;
    q.window = {fromNs, toNs - 1};
    q.nodes = f.nodes;
    q.untimed = UntimedStacks::Exclude;
    // Busy stacks only: the idle threads (waiting in a queue, sleeping) would fill most of the width.
    for (size_t p = 0; p < kPhaseCount; ++p)
        if (static_cast<Phase>(p) != Phase::Idle) q.phases.push_back(static_cast<Phase>(p));
    auto tree = stacks.tree(q);
    if (!tree || (*tree)->totalSamples() == 0) {
        out.note = tree ? "no stack samples on these nodes in this window" : tree.error().toString();
        return out;
    }
    out.tree = *tree;
    if (out.evidenceFrame.empty()) return out;
    // The hottest call path through the evidence frame (a rule that names a function without its file matches
    // every frame of that name).
    const FlameTree& t = **tree;
    const bool withFile = out.evidenceFrame.find(" (") != std::string::npos;
    int32_t best = -1;
    for (int32_t i = 1; i < static_cast<int32_t>(t.nodes().size()); ++i)
        if ((withFile ? t.label(i) == out.evidenceFrame : t.name(i) == out.evidenceFrame) &&
            (best < 0 || t.node(i).samples > t.node(best).samples))
            best = i;
    if (best < 0) {
        out.note = fmt::format("{} is not in the stacks of this window", out.evidenceFrame);
        return out;
    }
    // A frame with little below it (its own work): the whole graph with its blocks highlighted says more.
    int32_t below = 0;
    for (int32_t i = best; i < t.subtreeEnd(best); ++i)
        below = std::max(below, t.node(i).depth - t.node(best).depth);
    if (below < 3) {
        auto search = searchFlame(t, out.evidenceFrame, false);
        if (search) {
            out.highlight = std::make_shared<const FlameSearch>(std::move(*search));
            return out;
        }
    }
    out.focus = best;
    std::string path;
    for (const std::string& step : t.path(best))
        path += (path.empty() ? "" : ";") + step;
    out.focusPath = path;
    return out;
}

} // namespace

std::string evidenceFrame(const Finding& f)
{
    // The frame as the rules name it, "name (file:line)" like a flame graph's label: a bare name would match every
    // function of that name ("wrapper" is in most Python stacks).
    if (const QString one = f.evidence.value(QStringLiteral("frame")).toString(); !one.isEmpty()) // HOST_STALL
        return one.toStdString();
    for (const char* key : {"top_comm_frames", "top_frames", "top_checkpoint_frames", "frames_in_flight"}) {
        const QJsonArray a = f.evidence.value(QLatin1String(key)).toArray();
        if (a.isEmpty()) continue;
        std::string frame = a.first().toObject().value(QStringLiteral("frame")).toString().toStdString();
        if (!frame.empty()) return frame;
    }
    return {};
}

std::pair<int64_t, int64_t> episodeView(const FindingEpisode& e)
{
    const int64_t margin = std::max<int64_t>((e.endNs - e.startNs) / 4, 5'000'000'000);
    return {e.startNs - margin, e.endNs + margin};
}

std::vector<timeline::LaneSpec> lanesForRule(const std::vector<timeline::LaneSpec>& runLanes, const std::string& rule)
{
    std::vector<std::string> ids{"gpu_util"};
    if (rule == "COMM_BOUND")
        ids.insert(ids.end(), {"trace_busy", "ib", "net"});
    else if (rule == "CKPT_GAP")
        ids.insert(ids.end(), {"storage", "net"});
    else if (rule == "INPUT_STALL")
        ids.insert(ids.end(), {"cpu", "storage"});
    else if (rule == "HOST_STALL")
        ids.insert(ids.end(), {"cpu", "storage", "step_time"});
    else if (rule == "HANG")
        ids.insert(ids.end(), {"trace_busy", "gpu_power", "net"});
    else if (rule == "THROTTLE")
        ids.insert(ids.end(), {"gpu_clock", "gpu_power", "gpu_temp"});
    else if (rule == "STRAGGLER")
        ids.insert(ids.end(), {"step_time", "trace_busy"});
    else if (rule == "LOW_SM_EFF")
        ids.insert(ids.end(), {"gpu_activity", "trace_busy"});
    else if (rule == "overview")
        ids.insert(ids.end(), {"ib", "net", "storage", "step_time"});
    // The interconnect is the InfiniBand ports when the node has them (the NICs then carry other traffic).
    const bool ib =
        std::any_of(runLanes.begin(), runLanes.end(), [](const timeline::LaneSpec& l) { return l.id == "ib"; });
    std::vector<timeline::LaneSpec> out;
    for (const std::string& id : ids)
        for (const timeline::LaneSpec& lane : runLanes)
            if (lane.id == id && !(id == "net" && ib)) out.push_back(lane);
    return out;
}

namespace {

bool onNodes(const ReportOptions& options, const std::string& node)
{
    return options.nodes.empty() || contains(options.nodes, node);
}

// The nodes, sources, stack samples and traces the report covers.
Status describeCatalog(ReportModel& m, const timeline::RunCatalog& cat, const ReportOptions& options)
{
    for (const std::string& n : options.nodes)
        if (std::none_of(cat.nodes.begin(), cat.nodes.end(), [&](const store::NodeInfo& x) { return x.name == n; }))
            return makeError(ErrorCode::Usage, fmt::format("--nodes: the run has no node \"{}\"", n));
    for (const store::NodeInfo& n : cat.nodes)
        if (onNodes(options, n.name)) m.nodes.push_back(n.name);
    for (const timeline::ImportProblems& p : cat.imports) {
        ReportSource src;
        src.path = p.import.path;
        src.format = p.import.format;
        src.node = p.import.node;
        src.rows = p.import.rows;
        src.problems = p.import.diagnostics;
        src.problemKinds = p.counts;
        src.firstProblems = p.first;
        m.sources.push_back(std::move(src));
    }
    for (const store::ThreadStacks& t : cat.stackThreads)
        if (onNodes(options, t.node)) m.stackSamples += t.samples;
    m.hasTraces = std::any_of(cat.series.begin(), cat.series.end(), [](const store::SeriesInfo& s) {
        return s.metric == "gpu.kernel_busy" || s.metric == "gpu.comm_busy" || s.metric == "trace.collective_busy";
    });
    return okStatus();
}

// The run's stored analysis, or a fresh one (with the parameters set for the run, if any) when there is none or
// options ask for it; kept in the run when options say so and the file is writable.
Status loadAnalysis(ReportModel& m, store::RunDatabase& db, const ReportOptions& options,
                    const std::atomic<bool>* cancel)
{
    RUNLENS_ASSIGN_OR_RETURN(auto stored, loadStoredAnalysis(db));
    if (stored && !options.reanalyze) {
        m.analysis = std::move(stored->analysis);
        m.overrides = std::move(stored->overrides);
        m.analysisRanNs = stored->ranAtNs;
        return okStatus();
    }
    RuleParams params = RuleParams::defaults();
    if (stored) {
        m.overrides = stored->overrides;
        params = stored->analysis.params;
    }
    RUNLENS_ASSIGN_OR_RETURN(m.analysis, analyzeRun(db, params, {}, cancel));
    m.analysisFresh = true;
    m.analysisRanNs = m.generatedNs;
    if (options.storeAnalysis) (void)storeAnalysis(db, m.analysis, m.overrides); // kept when the file is writable
    return okStatus();
}

// The run's range (the metrics', else everything's) and the window the report covers.
Status setWindow(ReportModel& m, const timeline::RunCatalog& cat, const ReportOptions& options)
{
    m.runFromNs = m.analysis.startNs;
    m.runToNs = m.analysis.endNs;
    if (m.runToNs <= m.runFromNs) { // no metrics: the run's own range
        m.runFromNs = cat.firstNs;
        m.runToNs = cat.lastNs;
    }
    m.fromNs = options.fromNs.value_or(m.runFromNs);
    m.toNs = options.toNs.value_or(m.runToNs);
    m.windowed = options.fromNs.has_value() || options.toNs.has_value();
    if (m.toNs <= m.fromNs) return makeError(ErrorCode::Usage, "--window: the window is empty");
    return okStatus();
}

// The findings asked for: by number or rule, on the nodes, with an episode in the window (only those kept). The
// analysis keeps only them, and the budgets and steps of the nodes asked for.
std::vector<ReportFinding> selectFindings(ReportModel& m, const ReportOptions& options)
{
    RunAnalysis& a = m.analysis;
    m.findingsInRun = a.findings.size();
    std::vector<ReportFinding> kept;
    for (size_t i = 0; i < a.findings.size(); ++i) {
        Finding f = a.findings[i];
        if (!wanted(options.findings, static_cast<int>(i + 1), f.rule)) continue;
        if (!options.nodes.empty() && std::none_of(f.nodes.begin(), f.nodes.end(),
                                                   [&](const std::string& n) { return contains(options.nodes, n); }))
            continue;
        if (m.windowed) {
            std::erase_if(f.episodes, [&](const FindingEpisode& e) { return !overlaps(e, m.fromNs, m.toNs); });
            if (f.episodes.empty()) continue;
        }
        ReportFinding rf;
        rf.number = static_cast<int>(i + 1);
        rf.finding = std::move(f);
        kept.push_back(std::move(rf));
    }
    std::vector<Finding> shown;
    shown.reserve(kept.size());
    for (const ReportFinding& rf : kept)
        shown.push_back(rf.finding);
    a.findings = std::move(shown);
    if (!options.nodes.empty()) {
        std::erase_if(a.budgets, [&](const TimeBudget& b) { return !contains(options.nodes, b.node); });
        std::erase_if(a.steps, [&](const StepTimes& s) { return !contains(options.nodes, s.node); });
    }
    return kept;
}

// The primary findings' episodes shaded on the overview, except a finding that covers most of the range (it would
// shade everything; the findings table says how much it covers).
void shadeOverview(ReportModel& m, const std::vector<ReportFinding>& kept)
{
    for (const ReportFinding& rf : kept) {
        if (!rf.finding.primary) continue;
        int64_t covered = 0;
        for (const FindingEpisode& e : rf.finding.episodes)
            covered += std::max<int64_t>(0, std::min(e.endNs, m.toNs) - std::max(e.startNs, m.fromNs));
        if (covered * 2 > m.toNs - m.fromNs) continue;
        for (const FindingEpisode& e : rf.finding.episodes)
            m.overview.spans.push_back({e.startNs, e.endNs, rf.finding.severity, rf.finding.rule});
    }
}

// A finding's figures: the timeline around its first episode (lanes without data there left out, utilization
// kept) and the flame graph of that episode.
Status findingFigures(ReportFinding& rf, const ReportModel& m, timeline::TimelineSource& source,
                      const std::vector<timeline::LaneSpec>& runLanes, FlameSource& stacks,
                      const ReportOptions& options)
{
    const Finding& f = rf.finding;
    const FindingEpisode& e = f.episodes.front();
    const auto [from, to] = episodeView(e);
    rf.timeline.fromNs = std::max(from, m.runFromNs);
    rf.timeline.toNs = std::min(to, m.runToNs);
    if (rf.timeline.toNs <= rf.timeline.fromNs) rf.timeline.toNs = rf.timeline.fromNs + 1'000'000'000;
    rf.timeline.lanes = lanesForRule(runLanes, f.rule);
    for (const FindingEpisode& x : f.episodes)
        if (overlaps(x, rf.timeline.fromNs, rf.timeline.toNs))
            rf.timeline.spans.push_back({x.startNs, x.endNs, f.severity, f.rule});
    RUNLENS_ASSIGN_OR_RETURN(auto frame,
                             fetchFigure(source, *m.catalog, rf.timeline, f.nodes, f.gpus, options.figurePixels));
    rf.timeline.frame = frame;
    // Lanes without data in the episode (traces of a few profiled steps elsewhere) are left out; utilization stays.
    if (frame) {
        std::vector<timeline::LaneSpec> withData;
        for (const timeline::LaneSpec& lane : rf.timeline.lanes) {
            const auto part = std::find_if(frame->lanes.begin(), frame->lanes.end(),
                                           [&](const timeline::LaneFrame& l) { return l.laneId == lane.id; });
            if (lane.id == "gpu_util" || (part != frame->lanes.end() && part->hasData)) withData.push_back(lane);
        }
        rf.timeline.lanes = std::move(withData);
    }
    rf.flame = flameFigure(stacks, f, e.startNs, e.endNs);
    return okStatus();
}

} // namespace

Expected<ReportModel> buildReportModel(const std::string& runPath, const ReportOptions& options,
                                       const ReportProgress& progress, const std::atomic<bool>* cancel)
{
    ReportModel m;
    m.runPath = runPath;
    m.runName = std::filesystem::path(runPath).filename().string();
    m.generatedNs = QDateTime::currentMSecsSinceEpoch() * 1'000'000;
    m.programVersion = RUNLENS_VERSION;
    m.nodeFilter = options.nodes;
    int total = 4, done = 0;
    const auto step = [&](const std::string& what) -> Status {
        if (cancel && cancel->load()) return makeError(ErrorCode::Cancelled, "report cancelled");
        if (progress) progress(done++, total, what);
        return okStatus();
    };

    RUNLENS_TRY(step("catalog"));
    RUNLENS_ASSIGN_OR_RETURN(m.catalog, timeline::loadRunCatalog(runPath));
    const timeline::RunCatalog& cat = *m.catalog;
    RUNLENS_TRY(describeCatalog(m, cat, options));

    RUNLENS_TRY(step("analysis"));
    // Read-only unless the analysis made for the report is to be kept (and a file we may not write is still read).
    auto db = store::RunDatabase::open(runPath,
                                       options.storeAnalysis ? store::OpenMode::ReadWrite : store::OpenMode::ReadOnly);
    if (!db && options.storeAnalysis) db = store::RunDatabase::open(runPath, store::OpenMode::ReadOnly);
    if (!db) return db.error();
    RUNLENS_TRY(loadAnalysis(m, **db, options, cancel));
    RUNLENS_TRY(setWindow(m, cat, options));
    std::vector<ReportFinding> kept = selectFindings(m, options);
    total = 4 + static_cast<int>(kept.size());

    RUNLENS_TRY(step("key metrics"));
    const RunAnalysis& a = m.analysis;
    RUNLENS_ASSIGN_OR_RETURN(auto metrics,
                             loadRunMetrics(**db, static_cast<int64_t>(a.params.get("rules.grid_s") * 1e9)));
    for (NodeKeyMetrics& k : keyMetrics(metrics, a.params, m.fromNs, m.toNs))
        if (onNodes(options, k.node)) m.keyMetrics.push_back(std::move(k));
    for (const NodeKeyMetrics& k : m.keyMetrics)
        m.gpus += k.gpus;

    RUNLENS_TRY(step("overview"));
    RUNLENS_ASSIGN_OR_RETURN(auto source, timeline::TimelineSource::open(runPath, m.catalog));
    const std::vector<timeline::LaneSpec> runLanes = timeline::laneSpecs(cat);
    m.overview.fromNs = m.fromNs;
    m.overview.toNs = m.toNs;
    m.overview.lanes = lanesForRule(runLanes, "overview");
    shadeOverview(m, kept);
    RUNLENS_ASSIGN_OR_RETURN(m.overview.frame,
                             fetchFigure(*source, cat, m.overview, options.nodes, {}, options.figurePixels));

    RUNLENS_ASSIGN_OR_RETURN(auto classifier, PhaseClassifier::builtIn());
    FlameSource stacks(**db, std::make_shared<PhaseClassifier>(std::move(classifier)));
    for (ReportFinding& rf : kept) {
        RUNLENS_TRY(step(fmt::format("finding {} ({})", rf.number, rf.finding.rule)));
        if (!rf.finding.episodes.empty()) RUNLENS_TRY(findingFigures(rf, m, *source, runLanes, stacks, options));
        m.findings.push_back(std::move(rf));
    }
    if (progress) progress(total, total, "done");
    return m;
}

} // namespace runlens::analysis
