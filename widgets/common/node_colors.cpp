#include "widgets/common/node_colors.h"

#include <array>

namespace runlens::widgets {

namespace {
// Colour-blind aware qualitative palette (Tableau 10 order), then a second turn of darker tones.
constexpr std::array<QRgb, 10> kNodes = {0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0xb07aa1,
                                         0x76b7b2, 0xedc948, 0xff9da7, 0x9c755f, 0xbab0ac};
constexpr int kDeviceLightnessStep = 22; // percent per step away from the node's colour
constexpr std::array<QRgb, 4> kMetrics = {0x3b6ea8, 0xd9822b, 0x2a9d8f, 0x8e6c8a};
} // namespace

QColor nodeColor(int nodeIndex)
{
    if (nodeIndex < 0) return QColor(0x80, 0x80, 0x80);
    const QColor base = QColor::fromRgb(kNodes[static_cast<size_t>(nodeIndex) % kNodes.size()]);
    const int turn = nodeIndex / static_cast<int>(kNodes.size());
    return turn == 0 ? base : base.darker(100 + 35 * turn);
}

QColor deviceColor(int nodeIndex, int deviceOrdinal)
{
    const QColor base = nodeColor(nodeIndex);
    if (deviceOrdinal <= 0) return base;
    // Alternate lighter and darker in steps a reader can tell apart (GPUs 0 and 1 of a node must not look alike),
    // staying in the node's hue; past 8 devices the steps repeat with a small offset.
    const int rank = deviceOrdinal % 8;
    const int step = (rank + 1) / 2 * kDeviceLightnessStep + deviceOrdinal / 8 * 5;
    return rank % 2 ? base.lighter(100 + step) : base.darker(100 + step);
}

QColor metricColor(int metricIndex)
{
    return QColor::fromRgb(kMetrics[static_cast<size_t>(metricIndex < 0 ? 0 : metricIndex) % kMetrics.size()]);
}

Qt::PenStyle metricPenStyle(int metricIndex)
{
    switch (metricIndex % 4) {
    case 0:
        return Qt::SolidLine;
    case 1:
        return Qt::DashLine;
    case 2:
        return Qt::DotLine;
    default:
        return Qt::DashDotLine;
    }
}

} // namespace runlens::widgets
