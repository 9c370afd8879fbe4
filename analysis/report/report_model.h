#pragma once

// What a report says, as plain values: the run (nodes, GPUs, time range, the sources imported and their
// problems), the goodput waterfall and key metrics per node, then each finding with the data of its figures (a
// timeline frame of its episode and a flame tree of the episode window, focused on its evidence frame), and the
// appendix (rule parameters, import diagnostics). Everything that reads the store happens here, on the caller's
// thread (a worker in the GUI); rendering (widgets/report) only paints these values.

#include "analysis/flame/flame_search.h"
#include "analysis/flame/flame_tree.h"
#include "analysis/report/key_metrics.h"
#include "analysis/rules/run_analysis.h"
#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"
#include "analysis/timeline/timeline_source.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace runlens::analysis {

struct ReportOptions
{
    std::optional<int64_t> fromNs, toNs; // --window: only findings with an episode in it; figures over it
    std::vector<std::string> nodes;      // --nodes: only these nodes (empty: all)
    std::vector<std::string> findings;   // --findings: report numbers ("2") or rules ("CKPT_GAP"); empty: all
    int figurePixels = 680;              // the width the timeline figures are reduced for
    bool storeAnalysis = false; // a run without a stored analysis: keep the one run for the report (only when asked)
    bool reanalyze = false;     // analyse even when the run has findings (with its kept parameters)
};

// A timeline figure: these lanes over this range, only the series of `nodes` / `gpus`, the shaded episodes.
struct ReportTimeline
{
    std::vector<timeline::LaneSpec> lanes;
    std::shared_ptr<const timeline::TimelineFrame> frame; // null when the run has none of the lanes
    int64_t fromNs = 0, toNs = 0;
    struct Span
    {
        int64_t fromNs = 0, toNs = 0;
        std::string severity; // the colour
        std::string label;
    };
    std::vector<Span> spans;
};

// A flame graph figure: the busy stack samples (idle stacks left out) of a window on some nodes, focused on the
// hottest call path of the evidence frame when it is in the tree and calls something; an evidence frame that is
// (nearly) a leaf is highlighted in the whole graph instead, so what surrounds it shows.
struct ReportFlame
{
    std::shared_ptr<const FlameTree> tree; // null: no stack samples in the window (note says so)
    int32_t focus = 0;
    std::string evidenceFrame; // the frame searched for, as labelled ("fetch_sub_module (fsdp.py:41)"); may be empty
    std::string focusPath;     // "a;b;c" of the focus, empty when not focused
    std::shared_ptr<const FlameSearch> highlight; // the evidence frame's blocks, when not focused
    int64_t fromNs = 0, toNs = 0;
    std::string note; // why there is no graph, or that the evidence frame is not in this window
};

struct ReportFinding
{
    int number = 0; // 1-based, in the analysis' order (the GUI's and `analyze`'s numbering)
    Finding finding;
    ReportTimeline timeline;
    ReportFlame flame;
};

struct ReportSource
{
    std::string path, format, node;
    int64_t rows = 0, problems = 0;
    std::vector<std::pair<std::string, int64_t>> problemKinds;
    std::vector<store::DiagnosticInfo> firstProblems; // with file:line
};

struct ReportModel
{
    std::string runPath, runName;
    int64_t generatedNs = 0;
    std::string programVersion;
    int64_t runFromNs = 0, runToNs = 0; // the whole run
    int64_t fromNs = 0, toNs = 0;       // what the report covers (the window, or the run)
    bool windowed = false;
    std::vector<std::string> nodeFilter; // as asked (empty: every node)
    std::vector<std::string> nodes;      // reported nodes
    size_t gpus = 0;
    RunAnalysis analysis;     // findings restricted to what is reported
    size_t findingsInRun = 0; // before the restriction
    std::map<std::string, double> overrides;
    int64_t analysisRanNs = 0;
    bool analysisFresh = false; // run for this report (nothing was stored)
    std::vector<NodeKeyMetrics> keyMetrics;
    std::vector<ReportSource> sources;
    int64_t stackSamples = 0;
    bool hasTraces = false;
    ReportTimeline overview; // the reported range, every reported node, the findings' episodes shaded
    std::vector<ReportFinding> findings;
    std::shared_ptr<const timeline::RunCatalog> catalog; // node colours and names for the figures
};

// progress(done, total, what); cancel stops between steps.
using ReportProgress = std::function<void(int done, int total, const std::string& what)>;
Expected<ReportModel> buildReportModel(const std::string& runPath, const ReportOptions& options,
                                       const ReportProgress& progress = {}, const std::atomic<bool>* cancel = nullptr);

// The lanes a finding's episode is shown with: GPU utilization vs SM activity, then what its rule reads (the
// network and profiled communication for COMM_BOUND, storage for CKPT_GAP, CPU and storage for INPUT_STALL,
// clocks, power and temperature for THROTTLE, step times for STRAGGLER …), those the run has. "overview": the
// lanes of the run at a glance (utilization, interconnect, storage, step times).
std::vector<timeline::LaneSpec> lanesForRule(const std::vector<timeline::LaneSpec>& runLanes, const std::string& rule);

// The window shown for an episode: the episode with a quarter of its length (at least 5 s) on each side.
std::pair<int64_t, int64_t> episodeView(const FindingEpisode& episode);

// The frame a finding points at (its first top comm / checkpoint / top frame), labelled as the flame graph labels
// frames: "name (file:line)", or the bare name of a frame without a file; empty when it names none. The GUI
// searches the flame graph for it and the report focuses on it.
std::string evidenceFrame(const Finding& finding);

} // namespace runlens::analysis
