#include "app/cli/report_args.h"

#include "app/cli/cli.h"

#include <QApplication>
#include <fmt/format.h>

namespace runlens::app {

ReportOutputOptions reportOutputOptions()
{
    return {
        QCommandLineOption(QStringList{QStringLiteral("o"), QStringLiteral("output")},
                           QStringLiteral("The PDF to write, or with --format png the folder for the pages."),
                           QStringLiteral("OUT")),
        QCommandLineOption(QStringLiteral("format"),
                           QStringLiteral("pdf (default), or png: one page-NNN.png per page in the folder OUT."),
                           QStringLiteral("F")),
        QCommandLineOption(QStringLiteral("page"),
                           QStringLiteral("a4 or letter (default: by the locale; Letter where it measures in inches)."),
                           QStringLiteral("SIZE")),
        QCommandLineOption(QStringLiteral("dpi"), QStringLiteral("Resolution of PNG pages (default 150)."),
                           QStringLiteral("N"), QStringLiteral("150")),
        QCommandLineOption(QStringLiteral("figures"),
                           QStringLiteral("Also write each figure as its own PNG (at --dpi) into DIR."),
                           QStringLiteral("DIR"))};
}

std::optional<ReportOutput> readReportOutput(const QCommandLineParser& parser, const ReportOutputOptions& o,
                                             int& exitCode)
{
    exitCode = kExitUsage;
    ReportOutput r;
    r.path = parser.value(o.out);
    const QString fmtName = parser.isSet(o.format) ? parser.value(o.format).toLower() : QStringLiteral("pdf");
    if (fmtName != QLatin1String("pdf") && fmtName != QLatin1String("png")) {
        printError("--format: pdf or png");
        return std::nullopt;
    }
    r.png = fmtName == QLatin1String("png");
    if (!r.png && !r.path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive)) {
        printError(
            fmt::format("-o {}: a PDF's name ends in .pdf (or give --format png and a folder)", r.path.toStdString()));
        return std::nullopt;
    }
    r.setup.pageSize = widgets::defaultPageSize();
    if (parser.isSet(o.page)) {
        const QString p = parser.value(o.page).toLower();
        if (p == QLatin1String("a4"))
            r.setup.pageSize = QPageSize(QPageSize::A4);
        else if (p == QLatin1String("letter"))
            r.setup.pageSize = QPageSize(QPageSize::Letter);
        else {
            printError("--page: a4 or letter");
            return std::nullopt;
        }
    }
    bool dpiOk = false;
    r.setup.dpi = parser.value(o.dpi).toInt(&dpiOk);
    if (!dpiOk || r.setup.dpi < 36 || r.setup.dpi > 1200) {
        printError("--dpi: a number between 36 and 1200");
        return std::nullopt;
    }
    r.setup.figureFolder = parser.value(o.figures);
    exitCode = kExitFailure;
    if (!qobject_cast<QApplication*>(QCoreApplication::instance())) {
        printError("drawing a report needs the GUI libraries; this build started without them");
        return std::nullopt;
    }
    // Without fonts Qt draws empty boxes: say so instead of writing an unreadable report.
    if (const QString problem = widgets::reportFontProblem(); !problem.isEmpty()) {
        printError(problem.toStdString());
        return std::nullopt;
    }
    exitCode = kExitOk;
    return r;
}

} // namespace runlens::app
