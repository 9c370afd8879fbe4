#include "widgets/timeline/timeline_lane.h"

#include "widgets/timeline/timeline_widget.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QMenu>
#include <QResizeEvent>
#include <QToolTip>
#include <cmath>

namespace runlens::widgets {

namespace {
constexpr int kLeftMargin = 76;
constexpr int kRightMargin = 14;
constexpr double kReadoutTop = 0.16; // the readout box's top, as a share of the plot's height
constexpr int kTitleMinWidth = 160;  // px the title keeps before legend entries go into "+N"

// A legend entry that is only text: "+3" for the entries that did not fit (the header's tooltip lists them).
class MoreLegendItem : public QCPAbstractLegendItem
{
public:
    MoreLegendItem(QCPLegend* parent, QString text) : QCPAbstractLegendItem(parent), m_text(std::move(text)) {}

protected:
    void draw(QCPPainter* painter) override
    {
        painter->setFont(mFont);
        painter->setPen(QPen(mTextColor));
        painter->drawText(mRect, Qt::AlignLeft | Qt::AlignVCenter, m_text);
    }
    QSize minimumOuterSizeHint() const override
    {
        const QFontMetrics fm(mFont);
        return {fm.horizontalAdvance(m_text) + mMargins.left() + mMargins.right(),
                fm.height() + mMargins.top() + mMargins.bottom()};
    }

private:
    QString m_text;
};
constexpr int kDragThresholdPx = 3;

// Value-axis labels in the lane's unit ("2.0 GB/s", "75 %") instead of bare numbers.
class UnitTicker : public QCPAxisTicker
{
public:
    explicit UnitTicker(std::string unit) : m_unit(std::move(unit)) {}

protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override { return formatTick(tick, m_unit); }

private:
    std::string m_unit;
};

QString dateFormatFor(int64_t spanNs)
{
    const int64_t s = spanNs / 1'000'000'000;
    if (s > int64_t{4} * 86400) return QStringLiteral("MMM d\nhh:mm");
    if (s > int64_t{6} * 3600) return QStringLiteral("MMM d hh:mm");
    if (s > 600) return QStringLiteral("hh:mm");
    if (s > 10) return QStringLiteral("hh:mm:ss");
    return QStringLiteral("hh:mm:ss.zzz");
}
} // namespace

TimelineLane::TimelineLane(TimelineWidget* owner, Kind kind, timeline::LaneSpec spec)
    : QCustomPlot(owner), m_owner(owner), m_kind(kind), m_spec(std::move(spec))
{
    setFocusPolicy(Qt::ClickFocus);
    setMouseTracking(true);
    setInteractions({});
    setNoAntialiasingOnDrag(true);
    setPlottingHint(QCP::phCacheLabels, true);
    auto* rect = axisRect();
    rect->setAutoMargins(QCP::msNone);
    auto ticker = QSharedPointer<QCPAxisTickerDateTime>::create();
    ticker->setDateTimeSpec(Qt::UTC);
    xAxis->setTicker(ticker);
    if (m_kind == Kind::Axis) {
        rect->setMargins(QMargins(kLeftMargin, 0, kRightMargin, 22));
        yAxis->setVisible(false);
        xAxis->grid()->setVisible(false);
        yAxis->grid()->setVisible(false);
        yAxis->setRange(0, 1);
        setMinimumHeight(40);
        setMaximumHeight(40);
        xAxis->setLabel(QString());
    } else {
        rect->setMargins(QMargins(kLeftMargin, 2, kRightMargin, 2));
        xAxis->setTickLabels(false);
        xAxis->setTickLength(0, 3);
        setMinimumHeight(64);
        // A header row above the plot: the title on the left, the legend on the right, so neither covers data.
        QFont f = font();
        f.setBold(true);
        f.setPointSizeF(f.pointSizeF() * 0.9);
        m_title = new QCPTextElement(this, QString::fromStdString(m_spec.title), f);
        m_title->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
        m_title->setMargins(QMargins(4, 0, 4, 0));
        auto* header = new QCPLayoutGrid;
        plotLayout()->insertRow(0);
        plotLayout()->addElement(0, 0, header);
        plotLayout()->setRowSpacing(0);
        plotLayout()->setRowStretchFactor(0, 0.001);
        header->setMargins(QMargins(kLeftMargin - 4, 1, kRightMargin, 0));
        header->addElement(0, 0, m_title);
        auto valueTicker = QSharedPointer<UnitTicker>::create(m_spec.unit);
        valueTicker->setTickCount(3);
        yAxis->setTicker(valueTicker);
        m_note = new QCPItemText(this);
        m_note->position->setType(QCPItemPosition::ptAxisRectRatio);
        m_note->position->setCoords(0.5, 0.5);
        m_note->setLayer(QStringLiteral("legend"));
        m_note->setText(tr("loading…"));
        legend->setVisible(true);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
        legend->setWrap(0); // one row: what does not fit goes into the "+N" entry
        QFont lf = font();
        lf.setPointSizeF(lf.pointSizeF() * 0.8);
        legend->setFont(lf);
        legend->setIconSize(18, 8);
        legend->setRowSpacing(0);
        legend->setColumnSpacing(6);
        rect->insetLayout()->take(legend);
        header->addElement(0, 1, legend);
        header->setColumnStretchFactors({1.0, 0.001});
        legend->setMargins(QMargins(2, 0, 2, 0));
    }
    layer(QStringLiteral("overlay"))->setMode(QCPLayer::lmBuffered);
    m_cursorLine = new QCPItemStraightLine(this);
    m_cursorLine->setLayer(QStringLiteral("overlay"));
    m_cursorLine->setVisible(false);
    m_readout = new QCPItemText(this);
    m_readout->setLayer(QStringLiteral("overlay"));
    m_readout->position->setTypeX(QCPItemPosition::ptPlotCoords);
    m_readout->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_readout->setPadding(QMargins(4, 2, 4, 2));
    m_readout->setTextAlignment(Qt::AlignLeft);
    m_readout->setVisible(false);
    QFont rf = font();
    rf.setPointSizeF(rf.pointSizeF() * 0.85);
    m_readout->setFont(rf);
    m_selection = makeBand(QColor(), layer(QStringLiteral("grid")));
    m_selection->setVisible(false);
    m_selectionLabel = new QCPItemText(this);
    m_selectionLabel->setLayer(QStringLiteral("overlay"));
    m_selectionLabel->setVisible(false);
    m_selectionLabel->position->setTypeX(QCPItemPosition::ptPlotCoords);
    m_selectionLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_selectionLabel->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
    applyPalette();
}

void TimelineLane::applyPalette()
{
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    QColor grid = pal.color(QPalette::Mid);
    grid.setAlpha(90);
    setBackground(pal.brush(m_kind == Kind::Axis ? QPalette::Window : QPalette::Base));
    for (QCPAxis* axis : {xAxis, yAxis}) {
        axis->setBasePen(QPen(text, 1));
        axis->setTickPen(QPen(text, 1));
        axis->setSubTickPen(QPen(text, 1));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
        axis->grid()->setZeroLinePen(Qt::NoPen);
    }
    if (m_title) {
        m_title->setTextColor(text);
        m_note->setColor(pal.color(QPalette::PlaceholderText));
    }
    if (legend) {
        QColor bg = pal.color(QPalette::Base);
        bg.setAlpha(200);
        legend->setBrush(bg);
        legend->setBorderPen(Qt::NoPen);
        legend->setTextColor(text);
    }
    m_cursorLine->setPen(QPen(text, 1, Qt::DashLine));
    m_readout->setColor(pal.color(QPalette::ToolTipText));
    QColor tip = pal.color(QPalette::ToolTipBase);
    tip.setAlpha(230);
    m_readout->setBrush(tip);
    m_readout->setPen(QPen(pal.color(QPalette::Mid)));
    QColor sel = pal.color(QPalette::Highlight);
    sel.setAlpha(55);
    m_selection->setBrush(sel);
    sel.setAlpha(160);
    m_selection->setPen(QPen(sel, 1));
    m_selectionLabel->setColor(pal.color(QPalette::HighlightedText));
    m_selectionLabel->setBrush(pal.color(QPalette::Highlight));
}

void TimelineLane::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
        replot(rpQueuedReplot);
    }
    QCustomPlot::changeEvent(event);
}

int TimelineLane::plotWidth() const
{
    return std::max(1, width() - kLeftMargin - kRightMargin);
}

void TimelineLane::setTimeRange(TimeRange range)
{
    xAxis->setRange(static_cast<double>(range.fromNs) / 1e9, static_cast<double>(range.toNs) / 1e9);
    static_cast<QCPAxisTickerDateTime*>(xAxis->ticker().data())->setDateTimeFormat(dateFormatFor(range.span()));
    // The selection band and its label are in plot coordinates: they follow the axis without being placed again.
    updateReadout();
}

void TimelineLane::setPlotData(const LanePlotData& plot, std::shared_ptr<const timeline::TimelineFrame> frame,
                               size_t laneIndex)
{
    m_frame = std::move(frame);
    m_laneIndex = laneIndex;
    clearPlottables();
    for (const LaneBand& b : plot.bands)
        (new EnvelopeBand(xAxis, yAxis, b.data, b.fill))->removeFromLegend(); // owned by the plot
    for (const LaneCurve& c : plot.curves) {
        QCPGraph* g = addGraph();
        g->setData(c.data);
        g->setPen(c.pen);
        g->setAdaptiveSampling(true);
        // Dense min/max lines (about a vertical stroke per pixel) gain nothing from antialiasing and cost several
        // times more with it; sparse lines (zoomed in on raw points) are antialiased.
        g->setAntialiased(c.data->size() * 4 < plotWidth());
        g->setName(c.name); // unnamed curves (one per series) stay out of the legend
        if (c.name.isEmpty()) g->removeFromLegend();
    }
    if (m_kind == Kind::Data) {
        yAxis->setRange(plot.lo, plot.hi);
        m_note->setVisible(!plot.hasData);
        m_note->setText(tr("no data in this range"));
        fitLegend(width());
    }
    updateReadout();
    // A lane scrolled out of view is drawn when it comes back into view, not now (ten lanes' replots are most of
    // a zoom step's cost on the GUI thread).
    if (visibleRegion().isEmpty()) {
        m_stale = true;
        return;
    }
    replot(rpQueuedReplot);
}

void TimelineLane::paintEvent(QPaintEvent* event)
{
    if (m_stale) {
        m_stale = false;
        replot(rpQueuedReplot); // the next event draws the new data; this paint shows the last drawing
    }
    QCustomPlot::paintEvent(event);
}

QCPItemRect* TimelineLane::makeBand(const QColor& color, QCPLayer* layer)
{
    auto* rect = new QCPItemRect(this);
    rect->setLayer(layer);
    rect->topLeft->setTypeX(QCPItemPosition::ptPlotCoords);
    rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    rect->bottomRight->setTypeX(QCPItemPosition::ptPlotCoords);
    rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    if (color.isValid()) {
        QColor fill = color;
        fill.setAlpha(45);
        rect->setBrush(fill);
        rect->setPen(Qt::NoPen);
    }
    return rect;
}

void TimelineLane::placeBand(QCPItemRect* rect, TimeRange range)
{
    rect->topLeft->setCoords(static_cast<double>(range.fromNs) / 1e9, 0);
    rect->bottomRight->setCoords(static_cast<double>(range.toNs) / 1e9, 1);
}

void TimelineLane::setSelection(std::optional<TimeRange> selection)
{
    m_selectionRange = selection;
    m_selection->setVisible(selection.has_value());
    m_selectionLabel->setVisible(selection.has_value() && m_kind == Kind::Axis);
    if (selection) {
        placeBand(m_selection, *selection);
        const double mid = (static_cast<double>(selection->fromNs) + static_cast<double>(selection->span()) / 2) / 1e9;
        m_selectionLabel->position->setCoords(mid, 0.05);
        m_selectionLabel->setText(formatDuration(selection->span()));
    }
    replot(rpQueuedReplot);
}

void TimelineLane::setSpans(const std::vector<TimelineSpan>& spans)
{
    for (auto* s : m_spans)
        removeItem(s);
    m_spans.clear();
    for (const TimelineSpan& span : spans) {
        auto* rect = makeBand(span.color, layer(QStringLiteral("grid")));
        placeBand(rect, span.range);
        m_spans.push_back(rect);
    }
    replot(rpQueuedReplot);
}

void TimelineLane::setCursorTime(std::optional<int64_t> ns)
{
    m_cursorNs = ns;
    updateReadout();
    layer(QStringLiteral("overlay"))->replot();
}

void TimelineLane::updateReadout()
{
    m_cursorLine->setVisible(m_cursorNs.has_value());
    if (!m_cursorNs) {
        m_readout->setVisible(false);
        return;
    }
    const double key = static_cast<double>(*m_cursorNs) / 1e9;
    m_cursorLine->point1->setCoords(key, 0);
    m_cursorLine->point2->setCoords(key, 1);
    QString text;
    const QFontMetrics metrics(m_readout->font());
    if (m_kind == Kind::Axis) {
        text = QDateTime::fromMSecsSinceEpoch(*m_cursorNs / 1'000'000, Qt::UTC)
                   .toString(QStringLiteral("yyyy-MM-dd hh:mm:ss.zzz 'UTC'"));
    } else if (m_frame && m_laneIndex < m_frame->lanes.size()) {
        const double pixel = static_cast<double>(m_frame->toNs - m_frame->fromNs) / 1e9 / std::max(1, m_frame->pixels);
        // As many rows as the lane has room for below the box's top, the last one saying how many more there are.
        const QMargins pad = m_readout->padding();
        const double room = axisRect()->height() * (1 - kReadoutTop) - pad.top() - pad.bottom() - 2;
        const int rows = static_cast<int>(room / (metrics.lineSpacing() + 1));
        text = cursorReadout(m_spec, m_frame->lanes[m_laneIndex], key, pixel, std::max(1, rows - 1));
    }
    m_readout->setText(text);
    m_readout->setVisible(!text.isEmpty());
    // Keep the box inside the plot: right of the cursor where it fits, else left of it, else against the side with
    // more room.
    const int boxWidth = metrics.boundingRect(QRect(0, 0, 10000, 10000), Qt::AlignLeft, text).width() + 10;
    const double x = xAxis->coordToPixel(key);
    const QRect plot = axisRect()->rect();
    const bool right =
        x + boxWidth <= plot.right() || (x - boxWidth < plot.left() && plot.right() - x >= x - plot.left());
    double anchor = key;
    if (right && x + boxWidth > plot.right())
        anchor = xAxis->pixelToCoord(std::max<double>(plot.left(), plot.right() - boxWidth));
    if (!right && x - boxWidth < plot.left())
        anchor = xAxis->pixelToCoord(std::min<double>(plot.right(), plot.left() + boxWidth));
    m_readout->setPositionAlignment((right ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignTop);
    m_readout->position->setCoords(anchor, m_kind == Kind::Axis ? 0.0 : kReadoutTop);
}

int TimelineLane::fitLegend(int width)
{
    if (!legend || !m_title) return 0;
    std::vector<QCPAbstractPlottable*> named;
    for (int i = 0; i < plottableCount(); ++i)
        if (!plottable(i)->name().isEmpty()) named.push_back(plottable(i)); // the curves with a legend entry
    const QString fullTitle = QString::fromStdString(m_spec.title);
    const QFontMetrics titleMetrics(m_title->font());
    const int titleWidth = titleMetrics.horizontalAdvance(fullTitle) + 16;
    const int available = width - kLeftMargin - kRightMargin - 8;
    // The legend with its first `keep` entries, then "+N" for the rest.
    auto build = [&](size_t keep) {
        legend->clearItems();
        for (size_t i = 0; i < keep; ++i)
            named[i]->addToLegend(legend);
        if (keep < named.size())
            legend->addItem(new MoreLegendItem(legend, QStringLiteral("+%1").arg(named.size() - keep)));
        return legend->minimumOuterSizeHint().width();
    };
    size_t keep = named.size();
    int legendWidth = build(keep);
    while (keep > 0 && legendWidth + std::min(titleWidth, kTitleMinWidth) > available)
        legendWidth = build(--keep);
    legend->setVisible(legend->itemCount() > 0);
    const int titleRoom = std::max(available - legendWidth, kTitleMinWidth / 2);
    const bool elided = titleWidth > titleRoom;
    m_title->setText(elided ? titleMetrics.elidedText(fullTitle, Qt::ElideRight, titleRoom - 16) : fullTitle);
    m_headerTip.clear();
    if (elided || keep < named.size()) {
        QStringList lines{fullTitle};
        for (const QCPAbstractPlottable* p : named)
            lines << QStringLiteral("  ") + p->name();
        m_headerTip = lines.join(QLatin1Char('\n'));
    }
    return static_cast<int>(named.size() - keep);
}

QRectF TimelineLane::readoutRect() const
{
    return QRectF(m_readout->topLeft->pixelPosition(), m_readout->bottomRight->pixelPosition());
}

QString TimelineLane::titleText() const
{
    return m_title ? m_title->text() : QString();
}

bool TimelineLane::event(QEvent* event)
{
    // The header's tooltip (the title and legend in full) over the header row only: over the data the readout
    // speaks.
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        if (!m_headerTip.isEmpty() && help->pos().y() < axisRect()->top())
            QToolTip::showText(help->globalPos(), m_headerTip, this);
        else
            QToolTip::hideText();
        return true;
    }
    return QCustomPlot::event(event);
}

void TimelineLane::resizeEvent(QResizeEvent* event)
{
    if (event->size().width() != event->oldSize().width()) fitLegend(event->size().width());
    QCustomPlot::resizeEvent(event);
}

QString TimelineLane::cursorText() const
{
    return m_readout->visible() ? m_readout->text() : QString();
}

int64_t TimelineLane::nsAt(double x) const
{
    return static_cast<int64_t>(std::llround(xAxis->pixelToCoord(x) * 1e9));
}

void TimelineLane::mousePressEvent(QMouseEvent* event)
{
    if (!m_owner) return QCustomPlot::mousePressEvent(event); // a report figure: drawing only
    if (event->button() != Qt::LeftButton) {
        QCustomPlot::mousePressEvent(event);
        return;
    }
    setFocus(Qt::MouseFocusReason);
    m_pressX = event->position().x();
    m_pressNs = nsAt(m_pressX);
    m_pressRange = m_owner->m_controller->range();
    const bool select = m_kind == Kind::Axis || (event->modifiers() & Qt::ShiftModifier);
    m_drag = select ? Drag::Select : Drag::Pan;
    if (m_drag == Drag::Pan) {
        m_owner->m_controller->beginGesture();
        setCursor(Qt::ClosedHandCursor);
    }
    event->accept();
}

void TimelineLane::mouseMoveEvent(QMouseEvent* event)
{
    if (!m_owner) return QCustomPlot::mouseMoveEvent(event);
    const double x = event->position().x();
    if (m_drag == Drag::Pan) {
        const double nsPerPx = static_cast<double>(m_pressRange.span()) / plotWidth();
        const auto shift = static_cast<int64_t>(std::llround((x - m_pressX) * nsPerPx));
        m_owner->m_controller->setRange({m_pressRange.fromNs - shift, m_pressRange.toNs - shift}, false);
    } else if (m_drag == Drag::Select && std::abs(x - m_pressX) >= kDragThresholdPx) {
        const int64_t at = nsAt(x);
        m_owner->previewSelection(TimeRange{std::min(m_pressNs, at), std::max(m_pressNs, at)});
    }
    m_owner->m_controller->setCursor(nsAt(x));
    event->accept();
}

void TimelineLane::mouseReleaseEvent(QMouseEvent* event)
{
    if (!m_owner) return QCustomPlot::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton) {
        QCustomPlot::mouseReleaseEvent(event);
        return;
    }
    const double x = event->position().x();
    if (m_drag == Drag::Select) {
        if (std::abs(x - m_pressX) >= kDragThresholdPx) {
            const int64_t at = nsAt(x);
            m_owner->m_controller->setSelection(TimeRange{std::min(m_pressNs, at), std::max(m_pressNs, at)});
        } else if (m_kind == Kind::Axis) {
            m_owner->m_controller->setSelection(std::nullopt); // a click on the ruler clears the selection
        }
        m_owner->previewSelection(std::nullopt);
    }
    m_drag = Drag::None;
    unsetCursor();
    event->accept();
}

void TimelineLane::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (!m_owner) return QCustomPlot::mouseDoubleClickEvent(event);
    m_drag = Drag::None;
    m_owner->m_controller->fit();
    event->accept();
}

void TimelineLane::wheelEvent(QWheelEvent* event)
{
    if (!m_owner) return QCustomPlot::wheelEvent(event);
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) {
        event->ignore();
        return;
    }
    // One history entry per burst of wheel events.
    if (!m_lastWheel.isValid() || m_lastWheel.elapsed() > 600) m_owner->m_controller->beginGesture();
    m_lastWheel.start();
    m_owner->m_controller->zoom(std::pow(0.8, steps), nsAt(event->position().x()), false);
    event->accept();
}

void TimelineLane::leaveEvent(QEvent* event)
{
    if (!m_owner) return QCustomPlot::leaveEvent(event);
    m_owner->m_controller->setCursor(std::nullopt);
    QCustomPlot::leaveEvent(event);
}

void TimelineLane::contextMenuEvent(QContextMenuEvent* event)
{
    if (!m_owner) return QCustomPlot::contextMenuEvent(event);
    QMenu menu(this);
    auto* controller = m_owner->m_controller;
    if (m_kind == Kind::Data) {
        const std::string id = m_spec.id;
        menu.addAction(tr("Move lane up"), this, [this, id] { m_owner->moveLane(id, -1); });
        menu.addAction(tr("Move lane down"), this, [this, id] { m_owner->moveLane(id, +1); });
        menu.addAction(tr("Hide lane"), this, [this, id] { m_owner->setLaneVisible(id, false); });
    }
    QMenu* lanes = menu.addMenu(tr("Lanes"));
    for (const auto& lane : m_owner->lanes()) {
        QAction* a = lanes->addAction(QString::fromStdString(lane.title));
        a->setCheckable(true);
        const auto visible = m_owner->visibleLaneIds();
        a->setChecked(std::find(visible.begin(), visible.end(), lane.id) != visible.end());
        const std::string id = lane.id;
        connect(a, &QAction::toggled, this, [this, id](bool on) { m_owner->setLaneVisible(id, on); });
    }
    menu.addSeparator();
    if (auto sel = controller->selection())
        menu.addAction(tr("Zoom to selection"), this, [controller, r = *sel] { controller->setRange(r); });
    menu.addAction(tr("Fit all"), controller, &TimelineController::fit);
    menu.addAction(tr("Back"), controller, &TimelineController::back)->setEnabled(controller->canGoBack());
    menu.addAction(tr("Forward"), controller, &TimelineController::forward)->setEnabled(controller->canGoForward());
    menu.exec(event->globalPos());
}

} // namespace runlens::widgets
