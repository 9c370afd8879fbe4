#include "widgets/timeline/lane_plot_data.h"

#include "widgets/common/node_colors.h"
#include "widgets/common/value_format.h"

#include <algorithm>
#include <cmath>

namespace runlens::widgets {

namespace {

int metricIndex(const timeline::LaneSpec& lane, const std::string& metric)
{
    for (size_t i = 0; i < lane.metrics.size(); ++i)
        if (lane.metrics[i].metric == metric) return static_cast<int>(i);
    return 0;
}

QString metricLabel(const timeline::LaneSpec& lane, const std::string& metric)
{
    for (const auto& m : lane.metrics)
        if (m.metric == metric) return QString::fromStdString(m.label.empty() ? m.metric : m.label);
    return QString::fromStdString(metric);
}

QSharedPointer<QCPGraphDataContainer> container(const std::vector<double>& keys, const std::vector<double>& values)
{
    auto data = QSharedPointer<QCPGraphDataContainer>::create();
    QVector<QCPGraphData> points;
    const size_t n = std::min(keys.size(), values.size());
    points.reserve(static_cast<qsizetype>(n));
    for (size_t i = 0; i < n; ++i)
        points.push_back(QCPGraphData(keys[i], values[i]));
    data->set(points, true);
    return data;
}

void widen(double& lo, double& hi, const std::vector<double>& values)
{
    for (double v : values)
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
}

// Index of the last key <= t (or the first), or -1 for no keys.
long keyIndex(const std::vector<double>& keys, double t)
{
    if (keys.empty()) return -1;
    auto it = std::upper_bound(keys.begin(), keys.end(), t);
    if (it == keys.begin()) return 0;
    return static_cast<long>(it - keys.begin()) - 1;
}

// How many series an envelope spans: "32", or "64 series of 32 devices" when devices have several sources.
QString membersText(const timeline::TimelineEnvelope& env)
{
    if (env.devices <= 0 || env.devices == env.members) return QString::number(env.members);
    return QStringLiteral("%1 series of %2 devices").arg(env.members).arg(env.devices);
}

// Why an envelope member is drawn on its own: "+25 W, 6.6 σ" (its lasting deviation from the members' median).
QString outlierReason(const timeline::TimelineLine& line, const std::string& unit)
{
    const QString sign = line.outlierDeviation >= 0 ? QStringLiteral("+") : QString();
    return QStringLiteral("%1%2, %3 σ")
        .arg(sign, formatValue(line.outlierDeviation, unit))
        .arg(std::abs(line.outlierSigma), 0, 'f', 1);
}

} // namespace

LanePlotData buildLanePlot(const timeline::LaneSpec& lane, const timeline::LaneFrame& frame)
{
    LanePlotData out;
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& env : frame.envelopes) {
        const int m = metricIndex(lane, env.metric);
        QColor c = metricColor(m);
        QColor fill = c;
        fill.setAlpha(80);
        out.bands.push_back({std::make_shared<const BandData>(BandData{env.keys, env.lo, env.hi}), fill});
        QPen medianPen(c.darker(130), 1.0, metricPenStyle(m));
        out.curves.push_back(
            {container(env.keys, env.median), medianPen,
             QStringLiteral("%1 (%2: median, range)").arg(metricLabel(lane, env.metric), membersText(env))});
        widen(lo, hi, env.lo);
        widen(lo, hi, env.hi);
    }
    // Series lines take their node's colour; the legend shows each metric's dash in a neutral tone (the node key
    // is above the lanes), and each outlier by name.
    std::vector<bool> named(lane.metrics.size() + 1, false);
    int outliersNamed = 0;
    for (const auto& line : frame.lines) {
        const int m = metricIndex(lane, line.metric);
        QPen pen(deviceColor(line.nodeIndex, line.deviceOrdinal), 1.0, metricPenStyle(m));
        QString name;
        // The first outliers are named in the legend (the cursor readout names every one).
        if (line.outlier && outliersNamed++ < 3)
            name = QStringLiteral("⚠ %1 %2").arg(QString::fromStdString(line.label), outlierReason(line, lane.unit));
        out.curves.push_back({container(line.keys, line.values), pen, name});
        widen(lo, hi, line.values);
        if (!line.outlier && !named[static_cast<size_t>(m)]) {
            named[static_cast<size_t>(m)] = true;
            out.curves.push_back({QSharedPointer<QCPGraphDataContainer>::create(),
                                  QPen(QColor(120, 120, 120), 1.4, metricPenStyle(m)), metricLabel(lane, line.metric)});
        }
    }
    // Every pen is one pixel wide: thin cosmetic pens take the raster engine's fast line path; a wider pen would be
    // stroked into polygons, which costs a hundred times more on a min/max line of a few thousand vertical segments.
    for (LaneCurve& c : out.curves)
        c.pen.setCosmetic(true);
    out.hasData = std::isfinite(lo) && std::isfinite(hi);
    if (!out.hasData) {
        lo = 0;
        hi = 1;
    }
    if (lane.unit == "%") {
        out.lo = std::min(0.0, lo);
        out.hi = std::max(100.0, hi) * 1.04;
    } else {
        out.lo = std::min(0.0, lo);
        const double span = hi - out.lo;
        out.hi = hi + (span > 0 ? span * 0.08 : std::max(1.0, std::abs(hi) * 0.1));
    }
    return out;
}

QString cursorReadout(const timeline::LaneSpec& lane, const timeline::LaneFrame& frame, double keySeconds,
                      double pixelSeconds, int maxLines)
{
    struct Row
    {
        double value;
        QString text;
    };
    std::vector<Row> rows;
    for (const auto& env : frame.envelopes) {
        const long i = keyIndex(env.keys, keySeconds + pixelSeconds / 2);
        if (i < 0) continue;
        const auto u = static_cast<size_t>(i);
        rows.push_back({INFINITY, QStringLiteral("%1 (%2): median %3, min %4, max %5")
                                      .arg(metricLabel(lane, env.metric), membersText(env))
                                      .arg(formatValue(env.median[u], lane.unit), formatValue(env.lo[u], lane.unit),
                                           formatValue(env.hi[u], lane.unit))});
    }
    for (const auto& line : frame.lines) {
        // The values within a pixel of the cursor (a bucket's min and max), else the last value before it.
        const auto first = std::lower_bound(line.keys.begin(), line.keys.end(), keySeconds - pixelSeconds);
        double mn = INFINITY, mx = -INFINITY;
        for (auto it = first; it != line.keys.end() && *it <= keySeconds + pixelSeconds; ++it) {
            const double v = line.values[static_cast<size_t>(it - line.keys.begin())];
            if (std::isfinite(v)) {
                mn = std::min(mn, v);
                mx = std::max(mx, v);
            }
        }
        if (!std::isfinite(mn)) {
            const long i = keyIndex(line.keys, keySeconds);
            if (i < 0 || line.keys[static_cast<size_t>(i)] > keySeconds) continue;
            mn = mx = line.values[static_cast<size_t>(i)];
        }
        QString text = !std::isfinite(mn) ? QStringLiteral("no data")
                       : mn == mx         ? formatValue(mn, lane.unit)
                                  : QStringLiteral("%1–%2").arg(formatValue(mn, lane.unit), formatValue(mx, lane.unit));
        if (line.outlier) text += QStringLiteral(" (%1)").arg(outlierReason(line, lane.unit));
        rows.push_back({std::isfinite(mx) ? mx : -INFINITY, QStringLiteral("%1%2: %3")
                                                                .arg(line.outlier ? QStringLiteral("⚠ ") : QString(),
                                                                     QString::fromStdString(line.label), text)});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.value > b.value; });
    QStringList out;
    for (size_t i = 0; i < rows.size() && static_cast<int>(i) < maxLines; ++i)
        out << rows[i].text;
    if (static_cast<int>(rows.size()) > maxLines)
        out << QStringLiteral("… %1 more").arg(rows.size() - static_cast<size_t>(maxLines));
    return out.join(QLatin1Char('\n'));
}

} // namespace runlens::widgets
