#pragma once

// A report from its model: the summary (what was found, the run, what it lacks), where the time went (the goodput
// waterfall), key metrics per node, the run at a glance, each finding (facts, a timeline snapshot of its episode,
// its evidence, the flame graph of the episode, what to change) and the appendix (rule parameters, sources and
// import diagnostics). Timeline and flame figures are drawn by the views' own painters. Needs a QApplication
// (the timeline lanes are QCustomPlot widgets, never shown); runs on the GUI thread.

#include "analysis/report/report_model.h"
#include "widgets/report/report_document.h"

#include <QString>
#include <QStringList>
#include <functional>

namespace runlens::widgets {

struct ReportResult
{
    int pages = 0;
    QStringList headings; // in order, as printed
    QStringList files;    // the PDF or the PNG pages, then the figures written on their own (figure-NN-name.png)
};

// path: a .pdf file, or with png a folder of page-NNN.png.
// extra: sections added after the findings, before the appendix (a comparison with another run).
Expected<ReportResult> renderReport(const analysis::ReportModel& model, const QString& path, bool png,
                                    const ReportPageSetup& setup,
                                    const std::function<void(ReportDocument&)>& extra = {});

// Finishes doc, written at path (a PDF, or with png a folder of pages), and says what it wrote.
Expected<ReportResult> finishReport(ReportDocument& doc, const QString& path, bool png);

} // namespace runlens::widgets
