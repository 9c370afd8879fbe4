#pragma once

// The multi-lane timeline: one QCustomPlot per lane, stacked, all on the controller's time axis. Data comes
// from a TimelineSource run on a worker (one fetch in flight, the newest request kept, stale frames dropped by
// generation); the GUI thread only builds plottables from the frame and replots, one lane per event.
//
// Mouse: wheel zooms at the cursor, drag pans, Shift-drag (or drag on the time axis) selects a window,
// double-click fits. Keys: W/S zoom, A/D and Left/Right pan, Up/Down zoom, Backspace/Alt+Left back,
// Alt+Right forward, F or 0 fits, Esc clears the selection.

#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/timeline_source.h"
#include "widgets/timeline/timeline_controller.h"

#include <QColor>
#include <QWidget>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QCPPainter;
class QCustomPlot;
class QLabel;
class QPainter;
class QSplitter;
class QThreadPool;

namespace runlens::widgets {

class TimelineLane;
struct LanePlotData;

// A shaded interval across all lanes: a finding's episode or an import gap.
struct TimelineSpan
{
    TimeRange range;
    QString label;
    QColor color;
};

class TimelineWidget : public QWidget
{
    Q_OBJECT
public:
    explicit TimelineWidget(TimelineController* controller, QWidget* parent = nullptr);
    ~TimelineWidget() override;

    // The source is used on the widget's worker only. Setting it (or null) drops what is shown.
    void setSource(std::shared_ptr<timeline::TimelineSource> source,
                   std::shared_ptr<const timeline::RunCatalog> catalog);

    // The lanes, in display order; hidden lanes are kept (for the run browser and saved layouts).
    void setLanes(const std::vector<timeline::LaneSpec>& lanes);
    std::vector<timeline::LaneSpec> lanes() const;
    std::vector<std::string> visibleLaneIds() const;
    void setLaneVisible(const std::string& laneId, bool visible);
    void moveLane(const std::string& laneId, int delta); // -1 up, +1 down
    void setHiddenSeries(std::vector<int64_t> seriesIds);
    void setSpans(std::vector<TimelineSpan> spans);
    const std::vector<TimelineSpan>& spans() const { return m_spans; }
    // Findings' spans shaded across the lanes (on by default); off, they stay marked on the time ruler only.
    void setSpanShading(bool shade);
    bool spanShading() const { return m_shadeSpans; }

    // Saved layout: lane order, visibility and heights.
    QByteArray saveLayout() const;
    bool restoreLayout(const QByteArray& state);

    // Exports what is visible (every visible lane, stacked): PNG as on screen, PDF and SVG as vectors.
    // Exports: a header (the run's file, the window and selection in UTC, the node key), the time axis and the
    // visible lanes, stacked.
    static constexpr int kExportHeaderHeight = 40;
    bool exportPng(const QString& path, double scale = 2.0);
    bool exportPdf(const QString& path);
    bool exportSvg(const QString& path);

    // For tests and benchmarks: the lane plots, the last frame shown, and whether a fetch is pending.
    QCustomPlot* lanePlot(const std::string& laneId) const;
    std::shared_ptr<const timeline::TimelineFrame> shownFrame() const { return m_shown; }
    bool busy() const;

Q_SIGNALS:
    void frameShown(quint64 generation, double fetchMs);
    void fetchFailed(const QString& message);
    void lanesChanged(); // order, visibility or set

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    // The arrow keys, pressed in a lane, reach keyPressEvent instead of scrolling the lane area.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    friend class TimelineLane;
    struct FetchResult;
    void requestFetch();
    void startFetch();
    void finishFetch(const std::shared_ptr<const FetchResult>& result);
    void showLane(uint64_t sourceEpoch, const std::shared_ptr<const timeline::TimelineFrame>& frame,
                  const LanePlotData& plot);
    void rebuildLanes();
    void applyRange(TimeRange range);
    void previewSelection(std::optional<TimeRange> range);
    int plotPixels() const;
    QSize exportSize() const;                                   // a header, the axis and the visible lanes, stacked
    std::vector<TimelineLane*> exportedLanes() const;           // the axis, then the visible lanes
    void paintExportHeader(QPainter& painter, int width) const; // run, window, node key
    void paintExport(QCPPainter& painter);                      // them, as vectors

    TimelineController* m_controller;
    std::shared_ptr<timeline::TimelineSource> m_source;
    std::shared_ptr<const timeline::RunCatalog> m_catalog;
    uint64_t m_sourceEpoch = 0; // bumped by setSource: results of an older source are dropped
    std::vector<timeline::LaneSpec> m_lanes;
    std::vector<bool> m_visible;
    std::vector<int64_t> m_hiddenSeries;
    std::vector<TimelineSpan> m_spans;
    bool m_shadeSpans = true;
    QMetaObject::Connection m_focusWatch; // the application's focus changes (the focus frame)
    TimelineLane* m_axis = nullptr;
    QLabel* m_nodeKey = nullptr;
    std::vector<TimelineLane*> m_laneWidgets; // visible lanes, display order
    QSplitter* m_splitter = nullptr;
    QWidget* m_scroll = nullptr;
    bool m_focused = false; // keyboard focus is in the timeline: a frame around it says so
    std::unique_ptr<QThreadPool> m_pool;
    uint64_t m_generation = 0;
    bool m_inFlight = false;
    bool m_pending = false;
    std::shared_ptr<const timeline::TimelineFrame> m_shown;
    std::shared_ptr<const FetchResult> m_shownResult;
};

} // namespace runlens::widgets
