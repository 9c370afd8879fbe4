#include "widgets/flame/flame_painter.h"

#include <QFontMetrics>
#include <QGuiApplication>
#include <algorithm>
#include <fmt/format.h>

namespace runlens::widgets {
namespace {

using analysis::FlameLayout;
using analysis::FlameRect;
using analysis::FlameTree;
using analysis::Phase;

constexpr int kMargin = 8;
constexpr int kLegendHeight = 22;

uint32_t fnv1a(std::string_view s)
{
    uint32_t h = 2166136261u;
    for (const char c : s) {
        h ^= static_cast<uint8_t>(c);
        h *= 16777619u;
    }
    return h;
}

// The package of a frame: the first folder of its file ("torch/nn/modules/linear.py" → "torch"), else the
// module's file name, else the name's namespace or class prefix.
std::string_view packageOf(const FlameTree& t, int32_t node)
{
    std::string_view file = t.file(node);
    while (file.starts_with("./"))
        file.remove_prefix(2);
    if (const size_t lib = file.rfind("site-packages/"); lib != std::string_view::npos) file.remove_prefix(lib + 14);
    if (!file.empty()) return file.substr(0, file.find('/'));
    std::string_view module = t.module(node);
    if (!module.empty()) return module.substr(module.rfind('/') + 1);
    std::string_view name = t.name(node);
    if (const size_t sep = name.find("::"); sep != std::string_view::npos) return name.substr(0, sep);
    return name.substr(0, name.find('.'));
}

// Ancestors of the focus: the block's colour mixed with white (lighter() would turn light greys white).
QColor towardsWhite(const QColor& c, double amount)
{
    auto mix = [amount](int v) { return static_cast<int>(v + (255 - v) * amount); };
    return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}

// Labels elided to a width. Measuring text shapes it, the costliest part of drawing thousands of blocks: the
// narrowest useful label ("W..") and the widest character are measured once per drawing, and a label certainly
// narrower than its block is drawn without being measured.
class LabelFitter
{
public:
    explicit LabelFitter(const QFontMetrics& fm)
        : m_fm(fm), m_narrowest(fm.horizontalAdvance(QStringLiteral("W.."))), m_widestChar(fm.maxWidth())
    {
    }
    QString operator()(const QString& text, int width) const
    {
        if (width < m_narrowest) return {};
        if (static_cast<qint64>(text.size()) * m_widestChar <= width) return text;
        return m_fm.elidedText(text, Qt::ElideRight, width);
    }

private:
    const QFontMetrics& m_fm;
    int m_narrowest;
    int m_widestChar;
};

QString blockText(const FlameTree& tree, const FlameRect& r)
{
    if (r.node < 0) return QStringLiteral("%1 more").arg(r.merged);
    return QString::fromStdString(std::string(tree.name(r.node)));
}

QString percent(double part, double whole)
{
    return QString::number(whole > 0 ? 100.0 * part / whole : 0.0, 'f', 2) + QStringLiteral(" %");
}

QString diffTooltip(const analysis::DiffTree& diff, const FlameRect& r)
{
    if (r.node < 0) return QStringLiteral("%1 frames narrower than a pixel").arg(r.merged);
    const analysis::DiffNode& n = diff.node(r.node);
    QString text = QString::fromStdString(diff.label(r.node));
    text += QStringLiteral("\nA: %1 samples, %2 of total").arg(n.samplesA).arg(percent(n.shareA, 1.0));
    text += QStringLiteral("\nB: %1 samples, %2 of total").arg(n.samplesB).arg(percent(n.shareB, 1.0));
    const double d = 100.0 * n.delta();
    text += QStringLiteral("\nchange: %1%2 points of total")
                .arg(d >= 0 ? QStringLiteral("+") : QString())
                .arg(d, 0, 'f', 2);
    if (n.onlyInA()) text += QStringLiteral(" (only in A)");
    if (n.onlyInB()) text += QStringLiteral(" (only in B)");
    return text;
}

QString tooltip(const FlameTree& tree, const FlameRect& r, int32_t focus)
{
    const double total = static_cast<double>(std::max<int64_t>(tree.totalSamples(), 1));
    if (r.node < 0)
        return QStringLiteral("%1 frames narrower than a pixel, together %2 samples (%3 of total)")
            .arg(r.merged)
            .arg(r.samples)
            .arg(percent(static_cast<double>(r.samples), total));
    const FlameTree::Node& n = tree.node(r.node);
    QString text = QString::fromStdString(tree.label(r.node));
    text += QStringLiteral("\ntotal %1 samples, self %2").arg(n.samples).arg(n.selfSamples);
    // Timed profilers weigh samples in seconds.
    if (tree.untimedSamples() < tree.totalSamples() && n.weight > 0)
        text += QStringLiteral(" (%1 s, self %2 s)").arg(n.weight, 0, 'g', 4).arg(n.selfWeight, 0, 'g', 4);
    text += QStringLiteral("\n%1 of total").arg(percent(static_cast<double>(n.samples), total));
    if (n.parent >= 0)
        text += QStringLiteral(", %1 of parent")
                    .arg(percent(static_cast<double>(n.samples), static_cast<double>(tree.node(n.parent).samples)));
    if (focus > 0 && !r.ancestor)
        text += QStringLiteral(", %1 of focus")
                    .arg(percent(static_cast<double>(n.samples), static_cast<double>(tree.node(focus).samples)));
    text += QStringLiteral("\nphase: %1").arg(QString::fromUtf8(analysis::phaseName(n.phase).data()));
    return text;
}

int rowTop(const FlameLayout& layout, const FlamePaintOptions& o, int top, int row)
{
    return o.icicle ? top + row * o.rowHeight : top + (layout.rows - 1 - row) * o.rowHeight;
}

int captionHeight(const FlamePaintOptions& o)
{
    return static_cast<int>(o.caption.size()) * (o.pointSize + 7) + (o.caption.isEmpty() ? 0 : 4);
}

} // namespace

QColor phaseColor(Phase phase)
{
    switch (phase) {
    case Phase::Comm:
        return QColor(0x4e, 0x8c, 0xd9); // blue
    case Phase::Input:
        return QColor(0x9b, 0x6b, 0xd6); // violet
    case Phase::Checkpoint:
        return QColor(0xe0, 0x8a, 0x2e); // orange
    case Phase::GpuWait:
        return QColor(0xd9, 0x5f, 0x5f); // red
    case Phase::Idle:
        return QColor(0xb8, 0xb8, 0xb8); // grey
    case Phase::Compute:
        return QColor(0x5c, 0xb8, 0x6b); // green
    case Phase::Other:
        break;
    }
    return QColor(0xe6, 0xc3, 0x6a); // sand
}

QColor blockColor(const FlameTree& tree, int32_t node, FlameColors colors)
{
    if (node < 0) return QColor(0xd0, 0xd0, 0xd0);
    if (node == 0) return QColor(0xc8, 0xc8, 0xc8);
    const uint32_t h = fnv1a(tree.name(node));
    if (colors == FlameColors::Package) {
        const uint32_t p = fnv1a(packageOf(tree, node));
        return QColor::fromHsv(static_cast<int>(p % 360), 110 + static_cast<int>(h % 60), 215);
    }
    QColor c = phaseColor(tree.node(node).phase);
    // A little variation per function so neighbours stay apart.
    return c.lighter(95 + static_cast<int>(h % 15));
}

int flameHeight(const FlameLayout& layout, const FlamePaintOptions& o)
{
    return kMargin + captionHeight(o) + layout.rows * o.rowHeight + kMargin + (o.legend ? kLegendHeight + kMargin : 0);
}

double flameMinWidth(int width)
{
    return 1.0 / std::max(1, width - 2 * kMargin);
}

QRect flameBlockRect(const QRect& area, const FlameLayout& layout, size_t index, const FlamePaintOptions& o)
{
    if (index >= layout.rects.size()) return {};
    const FlameRect& r = layout.rects[index];
    const int y = area.top() + kMargin + captionHeight(o);
    const int left = area.left() + kMargin;
    const double width = area.width() - 2 * kMargin;
    const int x0 = left + static_cast<int>(r.x * width);
    const int x1 = left + static_cast<int>((r.x + r.width) * width);
    return QRect(x0, rowTop(layout, o, y, r.row), std::max(1, x1 - x0), o.rowHeight - 1);
}

QString flameTooltip(const FlameTree& tree, const FlameLayout& layout, size_t index, const analysis::DiffTree* diff)
{
    if (index >= layout.rects.size()) return {};
    return diff ? diffTooltip(*diff, layout.rects[index]) : tooltip(tree, layout.rects[index], layout.focus);
}

QColor diffColor(const analysis::DiffNode& node)
{
    const QColor neutral(0xdc, 0xdc, 0xdc), grew(0xd7, 0x30, 0x27), shrank(0x31, 0x6a, 0xd9);
    const double d = node.delta();
    const double s = std::clamp(std::abs(d) / 0.05, 0.0, 1.0);
    const QColor& to = d > 0 ? grew : shrank;
    auto mix = [s](int a, int b) { return static_cast<int>(a + (b - a) * s); };
    return QColor(mix(neutral.red(), to.red()), mix(neutral.green(), to.green()), mix(neutral.blue(), to.blue()));
}

void paintFlame(QPainter& p, const QRect& area, const FlameTree& tree, const FlameLayout& layout,
                const FlamePaintOptions& o)
{
    p.save();
    p.fillRect(area, Qt::white);
    QFont font = p.font();
    font.setPointSize(o.pointSize);
    p.setFont(font);
    const QFontMetrics fm(font, p.device()); // the device's, so labels fit in a PDF as on screen
    const LabelFitter elided(fm);
    int y = area.top() + kMargin;
    p.setPen(QColor(0x20, 0x20, 0x20));
    for (const QString& line : o.caption) {
        p.drawText(QRect(area.left() + kMargin, y, area.width() - 2 * kMargin, o.pointSize + 7),
                   Qt::AlignLeft | Qt::AlignVCenter, elided(line, area.width() - 2 * kMargin));
        y += o.pointSize + 7;
    }
    if (!o.caption.isEmpty()) y += 4;
    const int left = area.left() + kMargin;
    const double width = area.width() - 2 * kMargin;
    const analysis::FlameSearch* search = o.search && !o.search->matches.empty() ? o.search : nullptr;
    for (size_t k = 0; k < layout.rects.size(); ++k) {
        const FlameRect& r = layout.rects[k];
        const int x0 = left + static_cast<int>(r.x * width);
        const int x1 = left + static_cast<int>((r.x + r.width) * width);
        const QRect box(x0, rowTop(layout, o, y, r.row), std::max(1, x1 - x0), o.rowHeight - 1);
        if (!o.clip.isNull() && !o.clip.intersects(box)) continue;
        QColor c = o.diff && r.node >= 0 ? diffColor(o.diff->node(r.node)) : blockColor(tree, r.node, o.colors);
        if (r.ancestor) c = towardsWhite(c, 0.45);
        QColor ink = r.ancestor ? QColor(0x55, 0x55, 0x55) : QColor(0x10, 0x10, 0x10);
        const bool oneSide = o.diff && r.node > 0 && (o.diff->node(r.node).onlyInA() || o.diff->node(r.node).onlyInB());
        if (search) {
            const size_t node = static_cast<size_t>(r.node >= 0 ? r.node : r.parent);
            if (r.node >= 0 && search->matched[node]) {
                c = QColor(0xe8, 0x3e, 0x8c); // matches: one strong colour, whatever the phase
                ink = Qt::white;
            } else if (r.node < 0 || !search->relevant[node]) {
                c = QColor::fromHsv(c.hsvHue(), c.hsvSaturation() / 5, 235);
                ink = QColor(0x9a, 0x9a, 0x9a);
            }
        }
        p.fillRect(box, c);
        if (oneSide) p.fillRect(box, QBrush(c.darker(150), Qt::BDiagPattern)); // new in B, or gone from A
        if (box.width() > 1) {
            p.setPen(QColor(255, 255, 255, 160));
            p.drawLine(box.topRight(), box.bottomRight());
        }
        const QString text = elided(blockText(tree, r), box.width() - 6);
        if (!text.isEmpty()) {
            p.setPen(ink);
            p.drawText(box.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
        }
        if (static_cast<int32_t>(k) == o.hover || static_cast<int32_t>(k) == o.current) {
            p.setPen(
                QPen(static_cast<int32_t>(k) == o.current ? QColor(0x10, 0x10, 0x10) : QColor(0x30, 0x30, 0x30, 170),
                     static_cast<int32_t>(k) == o.current ? 2 : 1));
            p.setBrush(Qt::NoBrush);
            p.drawRect(box.adjusted(0, 0, -1, -1));
        }
    }
    if (o.diff && o.legend) {
        const int ly = rowTop(layout, o, y, 0) + layout.rows * o.rowHeight + kMargin;
        int x = left;
        const struct
        {
            double delta;
            QString text;
        } keys[] = {{0.05, QStringLiteral("grew (share of total, A → B)")},
                    {-0.05, QStringLiteral("shrank")},
                    {0.0, QStringLiteral("unchanged")}};
        for (const auto& k : keys) {
            analysis::DiffNode n;
            n.shareB = std::max(0.0, k.delta);
            n.shareA = std::max(0.0, -k.delta);
            p.fillRect(QRect(x, ly + 4, 12, 12), diffColor(n));
            p.setPen(QColor(0x20, 0x20, 0x20));
            p.drawText(QRect(x + 16, ly, fm.horizontalAdvance(k.text) + 4, 20), Qt::AlignLeft | Qt::AlignVCenter,
                       k.text);
            x += 16 + fm.horizontalAdvance(k.text) + 16;
        }
        p.fillRect(QRect(x, ly + 4, 12, 12), QColor(0xdc, 0xdc, 0xdc));
        p.fillRect(QRect(x, ly + 4, 12, 12), QBrush(QColor(0x90, 0x90, 0x90), Qt::BDiagPattern));
        const QString only = QStringLiteral("only in one side");
        p.drawText(QRect(x + 16, ly, fm.horizontalAdvance(only) + 4, 20), Qt::AlignLeft | Qt::AlignVCenter, only);
        x += 16 + fm.horizontalAdvance(only) + 24;
        if (!o.diffLegend.isEmpty())
            p.drawText(QRect(x, ly, area.right() - x - kMargin, 20), Qt::AlignLeft | Qt::AlignVCenter,
                       elided(o.diffLegend, area.right() - x - kMargin));
    }
    // Legend: phases with their share of the samples in view.
    if (o.colors == FlameColors::Phase && o.legend && !o.diff) {
        const auto self = analysis::phaseSamples(tree, layout.focus);
        const double total = static_cast<double>(std::max<int64_t>(tree.node(layout.focus).samples, 1));
        int x = left;
        const int ly = rowTop(layout, o, y, 0) + layout.rows * o.rowHeight + kMargin;
        for (int k = analysis::kPhaseCount - 1; k >= 0; --k) {
            const auto phase = static_cast<Phase>(k);
            const QString text = QStringLiteral("%1 %2 %")
                                     .arg(QString::fromUtf8(analysis::phaseName(phase).data()))
                                     .arg(100.0 * static_cast<double>(self[static_cast<size_t>(k)]) / total, 0, 'f', 1);
            p.fillRect(QRect(x, ly + 4, 12, 12), phaseColor(phase));
            p.setPen(QColor(0x20, 0x20, 0x20));
            p.drawText(QRect(x + 16, ly, fm.horizontalAdvance(text) + 4, 20), Qt::AlignLeft | Qt::AlignVCenter, text);
            x += 16 + fm.horizontalAdvance(text) + 16;
        }
    }
    p.restore();
}

QImage renderFlameImage(const FlameTree& tree, int32_t focus, int width, const FlamePaintOptions& o)
{
    const FlameLayout layout = analysis::layoutFlame(tree, focus, 1.0 / std::max(1, width - 2 * kMargin));
    QImage image(width, flameHeight(layout, o), QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter p(&image);
    p.setRenderHint(QPainter::TextAntialiasing);
    paintFlame(p, image.rect(), tree, layout, o);
    p.end();
    return image;
}

namespace {
std::string xmlEscape(const QString& s)
{
    return s.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("&#10;")).toStdString();
}
std::string hex(const QColor& c)
{
    return c.name().toStdString();
}
} // namespace

std::string renderFlameSvg(const FlameTree& tree, int32_t focus, int width, const FlamePaintOptions& o)
{
    const FlameLayout layout = analysis::layoutFlame(tree, focus, 1.0 / std::max(1, width - 2 * kMargin));
    const int height = flameHeight(layout, o);
    // Average advance of DejaVu Sans (about 0.62 em; the size is in points, 4/3 px each), for eliding labels
    // without a font engine.
    const double charWidth = o.pointSize * 4.0 / 3.0 * 0.62;
    std::string out = fmt::format(
        "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"{0}\" height=\"{1}\" "
        "viewBox=\"0 0 {0} {1}\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"DejaVu Sans, Verdana, sans-serif\" "
        "font-size=\"{2}pt\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
        width, height, o.pointSize);
    int y = kMargin;
    for (const QString& line : o.caption) {
        out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#202020\">{}</text>\n", kMargin, y + o.pointSize + 3,
                           xmlEscape(line));
        y += o.pointSize + 7;
    }
    if (!o.caption.isEmpty()) y += 4;
    const double w = width - 2 * kMargin;
    for (const FlameRect& r : layout.rects) {
        const double x0 = kMargin + r.x * w;
        const double bw = std::max(1.0, r.width * w);
        const int top = rowTop(layout, o, y, r.row);
        QColor c = o.diff && r.node >= 0 ? diffColor(o.diff->node(r.node)) : blockColor(tree, r.node, o.colors);
        if (r.ancestor) c = towardsWhite(c, 0.45);
        out += fmt::format("<g><title>{}</title><rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
                           "fill=\"{}\"/>",
                           xmlEscape(o.diff ? diffTooltip(*o.diff, r) : tooltip(tree, r, layout.focus)), x0, top, bw,
                           o.rowHeight - 1, hex(c));
        const QString text = blockText(tree, r);
        const auto fits = static_cast<qsizetype>((bw - 6) / charWidth);
        if (fits >= 3) {
            const QString shown = text.size() <= fits ? text : text.left(fits - 2) + QStringLiteral("..");
            out += fmt::format("<text x=\"{:.2f}\" y=\"{}\" fill=\"{}\">{}</text>", x0 + 3, top + o.rowHeight - 5,
                               r.ancestor ? "#555555" : "#101010", xmlEscape(shown));
        }
        out += "</g>\n";
    }
    if (o.colors == FlameColors::Phase && !o.diff) {
        const auto self = analysis::phaseSamples(tree, layout.focus);
        const double total = static_cast<double>(std::max<int64_t>(tree.node(layout.focus).samples, 1));
        double x = kMargin;
        const int ly = y + layout.rows * o.rowHeight + kMargin;
        for (int k = analysis::kPhaseCount - 1; k >= 0; --k) {
            const auto phase = static_cast<Phase>(k);
            const std::string text = fmt::format("{} {:.1f} %", analysis::phaseName(phase),
                                                 100.0 * static_cast<double>(self[static_cast<size_t>(k)]) / total);
            out += fmt::format("<rect x=\"{:.0f}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.0f}\" "
                               "y=\"{}\" fill=\"#202020\">{}</text>\n",
                               x, ly + 4, hex(phaseColor(phase)), x + 16, ly + 14, text);
            x += 16 + static_cast<double>(text.size()) * charWidth + 16;
        }
    }
    out += "</svg>\n";
    return out;
}

} // namespace runlens::widgets
