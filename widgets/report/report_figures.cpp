#include "widgets/report/report_figures.h"

#include "analysis/flame/flame_layout.h"
#include "widgets/common/node_colors.h"
#include "widgets/flame/flame_painter.h"
#include "widgets/timeline/lane_plot_data.h"

#include <QDateTime>
#include <QFontMetrics>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace runlens::widgets {

namespace {
constexpr int kFlameRow = 13;
constexpr int kFlamePoint = 6;
constexpr int kKeptAncestors = 3;

analysis::FlameLayout flameFigureLayout(const analysis::ReportFlame& flame, int width, int maxRows, int* dropped)
{
    analysis::FlameLayout layout = analysis::layoutFlame(*flame.tree, flame.focus, flameMinWidth(width));
    const int d = analysis::trimLayout(layout, kKeptAncestors, maxRows);
    if (dropped) *dropped = d;
    return layout;
}

FlamePaintOptions figureOptions(const analysis::ReportFlame& flame)
{
    FlamePaintOptions o;
    o.search = flame.highlight.get();
    o.rowHeight = kFlameRow;
    o.pointSize = kFlamePoint;
    return o;
}
} // namespace

void paintWaterfall(QPainter& p, const QRect& area, const std::vector<analysis::TimeBudget>& budgets)
{
    analysis::TimeBudget sum;
    for (const analysis::TimeBudget& b : budgets)
        sum.addSeconds(b);
    struct Step
    {
        QString label;
        double seconds;
        QColor color;
    };
    const std::vector<Step> losses{{QObject::tr("start-up"), sum.startupS, QColor(0xb8, 0xb8, 0xb8)},
                                   {QObject::tr("hung collectives"), sum.hangS, QColor(0x8c, 0x1c, 0x1c)},
                                   {QObject::tr("checkpoint stalls"), sum.checkpointS, QColor(0xe0, 0x8a, 0x2e)},
                                   {QObject::tr("input / host waits"), sum.inputS, QColor(0x9b, 0x6b, 0xd6)},
                                   {QObject::tr("communication waits"), sum.commWaitS, QColor(0x4e, 0x8c, 0xd9)},
                                   {QObject::tr("other idle GPU time"), sum.idleS, QColor(0xd9, 0x5f, 0x5f)}};
    p.save();
    p.fillRect(area, Qt::white);
    QFont f = p.font();
    f.setPointSizeF(8);
    p.setFont(f);
    const QFontMetrics fm(f, p.device());
    const int labelW = 150, valueW = 150;
    const int rows = static_cast<int>(losses.size()) + 2;
    const double rowH = static_cast<double>(area.height()) / rows;
    const double barL = area.left() + labelW, barW = area.width() - labelW - valueW;
    const double wall = std::max(sum.wallS, 1e-9);
    const auto x = [&](double seconds) { return barL + barW * std::clamp(seconds / wall, 0.0, 1.0); };
    const auto row = [&](int i, const QString& label, double from, double to, const QColor& color, double seconds,
                         bool bold) {
        const double top = area.top() + i * rowH;
        QFont lf = f;
        lf.setBold(bold);
        p.setFont(lf);
        p.setPen(QColor(0x20, 0x20, 0x20));
        p.drawText(QRectF(area.left(), top, labelW - 8, rowH), Qt::AlignRight | Qt::AlignVCenter, label);
        const QRectF bar(x(from), top + rowH * 0.18, std::max(0.8, x(to) - x(from)), rowH * 0.64);
        p.fillRect(bar, color);
        p.drawText(QRectF(barL + barW + 8, top, valueW - 8, rowH), Qt::AlignLeft | Qt::AlignVCenter,
                   QStringLiteral("%1 %   %2")
                       .arg(100 * seconds / wall, 0, 'f', 1)
                       .arg(formatDuration(static_cast<int64_t>(seconds * 1e9))));
        p.setFont(f);
    };
    row(0, budgets.size() > 1 ? QObject::tr("wall time, %1 nodes").arg(budgets.size()) : QObject::tr("wall time"), 0,
        wall, QColor(0x90, 0x99, 0xa6), wall, true);
    double left = wall;
    for (size_t k = 0; k < losses.size(); ++k) {
        const Step& s = losses[k];
        row(static_cast<int>(k) + 1, QStringLiteral("− ") + s.label, left - s.seconds, left, s.color, s.seconds, false);
        // The connector from this step to the next one.
        p.setPen(QPen(QColor(0x99, 0x99, 0x99), 0.6, Qt::DotLine));
        const double top = area.top() + (static_cast<double>(k) + 1) * rowH;
        p.drawLine(QPointF(x(left - s.seconds), top + rowH * 0.82), QPointF(x(left - s.seconds), top + rowH * 1.18));
        left -= s.seconds;
    }
    row(rows - 1, QObject::tr("= compute (goodput)"), 0, sum.computeS, QColor(0x5c, 0xb8, 0x6b), sum.computeS, true);
    p.restore();
}

int flameFigureHeight(const analysis::ReportFlame& flame, int width, int maxRows)
{
    if (!flame.tree) return 0;
    const analysis::FlameLayout layout = flameFigureLayout(flame, width, maxRows, nullptr);
    return flameHeight(layout, figureOptions(flame));
}

void paintFlameFigure(QPainter& p, const QRect& area, const analysis::ReportFlame& flame, int maxRows)
{
    if (!flame.tree) return;
    const analysis::FlameLayout layout = flameFigureLayout(flame, area.width(), maxRows, nullptr);
    paintFlame(p, area, *flame.tree, layout, figureOptions(flame));
}

QString flameFigureCaption(const analysis::ReportFlame& flame)
{
    if (!flame.tree) return {};
    int dropped = 0;
    (void)flameFigureLayout(flame, 600, 24, &dropped);
    QString text =
        QObject::tr("Stack samples of the episode %1–%2 UTC (busy stacks, %3 samples)")
            .arg(QDateTime::fromMSecsSinceEpoch(flame.fromNs / 1'000'000, Qt::UTC).toString(QStringLiteral("hh:mm:ss")),
                 QDateTime::fromMSecsSinceEpoch(flame.toNs / 1'000'000, Qt::UTC).toString(QStringLiteral("hh:mm:ss")))
            .arg(flame.tree->totalSamples());
    if (flame.focus > 0) {
        const auto& n = flame.tree->node(flame.focus);
        text += QObject::tr(", focused on %1 (%2 % of them)")
                    .arg(QString::fromStdString(flame.tree->label(flame.focus)))
                    .arg(100.0 * static_cast<double>(n.samples) /
                             static_cast<double>(std::max<int64_t>(1, flame.tree->totalSamples())),
                         0, 'f', 1);
        if (dropped > 0) text += QObject::tr("; %1 outer callers above it not drawn").arg(dropped);
    }
    if (flame.highlight)
        text += QObject::tr(", %1 highlighted (%2 % of them)")
                    .arg(QString::fromStdString(flame.evidenceFrame))
                    .arg(100 * flame.highlight->share, 0, 'f', 1);
    if (!flame.note.empty()) text += QStringLiteral(". ") + QString::fromStdString(flame.note);
    return text + QStringLiteral(".");
}

void paintNodeKey(QPainter& p, const QRect& area, const analysis::ReportModel& model,
                  const std::vector<std::string>& nodes)
{
    p.save();
    QFont f = p.font();
    f.setPointSizeF(7.5);
    p.setFont(f);
    const QFontMetrics fm(f, p.device());
    int x = area.left() + 76; // aligned with the lanes' plots
    for (const std::string& name : nodes) {
        int index = -1;
        if (model.catalog)
            for (size_t i = 0; i < model.catalog->nodes.size(); ++i)
                if (model.catalog->nodes[i].name == name) index = static_cast<int>(i);
        if (index < 0) continue;
        const QString text = QString::fromStdString(name);
        if (x + 14 + fm.horizontalAdvance(text) > area.right()) break;
        p.fillRect(QRect(x, area.top() + 4, 9, 9), nodeColor(index));
        p.setPen(QColor(0x20, 0x20, 0x20));
        p.drawText(QRect(x + 12, area.top(), fm.horizontalAdvance(text) + 4, area.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, text);
        x += 12 + fm.horizontalAdvance(text) + 14;
    }
    p.restore();
}

} // namespace runlens::widgets
