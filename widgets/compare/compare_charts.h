#pragma once

// The charts of a comparison of runs, drawn into a QCustomPlot (the Compare window shows it; the compare report
// paints it with toPainter): each run's loss curve against its step, its tokens or samples, or its wall time, and
// a metric row's line per run over its window, aligned by the time since the window's start or by the steps done.
// Each run keeps its colour (runColor) in every chart and table.

#include "analysis/compare/run_comparison.h"

#include <QColor>
#include <QString>
#include <string>
#include <vector>

class QCustomPlot;

namespace runlens::widgets {

// The colour of run i: the baseline first, the candidates from a fixed palette.
QColor runColor(size_t i);
// The run's name: its file's name, with its folder when the name alone is ambiguous (two demo.runlens).
QString runName(const std::vector<analysis::RunSummary>& runs, size_t i);

enum class LossAxis
{
    Step, // the trainer's step
    Size, // cumulative tokens (or samples) when the log gives step sizes
    Time, // seconds since the run's first loss point
};
enum class CompareAlign
{
    Time, // seconds since each run's window started
    Step, // steps done since each run's window started
};

// Whether any run has its loss against this axis (Size needs step sizes in a run's log).
bool hasLoss(const analysis::RunComparison& comparison, LossAxis axis);
// The rows with a line in at least one run, in the table's order.
std::vector<std::string> chartRows(const analysis::RunComparison& comparison);

// Fill an empty plot (its palette decides paper or screen). Returns false (the plot left empty, with a note)
// when no run has anything to draw. Loss: the raw points faint, the rolling median (what the verdict compares)
// bold.
bool plotLoss(QCustomPlot& plot, const analysis::RunComparison& comparison, LossAxis axis);
bool plotRow(QCustomPlot& plot, const analysis::RunComparison& comparison, const std::string& rowId,
             CompareAlign align);

// A sentence per candidate: the loss verdicts ("against steps: unchanged …; against time: reaches 2.1 in 0.80 × …").
QString lossSummary(const analysis::RunComparison& comparison);

} // namespace runlens::widgets
