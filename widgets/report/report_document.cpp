#include "widgets/report/report_document.h"

#include "widgets/common/qcp.h"

#include <QAbstractTextDocumentLayout>
#include <QDir>
#include <QFontDatabase>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QLocale>
#include <QPdfWriter>
#include <QTextDocument>
#include <algorithm>
#include <cmath>

namespace runlens::widgets {

namespace {
constexpr double kUnitsPerInch = 96.0;
constexpr double kFooterHeight = 22;
constexpr double kCellPad = 3;
} // namespace

QString reportFontProblem()
{
    // Without a font file the database still lists the generic aliases (Sans Serif …), but they resolve to nothing.
    const QFont font = QFontDatabase::systemFont(QFontDatabase::GeneralFont);
    const QString resolved = QFontInfo(font).family();
    if (!resolved.isEmpty() && !QFontDatabase::families().isEmpty()) return {};
    return QStringLiteral(
               "no usable font (\"%1\" resolves to no font file; the font database lists %2 name%3): install a "
               "font package such as fonts-dejavu-core")
        .arg(font.family())
        .arg(QFontDatabase::families().size())
        .arg(QFontDatabase::families().size() == 1 ? QString() : QStringLiteral("s"));
}

QPageSize defaultPageSize()
{
    return QLocale().measurementSystem() == QLocale::MetricSystem ? QPageSize(QPageSize::A4)
                                                                  : QPageSize(QPageSize::Letter);
}

ReportDocument::ReportDocument(const QString& path, bool pngFolder, const ReportPageSetup& setup)
    : m_path(path), m_png(pngFolder), m_setup(setup)
{
    const QSizeF inches = setup.pageSize.size(QPageSize::Inch);
    m_pageUnits = inches * kUnitsPerInch;
    const double margin = setup.marginMm / 25.4 * kUnitsPerInch;
    m_content =
        QRectF(margin, margin, m_pageUnits.width() - 2 * margin, m_pageUnits.height() - 2 * margin - kFooterHeight);
    // One family for the whole report; the default sans font of the system (DejaVu Sans on Debian).
    m_family = QFontDatabase::systemFont(QFontDatabase::GeneralFont).family();
    if (m_png) {
        if (!QDir().mkpath(path)) m_error = QStringLiteral("%1: cannot create the folder").arg(path);
    } else {
        m_pdf = std::make_unique<QPdfWriter>(path);
        m_pdf->setCreator(QStringLiteral("RunLens"));
        m_pdf->setTitle(setup.title);
        m_pdf->setResolution(static_cast<int>(kUnitsPerInch));
        m_pdf->setPageSize(setup.pageSize);
        m_pdf->setPageMargins(QMarginsF(0, 0, 0, 0));
    }
    if (ok()) beginPage();
}

ReportDocument::~ReportDocument()
{
    if (m_open) finish();
}

QFont ReportDocument::font(double pointSize, bool bold) const
{
    QFont f(m_family);
    f.setPointSizeF(pointSize);
    // No ligatures: "fi" stays two letters, so the PDF's text reads, searches and copies as written.
    f.setStyleStrategy(QFont::PreferNoShaping);
    f.setBold(bold);
    return f;
}

void ReportDocument::beginPage()
{
    ++m_page;
    if (m_png) {
        const double scale = m_setup.dpi / kUnitsPerInch;
        m_image = QImage(static_cast<int>(std::ceil(m_pageUnits.width() * scale)),
                         static_cast<int>(std::ceil(m_pageUnits.height() * scale)), QImage::Format_RGB32);
        // 96 logical dots per inch, drawn `scale` times larger: fonts and layouts the same as in the PDF.
        const int dpm = static_cast<int>(std::lround(kUnitsPerInch / 0.0254));
        m_image.setDotsPerMeterX(dpm);
        m_image.setDotsPerMeterY(dpm);
        m_image.fill(Qt::white);
        m_painter = std::make_unique<QCPPainter>(&m_image);
        m_painter->setRenderHint(QPainter::Antialiasing);
        m_painter->setRenderHint(QPainter::TextAntialiasing);
        m_painter->scale(scale, scale);
    } else if (!m_painter) {
        m_painter = std::make_unique<QCPPainter>(m_pdf.get());
        if (!m_painter->isActive()) {
            m_error = QStringLiteral("%1: cannot write the PDF").arg(m_path);
            return;
        }
        m_painter->setMode(QCPPainter::pmVectorized);
        m_painter->setMode(QCPPainter::pmNoCaching);
    } else {
        m_pdf->newPage();
    }
    m_open = true;
    m_y = m_content.top();
}

void ReportDocument::endPage()
{
    if (!m_open || !m_painter) return;
    QCPPainter& p = *m_painter;
    p.save();
    p.setFont(font(7));
    p.setPen(QColor(0x70, 0x70, 0x70));
    const QRectF foot(m_content.left(), m_content.bottom() + 6, m_content.width(), kFooterHeight - 6);
    p.drawLine(QPointF(foot.left(), foot.top()), QPointF(foot.right(), foot.top()));
    p.drawText(foot, Qt::AlignLeft | Qt::AlignVCenter, m_setup.footer);
    p.drawText(foot, Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("page %1").arg(m_page));
    p.restore();
    if (m_png) {
        m_painter->end();
        m_painter.reset();
        const QString file = QDir(m_path).filePath(QStringLiteral("page-%1.png").arg(m_page, 3, 10, QLatin1Char('0')));
        if (!m_image.save(file, "PNG") && m_error.isEmpty()) m_error = QStringLiteral("%1: cannot write it").arg(file);
        m_files << file;
    }
    m_open = false;
}

void ReportDocument::ensure(double height)
{
    if (height <= remaining() || m_y <= m_content.top() + 0.5) return;
    pageBreak();
}

void ReportDocument::pageBreak()
{
    if (!ok()) return;
    endPage();
    beginPage();
}

void ReportDocument::space(double units)
{
    m_y = std::min(m_y + units, m_content.bottom());
}

void ReportDocument::heading(const QString& text, int level, bool newPage)
{
    if (!ok()) return;
    if (newPage && m_y > m_content.top() + 0.5) pageBreak();
    const double size = level == 0 ? 18 : level == 1 ? 14 : 11;
    const QFont f = font(size, true);
    const QFontMetricsF fm(f, m_painter->device());
    const QRectF box = fm.boundingRect(QRectF(0, 0, m_content.width(), 1e6), Qt::TextWordWrap, text);
    // Keep a heading with what follows it: at least 120 units of room below it.
    ensure(box.height() + 120);
    if (m_y > m_content.top() + 0.5) m_y += level <= 1 ? 10 : 6;
    QCPPainter& p = *m_painter;
    p.save();
    p.setFont(f);
    p.setPen(level == 0 ? QColor(0x10, 0x10, 0x10) : QColor(0x1f, 0x3a, 0x5f));
    p.drawText(QRectF(m_content.left(), m_y, m_content.width(), box.height()), Qt::TextWordWrap, text);
    p.restore();
    m_y += box.height() + (level <= 1 ? 6 : 3);
    if (level == 1) {
        p.save();
        p.setPen(QPen(QColor(0x1f, 0x3a, 0x5f), 0.8));
        p.drawLine(QPointF(m_content.left(), m_y - 3), QPointF(m_content.right(), m_y - 3));
        p.restore();
        m_y += 3;
    }
    m_headings << text;
}

void ReportDocument::html(const QString& html, double pointSize)
{
    if (!ok()) return;
    QTextDocument doc;
    doc.documentLayout()->setPaintDevice(m_painter->device());
    doc.setDefaultFont(font(pointSize));
    doc.setDocumentMargin(0);
    doc.setTextWidth(m_content.width());
    doc.setHtml(html);
    double height = doc.size().height();
    if (height > remaining() && height <= m_content.height()) pageBreak();
    if (height > remaining()) {
        // Taller than a page: the document's own pages (lines are not cut), one per report page.
        pageBreak();
        doc.setPageSize(QSizeF(m_content.width(), m_content.height()));
        for (int i = 0; i < doc.pageCount(); ++i) {
            if (i > 0) pageBreak();
            m_painter->save();
            m_painter->translate(m_content.left(), m_y - i * m_content.height());
            doc.drawContents(m_painter.get(), QRectF(0, i * m_content.height(), m_content.width(), m_content.height()));
            m_painter->restore();
        }
        height = std::fmod(doc.size().height(), m_content.height());
    } else {
        m_painter->save();
        m_painter->translate(m_content.left(), m_y);
        doc.drawContents(m_painter.get());
        m_painter->restore();
    }
    m_y += height + 4;
}

void ReportDocument::table(const QStringList& header, const std::vector<QStringList>& rows,
                           const std::vector<double>& widths, const std::vector<int>& rightAligned, double pointSize)
{
    if (!ok()) return;
    const QFont body = font(pointSize), bold = font(pointSize, true);
    std::vector<double> colX, colW;
    double x = m_content.left();
    for (size_t c = 0; c < widths.size(); ++c) {
        colX.push_back(x);
        colW.push_back(widths[c] * m_content.width());
        x += colW.back();
    }
    const auto rowHeight = [&](const QStringList& cells, const QFont& f) {
        const QFontMetricsF fm(f, m_painter->device());
        double h = fm.height();
        for (qsizetype c = 0; c < cells.size() && c < static_cast<qsizetype>(colW.size()); ++c)
            h = std::max(h, fm.boundingRect(QRectF(0, 0, colW[static_cast<size_t>(c)] - 2 * kCellPad, 1e6),
                                            Qt::TextWordWrap, cells[c])
                                .height());
        return h + 2 * kCellPad;
    };
    const auto drawRow = [&](const QStringList& cells, const QFont& f, bool head, bool shade) {
        const double h = rowHeight(cells, f);
        QCPPainter& p = *m_painter;
        p.save();
        if (head || shade)
            p.fillRect(QRectF(m_content.left(), m_y, m_content.width(), h),
                       head ? QColor(0xe4, 0xea, 0xf2) : QColor(0xf6, 0xf6, 0xf6));
        p.setFont(f);
        p.setPen(QColor(0x20, 0x20, 0x20));
        for (qsizetype c = 0; c < cells.size() && c < static_cast<qsizetype>(colW.size()); ++c) {
            const auto ci = static_cast<size_t>(c);
            const bool right =
                std::find(rightAligned.begin(), rightAligned.end(), static_cast<int>(c)) != rightAligned.end();
            p.drawText(QRectF(colX[ci] + kCellPad, m_y + kCellPad, colW[ci] - 2 * kCellPad, h - 2 * kCellPad),
                       Qt::TextWordWrap | (right ? Qt::AlignRight : Qt::AlignLeft), cells[c]);
        }
        p.restore();
        m_y += h;
    };
    const double headH = rowHeight(header, bold);
    ensure(headH + (rows.empty() ? 0 : rowHeight(rows.front(), body)));
    if (!header.isEmpty()) drawRow(header, bold, true, false);
    for (size_t r = 0; r < rows.size(); ++r) {
        const double h = rowHeight(rows[r], body);
        if (h > remaining()) {
            pageBreak();
            if (!header.isEmpty()) drawRow(header, bold, true, false);
        }
        drawRow(rows[r], body, false, r % 2 == 1);
    }
    m_y += 6;
}

void ReportDocument::figure(int height, const std::function<void(QCPPainter&, const QRect&)>& paint,
                            const QString& caption, const QString& name)
{
    if (!ok()) return;
    const QFont capFont = font(7.5);
    const double capH = caption.isEmpty()
                            ? 0
                            : QFontMetricsF(capFont, m_painter->device())
                                      .boundingRect(QRectF(0, 0, m_content.width(), 1e6), Qt::TextWordWrap, caption)
                                      .height() +
                                  4;
    const int h = std::min(height, static_cast<int>(m_content.height() - capH));
    ensure(h + capH);
    const QRect area(static_cast<int>(m_content.left()), static_cast<int>(m_y), static_cast<int>(m_content.width()), h);
    m_painter->save();
    m_painter->setClipRect(area.adjusted(-1, -1, 1, 1));
    paint(*m_painter, area);
    m_painter->restore();
    if (!m_setup.figureFolder.isEmpty()) {
        // The same drawing on its own image, at the pages' DPI.
        const double scale = m_setup.dpi / kUnitsPerInch;
        QImage image(static_cast<int>(std::ceil(area.width() * scale)),
                     static_cast<int>(std::ceil(area.height() * scale)), QImage::Format_RGB32);
        const int dpm = static_cast<int>(std::lround(kUnitsPerInch / 0.0254));
        image.setDotsPerMeterX(dpm);
        image.setDotsPerMeterY(dpm);
        image.fill(Qt::white);
        {
            QCPPainter p(&image);
            p.setRenderHint(QPainter::Antialiasing);
            p.setRenderHint(QPainter::TextAntialiasing);
            p.scale(scale, scale);
            p.translate(-area.topLeft());
            paint(p, area);
        }
        const QString file =
            QDir(m_setup.figureFolder)
                .filePath(QStringLiteral("figure-%1-%2.png").arg(++m_figures, 2, 10, QLatin1Char('0')).arg(name));
        if ((!QDir().mkpath(m_setup.figureFolder) || !image.save(file, "PNG")) && m_error.isEmpty())
            m_error = QStringLiteral("%1: cannot write it").arg(file);
        m_files << file;
    }
    m_y += h + 2;
    if (!caption.isEmpty()) {
        m_painter->save();
        m_painter->setFont(capFont);
        m_painter->setPen(QColor(0x50, 0x50, 0x50));
        m_painter->drawText(QRectF(m_content.left(), m_y, m_content.width(), capH), Qt::TextWordWrap, caption);
        m_painter->restore();
        m_y += capH;
    }
    m_y += 6;
}

bool ReportDocument::finish()
{
    if (m_open) endPage();
    if (m_painter) {
        m_painter->end();
        m_painter.reset();
    }
    m_pdf.reset(); // closes the file
    return ok();
}

} // namespace runlens::widgets
