#pragma once

// The report's own figures: the goodput waterfall (where the wall time went, step by step down to compute), the
// flame graph of a finding's episode (the flame painter, focused on the evidence frame, its far ancestors
// dropped so the figure stays short) and the node colour key above timeline figures.

#include "analysis/report/report_model.h"

#include <QRect>
#include <QString>
#include <vector>

class QPainter;

namespace runlens::widgets {

// The waterfall over `budgets` (their seconds added up): wall time, minus each loss, down to compute.
constexpr int kWaterfallHeight = 200;
void paintWaterfall(QPainter& painter, const QRect& area, const std::vector<analysis::TimeBudget>& budgets);

// A flame figure `width` wide: its height (at most maxRows rows) and its drawing. The caption says what it shows.
int flameFigureHeight(const analysis::ReportFlame& flame, int width, int maxRows = 24);
void paintFlameFigure(QPainter& painter, const QRect& area, const analysis::ReportFlame& flame, int maxRows = 24);
QString flameFigureCaption(const analysis::ReportFlame& flame);

// "■ node0  ■ node1 …" in the nodes' colours (their index in the run catalogue).
constexpr int kNodeKeyHeight = 16;
void paintNodeKey(QPainter& painter, const QRect& area, const analysis::ReportModel& model,
                  const std::vector<std::string>& nodes);

} // namespace runlens::widgets
