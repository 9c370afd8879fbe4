#include "widgets/report/compare_report.h"

#include "analysis/compare/compare_format.h"
#include "widgets/common/qcp.h"
#include "widgets/timeline/timeline_snapshot.h"

#include <QDateTime>
#include <QDir>
#include <cmath>

namespace runlens::widgets {

namespace {

constexpr int64_t kDayNs = 86'400'000'000'000;
constexpr int kLossFigureHeight = 250;
constexpr int kLineFigureHeight = 170;
// The rows drawn as lines over the window, in this order, when the runs have them.
const char* const kLineRows[] = {"step_time_median", "tokens_per_s",  "samples_per_s", "mfu",     "gpu_util",
                                 "sm_active",        "tensor_active", "link_per_port", "network", "storage_write"};

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

QString esc(const std::string& s)
{
    return q(s).toHtmlEscaped();
}

QString utc(int64_t ns, const QString& format = QStringLiteral("yyyy-MM-dd hh:mm:ss"))
{
    return QDateTime::fromMSecsSinceEpoch(ns / 1'000'000, Qt::UTC).toString(format);
}

// A chart painted by a QCustomPlot filled by `fill`, on paper colours.
template <typename Fill>
void chart(ReportDocument& doc, int height, const Fill& fill, const QString& caption, const QString& name)
{
    doc.figure(
        height,
        [fill](QCPPainter& painter, const QRect& area) {
            QCustomPlot plot;
            plot.setPalette(paperPalette());
            plot.resize(area.size());
            fill(plot);
            painter.save();
            painter.translate(area.topLeft());
            plot.toPainter(&painter, area.width(), area.height());
            painter.restore();
        },
        caption, name);
}

QString runsHtml(const analysis::RunComparison& c)
{
    QStringList lines;
    for (size_t i = 0; i < c.runs.size(); ++i) {
        const analysis::RunSummary& r = c.runs[i];
        const bool sameDay = r.toNs / kDayNs == r.fromNs / kDayNs;
        lines << QObject::tr("<span style='color:%1'>■</span> <b>%2</b> %3: %4 – %5 UTC (%6, %7); steps from %8; %9<br>"
                             "<span style='color:#555'>&nbsp;&nbsp;&nbsp;%10</span>")
                     .arg(runColor(i).name(), i == 0 ? QObject::tr("Baseline") : QObject::tr("Candidate %1").arg(i),
                          runName(c.runs, i).toHtmlEscaped(), utc(r.fromNs),
                          sameDay ? utc(r.toNs, QStringLiteral("hh:mm:ss")) : utc(r.toNs))
                     .arg(q(analysis::formatCompareValue(static_cast<double>(r.toNs - r.fromNs) / 1e9, "s")))
                     .arg(esc(r.windowKind), r.stepSource.empty() ? QObject::tr("nowhere") : esc(r.stepSource),
                          r.analysisStored ? QObject::tr("its stored findings")
                                           : QObject::tr("findings analysed now, not kept"),
                          esc(r.mfuText));
    }
    return QStringLiteral("<p>%1</p>").arg(lines.join(QStringLiteral("<br>")));
}

void metricTables(ReportDocument& doc, const analysis::RunComparison& c, int level)
{
    for (size_t k = 1; k < c.runs.size(); ++k) {
        doc.heading(c.runs.size() > 2 ? QObject::tr("Metrics: candidate %1 against the baseline").arg(k)
                                      : QObject::tr("Metrics"),
                    level);
        std::vector<QStringList> rows;
        for (const analysis::CompareRow& row : c.rows) {
            const analysis::CompareCell& cell = row.cells[k - 1];
            rows.push_back({q(row.label), q(analysis::formatCompareValue(row.values[0], row.unit)),
                            q(analysis::formatCompareValue(row.values[k], row.unit)),
                            q(analysis::formatCompareValue(cell.delta, row.unit, true)),
                            q(analysis::formatDeltaPct(cell.deltaPct)), q(analysis::formatVerdict(cell))});
        }
        doc.table({QObject::tr("Metric"), QObject::tr("Baseline"), QObject::tr("Candidate"), QObject::tr("Δ"),
                   QObject::tr("Δ %"), QObject::tr("Verdict (test)")},
                  rows, {0.31, 0.12, 0.12, 0.12, 0.09, 0.24}, {1, 2, 3, 4}, 7.5);
    }
    doc.html(
        QObject::tr(
            "<p style='color:#555'>Verdicts: Mann–Whitney U, two-sided, normal approximation, α = %1; step rows "
            "test the steps' times, rate rows per-step means of the per-second samples, throughput rows the logged "
            "values. A significant difference under %2 % of the baseline reads as no significant change.</p>")
            .arg(analysis::kCompareAlpha)
            .arg(100 * analysis::kCompareMinEffect, 0, 'f', 0),
        7.5);
}

void lossSection(ReportDocument& doc, const analysis::RunComparison& c, int level)
{
    doc.heading(QObject::tr("Loss"), level);
    if (!hasLoss(c, LossAxis::Step)) {
        doc.html(QObject::tr("<p>No run logs a training loss: nothing to compare.</p>"));
        return;
    }
    doc.html(QStringLiteral("<p>%1</p>")
                 .arg(lossSummary(c).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"))),
             8.5);
    // Against tokens (or samples) when that is what the verdict compared, else against steps.
    const bool bySize = !c.candidates.empty() &&
                        (c.candidates[0].loss.axis == "tokens" || c.candidates[0].loss.axis == "samples") &&
                        hasLoss(c, LossAxis::Size);
    const LossAxis first = bySize ? LossAxis::Size : LossAxis::Step;
    chart(
        doc, kLossFigureHeight, [&c, first](QCustomPlot& p) { plotLoss(p, c, first); },
        bySize ? QObject::tr("Loss against %1 seen (the steps differ in size), each run's rolling median bold over its "
                             "raw points.")
                     .arg(q(c.candidates[0].loss.axis))
               : QObject::tr("Loss against step, each run's rolling median bold over its raw points."),
        QStringLiteral("loss-vs-step"));
    chart(
        doc, kLossFigureHeight, [&c](QCustomPlot& p) { plotLoss(p, c, LossAxis::Time); },
        QObject::tr(
            "Loss against wall time since each run's first loss point: a curve to the left reaches a loss sooner."),
        QStringLiteral("loss-vs-time"));
}

void linesSection(ReportDocument& doc, const analysis::RunComparison& c, int level, CompareAlign align)
{
    const std::vector<std::string> rows = chartRows(c);
    std::vector<std::string> shown;
    for (const char* id : kLineRows)
        if (std::find(rows.begin(), rows.end(), id) != rows.end()) shown.push_back(id);
    if (shown.empty()) return;
    doc.heading(align == CompareAlign::Time ? QObject::tr("Over the windows, aligned by time")
                                            : QObject::tr("Over the windows, aligned by step"),
                level);
    for (const std::string& id : shown) {
        QString label;
        for (const analysis::CompareRow& r : c.rows)
            if (r.id == id) label = q(r.label);
        chart(
            doc, kLineFigureHeight, [&c, id, align](QCustomPlot& p) { plotRow(p, c, id, align); },
            id == "step_time_median" ? QObject::tr("Each step's time at its end.")
            : id == "tokens_per_s" || id == "samples_per_s" || id == "mfu"
                ? QObject::tr("%1 as the trainer logs it.").arg(label)
                : QObject::tr("%1: means over blocks of about a step (the samples its verdict tests).").arg(label),
            QString::fromStdString("line-" + id));
    }
}

void findingsSection(ReportDocument& doc, const analysis::RunComparison& c, int level)
{
    doc.heading(QObject::tr("Findings"), level);
    std::vector<QStringList> rows;
    for (size_t k = 0; k < c.candidates.size(); ++k)
        for (const auto* list :
             {&c.candidates[k].findings.gone, &c.candidates[k].findings.still, &c.candidates[k].findings.added})
            for (const analysis::FindingChange& f : *list) {
                QStringList row;
                if (c.candidates.size() > 1) row << QString::number(k + 1);
                row << q(analysis::statusName(f.status)) << q(f.finding().rule)
                    << QStringLiteral("%1 % → %2 %").arg(100 * f.impactA, 0, 'f', 1).arg(100 * f.impactB, 0, 'f', 1)
                    << QStringLiteral("%1 s → %2 s").arg(f.savingA, 0, 'f', 1).arg(f.savingB, 0, 'f', 1)
                    << q(f.finding().title);
                rows.push_back(row);
            }
    if (rows.empty()) {
        doc.html(QObject::tr("<p>No findings on either side.</p>"));
        return;
    }
    QStringList header;
    std::vector<double> widths;
    if (c.candidates.size() > 1) {
        header << QObject::tr("Cand.");
        widths.push_back(0.05);
    }
    header << QObject::tr("Status") << QObject::tr("Rule") << QObject::tr("Impact before → after")
           << QObject::tr("Saving before → after") << QObject::tr("Finding");
    for (double w : {0.07, 0.12, 0.15, 0.15})
        widths.push_back(w);
    widths.push_back(c.candidates.size() > 1 ? 0.46 : 0.51);
    doc.table(header, rows, widths, {}, 7.5);
    doc.html(
        QObject::tr("<p style='color:#555'>Gone: only in the baseline; still: in both (matched by rule, sub-type and "
                    "evidence frame); new: only in the candidate. Savings within each run's window.</p>"),
        7.5);
}

void stacksSection(ReportDocument& doc, const analysis::RunComparison& c, int level)
{
    doc.heading(QObject::tr("Stacks"), level);
    for (size_t k = 0; k < c.candidates.size(); ++k) {
        const auto& flame = c.candidates[k].flame;
        const QString who = c.candidates.size() > 1 ? QObject::tr("Candidate %1: ").arg(k + 1) : QString();
        if (!flame) {
            doc.html(QObject::tr("<p>%1not compared (a run has no timed stack samples in its window).</p>").arg(who));
            continue;
        }
        doc.html(
            QObject::tr("<p>%1%2 → %3 stack samples; each function's share of its side's samples (inclusive; self in "
                        "brackets).</p>")
                .arg(who)
                .arg(flame->totalA)
                .arg(flame->totalB),
            8.5);
        std::vector<QStringList> rows;
        const auto add = [&](const QString& what, const std::vector<analysis::FrameChange>& list) {
            for (size_t i = 0; i < list.size(); ++i) {
                const analysis::FrameChange& f = list[i];
                rows.push_back(
                    {i == 0 ? what : QString(),
                     QStringLiteral("%1 % → %2 %").arg(100 * f.shareA, 0, 'f', 1).arg(100 * f.shareB, 0, 'f', 1),
                     q(analysis::formatCompareValue(100 * f.delta(), "%", true)),
                     QStringLiteral("(%1 % → %2 %)")
                         .arg(100 * f.selfShareA, 0, 'f', 1)
                         .arg(100 * f.selfShareB, 0, 'f', 1),
                     q(f.label())});
            }
        };
        add(QObject::tr("grew"), flame->grew);
        add(QObject::tr("shrank"), flame->shrank);
        if (rows.empty()) {
            doc.html(QObject::tr("<p>No function's share moved by half a point or more.</p>"));
            continue;
        }
        doc.table(
            {QObject::tr(""), QObject::tr("Share"), QObject::tr("Δ"), QObject::tr("Self"), QObject::tr("Function")},
            rows, {0.07, 0.15, 0.1, 0.16, 0.52}, {1, 2, 3}, 7.5);
    }
}

} // namespace

void appendComparison(ReportDocument& doc, const analysis::RunComparison& c, int level,
                      const CompareReportOptions& options)
{
    if (c.runs.empty()) return;
    doc.html(runsHtml(c), 8.5);
    metricTables(doc, c, level);
    lossSection(doc, c, level);
    linesSection(doc, c, level, options.align);
    findingsSection(doc, c, level);
    stacksSection(doc, c, level);
}

Expected<ReportResult> renderCompareReport(const analysis::RunComparison& c, const QString& path, bool png,
                                           const ReportPageSetup& setupIn, const CompareReportOptions& options)
{
    if (c.runs.size() < 2)
        return makeError(ErrorCode::Usage, "a comparison needs a baseline and at least one candidate");
    QStringList candidates;
    for (size_t i = 1; i < c.runs.size(); ++i)
        candidates << runName(c.runs, i);
    const QString title = QObject::tr("%1 vs %2").arg(runName(c.runs, 0), candidates.join(QStringLiteral(", ")));
    ReportPageSetup setup = setupIn;
    if (setup.title.isEmpty()) setup.title = QObject::tr("RunLens comparison: %1").arg(title);
    if (setup.footer.isEmpty())
        setup.footer = QObject::tr("RunLens %1 · %2 · %3 UTC")
                           .arg(QStringLiteral(RUNLENS_VERSION), title,
                                QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyy-MM-dd hh:mm")));
    ReportDocument doc(path, png, setup);
    if (!doc.ok()) return makeError(ErrorCode::Io, doc.error().toStdString());
    doc.heading(QObject::tr("Comparison: %1").arg(title), 0);
    appendComparison(doc, c, 1, options);
    return finishReport(doc, path, png);
}

} // namespace runlens::widgets
