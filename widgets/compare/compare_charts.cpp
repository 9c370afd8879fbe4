#include "widgets/compare/compare_charts.h"

#include "analysis/compare/compare_format.h"
#include "widgets/common/qcp.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <cmath>

namespace runlens::widgets {

namespace {

// A time axis in the unit that keeps its numbers short: seconds up to 10 minutes, minutes up to 10 hours, hours.
struct TimeUnit
{
    double seconds;
    QString name;
};

TimeUnit timeUnit(double spanS)
{
    if (spanS > 10 * 3600) return {3600, QObject::tr("h")};
    if (spanS > 600) return {60, QObject::tr("min")};
    return {1, QObject::tr("s")};
}

// A value axis in the unit that keeps its numbers short (B/s as kB/s … GB/s; large rates with k or M).
struct ValueUnit
{
    double scale = 1;
    QString label;
};

ValueUnit valueUnit(const std::string& unit, double maxAbs)
{
    if (unit == "B/s") {
        static const char* const names[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
        int u = 0;
        double s = 1;
        while (maxAbs / s >= 1000 && u < 4) {
            s *= 1000;
            ++u;
        }
        return {s, QString::fromLatin1(names[u])};
    }
    if (unit == "1/s") {
        if (maxAbs >= 1e7) return {1e6, QObject::tr("M/s")};
        if (maxAbs >= 1e4) return {1e3, QObject::tr("k/s")};
        return {1, QObject::tr("/s")};
    }
    return {1, QString::fromStdString(unit == "count" ? std::string() : unit)};
}

void styleAxes(QCustomPlot& plot)
{
    const QColor text = plot.palette().color(QPalette::WindowText);
    const QColor grid = plot.palette().color(QPalette::Mid);
    plot.setBackground(plot.palette().color(QPalette::Base));
    for (QCPAxis* axis : {plot.xAxis, plot.yAxis}) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
    }
    plot.legend->setVisible(true);
    plot.legend->setBrush(plot.palette().color(QPalette::Base));
    plot.legend->setTextColor(text);
    // The legend in a row of its own above the chart, the runs side by side: it never hides a line.
    if (plot.legend->layout() != plot.plotLayout()) {
        plot.axisRect()->insetLayout()->take(plot.legend);
        plot.plotLayout()->insertRow(0);
        plot.plotLayout()->addElement(0, 0, plot.legend);
        plot.plotLayout()->setRowStretchFactor(0, 0.001);
        plot.legend->setFillOrder(QCPLegend::foColumnsFirst);
        plot.legend->setBorderPen(Qt::NoPen);
        plot.legend->setMargins(QMargins(4, 2, 4, 0));
    }
}

void noData(QCustomPlot& plot, const QString& why)
{
    auto* note = new QCPItemText(&plot);
    note->position->setType(QCPItemPosition::ptAxisRectRatio);
    note->position->setCoords(0.5, 0.5);
    note->setText(why);
    note->setColor(plot.palette().color(QPalette::WindowText));
    plot.legend->setVisible(false);
}

QCPGraph* line(QCustomPlot& plot, const QVector<double>& x, const QVector<double>& y, const QColor& color, double width,
               const QString& name)
{
    QCPGraph* g = plot.addGraph();
    g->setData(x, y, true);
    g->setPen(QPen(color, width));
    g->setName(name);
    if (name.isEmpty()) g->removeFromLegend();
    return g;
}

QString rowLabel(const analysis::RunComparison& c, const std::string& id, std::string* unit)
{
    for (const analysis::CompareRow& r : c.rows)
        if (r.id == id) {
            *unit = r.unit;
            return QString::fromStdString(id == "step_time_median" ? std::string("step time") : r.label);
        }
    *unit = "";
    return QString::fromStdString(id);
}

QString legendName(const analysis::RunComparison& c, size_t i)
{
    return (i == 0 ? QObject::tr("baseline: %1") : QObject::tr("candidate %1: %2").arg(i)).arg(runName(c.runs, i));
}

} // namespace

QColor runColor(size_t i)
{
    static const QColor palette[] = {QColor(0xd9, 0x5f, 0x02), QColor(0x1b, 0x9e, 0x77), QColor(0x75, 0x70, 0xb3),
                                     QColor(0xe7, 0x29, 0x8a), QColor(0x66, 0xa6, 0x1e), QColor(0xa6, 0x76, 0x1d)};
    if (i == 0) return QColor(0x5b, 0x70, 0x83); // the baseline: grey-blue
    return palette[(i - 1) % std::size(palette)];
}

QString runName(const std::vector<analysis::RunSummary>& runs, size_t i)
{
    const QFileInfo info(QString::fromStdString(runs[i].label));
    int same = 0;
    for (const auto& r : runs)
        same += QFileInfo(QString::fromStdString(r.label)).fileName() == info.fileName();
    return same > 1 ? info.dir().dirName() + QLatin1Char('/') + info.fileName() : info.fileName();
}

bool hasLoss(const analysis::RunComparison& c, LossAxis axis)
{
    for (const analysis::LossCurve& curve : c.curves) {
        if (curve.size() == 0) continue;
        if (axis != LossAxis::Size) return true;
        if (std::any_of(curve.tokens.begin(), curve.tokens.end(), [](double t) { return std::isfinite(t); }))
            return true;
    }
    return false;
}

std::vector<std::string> chartRows(const analysis::RunComparison& c)
{
    std::vector<std::string> out;
    // (a line at zero in every run, such as no network traffic, says nothing the table does not)
    for (const analysis::CompareRow& r : c.rows)
        for (const analysis::RunSummary& run : c.runs)
            if (const auto it = run.series.find(r.id);
                it != run.series.end() && std::any_of(it->second.value.begin(), it->second.value.end(),
                                                      [](double v) { return std::isfinite(v) && v != 0; })) {
                out.push_back(r.id);
                break;
            }
    return out;
}

bool plotLoss(QCustomPlot& plot, const analysis::RunComparison& c, LossAxis axis)
{
    plot.clearGraphs();
    plot.clearItems();
    styleAxes(plot);
    double span = 0;
    for (const analysis::LossCurve& curve : c.curves)
        if (curve.size() > 0) span = std::max(span, curve.timeS.back());
    const TimeUnit tu = timeUnit(span);
    std::string sizeUnit;
    bool any = false;
    for (size_t i = 0; i < c.curves.size(); ++i) {
        const analysis::LossCurve& curve = c.curves[i];
        const std::vector<double> smooth = analysis::rollingMedian(curve.loss);
        QVector<double> x, raw, med;
        for (size_t k = 0; k < curve.size(); ++k) {
            const double v = axis == LossAxis::Step   ? curve.step[k]
                             : axis == LossAxis::Time ? curve.timeS[k] / tu.seconds
                                                      : curve.tokens[k];
            if (!std::isfinite(v) || !std::isfinite(curve.loss[k])) continue;
            x << v;
            raw << curve.loss[k];
            med << smooth[k];
        }
        if (x.isEmpty()) continue;
        if (axis == LossAxis::Size && sizeUnit.empty()) sizeUnit = curve.sizeUnit;
        QColor faint = runColor(i);
        faint.setAlpha(70);
        QCPGraph* points = line(plot, x, raw, faint, 1, QString());
        points->setLayer(QStringLiteral("background")); // every run's raw points under every run's median
        QCPGraph* median = line(plot, x, med, runColor(i), 2, legendName(c, i));
        // The candidates dashed over the baseline: where the curves are the same, both still show.
        if (i > 0) median->setPen(QPen(runColor(i), 2, Qt::DashLine));
        any = true;
    }
    plot.yAxis->setLabel(QObject::tr("loss"));
    plot.xAxis->setLabel(axis == LossAxis::Step   ? QObject::tr("step")
                         : axis == LossAxis::Time ? QObject::tr("wall time since the first loss (%1)").arg(tu.name)
                                                  : QObject::tr("%1 seen").arg(QString::fromStdString(
                                                        sizeUnit.empty() ? "tokens" : sizeUnit)));
    if (!any) {
        noData(plot, QObject::tr("No run logs a training loss against this axis"));
        return false;
    }
    plot.rescaleAxes();
    return true;
}

bool plotRow(QCustomPlot& plot, const analysis::RunComparison& c, const std::string& rowId, CompareAlign align)
{
    plot.clearGraphs();
    plot.clearItems();
    styleAxes(plot);
    std::string unit;
    const QString label = rowLabel(c, rowId, &unit);
    double span = 0, maxAbs = 0;
    for (const analysis::RunSummary& run : c.runs)
        if (const auto it = run.series.find(rowId); it != run.series.end())
            for (size_t k = 0; k < it->second.tS.size(); ++k) {
                span = std::max(span, it->second.tS[k]);
                if (std::isfinite(it->second.value[k])) maxAbs = std::max(maxAbs, std::fabs(it->second.value[k]));
            }
    const TimeUnit tu = timeUnit(span);
    const ValueUnit vu = valueUnit(unit, maxAbs);
    bool any = false;
    for (size_t i = 0; i < c.runs.size(); ++i) {
        const analysis::RunSummary& run = c.runs[i];
        const auto it = run.series.find(rowId);
        if (it == run.series.end()) continue;
        QVector<double> x, y;
        for (size_t k = 0; k < it->second.tS.size(); ++k) {
            const double t = it->second.tS[k];
            const double xv = align == CompareAlign::Time ? t / tu.seconds : analysis::stepsAt(run, t);
            if (!std::isfinite(xv) || !std::isfinite(it->second.value[k])) continue;
            x << xv;
            y << it->second.value[k] / vu.scale;
        }
        if (x.isEmpty()) continue;
        QCPGraph* g = line(plot, x, y, runColor(i), 1.6, legendName(c, i));
        if (x.size() < 40) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
        any = true;
    }
    plot.xAxis->setLabel(align == CompareAlign::Time ? QObject::tr("time since the window's start (%1)").arg(tu.name)
                                                     : QObject::tr("steps since the window's start"));
    plot.yAxis->setLabel(vu.label.isEmpty() ? label : QStringLiteral("%1 (%2)").arg(label, vu.label));
    if (!any) {
        noData(plot, align == CompareAlign::Step ? QObject::tr("No run has steps to align %1 by").arg(label)
                                                 : QObject::tr("No run has %1 over its window").arg(label));
        return false;
    }
    plot.rescaleAxes();
    if (unit == "%" || unit == "B/s" || unit == "1/s") plot.yAxis->setRangeLower(0);
    return true;
}

QString lossSummary(const analysis::RunComparison& c)
{
    const auto signedNumber = [](double v) {
        QString s = QString::number(std::fabs(v), 'g', 3);
        return (v < 0 ? QStringLiteral("−") : QStringLiteral("+")) + s;
    };
    QStringList out;
    for (size_t k = 0; k < c.candidates.size(); ++k) {
        const analysis::LossComparison& l = c.candidates[k].loss;
        const QString who = c.candidates.size() > 1 ? QObject::tr("Candidate %1: ").arg(k + 1) : QString();
        if (l.axis.empty()) {
            out << who + QObject::tr("loss not compared (a run logs fewer than %1 loss points)")
                             .arg(analysis::kLossMinPoints);
            continue;
        }
        const QString axis = l.axis == "step" ? QObject::tr("steps") : QString::fromStdString(l.axis);
        QString s = l.verdict == "n/a" ? QObject::tr("loss against %1: n/a (the curves share too few points)").arg(axis)
                                       : QObject::tr("loss against %1: %2 (median difference %3, noise %4)")
                                             .arg(axis, QString::fromStdString(l.verdict), signedNumber(l.medianDiff))
                                             .arg(l.noise, 0, 'g', 3);
        if (l.timeVerdict == "n/a" || l.timeVerdict.empty())
            s += QObject::tr("; against wall time: n/a (no common loss level reached)");
        else
            s += QObject::tr("; against wall time: %1, reaches %2 in %3 × the baseline's time (%4 s vs %5 s)")
                     .arg(QString::fromStdString(l.timeVerdict))
                     .arg(l.level, 0, 'g', 4)
                     .arg(l.timeRatio, 0, 'f', 2)
                     .arg(l.timeCandS, 0, 'f', 0)
                     .arg(l.timeBaseS, 0, 'f', 0);
        out << who + s;
    }
    return out.join(QLatin1Char('\n'));
}

} // namespace runlens::widgets
