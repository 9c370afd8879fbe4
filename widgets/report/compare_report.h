#pragma once

// A comparison of runs on paper (runlens compare -o, the Compare window's PDF export, and the section
// `runlens report --compare` adds): the runs and their windows in their colours, the metric rows with their
// differences and verdicts, the loss curves overlaid (against step or tokens, and against wall time) with their
// verdicts, each key metric's line per run over its window (aligned by time or by step), the findings gone /
// still there / new, and the functions whose share of the stack samples grew or shrank. Needs a QApplication
// (the charts are QCustomPlot widgets, never shown); runs on the GUI thread.

#include "analysis/compare/run_comparison.h"
#include "widgets/compare/compare_charts.h"
#include "widgets/report/report_document.h"
#include "widgets/report/report_renderer.h"

namespace runlens::widgets {

struct CompareReportOptions
{
    CompareAlign align = CompareAlign::Time; // how the metric lines are aligned
};

// The comparison as sections of a document; `level` is the heading level of its sections (1 on its own, 2 inside
// a run's report).
void appendComparison(ReportDocument& doc, const analysis::RunComparison& comparison, int level,
                      const CompareReportOptions& options = {});

// path: a .pdf file, or with png a folder of page-NNN.png.
Expected<ReportResult> renderCompareReport(const analysis::RunComparison& comparison, const QString& path, bool png,
                                           const ReportPageSetup& setup, const CompareReportOptions& options = {});

} // namespace runlens::widgets
