#pragma once

// The filled min-max band of an envelope, drawn for speed: when there are about as many keys as pixel columns
// (a zoomed-out lane), one vertical stroke per pixel column from the column's lowest to its highest value; when
// keys are sparser, a filled polygon per run without gaps. The two look the same at screen resolution, and the
// strokes cost a fraction of a few-thousand-vertex polygon fill. Vector output (PDF) always gets polygons.

#include "widgets/common/qcp.h"

#include <QColor>
#include <memory>
#include <vector>

namespace runlens::widgets {

struct BandData
{
    std::vector<double> keys;   // ascending, epoch seconds
    std::vector<double> lo, hi; // NaN: no data (a gap)
};

class EnvelopeBand : public QCPAbstractPlottable
{
public:
    EnvelopeBand(QCPAxis* keyAxis, QCPAxis* valueAxis, std::shared_ptr<const BandData> data, const QColor& fill);

    double selectTest(const QPointF& pos, bool onlySelectable, QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange& inKeyRange = QCPRange()) const override;

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

private:
    void drawColumns(QCPPainter* painter, double left, double right) const;
    void drawPolygons(QCPPainter* painter) const;

    std::shared_ptr<const BandData> m_data;
    QColor m_fill;
};

} // namespace runlens::widgets
