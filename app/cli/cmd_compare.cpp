#include "analysis/compare/compare_format.h"
#include "analysis/compare/run_comparison.h"
#include "analysis/store/run_database.h"
#include "app/cli/cli.h"
#include "app/cli/report_args.h"
#include "app/cli/window_args.h"
#include "widgets/report/compare_report.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <optional>

namespace runlens::app {

namespace {

constexpr const char* kSummary = R"(Compare runs, or windows of one run, against a baseline.

The first RUN is the baseline, the others candidates; give the same run twice with --window-a and --window-b to
compare two phases of it. Each run is read over its steady state (after its start-up, as the diagnosis rules
judge it), over --whole-run, or over the window given. Rows: step time (median, p90, count; the trainer log's
step times, else the steps detected from the GPUs' periodicity), iterations/s, samples/s and tokens/s (trainer
log), the step size and the step time at the baseline's step size (when the log gives tokens or samples per
step), GPU utilization, SM and tensor activity, network, InfiniBand and storage write rates, checkpoint stalls,
where the time went, and each rule's impact and saving in the window (the stored findings, else an analysis in
memory). Each candidate row has its difference to the baseline (absolute and %) and a verdict: a two-sided
Mann-Whitney U test (normal approximation) at alpha = 0.05, on the step times for step rows and on per-step means
of the per-second samples for rate rows. Then, per candidate, the findings set side by side (gone, still there
with their impact and saving before and after, new) and the functions whose share of the timed stack samples
grew or shrank between the two windows (each side as shares of its own samples; frames matched by name and file),
and the loss curves (the given window, else the whole run): against steps (against tokens or samples when the
runs' steps differ in size by more than 10 %), the median difference of the smoothed curves over their common
range, "unchanged" within the curves' noise, else lower or higher; against wall time, the time each run takes to
reach the higher of their final smoothed losses (plus the noise), as a ratio (better or worse beyond 5 %).
The runs are opened read-only; nothing is written to them.
--json prints one object: {"runs": [...], "test", "alpha", "rows": [{metric, label, unit, test_on, values,
candidates: [{delta, delta_pct, verdict, p_value}]}], "candidates": [{findings: [{status, rule, character, title,
impact_a, impact_b, saving_a_s, saving_b_s}], flame: {samples_a, samples_b, grew, shrank: [{frame, share_a,
share_b, self_share_a, self_share_b}]}, loss: {axis, x_from, x_to, points, median_difference, difference_spread,
noise_a, noise_b, noise, verdict, level, time_a_s, time_b_s, time_ratio, time_verdict}}]}.
-o compare.pdf (or --format png -o FOLDER) writes the comparison as a document instead of the text: the runs, the
metric rows, the loss curves overlaid against step (or tokens) and against wall time, each key metric's line per
run over its window (--align time or step), the findings and the stack changes.
Exit codes: 0 ok, 1 the document could not be written, 2 a run unreadable or a window empty.)";

std::string clock(int64_t ns)
{
    const int64_t ms = ns / 1'000'000;
    return fmt::format("{:02}:{:02}:{:02}.{:01}", ms / 3'600'000 % 24, ms / 60'000 % 60, ms / 1000 % 60,
                       ms % 1000 / 100);
}

std::string value(double v, const std::string& unit, bool sign = false)
{
    return analysis::formatCompareValue(v, unit, sign);
}

size_t width(const std::string& s) // code points (the table's text is UTF-8)
{
    size_t n = 0;
    for (unsigned char c : s)
        n += (c & 0xC0) != 0x80;
    return n;
}

std::string pad(const std::string& s, size_t w, bool right)
{
    const std::string fill(w > width(s) ? w - width(s) : 0, ' ');
    return right ? fill + s : s + fill;
}

constexpr size_t kFlameRows = 8; // functions listed per direction in the text output

std::string lossNumber(double v)
{
    return std::isfinite(v) ? fmt::format("{:.4g}", v) : std::string("n/a");
}

void printLoss(const analysis::LossComparison& l)
{
    fmt::print("\nLoss: ");
    if (l.axis.empty()) {
        fmt::print("not compared (a run logs fewer than {} loss points)\n", analysis::kLossMinPoints);
        return;
    }
    const std::string axis = l.axis == "step" ? "steps" : l.axis;
    if (l.verdict == "n/a")
        fmt::print("against {}: n/a (the curves share fewer than {} points)", axis, analysis::kLossMinPoints);
    else
        fmt::print("against {}: {} (median difference {}{}, noise {})", axis, l.verdict,
                   l.medianDiff < 0   ? "−"
                   : l.medianDiff > 0 ? "+"
                                      : "",
                   lossNumber(std::fabs(l.medianDiff)), lossNumber(l.noise));
    if (l.timeVerdict == "n/a")
        fmt::print("; against time: n/a (no common loss level reached after the start)\n");
    else
        fmt::print("; against time: reaches {} in {:.2f} × the baseline's time ({}; {:.1f} s vs {:.1f} s)\n",
                   lossNumber(l.level), l.timeRatio, l.timeVerdict, l.timeCandS, l.timeBaseS);
}

void printVersus(const analysis::CandidateComparison& v)
{
    fmt::print("\nFindings (baseline → candidate, saving within each window):\n");
    if (v.findings.gone.empty() && v.findings.still.empty() && v.findings.added.empty())
        fmt::print("  none on either side\n");
    for (const auto* list : {&v.findings.gone, &v.findings.still, &v.findings.added})
        for (const analysis::FindingChange& c : *list)
            fmt::print("  {:<6} {:<11} impact {:5.1f} % → {:5.1f} %, saving {:.1f} s → {:.1f} s  {}\n",
                       analysis::statusName(c.status), c.finding().rule, 100 * c.impactA, 100 * c.impactB, c.savingA,
                       c.savingB, c.finding().title);
    if (!v.flame) {
        fmt::print("\nStack samples: not compared (a run has no timed stack samples in its window)\n");
        return;
    }
    fmt::print("\nStack samples ({} → {}), share of each side's samples:\n", v.flame->totalA, v.flame->totalB);
    const auto list = [](const char* what, const std::vector<analysis::FrameChange>& changes) {
        for (size_t i = 0; i < changes.size() && i < kFlameRows; ++i) {
            const analysis::FrameChange& c = changes[i];
            fmt::print("  {:<6} {:5.1f} % → {:5.1f} % ({:+.1f} pts; self {:.1f} → {:.1f} %)  {}\n", i == 0 ? what : "",
                       100 * c.shareA, 100 * c.shareB, 100 * c.delta(), 100 * c.selfShareA, 100 * c.selfShareB,
                       c.label());
        }
    };
    if (v.flame->grew.empty() && v.flame->shrank.empty())
        fmt::print("  no function's share moved by half a point or more\n");
    list("grew", v.flame->grew);
    list("shrank", v.flame->shrank);
}

// The runs to compare, each with its window: --window-a for the baseline, --window-b for the candidates (relative
// to each run's own start), or the steady state (the whole run with --whole-run). Usage errors only.
Expected<std::vector<analysis::CompareInput>> readInputs(const QCommandLineParser& parser, const QStringList& paths,
                                                         const QCommandLineOption& windowA,
                                                         const QCommandLineOption& windowB, bool wholeRun)
{
    std::vector<analysis::CompareInput> inputs;
    for (qsizetype i = 0; i < paths.size(); ++i) {
        analysis::CompareInput in;
        in.path = paths.at(i).toStdString();
        in.window.wholeRun = wholeRun;
        const QCommandLineOption& option = i == 0 ? windowA : windowB;
        if (parser.isSet(option)) { // a window relative to the run's start: read the start first
            auto db = store::RunDatabase::open(in.path, store::OpenMode::ReadOnly);
            if (!db) return makeError(ErrorCode::Usage, fmt::format("cannot read {}: {}", in.path, db.error().message));
            RUNLENS_ASSIGN_OR_RETURN(in.window.window,
                                     parseWindowRange(i == 0 ? "window-a" : "window-b",
                                                      parser.value(option).toStdString(), runStartNs(**db)));
        }
        inputs.push_back(std::move(in));
    }
    return inputs;
}

// The comparison as text: the runs, then per candidate its table of metrics, findings, stacks and loss.
void printComparison(const analysis::RunComparison& comparison)
{
    const auto& runs = comparison.runs;
    const auto& rows = comparison.rows;
    const std::string test =
        fmt::format("Mann-Whitney U (two-sided, normal approximation), alpha {}", analysis::kCompareAlpha);
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& r = runs[i];
        fmt::print("{} {}: {}–{} UTC ({:.1f} s, {}); steps from {}{}\n",
                   i == 0 ? "Baseline: " : fmt::format("Candidate {}:", i), r.label, clock(r.fromNs), clock(r.toNs),
                   static_cast<double>(r.toNs - r.fromNs) / 1e9, r.windowKind,
                   r.stepSource.empty() ? std::string("nowhere (no trainer log, no clear period)") : r.stepSource,
                   r.analysisStored ? "; stored findings" : "; findings analysed now (not kept)");
        if (!r.mfuText.empty()) fmt::print("    {}\n", r.mfuText);
    }
    fmt::print("Verdicts: {}; step rows test the steps' times, rate rows per-step means of the metrics.\n", test);
    for (size_t c = 1; c < runs.size(); ++c) {
        std::vector<std::array<std::string, 6>> table;
        table.push_back({"METRIC", "BASELINE", runs.size() > 2 ? fmt::format("CANDIDATE {}", c) : "CANDIDATE", "Δ",
                         "Δ%", "VERDICT (TEST)"});
        for (const auto& row : rows) {
            const auto& cell = row.cells[c - 1];
            const std::string verdict = analysis::formatVerdict(cell);
            table.push_back({row.label, value(row.values[0], row.unit), value(row.values[c], row.unit),
                             value(cell.delta, row.unit, true), analysis::formatDeltaPct(cell.deltaPct), verdict});
        }
        std::array<size_t, 6> w{};
        for (const auto& line : table)
            for (size_t k = 0; k < 6; ++k)
                w[k] = std::max(w[k], width(line[k]));
        fmt::print("\n");
        for (const auto& line : table)
            fmt::print("{}  {}  {}  {}  {}  {}\n", pad(line[0], w[0], false), pad(line[1], w[1], true),
                       pad(line[2], w[2], true), pad(line[3], w[3], true), pad(line[4], w[4], true), line[5]);
        printVersus(comparison.candidates[c - 1]);
        printLoss(comparison.candidates[c - 1].loss);
    }
}

} // namespace

int cmdCompare(const QStringList& args)
{
    QCommandLineParser parser;
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print the comparison as one JSON object."));
    const QCommandLineOption windowA(QStringLiteral("window-a"),
                                     QStringLiteral("The baseline's window, FROM..TO (ISO 8601, epoch seconds, +offset "
                                                    "from the run's start or a UTC time of day; a side may be empty)."),
                                     QStringLiteral("FROM..TO"));
    const QCommandLineOption windowB(QStringLiteral("window-b"), QStringLiteral("The candidates' window, FROM..TO."),
                                     QStringLiteral("FROM..TO"));
    const QCommandLineOption wholeRun(
        QStringLiteral("whole-run"),
        QStringLiteral("Compare the whole runs, start-up included (default: their steady state)."));
    const ReportOutputOptions output = reportOutputOptions();
    const QCommandLineOption align(
        QStringLiteral("align"), QStringLiteral("With -o: align the runs' metric lines by time (default) or by step."),
        QStringLiteral("time|step"), QStringLiteral("time"));
    parser.addOptions({json, windowA, windowB, wholeRun, align});
    for (const auto* o : output.all())
        parser.addOption(*o);
    parser.addPositionalArgument(QStringLiteral("base"), QStringLiteral("The baseline run (.runlens)."),
                                 QStringLiteral("BASE"));
    parser.addPositionalArgument(QStringLiteral("candidates"), QStringLiteral("The runs compared with it."),
                                 QStringLiteral("CAND [CAND2…]"));
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    const QStringList paths = parser.positionalArguments();
    if (paths.size() < 2) {
        printError("compare needs a baseline RUN and at least one candidate (see runlens compare --help)");
        return kExitUsage;
    }

    std::optional<ReportOutput> target;
    widgets::CompareReportOptions reportOptions;
    if (parser.isSet(output.out)) {
        const QString a = parser.value(align).toLower();
        if (a != QLatin1String("time") && a != QLatin1String("step")) {
            printError("--align: time or step");
            return kExitUsage;
        }
        reportOptions.align = a == QLatin1String("step") ? widgets::CompareAlign::Step : widgets::CompareAlign::Time;
        int rc = kExitOk;
        target = readReportOutput(parser, output, rc);
        if (!target) return rc;
    }
    auto inputs = readInputs(parser, paths, windowA, windowB, parser.isSet(wholeRun));
    if (!inputs) {
        printError(inputs.error().message);
        return kExitUsage;
    }
    analysis::CompareOptions options;
    options.flameRows = kFlameRows;
    auto comparison = analysis::compareRunFiles(*inputs, options);
    if (!comparison) {
        printError(comparison.error().toString());
        return kExitUsage; // an unreadable run or an empty window
    }

    if (target) {
        auto result =
            widgets::renderCompareReport(*comparison, target->path, target->png, target->setup, reportOptions);
        if (!result) {
            printError(result.error().toString());
            return kExitFailure;
        }
        fmt::print(stderr, "{} page{} → {}\n", result->pages, result->pages == 1 ? "" : "s",
                   target->path.toStdString());
        if (!parser.isSet(json)) return kExitOk; // the document instead of the text
    }

    if (parser.isSet(json)) {
        fmt::print("{}", QJsonDocument(analysis::toJson(*comparison)).toJson(QJsonDocument::Indented).toStdString());
        return kExitOk;
    }

    printComparison(*comparison);
    return kExitOk;
}

} // namespace runlens::app
