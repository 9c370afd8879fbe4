#include "widgets/timeline/timeline_widget.h"

#include "widgets/common/background_job.h"
#include "widgets/common/node_colors.h"
#include "widgets/timeline/timeline_lane.h"

#include <QApplication>
#include <QDataStream>
#include <QDateTime>
#include <QFileInfo>
#include <QFuture>
#include <QImage>
#include <QKeyEvent>
#include <QLabel>
#include <QPainter>
#include <QPdfWriter>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QSvgGenerator>
#include <QThreadPool>
#include <QTimeZone>
#include <QVBoxLayout>
#include <algorithm>

namespace runlens::widgets {

// A fetched frame and its lanes as plot data, built on the worker.
struct TimelineWidget::FetchResult
{
    uint64_t sourceEpoch = 0;
    std::shared_ptr<const timeline::TimelineFrame> frame;
    std::vector<std::shared_ptr<const LanePlotData>> plots; // per frame lane
    std::string error;
    bool cancelled = false;
};

namespace {
constexpr int kDefaultLaneHeight = 130;
constexpr int kFocusFrame = 2; // px around the timeline, drawn in the highlight colour while it has the keyboard focus
constexpr quint32 kLayoutMagic = 0x524c544c; // "RLTL"
} // namespace

TimelineWidget::TimelineWidget(TimelineController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_pool(std::make_unique<QThreadPool>())
{
    // One worker: a TimelineSource is used by one thread at a time; newer requests wait as one pending request.
    m_pool->setMaxThreadCount(1);
    setFocusPolicy(Qt::StrongFocus);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(kFocusFrame, kFocusFrame, kFocusFrame, kFocusFrame); // room for the focus frame
    layout->setSpacing(0);
    m_focusWatch = connect(qApp, &QApplication::focusChanged, this, [this](QWidget*, QWidget* now) {
        const bool focused = now && (now == this || isAncestorOf(now));
        if (focused == m_focused) return;
        m_focused = focused;
        update();
    });
    m_nodeKey = new QLabel(this);
    m_nodeKey->setTextFormat(Qt::RichText);
    m_nodeKey->setContentsMargins(76, 2, 8, 0);
    m_nodeKey->setVisible(false);
    layout->addWidget(m_nodeKey);
    m_axis = new TimelineLane(this, TimelineLane::Kind::Axis, timeline::LaneSpec{"axis", "Time", "", {}, true});
    layout->addWidget(m_axis);
    auto* scroll = new QScrollArea(this);
    m_scroll = scroll;
    scroll->installEventFilter(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_splitter = new QSplitter(Qt::Vertical);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->setHandleWidth(5);
    scroll->setWidget(m_splitter);
    layout->addWidget(scroll, 1);

    connect(m_controller, &TimelineController::rangeChanged, this, &TimelineWidget::applyRange);
    connect(m_controller, &TimelineController::selectionChanged, this, [this](std::optional<TimeRange> sel) {
        m_axis->setSelection(sel);
        for (auto* lane : m_laneWidgets)
            lane->setSelection(sel);
    });
    connect(m_controller, &TimelineController::cursorChanged, this, [this](std::optional<int64_t> ns) {
        m_axis->setCursorTime(ns);
        for (auto* lane : m_laneWidgets)
            lane->setCursorTime(ns);
    });
    m_axis->setTimeRange(m_controller->range());
}

TimelineWidget::~TimelineWidget()
{
    // The focus moves while the base QWidget tears the children down: this part is gone by then.
    disconnect(m_focusWatch);
    m_pool->waitForDone();
}

void TimelineWidget::setSource(std::shared_ptr<timeline::TimelineSource> source,
                               std::shared_ptr<const timeline::RunCatalog> catalog)
{
    m_source = std::move(source);
    m_catalog = std::move(catalog);
    ++m_sourceEpoch;
    QStringList key;
    if (m_catalog)
        for (size_t i = 0; i < m_catalog->nodes.size(); ++i)
            key << QStringLiteral("<span style=\"color:%1\">■</span>&nbsp;%2")
                       .arg(nodeColor(static_cast<int>(i)).name(),
                            QString::fromStdString(m_catalog->nodes[i].name).toHtmlEscaped());
    m_nodeKey->setText(tr("Nodes: ") + key.join(QStringLiteral(" &nbsp; ")));
    m_nodeKey->setVisible(!key.isEmpty());
    m_shown.reset();
    m_shownResult.reset();
    rebuildLanes();
}

void TimelineWidget::setLanes(const std::vector<timeline::LaneSpec>& lanes)
{
    m_lanes = lanes;
    m_visible.assign(lanes.size(), false);
    for (size_t i = 0; i < lanes.size(); ++i)
        m_visible[i] = lanes[i].shownByDefault;
    rebuildLanes();
    Q_EMIT lanesChanged();
}

std::vector<timeline::LaneSpec> TimelineWidget::lanes() const
{
    return m_lanes;
}

std::vector<std::string> TimelineWidget::visibleLaneIds() const
{
    std::vector<std::string> ids;
    for (size_t i = 0; i < m_lanes.size(); ++i)
        if (m_visible[i]) ids.push_back(m_lanes[i].id);
    return ids;
}

void TimelineWidget::setLaneVisible(const std::string& laneId, bool visible)
{
    for (size_t i = 0; i < m_lanes.size(); ++i)
        if (m_lanes[i].id == laneId && m_visible[i] != visible) {
            m_visible[i] = visible;
            rebuildLanes();
            Q_EMIT lanesChanged();
            return;
        }
}

void TimelineWidget::moveLane(const std::string& laneId, int delta)
{
    // Moves past the next visible lane in that direction, so hidden lanes do not swallow the step.
    auto it = std::find_if(m_lanes.begin(), m_lanes.end(), [&](const auto& l) { return l.id == laneId; });
    if (it == m_lanes.end() || delta == 0) return;
    long i = it - m_lanes.begin();
    const long step = delta < 0 ? -1 : 1;
    long j = i + step;
    while (j >= 0 && j < static_cast<long>(m_lanes.size()) && !m_visible[static_cast<size_t>(j)])
        j += step;
    if (j < 0 || j >= static_cast<long>(m_lanes.size())) return;
    const auto a = static_cast<size_t>(i), b = static_cast<size_t>(j);
    std::swap(m_lanes[a], m_lanes[b]);
    const bool va = m_visible[a];
    m_visible[a] = m_visible[b];
    m_visible[b] = va;
    rebuildLanes();
    Q_EMIT lanesChanged();
}

void TimelineWidget::setHiddenSeries(std::vector<int64_t> seriesIds)
{
    std::sort(seriesIds.begin(), seriesIds.end());
    if (seriesIds == m_hiddenSeries) return;
    m_hiddenSeries = std::move(seriesIds);
    requestFetch();
}

void TimelineWidget::setSpans(std::vector<TimelineSpan> spans)
{
    m_spans = std::move(spans);
    m_axis->setSpans(m_spans);
    for (auto* lane : m_laneWidgets)
        lane->setSpans(m_shadeSpans ? m_spans : std::vector<TimelineSpan>{});
}

void TimelineWidget::setSpanShading(bool shade)
{
    m_shadeSpans = shade;
    setSpans(std::move(m_spans));
}

void TimelineWidget::rebuildLanes()
{
    // Keep each lane's height across a rebuild (by id).
    std::map<std::string, int> heights;
    const QList<int> sizes = m_splitter->sizes();
    for (size_t i = 0; i < m_laneWidgets.size() && static_cast<qsizetype>(i) < sizes.size(); ++i)
        heights[m_laneWidgets[i]->spec().id] = sizes[static_cast<qsizetype>(i)];
    for (auto* lane : m_laneWidgets)
        lane->deleteLater();
    for (auto* lane : m_laneWidgets)
        lane->setParent(nullptr);
    m_laneWidgets.clear();
    QList<int> newSizes;
    for (size_t i = 0; i < m_lanes.size(); ++i) {
        if (!m_visible[i]) continue;
        auto* lane = new TimelineLane(this, TimelineLane::Kind::Data, m_lanes[i]);
        m_splitter->addWidget(lane);
        m_laneWidgets.push_back(lane);
        lane->setTimeRange(m_controller->range());
        lane->setSelection(m_controller->selection());
        lane->setSpans(m_shadeSpans ? m_spans : std::vector<TimelineSpan>{});
        const auto h = heights.find(m_lanes[i].id);
        newSizes << (h != heights.end() ? h->second : kDefaultLaneHeight);
    }
    m_splitter->setSizes(newSizes);
    // What is already fetched is shown at once; the new lanes fill in when the fetch comes back.
    if (m_shownResult) {
        auto result = m_shownResult;
        for (auto* lane : m_laneWidgets)
            for (size_t k = 0; k < result->frame->lanes.size(); ++k)
                if (result->frame->lanes[k].laneId == lane->spec().id && result->plots[k])
                    lane->setPlotData(*result->plots[k], result->frame, k);
    }
    requestFetch();
}

void TimelineWidget::applyRange(TimeRange range)
{
    m_axis->setTimeRange(range);
    m_axis->replot(QCustomPlot::rpQueuedReplot);
    // When idle, the lanes wait for the fetch this starts (a few tens of ms) and replot once with its data; while a
    // fetch is running (a drag), they replot at once with what they hold, so the gesture never stalls.
    const bool replotNow = m_inFlight || !m_source;
    for (auto* lane : m_laneWidgets) {
        lane->setTimeRange(range);
        if (replotNow) lane->replot(QCustomPlot::rpQueuedReplot);
    }
    requestFetch();
}

void TimelineWidget::previewSelection(std::optional<TimeRange> range)
{
    const auto shown = range ? range : m_controller->selection();
    m_axis->setSelection(shown);
    for (auto* lane : m_laneWidgets)
        lane->setSelection(shown);
}

int TimelineWidget::plotPixels() const
{
    return std::clamp(m_axis->plotWidth(), 100, 8192);
}

bool TimelineWidget::busy() const
{
    return m_inFlight || m_pending;
}

void TimelineWidget::requestFetch()
{
    if (!m_source || m_laneWidgets.empty()) return;
    if (m_inFlight) {
        m_pending = true; // one pending request, whatever the number of changes meanwhile
        return;
    }
    startFetch();
}

void TimelineWidget::startFetch()
{
    timeline::TimelineRequest request;
    request.generation = ++m_generation;
    const TimeRange range = m_controller->range();
    request.fromNs = range.fromNs;
    request.toNs = range.toNs;
    request.pixels = plotPixels();
    for (auto* lane : m_laneWidgets)
        request.lanes.push_back(lane->spec());
    request.hiddenSeries = m_hiddenSeries;
    m_inFlight = true;
    m_pending = false;
    auto source = m_source;
    const uint64_t epoch = m_sourceEpoch;
    auto failed = [epoch](const QString& error) -> std::shared_ptr<const FetchResult> {
        auto result = std::make_shared<FetchResult>();
        result->sourceEpoch = epoch;
        result->error = error.toStdString();
        return result;
    };
    startJob(
        this, m_pool.get(),
        [this, source, request, epoch]() -> std::shared_ptr<const FetchResult> {
            auto result = std::make_shared<FetchResult>();
            result->sourceEpoch = epoch;
            // Each lane is handed to the GUI thread as soon as it is complete, so the first lanes are drawn while the
            // later ones are reduced. (`this` outlives the fetch: the destructor waits for the pool.)
            std::vector<std::shared_ptr<const LanePlotData>> plots(request.lanes.size());
            auto laneReady = [&](size_t li, const timeline::LaneFrame& lf) {
                auto one = std::make_shared<timeline::TimelineFrame>();
                one->generation = request.generation;
                one->fromNs = request.fromNs;
                one->toNs = request.toNs;
                one->pixels = request.pixels;
                one->lanes.push_back(lf);
                auto plot = std::make_shared<const LanePlotData>(buildLanePlot(request.lanes[li], lf));
                plots[li] = plot;
                QMetaObject::invokeMethod(
                    this,
                    [this, epoch, one = std::shared_ptr<const timeline::TimelineFrame>(std::move(one)), plot] {
                        showLane(epoch, one, *plot);
                    },
                    Qt::QueuedConnection);
            };
            auto frame = source->fetch(request, nullptr, laneReady);
            if (!frame) {
                result->cancelled = frame.error().code == ErrorCode::Cancelled;
                result->error = frame.error().toString();
                return result;
            }
            result->frame = *frame;
            result->plots = std::move(plots);
            return result;
        },
        failed, [this](const std::shared_ptr<const FetchResult>& result) { finishFetch(result); });
}

void TimelineWidget::showLane(uint64_t sourceEpoch, const std::shared_ptr<const timeline::TimelineFrame>& frame,
                              const LanePlotData& plot)
{
    if (sourceEpoch != m_sourceEpoch) return;
    for (auto* lane : m_laneWidgets)
        if (lane->spec().id == frame->lanes.front().laneId && frame->generation > lane->shownGeneration())
            lane->setPlotData(plot, frame, 0);
}

void TimelineWidget::finishFetch(const std::shared_ptr<const FetchResult>& result)
{
    m_inFlight = false;
    const bool current = result->sourceEpoch == m_sourceEpoch;
    if (current && !result->error.empty() && !result->cancelled)
        Q_EMIT fetchFailed(QString::fromStdString(result->error));
    // A frame of the current source is shown even when a newer request waits: its keys are absolute times, so it
    // is right, only coarser or narrower, and the newer one follows. Older frames than the one shown are dropped.
    if (current && result->frame && (!m_shown || result->frame->generation > m_shown->generation)) {
        m_shown = result->frame;
        m_shownResult = result;
        // Lanes already drawn from this fetch as they came are left alone.
        for (auto* lane : m_laneWidgets)
            for (size_t k = 0; k < result->frame->lanes.size(); ++k)
                if (result->frame->lanes[k].laneId == lane->spec().id && result->plots[k] &&
                    result->frame->generation > lane->shownGeneration())
                    lane->setPlotData(*result->plots[k], result->frame, k);
        Q_EMIT frameShown(result->frame->generation, result->frame->fetchMs);
    }
    if (m_pending || !current) startFetch();
}

QCustomPlot* TimelineWidget::lanePlot(const std::string& laneId) const
{
    if (laneId == "axis") return m_axis;
    for (auto* lane : m_laneWidgets)
        if (lane->spec().id == laneId) return lane;
    return nullptr;
}

QByteArray TimelineWidget::saveLayout() const
{
    QByteArray out;
    QDataStream s(&out, QIODevice::WriteOnly);
    s << kLayoutMagic << quint32(m_lanes.size());
    std::map<std::string, int> heights;
    const QList<int> sizes = m_splitter->sizes();
    for (size_t i = 0; i < m_laneWidgets.size() && static_cast<qsizetype>(i) < sizes.size(); ++i)
        heights[m_laneWidgets[i]->spec().id] = sizes[static_cast<qsizetype>(i)];
    for (size_t i = 0; i < m_lanes.size(); ++i) {
        const auto h = heights.find(m_lanes[i].id);
        s << QString::fromStdString(m_lanes[i].id) << bool(m_visible[i]) << qint32(h != heights.end() ? h->second : 0);
    }
    return out;
}

bool TimelineWidget::restoreLayout(const QByteArray& state)
{
    QDataStream s(state);
    quint32 magic = 0, n = 0;
    s >> magic >> n;
    if (magic != kLayoutMagic || s.status() != QDataStream::Ok) return false;
    std::vector<timeline::LaneSpec> ordered;
    std::vector<bool> visible;
    QList<int> sizes;
    std::vector<bool> used(m_lanes.size(), false);
    for (quint32 k = 0; k < n; ++k) {
        QString id;
        bool vis = false;
        qint32 h = 0;
        s >> id >> vis >> h;
        if (s.status() != QDataStream::Ok) return false;
        for (size_t i = 0; i < m_lanes.size(); ++i)
            if (!used[i] && m_lanes[i].id == id.toStdString()) {
                used[i] = true;
                ordered.push_back(m_lanes[i]);
                visible.push_back(vis);
                if (vis) sizes << (h > 0 ? h : kDefaultLaneHeight);
            }
    }
    // Lanes the saved layout does not know (a new metric in this run) keep their defaults, at the end.
    for (size_t i = 0; i < m_lanes.size(); ++i)
        if (!used[i]) {
            ordered.push_back(m_lanes[i]);
            visible.push_back(m_lanes[i].shownByDefault);
            if (m_lanes[i].shownByDefault) sizes << kDefaultLaneHeight;
        }
    m_lanes = std::move(ordered);
    m_visible = std::move(visible);
    rebuildLanes();
    m_splitter->setSizes(sizes);
    Q_EMIT lanesChanged();
    return true;
}

bool TimelineWidget::exportPng(const QString& path, double scale)
{
    const QSize size = exportSize();
    QImage image(static_cast<int>(size.width() * scale), static_cast<int>(size.height() * scale),
                 QImage::Format_ARGB32_Premultiplied);
    image.fill(palette().color(QPalette::Window));
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.save();
    painter.scale(scale, scale);
    paintExportHeader(painter, size.width());
    painter.restore();
    int y = kExportHeaderHeight;
    for (TimelineLane* lane : exportedLanes()) {
        const QPixmap pm = lane->toPixmap(lane->width(), lane->height(), scale);
        painter.drawPixmap(0, static_cast<int>(y * scale), pm);
        y += lane->height();
    }
    painter.end();
    return image.save(path, "PNG");
}

std::vector<TimelineLane*> TimelineWidget::exportedLanes() const
{
    std::vector<TimelineLane*> all{m_axis};
    all.insert(all.end(), m_laneWidgets.begin(), m_laneWidgets.end());
    return all;
}

void TimelineWidget::paintExportHeader(QPainter& painter, int width) const
{
    // What the figure shows, so it stands on its own in a document: the run, the window (and selection) in UTC,
    // and the node colours.
    const QPalette pal = palette();
    painter.fillRect(QRect(0, 0, width, kExportHeaderHeight), pal.color(QPalette::Window));
    painter.setPen(pal.color(QPalette::WindowText));
    QFont bold = font();
    bold.setBold(true);
    const int left = 8, lineHeight = kExportHeaderHeight / 2;
    const QString run = m_catalog ? QFileInfo(QString::fromStdString(m_catalog->path)).fileName() : tr("(no run)");
    auto utc = [](int64_t ns) {
        return QDateTime::fromMSecsSinceEpoch(ns / 1'000'000, QTimeZone::utc())
            .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    };
    const TimeRange range = m_controller->range();
    QString window = tr("%1 → %2 UTC (%3)").arg(utc(range.fromNs), utc(range.toNs), formatDuration(range.span()));
    if (const auto sel = m_controller->selection())
        window += tr(" · selection %1 → %2 (%3)").arg(utc(sel->fromNs), utc(sel->toNs), formatDuration(sel->span()));
    painter.setFont(bold);
    const int runWidth = QFontMetrics(bold).horizontalAdvance(run);
    painter.drawText(QRect(left, 0, width - 2 * left, lineHeight), Qt::AlignLeft | Qt::AlignVCenter, run);
    painter.setFont(font());
    painter.drawText(QRect(left + runWidth + 12, 0, width - runWidth - 12 - 2 * left, lineHeight),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     QFontMetrics(font()).elidedText(window, Qt::ElideRight, width - runWidth - 12 - 2 * left));
    if (!m_catalog) return;
    int x = left;
    const QFontMetrics fm(font());
    painter.drawText(QRect(x, lineHeight, width, lineHeight), Qt::AlignLeft | Qt::AlignVCenter, tr("Nodes:"));
    x += fm.horizontalAdvance(tr("Nodes:")) + 8;
    for (size_t i = 0; i < m_catalog->nodes.size() && x < width - 40; ++i) {
        const int box = fm.height() * 2 / 3;
        painter.fillRect(QRect(x, lineHeight + (lineHeight - box) / 2, box, box), nodeColor(static_cast<int>(i)));
        x += box + 4;
        const QString name = QString::fromStdString(m_catalog->nodes[i].name);
        painter.drawText(QRect(x, lineHeight, width - x, lineHeight), Qt::AlignLeft | Qt::AlignVCenter, name);
        x += fm.horizontalAdvance(name) + 12;
    }
}

QSize TimelineWidget::exportSize() const
{
    int h = kExportHeaderHeight + m_axis->height();
    for (auto* lane : m_laneWidgets)
        h += lane->height();
    return {m_axis->width(), h};
}

void TimelineWidget::paintExport(QCPPainter& painter)
{
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    paintExportHeader(painter, exportSize().width());
    int y = kExportHeaderHeight;
    for (TimelineLane* lane : exportedLanes()) {
        painter.save();
        painter.translate(0, y);
        lane->toPainter(&painter, lane->width(), lane->height());
        painter.restore();
        y += lane->height();
    }
}

bool TimelineWidget::exportPdf(const QString& path)
{
    const QSize size = exportSize();
    QPdfWriter writer(path);
    writer.setCreator(QStringLiteral("RunLens"));
    writer.setTitle(QStringLiteral("RunLens timeline"));
    writer.setResolution(96);
    writer.setPageSize(QPageSize(QSizeF(size.width() * 72.0 / 96.0, size.height() * 72.0 / 96.0), QPageSize::Point));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    QCPPainter painter(&writer);
    if (!painter.isActive()) return false;
    paintExport(painter);
    return painter.end();
}

bool TimelineWidget::exportSvg(const QString& path)
{
    const QSize size = exportSize();
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setResolution(96);
    svg.setTitle(QStringLiteral("RunLens timeline"));
    QCPPainter painter(&svg);
    if (!painter.isActive()) return false;
    paintExport(painter);
    return painter.end();
}

void TimelineWidget::keyPressEvent(QKeyEvent* event)
{
    const auto mods = event->modifiers();
    auto* c = m_controller;
    const bool alt = mods & Qt::AltModifier;
    switch (event->key()) {
    case Qt::Key_W:
    case Qt::Key_Up:
        c->zoom(0.7);
        break;
    case Qt::Key_S:
    case Qt::Key_Down:
        c->zoom(1 / 0.7);
        break;
    case Qt::Key_A:
        c->pan(-0.2);
        break;
    case Qt::Key_D:
        c->pan(0.2);
        break;
    case Qt::Key_Left:
        if (alt)
            c->back();
        else
            c->pan(-0.2);
        break;
    case Qt::Key_Right:
        if (alt)
            c->forward();
        else
            c->pan(0.2);
        break;
    case Qt::Key_Backspace:
        c->back();
        break;
    case Qt::Key_F:
    case Qt::Key_0:
        c->fit();
        break;
    case Qt::Key_Z:
        if (auto sel = c->selection()) c->setRange(*sel);
        break;
    case Qt::Key_Escape:
        c->setSelection(std::nullopt);
        break;
    case Qt::Key_PageUp:
    case Qt::Key_PageDown: // the lanes scroll, also when the timeline itself has the focus (Tab)
        static_cast<QScrollArea*>(m_scroll)->verticalScrollBar()->triggerAction(
            event->key() == Qt::Key_PageUp ? QAbstractSlider::SliderPageStepSub : QAbstractSlider::SliderPageStepAdd);
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

bool TimelineWidget::eventFilter(QObject* watched, QEvent* event)
{
    // A key a lane does not take goes up to the scroll area, which would scroll with the arrows; they zoom and pan
    // here (Page Up / Page Down still scroll the lanes).
    if (watched == m_scroll && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        switch (key->key()) {
        case Qt::Key_Left:
        case Qt::Key_Right:
        case Qt::Key_Up:
        case Qt::Key_Down:
            keyPressEvent(key);
            return true;
        default:
            break;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void TimelineWidget::paintEvent(QPaintEvent* event)
{
    QWidget::paintEvent(event);
    if (!m_focused) return;
    QPainter painter(this);
    QPen pen(palette().color(QPalette::Highlight));
    pen.setWidth(kFocusFrame);
    painter.setPen(pen);
    painter.drawRect(rect().adjusted(1, 1, -1, -1));
}

void TimelineWidget::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    requestFetch(); // the pixel count changed
}

} // namespace runlens::widgets
