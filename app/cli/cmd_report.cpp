#include "analysis/compare/run_comparison.h"
#include "analysis/report/report_model.h"
#include "analysis/store/run_database.h"
#include "app/cli/cli.h"
#include "app/cli/report_args.h"
#include "app/cli/window_args.h"
#include "widgets/report/compare_report.h"
#include "widgets/report/report_renderer.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <filesystem>
#include <fmt/format.h>

namespace runlens::app {

namespace {

constexpr const char* kSummary = R"(Write a report of a run: a PDF (or PNG pages) a team can read without RunLens.

It holds a summary (what was found, the run, what it lacks), where the time went (the goodput waterfall), key
metrics per node, the run at a glance, then each finding in order: what, where, when, impact and saving, a
timeline snapshot of its episode, its evidence, the flame graph of the episode focused on the evidence frame,
and what to change; with --compare BASE, a comparison of this run against BASE (the metric rows with their
verdicts, the loss curves, the key metrics overlaid, findings and stacks, as runlens compare -o draws it); an
appendix lists the rule parameters and the import diagnostics. The findings are the
run's stored ones (runlens analyze --store); a run without them is analysed for the report, which writes nothing
to the run unless --store is given.
Times (--from/--to, --window FROM..TO) as for flame: ISO 8601 (UTC unless it has a zone), epoch seconds or
an offset from the run's start (+90s, +1h30m).)";

} // namespace

int cmdReport(const QStringList& args)
{
    QCommandLineParser parser;
    const ReportOutputOptions output = reportOutputOptions();
    const QCommandLineOption from(QStringLiteral("from"), QStringLiteral("Only findings with an episode after T."),
                                  QStringLiteral("T"));
    const QCommandLineOption to(QStringLiteral("to"), QStringLiteral("… and before T."), QStringLiteral("T"));
    const QCommandLineOption window(QStringLiteral("window"), QStringLiteral("FROM..TO, the same as --from and --to."),
                                    QStringLiteral("FROM..TO"));
    const QCommandLineOption nodes(QStringLiteral("nodes"), QStringLiteral("Only these nodes (comma list or repeat)."),
                                   QStringLiteral("N"));
    const QCommandLineOption findings(QStringLiteral("findings"),
                                      QStringLiteral("Only these findings: their numbers (as analyze lists them) or "
                                                     "rules, e.g. 1,3 or CKPT_GAP."),
                                      QStringLiteral("LIST"));
    const QCommandLineOption analyze(
        QStringLiteral("analyze"), QStringLiteral("Run the rules again (with the parameters set for the run) even "
                                                  "when it has findings (with --store they replace the stored ones)."));
    const QCommandLineOption keepOption(QStringLiteral("store"),
                                        QStringLiteral("Keep the findings analysed for the report in the run (a run "
                                                       "without stored findings). Without it nothing is written."));
    const QCommandLineOption noStore(QStringLiteral("no-store"),
                                     QStringLiteral("Write nothing (the default; kept for scripts)."));
    const QCommandLineOption compare(QStringLiteral("compare"),
                                     QStringLiteral("Add a comparison with BASE: BASE as the baseline, this run as the "
                                                    "candidate, each over its steady state (as runlens compare)."),
                                     QStringLiteral("BASE"));
    for (const auto* o : output.all())
        parser.addOption(*o);
    for (const auto* o : {&from, &to, &window, &nodes, &findings, &analyze, &keepOption, &noStore, &compare})
        parser.addOption(*o);
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    if (parser.positionalArguments().size() != 1 || !parser.isSet(output.out)) {
        printError("report needs one RUN and -o OUT (see runlens report --help)");
        return kExitUsage;
    }
    int rc = kExitOk;
    const auto target = readReportOutput(parser, output, rc);
    if (!target) return rc;
    const QString& outPath = target->path;

    const std::string runPath = parser.positionalArguments().front().toStdString();
    analysis::ReportOptions options;
    options.nodes = splitList(parser.values(nodes));
    options.findings = splitList(parser.values(findings));
    options.storeAnalysis = parser.isSet(keepOption) && !parser.isSet(noStore);
    options.reanalyze = parser.isSet(analyze);
    QString fromText = parser.value(from), toText = parser.value(to);
    if (parser.isSet(window)) {
        const QStringList parts = parser.value(window).split(QStringLiteral(".."));
        if (parts.size() != 2) {
            printError("--window: FROM..TO (either side may be empty)");
            return kExitUsage;
        }
        fromText = parts[0];
        toText = parts[1];
    }
    if (!fromText.isEmpty() || !toText.isEmpty()) {
        auto db = store::RunDatabase::open(runPath, store::OpenMode::ReadOnly);
        if (!db) {
            printError(db.error().toString());
            return kExitFailure;
        }
        auto w = parseWindow(fromText.toStdString(), toText.toStdString(), runStartNs(**db));
        if (!w) {
            printError(w.error().message);
            return kExitUsage;
        }
        if (!fromText.isEmpty()) options.fromNs = w->fromNs;
        if (!toText.isEmpty()) options.toNs = w->toNs;
    }

    QElapsedTimer timer;
    timer.start();
    const bool terminal = stderrIsTerminal();
    auto model = analysis::buildReportModel(runPath, options, [&](int done, int total, const std::string& what) {
        if (terminal) fmt::print(stderr, "\r\033[Kreport: {}/{} {}", done, total, what);
    });
    if (terminal) fmt::print(stderr, "\r\033[K");
    if (!model) {
        printError(model.error().toString());
        return model.error().code == ErrorCode::Usage ? kExitUsage : kExitFailure;
    }
    const double modelS = static_cast<double>(timer.elapsed()) / 1000;
    // The comparison (read-only over both runs) before anything is drawn: a run it cannot read writes no report.
    std::optional<analysis::RunComparison> comparison;
    if (parser.isSet(compare)) {
        auto c = analysis::compareRunFiles({{parser.value(compare).toStdString(), {}}, {runPath, {}}});
        if (!c) {
            printError(c.error().toString());
            return c.error().code == ErrorCode::Usage ? kExitUsage : kExitFailure;
        }
        comparison = std::move(*c);
    }
    auto result = widgets::renderReport(*model, outPath, target->png, target->setup, [&](widgets::ReportDocument& doc) {
        if (!comparison) return;
        doc.heading(QObject::tr("Compared with %1").arg(widgets::runName(comparison->runs, 0)), 1, true);
        widgets::appendComparison(doc, *comparison, 2);
    });
    if (!result) {
        printError(result.error().toString());
        return kExitFailure;
    }
    fmt::print(
        stderr, "{} page{}, {} finding{} ({} of the run's){} → {} ({:.1f} s: data {:.1f} s, drawing {:.1f} s)\n",
        result->pages, result->pages == 1 ? "" : "s", model->findings.size(), model->findings.size() == 1 ? "" : "s",
        model->findingsInRun, model->analysisFresh ? ", analysed for it" : "", outPath.toStdString(),
        static_cast<double>(timer.elapsed()) / 1000, modelS, static_cast<double>(timer.elapsed()) / 1000 - modelS);
    return kExitOk;
}

} // namespace runlens::app
