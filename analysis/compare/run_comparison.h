#pragma once

// A whole comparison of runs (docs/design.md, "Comparing runs"), as `runlens compare`, the Compare window and the
// compare report show it: each run summarised over its window (summarizeRun), the metric rows (compareRuns), each
// run's loss curve, and per candidate against the baseline: the findings gone / still there / new, the functions
// whose share of the stack samples grew or shrank, and the loss curves compared. The runs are opened read-only;
// nothing is written to them.

#include "analysis/compare/findings_compare.h"
#include "analysis/compare/flame_compare.h"
#include "analysis/compare/loss_compare.h"
#include "analysis/compare/run_compare.h"

#include <QJsonObject>
#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace runlens::analysis {

// One candidate set against the baseline.
struct CandidateComparison
{
    FindingsComparison findings;
    std::optional<FlameComparison> flame; // none when either run has no timed stack samples in its window
    LossComparison loss;
};

struct RunComparison
{
    std::vector<RunSummary> runs; // baseline first
    std::vector<CompareRow> rows;
    std::vector<LossCurve> curves;               // per run: over its given window, else the whole run
    std::vector<CandidateComparison> candidates; // per candidate (runs 1…)
};

struct CompareInput
{
    std::string path;
    CompareWindowRequest window;
};

struct CompareOptions
{
    size_t flameRows = 12; // functions listed per direction (grew, shrank)
    const std::atomic<bool>* cancel = nullptr;
};

// inputs[0] is the baseline. Errors name the run: unreadable (Database/Io/…), an empty window (Usage), Cancelled.
Expected<RunComparison> compareRunFiles(const std::vector<CompareInput>& inputs, const CompareOptions& options = {});

// {"runs", "test", "alpha", "rows", "candidates": [{findings, flame, loss}]} (runlens compare --json).
QJsonObject toJson(const RunComparison& comparison);

} // namespace runlens::analysis
