#pragma once

// The colour of a node in every view (timeline lines, flame graph filters, findings, reports): a fixed palette
// indexed by the node's position in the run, so node 3 is the same colour on screen and in a report.
// Devices of one node are told apart by a small lightness step.

#include <QColor>

namespace runlens::widgets {

QColor nodeColor(int nodeIndex);
QColor deviceColor(int nodeIndex, int deviceOrdinal);
// Colours for the envelopes of the first, second, ... metric of a lane (neutral of any node).
QColor metricColor(int metricIndex);
Qt::PenStyle metricPenStyle(int metricIndex);

} // namespace runlens::widgets
