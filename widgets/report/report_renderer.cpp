#include "widgets/report/report_renderer.h"

#include "widgets/common/qcp.h"
#include "widgets/findings/findings_panel.h"
#include "widgets/report/report_figures.h"
#include "widgets/timeline/lane_plot_data.h"
#include "widgets/timeline/timeline_snapshot.h"

#include <QDateTime>
#include <QLocale>
#include <algorithm>
#include <cmath>

namespace runlens::widgets {

namespace {

constexpr int kEpisodeLaneHeight = 92;
constexpr int kOverviewLaneHeight = 100;
constexpr size_t kDiagnosticRows = 300;

QString utc(int64_t ns, const QString& format = QStringLiteral("yyyy-MM-dd hh:mm:ss"))
{
    return QDateTime::fromMSecsSinceEpoch(ns / 1'000'000, Qt::UTC).toString(format);
}

QString esc(const std::string& s)
{
    return QString::fromStdString(s).toHtmlEscaped();
}

QString joinNames(const std::vector<std::string>& names)
{
    QStringList out;
    for (const std::string& n : names)
        out << QString::fromStdString(n);
    return out.join(QStringLiteral(", "));
}

QString pct(double v, int decimals = 1)
{
    return std::isfinite(v) ? QStringLiteral("%1 %").arg(v, 0, 'f', decimals) : QObject::tr("not recorded");
}

QString ratioPct(double v)
{
    return std::isfinite(v) ? QStringLiteral("%1 %").arg(100 * v, 0, 'f', 0) : QObject::tr("not recorded");
}

QString rate(double mean, double peak, double capacity)
{
    if (!std::isfinite(mean)) return QObject::tr("not recorded");
    QString text = QObject::tr("%1 mean, %2 peak").arg(formatValue(mean, "B/s"), formatValue(peak, "B/s"));
    if (std::isfinite(capacity) && capacity > 0)
        text += QObject::tr(" of %1 (%2 %, peak %3 %)")
                    .arg(formatValue(capacity, "B/s"))
                    .arg(100 * mean / capacity, 0, 'f', 0)
                    .arg(100 * peak / capacity, 0, 'f', 0);
    return text;
}

std::vector<TimelineSpan> spansOf(const analysis::ReportTimeline& t)
{
    std::vector<TimelineSpan> out;
    out.reserve(t.spans.size());
    for (const auto& s : t.spans)
        out.push_back({TimeRange{s.fromNs, s.toNs}, QString::fromStdString(s.label), severityColor(s.severity)});
    return out;
}

QString lanesText(const analysis::ReportTimeline& t)
{
    QStringList titles;
    for (const auto& lane : t.lanes)
        titles << QString::fromStdString(lane.title);
    return titles.join(QStringLiteral(" · "));
}

void timelineFigure(ReportDocument& doc, const analysis::ReportModel& model, const analysis::ReportTimeline& t,
                    const std::vector<std::string>& nodes, int laneHeight, const QString& caption, const QString& name)
{
    if (t.lanes.empty()) {
        doc.html(QObject::tr("<i>The run has none of the metrics this figure would show.</i>"));
        return;
    }
    const int height = kNodeKeyHeight + timelineSnapshotHeight(t.lanes.size(), laneHeight);
    doc.figure(
        height,
        [&](QCPPainter& p, const QRect& area) {
            paintNodeKey(p, QRect(area.left(), area.top(), area.width(), kNodeKeyHeight), model, nodes);
            paintTimelineSnapshot(
                p, QRect(area.left(), area.top() + kNodeKeyHeight, area.width(), area.height() - kNodeKeyHeight),
                t.lanes, t.frame, TimeRange{t.fromNs, t.toNs}, spansOf(t), laneHeight);
        },
        caption, name);
}

void summarySection(ReportDocument& doc, const analysis::ReportModel& m)
{
    const analysis::RunAnalysis& a = m.analysis;
    doc.heading(QObject::tr("Summary"), 1);
    QString html;
    int counts[3] = {0, 0, 0};
    for (const analysis::Finding& f : a.findings)
        ++counts[analysis::severityRank(f.severity)];
    if (a.findings.empty()) {
        html += QObject::tr("<p><b>No findings</b>: no rule saw a problem in what this report covers.</p>");
    } else {
        html +=
            QObject::tr("<p><b>%1 finding%2</b> (%3 critical, %4 warn, %5 info). The ones that matter most:</p><ul>")
                .arg(a.findings.size())
                .arg(a.findings.size() == 1 ? QString() : QStringLiteral("s"))
                .arg(counts[0])
                .arg(counts[1])
                .arg(counts[2]);
        int listed = 0;
        for (const analysis::ReportFinding& rf : m.findings) {
            const analysis::Finding& f = rf.finding;
            if (listed == 3 || (listed > 0 && !f.primary)) break;
            html += QObject::tr("<li><span style='color:%1'><b>%2</b></span> (%3) %4 — %5 % of the wall time, up to %6 "
                                "to save.</li>")
                        .arg(severityColor(f.severity).name(), esc(f.rule), esc(f.severity),
                             esc(analysis::rolePrefix(f) + f.title))
                        .arg(100 * f.impact, 0, 'f', 1)
                        .arg(formatDuration(static_cast<int64_t>(f.savingS * 1e9)));
            ++listed;
        }
        html += QStringLiteral("</ul>");
    }
    double wall = 0, compute = 0;
    for (const analysis::TimeBudget& b : a.budgets) {
        wall += b.wallS;
        compute += b.computeS;
    }
    if (wall > 0)
        html += QObject::tr("<p>The GPUs computed for <b>%1 %</b> of the wall time (the goodput; the rest is broken "
                            "down in <i>Where the time went</i>).</p>")
                    .arg(100 * compute / wall, 0, 'f', 1);
    // What to do first: the recommendation of the costliest primary finding.
    const analysis::Finding* first = nullptr;
    for (const analysis::Finding& f : a.findings)
        if (f.primary && !f.recommendation.empty() && (!first || f.savingS > first->savingS)) first = &f;
    if (first)
        html += QObject::tr("<p><b>What to change first</b> (%1, the largest saving): %2</p>")
                    .arg(esc(first->rule), findingRecommendationHtml(*first));
    doc.html(html, 9.5);

    doc.heading(QObject::tr("The run"), 2);
    QStringList nodeNames;
    for (const std::string& n : m.nodes)
        nodeNames << QString::fromStdString(n);
    std::vector<QStringList> rows;
    rows.push_back(
        {QObject::tr("Nodes"), QStringLiteral("%1: %2").arg(m.nodes.size()).arg(nodeNames.join(QStringLiteral(", ")))});
    rows.push_back({QObject::tr("GPUs"), QString::number(m.gpus)});
    rows.push_back({QObject::tr("Time range"), QStringLiteral("%1 – %2 UTC (%3)")
                                                   .arg(utc(m.runFromNs), utc(m.runToNs, QStringLiteral("hh:mm:ss")),
                                                        formatDuration(m.runToNs - m.runFromNs))});
    if (m.windowed)
        rows.push_back({QObject::tr("This report"), QObject::tr("%1 – %2 UTC (%3) only")
                                                        .arg(utc(m.fromNs), utc(m.toNs, QStringLiteral("hh:mm:ss")),
                                                             formatDuration(m.toNs - m.fromNs))});
    QStringList steps;
    for (const analysis::StepTimes& st : a.steps)
        steps << QObject::tr("%1: %2 × %3 (%4)")
                     .arg(QString::fromStdString(st.node))
                     .arg(st.startsNs.size())
                     .arg(formatDuration(static_cast<int64_t>(st.medianStepS * 1e9)),
                          QString::fromStdString(st.source));
    rows.push_back(
        {QObject::tr("Steps"), steps.isEmpty() ? QObject::tr("not detected") : steps.join(QStringLiteral("; "))});
    rows.push_back({QObject::tr("Stack samples"),
                    m.stackSamples ? QLocale(QLocale::English).toString(static_cast<qlonglong>(m.stackSamples))
                                   : QObject::tr("none")});
    rows.push_back({QObject::tr("Profiler traces"), m.hasTraces ? QObject::tr("yes") : QObject::tr("none")});
    int64_t problems = 0;
    for (const analysis::ReportSource& s : m.sources)
        problems += s.problems;
    rows.push_back({QObject::tr("Sources"),
                    QObject::tr("%1 files imported, %2 problems (appendix B)").arg(m.sources.size()).arg(problems)});
    rows.push_back({QObject::tr("Analysis"), QObject::tr("%1 UTC%2, %3 parameter%4 set for this run (appendix A)")
                                                 .arg(utc(m.analysisRanNs, QStringLiteral("yyyy-MM-dd hh:mm")),
                                                      m.analysisFresh ? QObject::tr(" (for this report)") : QString())
                                                 .arg(m.overrides.size())
                                                 .arg(m.overrides.size() == 1 ? QString() : QStringLiteral("s"))});
    if (!m.nodeFilter.empty() || m.findings.size() != m.findingsInRun)
        rows.push_back({QObject::tr("Shown"),
                        QObject::tr("%1 of the run's %2 findings").arg(m.findings.size()).arg(m.findingsInRun)});
    doc.table({}, rows, {0.2, 0.8});

    std::vector<std::string> missing = a.missing;
    if (m.stackSamples == 0 && std::none_of(missing.begin(), missing.end(),
                                            [](const std::string& s) { return s.find("stack") != std::string::npos; }))
        missing.push_back("no stack samples: findings name no frames and have no flame graphs");
    if (!missing.empty()) {
        QString box =
            QObject::tr("<p><b>What the run lacks</b> (findings that need it have lower confidence):</p><ul>");
        for (const std::string& s : missing)
            box += QStringLiteral("<li>%1</li>").arg(esc(s));
        doc.html(box + QStringLiteral("</ul>"));
    }
}

void timeSection(ReportDocument& doc, const analysis::ReportModel& m)
{
    const analysis::RunAnalysis& a = m.analysis;
    doc.heading(QObject::tr("Where the time went"), 1);
    if (a.budgets.empty()) {
        doc.html(QObject::tr("<p><i>No GPU metrics: the wall time cannot be broken down.</i></p>"));
        return;
    }
    doc.html(QObject::tr("<p>Each node's wall time (%1), from start-up to what is left for compute. Communication and "
                         "input waits are the findings' estimates; the parts add up to the wall time%2.</p>")
                 .arg(formatDuration(static_cast<int64_t>(a.wallS * 1e9)),
                      m.windowed ? QObject::tr(" (the whole run, not only the window)") : QString()));
    doc.figure(
        kWaterfallHeight, [&](QCPPainter& p, const QRect& area) { paintWaterfall(p, area, a.budgets); },
        QObject::tr("Goodput waterfall over %1 node%2.")
            .arg(a.budgets.size())
            .arg(a.budgets.size() == 1 ? QString() : QStringLiteral("s")),
        QStringLiteral("waterfall"));
    std::vector<QStringList> rows;
    for (const analysis::TimeBudget& b : a.budgets) {
        const auto share = [&](double s) {
            return QStringLiteral("%1 %").arg(100 * s / std::max(b.wallS, 1e-9), 0, 'f', 1);
        };
        rows.push_back({QString::fromStdString(b.node), share(b.computeS), share(b.commWaitS), share(b.inputS),
                        share(b.checkpointS), share(b.hangS), share(b.idleS), share(b.startupS)});
    }
    doc.table({QObject::tr("Node"), QObject::tr("Compute"), QObject::tr("Comm wait"), QObject::tr("Input"),
               QObject::tr("Checkpoint"), QObject::tr("Hang"), QObject::tr("Idle"), QObject::tr("Start-up")},
              rows, {0.2, 0.115, 0.115, 0.115, 0.115, 0.115, 0.11, 0.115}, {1, 2, 3, 4, 5, 6, 7});
}

void metricsSection(ReportDocument& doc, const analysis::ReportModel& m)
{
    doc.heading(QObject::tr("Key metrics per node"), 1);
    if (m.keyMetrics.empty()) {
        doc.html(QObject::tr("<p><i>The run has no GPU or host metrics.</i></p>"));
        return;
    }
    doc.html(
        QObject::tr("<p>Medians over each node's steady state (start-up left out)%1. SM activity ≥ 0.8 is needed for "
                    "good use of the GPU, below 0.5 it is likely used ineffectively; utilization alone only says a "
                    "kernel was resident.</p>")
            .arg(m.windowed ? QObject::tr(" in the window") : QString()));
    std::vector<QStringList> rows;
    for (const analysis::NodeKeyMetrics& k : m.keyMetrics) {
        QString link = rate(k.linkMean, k.linkPeak, k.linkCapacity);
        if (std::isfinite(k.linkMean) && !std::isfinite(k.linkCapacity))
            link += QObject::tr(" (capacity not recorded)");
        rows.push_back({QString::fromStdString(k.node), QString::number(k.gpus), pct(k.utilPct, 0),
                        ratioPct(k.smActive), ratioPct(k.tensorActive), link,
                        rate(k.diskWriteMean, k.diskWritePeak, NAN), rate(k.diskReadMean, k.diskReadPeak, NAN),
                        pct(k.cpuUtilPct, 0)});
    }
    doc.table({QObject::tr("Node"), QObject::tr("GPUs"), QObject::tr("GPU util"), QObject::tr("SM active"),
               QObject::tr("Tensor"), QObject::tr("Interconnect (busier direction)"), QObject::tr("Storage write"),
               QObject::tr("Storage read"), QObject::tr("CPU")},
              rows, {0.1, 0.06, 0.08, 0.08, 0.08, 0.24, 0.14, 0.14, 0.08}, {1, 2, 3, 4, 8}, 7.5);
}

void findingSection(ReportDocument& doc, const analysis::ReportModel& m, const analysis::ReportFinding& rf)
{
    const analysis::Finding& f = rf.finding;
    // The heading, the facts and the episode's figure on one page.
    doc.keepTogether(150 + kNodeKeyHeight + timelineSnapshotHeight(rf.timeline.lanes.size(), kEpisodeLaneHeight));
    doc.heading(QObject::tr("Finding %1 · %2 · %3")
                    .arg(rf.number)
                    .arg(QString::fromStdString(f.severity), QString::fromStdString(f.rule)),
                2);
    doc.html(QStringLiteral("<p><b>%1</b></p>").arg(esc(analysis::rolePrefix(f) + f.title)) + findingFactsHtml(f));
    if (!f.episodes.empty()) {
        const QString caption = QObject::tr("Episode 1 of %1 (shaded) on %2 with a margin: %3.")
                                    .arg(f.episodes.size())
                                    .arg(joinNames(f.nodes), lanesText(rf.timeline));
        timelineFigure(doc, m, rf.timeline, f.nodes, kEpisodeLaneHeight, caption,
                       QStringLiteral("finding-%1-timeline").arg(rf.number));
    }
    doc.html(QObject::tr("<p><b>Evidence</b></p>") + findingEvidenceHtml(f), 8);
    if (rf.flame.tree) {
        const int width = static_cast<int>(doc.contentWidth());
        doc.figure(
            flameFigureHeight(rf.flame, width),
            [&](QCPPainter& p, const QRect& area) { paintFlameFigure(p, area, rf.flame); },
            flameFigureCaption(rf.flame), QStringLiteral("finding-%1-flame").arg(rf.number));
    } else if (!rf.flame.note.empty()) {
        doc.html(QObject::tr("<p><i>No flame graph: %1.</i></p>").arg(esc(rf.flame.note)), 8);
    }
    doc.html(QObject::tr("<p><b>What to change</b><br>%1</p>").arg(findingRecommendationHtml(f)));
    doc.space(8);
}

void findingsSection(ReportDocument& doc, const analysis::ReportModel& m)
{
    doc.heading(QObject::tr("Findings"), 1);
    if (m.findings.empty()) {
        doc.html(QObject::tr("<p>No findings in what this report covers.</p>"));
        return;
    }
    std::vector<QStringList> rows;
    for (const analysis::ReportFinding& rf : m.findings) {
        const analysis::Finding& f = rf.finding;
        rows.push_back({QString::number(rf.number), QString::fromStdString(f.severity), QString::fromStdString(f.rule),
                        QStringLiteral("%1 %").arg(100 * f.impact, 0, 'f', 1),
                        f.savingS > 0 ? formatDuration(static_cast<int64_t>(f.savingS * 1e9)) : QStringLiteral("–"),
                        QString::number(f.confidence, 'f', 2),
                        QString::fromStdString(analysis::rolePrefix(f) + f.title)});
    }
    doc.table({QStringLiteral("#"), QObject::tr("Severity"), QObject::tr("Rule"), QObject::tr("Impact"),
               QObject::tr("Saving"), QObject::tr("Conf."), QObject::tr("Finding")},
              rows, {0.04, 0.09, 0.13, 0.08, 0.1, 0.07, 0.49}, {0, 3, 4, 5});
    for (const analysis::ReportFinding& rf : m.findings)
        findingSection(doc, m, rf);
}

void appendix(ReportDocument& doc, const analysis::ReportModel& m)
{
    doc.heading(QObject::tr("Appendix A · Rule parameters"), 1, true);
    doc.html(
        QObject::tr("<p>The values the rules ran with. Those set for this run (<tt>runlens analyze --param</tt>) are "
                    "marked; the others are the defaults.</p>"));
    std::vector<QStringList> params;
    for (const analysis::RuleParam& p : m.analysis.params.all()) {
        const bool set = m.overrides.count(p.name) > 0;
        params.push_back({QString::fromStdString(p.name) + (set ? QObject::tr(" (set)") : QString()),
                          QStringLiteral("%1 %2").arg(p.value, 0, 'g', 6).arg(QString::fromStdString(p.unit)).trimmed(),
                          set ? QString::number(p.defaultValue, 'g', 6) : QString(), QString::fromStdString(p.doc)});
    }
    doc.table({QObject::tr("Parameter"), QObject::tr("Value"), QObject::tr("Default"), QObject::tr("Meaning")}, params,
              {0.27, 0.1, 0.08, 0.55}, {1, 2}, 7);

    doc.heading(QObject::tr("Appendix B · Sources and import diagnostics"), 1, true);
    // The files' common folder once, each file below it.
    QString common;
    for (size_t i = 0; i < m.sources.size(); ++i) {
        const QString dir =
            QString::fromStdString(m.sources[i].path).section(QLatin1Char('/'), 0, -2) + QLatin1Char('/');
        if (i == 0) common = dir;
        while (!common.isEmpty() && !dir.startsWith(common))
            common = common.section(QLatin1Char('/'), 0, -3) + QLatin1Char('/');
    }
    if (common == QLatin1String("/")) common.clear();
    std::vector<QStringList> sources;
    sources.reserve(m.sources.size());
    for (const analysis::ReportSource& s : m.sources)
        sources.push_back({QString::fromStdString(s.path).mid(common.size()), QString::fromStdString(s.node),
                           QString::fromStdString(s.format), QString::number(s.rows), QString::number(s.problems)});
    if (sources.empty()) {
        doc.html(QObject::tr("<p>No imports recorded.</p>"));
    } else {
        if (!common.isEmpty())
            doc.html(QObject::tr("<p>%1 files, in <tt>%2</tt>:</p>").arg(sources.size()).arg(common.toHtmlEscaped()),
                     8);
        doc.table({QObject::tr("File"), QObject::tr("Node"), QObject::tr("Format"), QObject::tr("Rows"),
                   QObject::tr("Problems")},
                  sources, {0.52, 0.12, 0.18, 0.09, 0.09}, {3, 4}, 7);
    }
    std::vector<QStringList> diags;
    size_t more = 0;
    for (const analysis::ReportSource& s : m.sources) {
        for (const store::DiagnosticInfo& d : s.firstProblems) {
            if (diags.size() == kDiagnosticRows) {
                ++more;
                continue;
            }
            diags.push_back({QString::fromStdString(d.where.toString()), QString::fromStdString(d.kind),
                             QString::fromStdString(d.message)});
        }
        more += static_cast<size_t>(std::max<int64_t>(0, s.problems - static_cast<int64_t>(s.firstProblems.size())));
    }
    doc.heading(QObject::tr("Import diagnostics"), 2);
    if (diags.empty()) {
        doc.html(QObject::tr("<p>None: every file was read without a problem.</p>"));
    } else {
        doc.table({QObject::tr("Where"), QObject::tr("Kind"), QObject::tr("Message")}, diags, {0.34, 0.14, 0.52}, {},
                  7);
        if (more) doc.html(QObject::tr("<p>… and %1 more (<tt>runlens info</tt> lists them).</p>").arg(more), 8);
    }
}

} // namespace

Expected<ReportResult> renderReport(const analysis::ReportModel& m, const QString& path, bool png,
                                    const ReportPageSetup& setupIn, const std::function<void(ReportDocument&)>& extra)
{
    ReportPageSetup setup = setupIn;
    if (setup.title.isEmpty()) setup.title = QObject::tr("RunLens report: %1").arg(QString::fromStdString(m.runName));
    if (setup.footer.isEmpty())
        setup.footer = QObject::tr("RunLens %1 · %2 · %3 UTC")
                           .arg(QString::fromStdString(m.programVersion), QString::fromStdString(m.runName),
                                utc(m.generatedNs, QStringLiteral("yyyy-MM-dd hh:mm")));
    ReportDocument doc(path, png, setup);
    if (!doc.ok()) return makeError(ErrorCode::Io, doc.error().toStdString());
    doc.heading(QObject::tr("Performance report: %1").arg(QString::fromStdString(m.runName)), 0);
    doc.html(QObject::tr("<p style='color:#555'>%1 · %2 – %3 UTC (%4)%5 · written %6 UTC by RunLens %7</p>")
                 .arg(esc(m.runPath), utc(m.fromNs), utc(m.toNs, QStringLiteral("hh:mm:ss")),
                      formatDuration(m.toNs - m.fromNs),
                      m.nodeFilter.empty() ? QString() : QObject::tr(" · nodes %1").arg(joinNames(m.nodeFilter)),
                      utc(m.generatedNs, QStringLiteral("yyyy-MM-dd hh:mm")), QString::fromStdString(m.programVersion)),
             8);
    summarySection(doc, m);
    timeSection(doc, m);
    metricsSection(doc, m);
    doc.heading(QObject::tr("The run at a glance"), 1);
    timelineFigure(
        doc, m, m.overview, m.nodes, kOverviewLaneHeight,
        QObject::tr("%1 over what the report covers; the primary findings' episodes shaded in their severity's colour.")
            .arg(lanesText(m.overview)),
        QStringLiteral("overview"));
    findingsSection(doc, m);
    if (extra) extra(doc);
    appendix(doc, m);
    return finishReport(doc, path, png);
}

Expected<ReportResult> finishReport(ReportDocument& doc, const QString& path, bool png)
{
    if (!doc.finish()) return makeError(ErrorCode::Io, doc.error().toStdString());
    ReportResult out;
    out.pages = doc.pages();
    out.headings = doc.headings();
    out.files = doc.files();
    if (!png) out.files.prepend(path);
    return out;
}

} // namespace runlens::widgets
