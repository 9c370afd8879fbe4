#pragma once

// The output options every command that writes a report shares (report, compare): -o OUT, --format pdf|png,
// --page a4|letter, --dpi N, --figures DIR.

#include "widgets/report/report_document.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QString>
#include <optional>
#include <vector>

namespace runlens::app {

struct ReportOutputOptions
{
    QCommandLineOption out, format, page, dpi, figures;
    std::vector<const QCommandLineOption*> all() const { return {&out, &format, &page, &dpi, &figures}; }
};
ReportOutputOptions reportOutputOptions();

struct ReportOutput
{
    QString path;
    bool png = false;
    widgets::ReportPageSetup setup;
};

// The output the options ask for (-o must be set), after checking that a report can be drawn here (a QApplication,
// fonts). On a problem prints it and returns the exit code in `exitCode`.
std::optional<ReportOutput> readReportOutput(const QCommandLineParser& parser, const ReportOutputOptions& o,
                                             int& exitCode);

} // namespace runlens::app
