#include "widgets/timeline/envelope_band.h"

#include <algorithm>
#include <cmath>

namespace runlens::widgets {

namespace {
constexpr long kBridgePx = 4; // keys at most this far apart are joined, as a polygon would join them
} // namespace

EnvelopeBand::EnvelopeBand(QCPAxis* keyAxis, QCPAxis* valueAxis, std::shared_ptr<const BandData> data,
                           const QColor& fill)
    : QCPAbstractPlottable(keyAxis, valueAxis), m_data(std::move(data)), m_fill(fill)
{
    setSelectable(QCP::stNone);
    setAntialiased(false);
    setAntialiasedFill(false);
    setPen(Qt::NoPen);
    setBrush(fill);
}

double EnvelopeBand::selectTest(const QPointF&, bool, QVariant*) const
{
    return -1; // the band is not selectable; the cursor readout reports it
}

QCPRange EnvelopeBand::getKeyRange(bool& foundRange, QCP::SignDomain) const
{
    foundRange = m_data && !m_data->keys.empty();
    return foundRange ? QCPRange(m_data->keys.front(), m_data->keys.back()) : QCPRange();
}

QCPRange EnvelopeBand::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const
{
    double lo = INFINITY, hi = -INFINITY;
    if (m_data)
        for (size_t i = 0; i < m_data->keys.size(); ++i) {
            if (std::isfinite(m_data->lo[i])) lo = std::min(lo, m_data->lo[i]);
            if (std::isfinite(m_data->hi[i])) hi = std::max(hi, m_data->hi[i]);
        }
    foundRange = lo <= hi;
    return foundRange ? QCPRange(lo, hi) : QCPRange();
}

void EnvelopeBand::draw(QCPPainter* painter)
{
    if (!m_data || m_data->keys.empty() || !mKeyAxis || !mValueAxis) return;
    const QCPRange range = mKeyAxis->range();
    const double left = mKeyAxis->coordToPixel(range.lower), right = mKeyAxis->coordToPixel(range.upper);
    const double columns = std::abs(right - left);
    const bool vector = painter->modes().testFlag(QCPPainter::pmVectorized);
    // Dense: at least one key per two pixel columns on average (keys nearer than kBridgePx are joined).
    if (!vector && static_cast<double>(m_data->keys.size()) * 2 >= columns)
        drawColumns(painter, left, right);
    else
        drawPolygons(painter);
}

void EnvelopeBand::drawColumns(QCPPainter* painter, double left, double right) const
{
    const BandData& d = *m_data;
    const int x0 = static_cast<int>(std::floor(std::min(left, right)));
    const int width = static_cast<int>(std::ceil(std::abs(right - left))) + 1;
    // Per pixel column the lowest and highest pixel any key in it reaches (pixel y grows downwards). Columns
    // between two neighbouring keys a few pixels apart take both keys' span, as the polygon would cover them;
    // a gap (a NaN key) is never bridged.
    std::vector<float> top(static_cast<size_t>(width), INFINITY), bottom(static_cast<size_t>(width), -INFINITY);
    auto cover = [&](long col, float t, float b) {
        if (col < 0 || col >= width) return;
        auto& ct = top[static_cast<size_t>(col)];
        auto& cb = bottom[static_cast<size_t>(col)];
        ct = std::min(ct, t);
        cb = std::max(cb, b);
    };
    bool prevValid = false;
    long prevCol = 0;
    float prevTop = 0, prevBottom = 0;
    for (size_t i = 0; i < d.keys.size(); ++i) {
        if (!std::isfinite(d.lo[i]) || !std::isfinite(d.hi[i])) {
            prevValid = false;
            continue;
        }
        const long col = std::lround(mKeyAxis->coordToPixel(d.keys[i])) - x0;
        const double ya = mValueAxis->coordToPixel(d.lo[i]), yb = mValueAxis->coordToPixel(d.hi[i]);
        const auto t = static_cast<float>(std::min(ya, yb)), b = static_cast<float>(std::max(ya, yb));
        cover(col, t, b);
        if (prevValid && col - prevCol > 1 && col - prevCol <= kBridgePx)
            for (long c = prevCol + 1; c < col; ++c)
                cover(c, std::min(t, prevTop), std::max(b, prevBottom));
        prevValid = true;
        prevCol = col;
        prevTop = t;
        prevBottom = b;
    }
    QVector<QLine> strokes;
    strokes.reserve(width);
    for (int c = 0; c < width; ++c) {
        const float t = top[static_cast<size_t>(c)], b = bottom[static_cast<size_t>(c)];
        if (t > b) continue;
        strokes.push_back(QLine(x0 + c, static_cast<int>(std::lround(t)), x0 + c, static_cast<int>(std::lround(b))));
    }
    QPen pen(m_fill, 1);
    pen.setCosmetic(true);
    painter->setPen(pen);
    painter->setBrush(Qt::NoBrush);
    painter->setAntialiasing(false);
    painter->drawLines(strokes);
}

void EnvelopeBand::drawPolygons(QCPPainter* painter) const
{
    const BandData& d = *m_data;
    painter->setPen(Qt::NoPen);
    painter->setBrush(m_fill);
    applyFillAntialiasingHint(painter);
    QPolygonF polygon;
    auto flush = [&](size_t from, size_t to) { // keys [from, to) all finite
        if (to <= from) return;
        polygon.clear();
        for (size_t i = from; i < to; ++i)
            polygon << QPointF(mKeyAxis->coordToPixel(d.keys[i]), mValueAxis->coordToPixel(d.hi[i]));
        for (size_t i = to; i-- > from;)
            polygon << QPointF(mKeyAxis->coordToPixel(d.keys[i]), mValueAxis->coordToPixel(d.lo[i]));
        if (to - from == 1) { // a lone key: a one-pixel-wide bar, so it is not lost
            const QPointF a = polygon[0], b = polygon[1];
            polygon = QPolygonF({a - QPointF(0.5, 0), a + QPointF(0.5, 0), b + QPointF(0.5, 0), b - QPointF(0.5, 0)});
        }
        painter->drawPolygon(polygon);
    };
    size_t runStart = 0;
    for (size_t i = 0; i < d.keys.size(); ++i)
        if (!std::isfinite(d.lo[i]) || !std::isfinite(d.hi[i])) {
            flush(runStart, i);
            runStart = i + 1;
        }
    flush(runStart, d.keys.size());
}

void EnvelopeBand::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const
{
    painter->setPen(Qt::NoPen);
    painter->setBrush(m_fill);
    painter->drawRect(rect);
}

} // namespace runlens::widgets
