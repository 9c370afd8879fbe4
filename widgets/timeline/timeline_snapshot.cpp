#include "widgets/timeline/timeline_snapshot.h"

#include "widgets/timeline/lane_plot_data.h"
#include "widgets/timeline/timeline_lane.h"

namespace runlens::widgets {

QPalette paperPalette()
{
    QPalette p;
    p.setColor(QPalette::Window, Qt::white);
    p.setColor(QPalette::Base, Qt::white);
    p.setColor(QPalette::WindowText, QColor(0x20, 0x20, 0x20));
    p.setColor(QPalette::Text, QColor(0x20, 0x20, 0x20));
    p.setColor(QPalette::Mid, QColor(0xa0, 0xa0, 0xa0));
    p.setColor(QPalette::PlaceholderText, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Highlight, QColor(0x30, 0x8c, 0xc6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::ToolTipBase, QColor(0xff, 0xff, 0xdc));
    p.setColor(QPalette::ToolTipText, Qt::black);
    return p;
}

int timelineSnapshotHeight(size_t lanes, int laneHeight)
{
    return kSnapshotRulerHeight + static_cast<int>(lanes) * laneHeight;
}

void paintTimelineSnapshot(QCPPainter& painter, const QRect& area, const std::vector<timeline::LaneSpec>& lanes,
                           const std::shared_ptr<const timeline::TimelineFrame>& frame, TimeRange range,
                           const std::vector<TimelineSpan>& spans, int laneHeight)
{
    const QPalette paper = paperPalette();
    int y = area.top();
    const auto draw = [&](TimelineLane& lane, int height) {
        lane.setPalette(paper);
        lane.resize(area.width(), height);
        lane.setTimeRange(range);
        lane.setSpans(spans);
        painter.save();
        painter.translate(area.left(), y);
        lane.toPainter(&painter, area.width(), height);
        painter.restore();
        y += height;
    };
    TimelineLane ruler(nullptr, TimelineLane::Kind::Axis, timeline::LaneSpec{"axis", "Time", "", {}, true});
    draw(ruler, kSnapshotRulerHeight);
    for (const timeline::LaneSpec& spec : lanes) {
        TimelineLane lane(nullptr, TimelineLane::Kind::Data, spec);
        lane.setPalette(paper);
        lane.resize(area.width(), laneHeight);
        size_t index = 0;
        const timeline::LaneFrame* part = nullptr;
        if (frame)
            for (size_t k = 0; k < frame->lanes.size(); ++k)
                if (frame->lanes[k].laneId == spec.id) {
                    part = &frame->lanes[k];
                    index = k;
                }
        if (part)
            lane.setPlotData(buildLanePlot(spec, *part), frame, index);
        else
            lane.setPlotData(LanePlotData{}, nullptr, 0);
        if (lane.legend) {
            QFont f = lane.legend->font();
            f.setPointSizeF(f.pointSizeF() * 0.8);
            lane.legend->setFont(f);
            lane.legend->setIconSize(12, 6);
        }
        lane.fitLegend(area.width());
        draw(lane, laneHeight);
    }
    // (A figure is narrower than a window: smaller legends, cut to what fits beside the title, keep titles whole.)
}

} // namespace runlens::widgets
