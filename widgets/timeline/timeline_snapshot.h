#pragma once

// A timeline figure for reports and exports: the ruler and the given lanes over a range, drawn by the same lanes
// the window shows (TimelineLane, without an owner), from a frame fetched beforehand. Light colours whatever the
// desktop theme, so a report reads the same everywhere.

#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/timeline_source.h"
#include "widgets/timeline/timeline_controller.h"
#include "widgets/timeline/timeline_widget.h"

#include <QPalette>
#include <QRect>
#include <memory>
#include <vector>

class QCPPainter;

namespace runlens::widgets {

// White paper, black ink: the palette of report figures.
QPalette paperPalette();

constexpr int kSnapshotRulerHeight = 40;

// The height of a figure of `lanes` lanes, each laneHeight tall, under the ruler.
int timelineSnapshotHeight(size_t lanes, int laneHeight);

// Draws the ruler and each lane of `lanes` (with its part of `frame`; a lane the frame lacks says "no data")
// at area.topLeft(), area.width() wide, each lane laneHeight tall, spans shaded.
void paintTimelineSnapshot(QCPPainter& painter, const QRect& area, const std::vector<timeline::LaneSpec>& lanes,
                           const std::shared_ptr<const timeline::TimelineFrame>& frame, TimeRange range,
                           const std::vector<TimelineSpan>& spans, int laneHeight);

} // namespace runlens::widgets
