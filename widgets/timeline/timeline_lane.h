#pragma once

// One lane of the timeline (or, for Kind::Axis, the time ruler on top): a QCustomPlot whose time axis follows
// the controller. Mouse gestures go to the owning TimelineWidget's controller; the lane only draws. Without an
// owner (report figures, timeline_snapshot.h) it takes no gestures.

#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/timeline_source.h"
#include "widgets/common/qcp.h"
#include "widgets/timeline/lane_plot_data.h"
#include "widgets/timeline/timeline_controller.h"

#include <QElapsedTimer>
#include <memory>
#include <optional>
#include <vector>

namespace runlens::widgets {

class TimelineWidget;
struct TimelineSpan;

class TimelineLane : public QCustomPlot
{
    Q_OBJECT
public:
    enum class Kind
    {
        Data,
        Axis
    };
    TimelineLane(TimelineWidget* owner, Kind kind, timeline::LaneSpec spec);

    const timeline::LaneSpec& spec() const { return m_spec; }
    Kind kind() const { return m_kind; }
    void setTimeRange(TimeRange range);
    // The lane's part of a frame (null: no data yet). Keeps the frame for the cursor readout.
    void setPlotData(const LanePlotData& plot, std::shared_ptr<const timeline::TimelineFrame> frame, size_t laneIndex);
    uint64_t shownGeneration() const { return m_frame ? m_frame->generation : 0; } // of the data drawn
    void setSelection(std::optional<TimeRange> selection);
    void setCursorTime(std::optional<int64_t> ns);
    void setSpans(const std::vector<TimelineSpan>& spans);
    void applyPalette();
    int plotWidth() const;
    QString cursorText() const;                         // what the readout shows (for tests)
    QRectF readoutRect() const;                         // where it shows, in pixels
    size_t spanCount() const { return m_spans.size(); } // findings' spans shaded in this lane
    // Title and legend side by side in `width`: legend entries are dropped from the end into a "+N" entry until
    // they fit beside the title (the curves stay), then the title is elided; hovering the header shows both in
    // full. Called on every resize and new data; a figure calls it with its own width. Returns the entries dropped.
    int fitLegend(int width);
    QString headerToolTip() const { return m_headerTip; } // empty when nothing is cut
    QString titleText() const;                            // as shown (elided when cut)
    // A lane never asks for more width than it is given: a long legend is cut, the time axis stays aligned.
    QSize minimumSizeHint() const override { return {120, minimumHeight()}; }
    QSize sizeHint() const override { return {400, 130}; }

protected:
    bool event(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void changeEvent(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    int64_t nsAt(double x) const;
    QCPItemRect* makeBand(const QColor& color, QCPLayer* layer);
    void placeBand(QCPItemRect* rect, TimeRange range);
    void updateReadout();

    TimelineWidget* m_owner;
    Kind m_kind;
    timeline::LaneSpec m_spec;
    std::shared_ptr<const timeline::TimelineFrame> m_frame;
    size_t m_laneIndex = 0;
    QCPTextElement* m_title = nullptr;
    QString m_headerTip;
    QCPItemText* m_note = nullptr;
    QCPItemStraightLine* m_cursorLine = nullptr;
    QCPItemText* m_readout = nullptr;
    QCPItemRect* m_selection = nullptr;
    QCPItemText* m_selectionLabel = nullptr;
    std::vector<QCPItemRect*> m_spans;
    std::optional<int64_t> m_cursorNs;
    std::optional<TimeRange> m_selectionRange;

    enum class Drag
    {
        None,
        Pan,
        Select
    };
    Drag m_drag = Drag::None;
    double m_pressX = 0;
    TimeRange m_pressRange;
    int64_t m_pressNs = 0;
    QElapsedTimer m_lastWheel;
    bool m_stale = false; // new data arrived while scrolled out of view: replot when shown
};

} // namespace runlens::widgets
