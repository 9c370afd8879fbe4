#pragma once

// Comparing runs (docs/design.md, "Comparing runs"): one run and window is the baseline, the others candidates.
// Each run is summarised over its window (by default its steady state: after the start-up the rules leave out)
// into metrics with the samples behind them (the steps' times, or the metrics' per-step means), and each
// candidate is set against the baseline row by row: the difference, absolute and relative, and a verdict from a
// two-sample test (Mann–Whitney U, normal approximation with tie and continuity corrections) at kCompareAlpha.
// Nothing is written to the runs.

#include "analysis/rules/run_analysis.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"

#include <QJsonObject>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace runlens::analysis {

// The significance level of every verdict: a difference is called only when the two-sided p-value is below it.
inline constexpr double kCompareAlpha = 0.05;
// A significant difference smaller than this share of the baseline's value is reported as no change ("under 1 %"):
// on long runs thousands of samples make a 0.1 % drift significant, and a drift that small is within what two
// runs of the same job differ by.
inline constexpr double kCompareMinEffect = 0.01;
// Fewer samples than this on either side: no test ("too few samples").
inline constexpr size_t kCompareMinSamples = 5;

struct MannWhitney
{
    double u = 0; // U of the second sample (b) against the first (a)
    double z = 0; // > 0: b tends to be larger than a
    double p = 1; // two-sided
};
// Mann–Whitney U of b against a (NaN values left out), normal approximation with tie and continuity corrections.
MannWhitney mannWhitneyU(const std::vector<double>& a, const std::vector<double>& b);

// Which window of a run to compare: the given one, the whole run, or (neither) its steady state.
struct CompareWindowRequest
{
    std::optional<store::TimeWindow> window; // [fromNs, toNs)
    bool wholeRun = false;
};

// One metric of one run over its window: its value and the samples a test compares (empty: no test).
struct CompareMetric
{
    double value = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> samples;
};

// A metric over a run's window as a line, for the overlaid timelines: seconds since the window's start and values.
struct CompareSeries
{
    std::vector<double> tS, value;
};

struct RunSummary
{
    std::string label;            // the run's path
    int64_t fromNs = 0, toNs = 0; // the window compared, [from, to)
    std::string windowKind;       // "steady state", "whole run" or "given"
    std::string stepSource;       // "trainer log", "detected steps" or "" (no steps)
    double blockS = 0;            // the rate rows' sample length (about a step), seconds
    bool analysisStored = false;  // the findings are the run's stored ones (else analysed now, not kept)
    std::map<std::string, CompareMetric> metrics; // by row id (see compareRuns)
    // The trainer log's steps in the window that give their size: step time (s) and tokens (or samples) per step.
    std::vector<std::pair<double, double>> sizedSteps;
    std::string stepSizeUnit;              // "tokens" or "samples"; "" when the log gives neither
    std::vector<std::string> findingRules; // the rules with findings in the window, in order of first appearance
    std::vector<Finding> findings;         // the run's findings (stored, or analysed now)
    // By row id: step times at their steps' ends, the logged throughput and MFU at their moments, the rates' means
    // over blocks of about a step at the blocks' middles.
    std::map<std::string, CompareSeries> series;
    std::vector<double> stepEndsS; // the steps' ends, seconds since the window's start (to align runs by step)
    std::string mfuText;           // how the MFU row was worked out, or why it is not known
};

// Steps completed at tS seconds into the run's window (interpolated between the steps' ends; NaN without steps).
double stepsAt(const RunSummary& run, double tS);

// Reads and summarises one run over its window (read-only). Errors: an unreadable run, an empty window (Usage).
Expected<RunSummary> summarizeRun(store::RunDatabase& db, const std::string& label,
                                  const CompareWindowRequest& request);

struct CompareCell
{
    double delta = std::numeric_limits<double>::quiet_NaN();    // candidate − baseline
    double deltaPct = std::numeric_limits<double>::quiet_NaN(); // 100 × delta / baseline
    std::string verdict; // faster, slower, higher, lower, no significant change, too few samples, "" (not tested)
    double p = std::numeric_limits<double>::quiet_NaN();
};

struct CompareRow
{
    std::string id, label, unit;    // unit: s, %, 1/s, B/s, count, …
    std::string samplesOf;          // what the test compares ("steps", "per-step means", ""), empty: no test
    std::vector<double> values;     // per run, baseline first (NaN: n/a)
    std::vector<CompareCell> cells; // per candidate (runs 1…)
};

// The rows of the comparison: step time (median, p90, count), throughput, step size, time per baseline-sized
// step, GPU, SM and tensor activity, network, InfiniBand and storage rates, checkpoint cost, the goodput
// waterfall's parts and each rule's impact and saving. Rows n/a in every run are left out.
std::vector<CompareRow> compareRuns(const std::vector<RunSummary>& runs);

QJsonObject toJson(const RunSummary& run);
QJsonObject toJson(const CompareRow& row);

} // namespace runlens::analysis
