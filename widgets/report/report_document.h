#pragma once

// The pages of a report, laid out top to bottom: headings, rich-text paragraphs, tables that continue on the next
// page (header repeated), figures painted by a callback, a footer with the page number. Pages go to a PDF (vector,
// text selectable, fonts embedded by Qt's PDF engine) or to one PNG per page at a chosen DPI. Coordinates are
// 96 units per inch whatever the output, so fonts, pens and QCustomPlot layouts are the size they are on screen.

#include <QFont>
#include <QImage>
#include <QPageSize>
#include <QRect>
#include <QString>
#include <QStringList>
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

class QCPPainter;
class QPdfWriter;

namespace runlens::widgets {

struct ReportPageSetup
{
    QPageSize pageSize = QPageSize(QPageSize::A4);
    double marginMm = 16;
    int dpi = 150;         // PNG pages
    QString title, footer; // PDF metadata title; footer text left of the page number
    QString figureFolder;  // when set, each figure is also written there on its own (figure-NN-name.png, at dpi)
};

// Why a report cannot be drawn legibly (no font with Latin letters and digits: Qt would draw empty boxes), or
// empty when it can. Checked before anything is written.
QString reportFontProblem();

// A4, or Letter where the locale measures in inches (US, Canada, Mexico …).
QPageSize defaultPageSize();

class ReportDocument
{
public:
    // A PDF at `path`, or (pngFolder) one PNG per page, page-001.png …, in the folder `path`.
    ReportDocument(const QString& path, bool pngFolder, const ReportPageSetup& setup);
    ~ReportDocument();
    ReportDocument(const ReportDocument&) = delete;
    ReportDocument& operator=(const ReportDocument&) = delete;

    bool ok() const { return m_error.isEmpty(); }
    QString error() const { return m_error; }

    double contentWidth() const { return m_content.width(); }
    double contentHeight() const { return m_content.height(); }
    double remaining() const { return m_content.bottom() - m_y; }

    // level 0: the title; 1: a section (starts a page when asked); 2: a subsection.
    void heading(const QString& text, int level, bool newPage = false);
    // A paragraph of Qt rich text (a subset of HTML: b, i, tt, br, tables, colours), at pointSize.
    void html(const QString& html, double pointSize = 9.0);
    // A table; widths are fractions of the content width; rightAligned columns by index. Rows continue on the next
    // page with the header repeated.
    void table(const QStringList& header, const std::vector<QStringList>& rows, const std::vector<double>& widths,
               const std::vector<int>& rightAligned = {}, double pointSize = 8.0);
    // A figure `height` units tall across the content width, painted by paint(painter, rect); a caption below.
    // `name` names its own PNG when figures are written separately.
    void figure(int height, const std::function<void(QCPPainter&, const QRect&)>& paint, const QString& caption = {},
                const QString& name = QStringLiteral("figure"));
    void space(double units);
    // Starts a new page unless `height` units fit on this one (at most a page is asked for): keeps blocks together.
    void keepTogether(double height) { ensure(std::min(height, m_content.height())); }
    void pageBreak();
    // Ends the last page and writes the output. Returns false (error() says why) when it could not be written.
    bool finish();

    int pages() const { return m_page; }
    const QStringList& headings() const { return m_headings; }
    const QStringList& files() const { return m_files; } // PNG pages and figures written
    QFont font(double pointSize, bool bold = false) const;

private:
    void beginPage();
    void endPage();
    void ensure(double height); // a new page unless `height` fits in what is left

    QString m_path;
    bool m_png = false;
    ReportPageSetup m_setup;
    QSizeF m_pageUnits; // the page in 96-per-inch units
    QRectF m_content;
    double m_y = 0;
    int m_page = 0;
    bool m_open = false;
    std::unique_ptr<QPdfWriter> m_pdf;
    QImage m_image;
    std::unique_ptr<QCPPainter> m_painter;
    QStringList m_headings, m_files;
    QString m_error;
    QString m_family;
    int m_figures = 0;
};

} // namespace runlens::widgets
