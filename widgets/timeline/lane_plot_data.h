#pragma once

// A lane's frame turned into QCustomPlot data: curves with their pens (node colour, metric dash), envelopes
// as a filled min-max band (EnvelopeBand) with a median line, outliers on top. Built on the fetch worker (plain data,
// no QObject), so the GUI thread only hands the containers to its graphs. Shared with report rendering.

#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/timeline_source.h"
#include "widgets/common/qcp.h"
#include "widgets/common/value_format.h"
#include "widgets/timeline/envelope_band.h"

#include <QBrush>
#include <QPen>
#include <QSharedPointer>
#include <QString>
#include <memory>
#include <vector>

namespace runlens::widgets {

struct LaneCurve
{
    QSharedPointer<QCPGraphDataContainer> data;
    QPen pen;
    QString name; // legend entry; empty: not in the legend
};

struct LaneBand
{
    std::shared_ptr<const BandData> data; // an envelope's min-max band
    QColor fill;
};

struct LanePlotData
{
    std::vector<LaneBand> bands; // drawn first, under every curve
    std::vector<LaneCurve> curves;
    double lo = 0, hi = 1; // value axis range
    bool hasData = false;
};

LanePlotData buildLanePlot(const timeline::LaneSpec& lane, const timeline::LaneFrame& frame);

// The values under the cursor (epoch seconds; pixelSeconds: the width of one pixel): one text line per envelope and per
// shown series, the largest first, at most maxLines (then "… N more").
QString cursorReadout(const timeline::LaneSpec& lane, const timeline::LaneFrame& frame, double keySeconds,
                      double pixelSeconds, int maxLines = 8);

} // namespace runlens::widgets
