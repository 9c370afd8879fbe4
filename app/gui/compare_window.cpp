#include "app/gui/compare_window.h"

#include "analysis/compare/compare_format.h"

#include "analysis/phase/phase_classifier.h"
#include "analysis/store/run_database.h"

#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPainter>
#include <QPdfWriter>
#include <QPixmap>
#include <QPushButton>
#include <QScreen>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <memory>

namespace runlens::app {

namespace {

constexpr size_t kFlameRows = 12; // functions listed per direction

QString fileName(const std::string& path)
{
    return QFileInfo(QString::fromStdString(path)).fileName();
}

// The run's name in a header: the file's name, with its folder when the name alone is ambiguous (demo.runlens).
QString runName(const std::vector<analysis::RunSummary>& runs, size_t i)
{
    const QFileInfo info(QString::fromStdString(runs[i].label));
    int same = 0;
    for (const auto& r : runs)
        same += fileName(r.label) == info.fileName();
    return same > 1 ? info.dir().dirName() + QLatin1Char('/') + info.fileName() : info.fileName();
}

QString formatValue(double v, const std::string& unit, bool sign = false)
{
    return QString::fromStdString(analysis::formatCompareValue(v, unit, sign));
}

QString percent(double pct)
{
    return QString::fromStdString(analysis::formatDeltaPct(pct));
}

// The verdict's colour: which way the difference went, not whether that is good.
QColor verdictColor(const std::string& verdict)
{
    if (verdict == "faster") return QColor(0x1e, 0x8a, 0x3c);
    if (verdict == "slower") return QColor(0xc0, 0x39, 0x2b);
    if (verdict == "higher" || verdict == "lower") return QColor(0x1f, 0x5f, 0xb4);
    return QColor(0x80, 0x80, 0x80);
}

QTableWidgetItem* item(const QString& text, Qt::Alignment align = Qt::AlignLeft | Qt::AlignVCenter)
{
    auto* it = new QTableWidgetItem(text);
    it->setTextAlignment(align);
    it->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    return it;
}

QTableWidgetItem* number(const QString& text)
{
    return item(text, Qt::AlignRight | Qt::AlignVCenter);
}

QTableWidgetItem* runHeader(const QString& text, const QColor& color, const QString& tooltip)
{
    QPixmap swatch(12, 12);
    swatch.fill(color);
    auto* it = new QTableWidgetItem(QIcon(swatch), text);
    it->setForeground(color.darker(130));
    it->setToolTip(tooltip);
    return it;
}

QTableWidget* makeTable(const QStringList& headers)
{
    auto* t = new QTableWidget(0, static_cast<int>(headers.size()));
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->hide();
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setAlternatingRowColors(true);
    t->setWordWrap(false);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

QString tableText(const QTableWidget* t)
{
    QStringList lines;
    QStringList header;
    for (int c = 0; c < t->columnCount(); ++c)
        header << (t->horizontalHeaderItem(c) ? t->horizontalHeaderItem(c)->text() : QString());
    lines << header.join(QLatin1Char('\t'));
    for (int r = 0; r < t->rowCount(); ++r) {
        QStringList cells;
        for (int c = 0; c < t->columnCount(); ++c)
            cells << (t->item(r, c) ? t->item(r, c)->text() : QString());
        lines << cells.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace

QColor runColor(size_t i)
{
    static const QColor palette[] = {QColor(0xd9, 0x5f, 0x02), QColor(0x1b, 0x9e, 0x77), QColor(0x75, 0x70, 0xb3),
                                     QColor(0xe7, 0x29, 0x8a), QColor(0x66, 0xa6, 0x1e), QColor(0xa6, 0x76, 0x1d)};
    if (i == 0) return QColor(0x5b, 0x70, 0x83); // the baseline: grey-blue
    return palette[(i - 1) % std::size(palette)];
}

RunComparison compareRunFiles(const QStringList& paths)
{
    std::vector<analysis::CompareInput> inputs;
    for (const QString& path : paths)
        inputs.push_back({path.toStdString(), {}});
    analysis::CompareOptions options;
    options.flameRows = kFlameRows;
    RunComparison out;
    auto comparison = analysis::compareRunFiles(inputs, options);
    if (comparison) static_cast<analysis::RunComparison&>(out) = std::move(*comparison);
    else out.error = QObject::tr("Cannot compare: %1").arg(QString::fromStdString(comparison.error().toString()));
    return out;
}

CompareWindow::CompareWindow(RunComparison comparison, QWidget* parent)
    : QWidget(parent, Qt::Window), m_comparison(std::move(comparison)), m_tabs(new QTabWidget),
      m_metrics(nullptr), m_findings(nullptr), m_stacks(nullptr)
{
    setAttribute(Qt::WA_DeleteOnClose);
    const auto& runs = m_comparison.runs;
    QStringList names;
    for (size_t i = 1; i < runs.size(); ++i)
        names << runName(runs, i);
    setWindowTitle(tr("%1 vs %2 — RunLens").arg(runs.empty() ? QString() : runName(runs, 0), names.join(QStringLiteral(", "))));

    // Which runs and windows: one line per run in its colour.
    auto* legend = new QLabel;
    legend->setTextFormat(Qt::RichText);
    legend->setWordWrap(true);
    QStringList lines;
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& r = runs[i];
        lines << tr("<span style='color:%1'>■</span> <b>%2</b> %3: %4 s of %5; steps from %6")
                     .arg(runColor(i).name(), i == 0 ? tr("Baseline") : tr("Candidate %1").arg(i),
                          runName(runs, i).toHtmlEscaped())
                     .arg(static_cast<double>(r.toNs - r.fromNs) / 1e9, 0, 'f', 0)
                     .arg(QString::fromStdString(r.windowKind),
                          r.stepSource.empty() ? tr("nowhere") : QString::fromStdString(r.stepSource));
    }
    legend->setText(lines.join(QStringLiteral("<br>")));

    fillMetrics();
    fillFindings();
    fillStacks();
    m_tabs->addTab(m_metrics, tr("Metrics"));
    m_tabs->addTab(m_findings, tr("Findings"));
    m_tabs->addTab(m_stacks, tr("Stacks"));

    auto* exportButton = new QPushButton(tr("Export…"));
    exportButton->setToolTip(tr("The current tab as a PNG image, or the metric table as PDF"));
    auto* copyButton = new QPushButton(tr("Copy as text"));
    auto* closeButton = new QPushButton(tr("Close"));
    connect(exportButton, &QPushButton::clicked, this, &CompareWindow::chooseExport);
    connect(copyButton, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(text()); });
    connect(closeButton, &QPushButton::clicked, this, &QWidget::close);
    auto* buttons = new QHBoxLayout;
    auto* note = new QLabel(tr("Verdicts: Mann–Whitney U, two-sided, α = %1 (p-value in the tooltip). "
                               "Each run over its steady state; opened read-only.")
                                .arg(analysis::kCompareAlpha));
    note->setStyleSheet(QStringLiteral("color: palette(mid)"));
    buttons->addWidget(note, 1);
    buttons->addWidget(exportButton);
    buttons->addWidget(copyButton);
    buttons->addWidget(closeButton);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(legend);
    layout->addWidget(m_tabs, 1);
    layout->addLayout(buttons);
    // As wide as the metric table wants (several candidates add four columns each), within the screen.
    int tableWidth = m_metrics->verticalScrollBar()->sizeHint().width() + 2 * m_metrics->frameWidth() + 40;
    for (int c = 0; c < m_metrics->columnCount(); ++c)
        tableWidth += m_metrics->columnWidth(c);
    const QScreen* screen = parent ? parent->screen() : QGuiApplication::primaryScreen();
    const int maxWidth = screen ? screen->availableGeometry().width() * 92 / 100 : 1600;
    resize(std::clamp(tableWidth, 1000, std::max(1000, maxWidth)), 720);
}

CompareWindow::~CompareWindow() = default;

void CompareWindow::fillMetrics()
{
    const auto& runs = m_comparison.runs;
    const bool several = runs.size() > 2;
    QStringList headers{tr("Metric"), tr("Baseline")};
    for (size_t c = 1; c < runs.size(); ++c) {
        const QString n = several ? QStringLiteral(" %1").arg(c) : QString();
        headers << tr("Candidate") + n << tr("Δ") + n << tr("Δ %") + n << tr("Verdict") + n;
    }
    m_metrics = makeTable(headers);
    m_metrics->setHorizontalHeaderItem(1, runHeader(tr("Baseline: %1").arg(runName(runs, 0)), runColor(0),
                                                    QDir::toNativeSeparators(QString::fromStdString(runs[0].label))));
    for (size_t c = 1; c < runs.size(); ++c)
        m_metrics->setHorizontalHeaderItem(static_cast<int>(2 + 4 * (c - 1)),
                                           runHeader(runName(runs, c), runColor(c),
                                                     QDir::toNativeSeparators(QString::fromStdString(runs[c].label))));
    const auto& rows = m_comparison.rows;
    m_metrics->setRowCount(static_cast<int>(rows.size()));
    for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
        const analysis::CompareRow& row = rows[static_cast<size_t>(r)];
        auto* label = item(QString::fromStdString(row.label));
        label->setData(Qt::UserRole, QString::fromStdString(row.id));
        if (!row.samplesOf.empty()) label->setToolTip(tr("Tested on %1").arg(QString::fromStdString(row.samplesOf)));
        m_metrics->setItem(r, 0, label);
        m_metrics->setItem(r, 1, number(formatValue(row.values[0], row.unit)));
        for (size_t c = 1; c < runs.size(); ++c) {
            const int col = static_cast<int>(2 + 4 * (c - 1));
            const analysis::CompareCell& cell = row.cells[c - 1];
            m_metrics->setItem(r, col, number(formatValue(row.values[c], row.unit)));
            m_metrics->setItem(r, col + 1, number(formatValue(cell.delta, row.unit, true)));
            m_metrics->setItem(r, col + 2, number(percent(cell.deltaPct)));
            auto* verdict = item(cell.verdict.empty() ? QStringLiteral("—") : QString::fromStdString(cell.verdict));
            verdict->setForeground(verdictColor(cell.verdict));
            if (std::isfinite(cell.p))
                verdict->setToolTip(cell.p < 0.001 ? tr("Mann–Whitney U on %1: p < 0.001").arg(QString::fromStdString(row.samplesOf))
                                                   : tr("Mann–Whitney U on %1: p = %2")
                                                         .arg(QString::fromStdString(row.samplesOf))
                                                         .arg(cell.p, 0, 'f', 3));
            else if (!cell.verdict.empty())
                verdict->setToolTip(tr("Not tested"));
            m_metrics->setItem(r, col + 3, verdict);
        }
    }
    m_metrics->resizeColumnsToContents();
}

void CompareWindow::fillFindings()
{
    const auto& runs = m_comparison.runs;
    const bool several = runs.size() > 2;
    QStringList headers;
    if (several) headers << tr("Candidate");
    headers << tr("Status") << tr("Rule") << tr("Impact before → after") << tr("Saving before → after") << tr("Finding");
    m_findings = makeTable(headers);
    const int off = several ? 1 : 0;
    for (size_t c = 0; c < m_comparison.candidates.size(); ++c) {
        const auto& f = m_comparison.candidates[c].findings;
        for (const auto* list : {&f.gone, &f.still, &f.added}) {
            for (const analysis::FindingChange& change : *list) {
                const int r = m_findings->rowCount();
                m_findings->insertRow(r);
                if (several) {
                    auto* who = item(runName(runs, c + 1));
                    who->setForeground(runColor(c + 1));
                    m_findings->setItem(r, 0, who);
                }
                const QString status = change.status == analysis::FindingChange::Status::Gone   ? tr("gone")
                                       : change.status == analysis::FindingChange::Status::Still ? tr("still there")
                                                                                                 : tr("new");
                auto* s = item(status);
                s->setData(Qt::UserRole, QString::fromLatin1(analysis::statusName(change.status)));
                s->setForeground(change.status == analysis::FindingChange::Status::Gone  ? verdictColor("faster")
                                 : change.status == analysis::FindingChange::Status::New ? verdictColor("slower")
                                                                                         : palette().color(QPalette::Text));
                m_findings->setItem(r, off, s);
                auto* rule = item(QString::fromStdString(change.finding().rule));
                rule->setToolTip(QString::fromStdString(analysis::findingCharacter(change.finding())));
                m_findings->setItem(r, off + 1, rule);
                const auto side = [&](bool present, const QString& v) { return present ? v : QStringLiteral("—"); };
                m_findings->setItem(r, off + 2,
                                    number(side(change.a.has_value(), QStringLiteral("%1 %").arg(100 * change.impactA, 0, 'f', 1)) +
                                           QStringLiteral(" → ") +
                                           side(change.b.has_value(), QStringLiteral("%1 %").arg(100 * change.impactB, 0, 'f', 1))));
                m_findings->setItem(r, off + 3,
                                    number(side(change.a.has_value(), QStringLiteral("%1 s").arg(change.savingA, 0, 'f', 1)) +
                                           QStringLiteral(" → ") +
                                           side(change.b.has_value(), QStringLiteral("%1 s").arg(change.savingB, 0, 'f', 1))));
                auto* title = item(QString::fromStdString(change.finding().title));
                title->setToolTip(QString::fromStdString(change.finding().title));
                m_findings->setItem(r, off + 4, title);
            }
        }
    }
    if (m_findings->rowCount() == 0) {
        m_findings->insertRow(0);
        m_findings->setItem(0, off, item(tr("No findings on either side")));
    }
    m_findings->resizeColumnsToContents();
}

void CompareWindow::fillStacks()
{
    const auto& runs = m_comparison.runs;
    const bool several = runs.size() > 2;
    QStringList headers;
    if (several) headers << tr("Candidate");
    headers << tr("Change") << tr("Share before → after") << tr("Δ") << tr("Self before → after") << tr("Function");
    m_stacks = makeTable(headers);
    const int off = several ? 1 : 0;
    for (size_t c = 0; c < m_comparison.candidates.size(); ++c) {
        const auto& flame = m_comparison.candidates[c].flame;
        const auto add = [&](const QString& what, const QString& a, const QString& b, const QString& d, const QString& self,
                             const QString& function) {
            const int r = m_stacks->rowCount();
            m_stacks->insertRow(r);
            if (several) {
                auto* who = item(runName(runs, c + 1));
                who->setForeground(runColor(c + 1));
                m_stacks->setItem(r, 0, who);
            }
            m_stacks->setItem(r, off, item(what));
            m_stacks->setItem(r, off + 1, number(a.isEmpty() ? QString() : a + QStringLiteral(" → ") + b));
            m_stacks->setItem(r, off + 2, number(d));
            m_stacks->setItem(r, off + 3, number(self));
            auto* f = item(function);
            f->setToolTip(function);
            m_stacks->setItem(r, off + 4, f);
        };
        if (!flame) {
            add(tr("not compared"), {}, {}, {}, {}, tr("a run has no timed stack samples in its window"));
            continue;
        }
        const auto pct = [](double share) { return QStringLiteral("%1 %").arg(100 * share, 0, 'f', 1); };
        for (const auto* list : {&flame->grew, &flame->shrank}) {
            const bool grew = list == &flame->grew;
            for (const analysis::FrameChange& ch : *list) {
                QString d = QStringLiteral("%1 pts").arg(100 * std::fabs(ch.delta()), 0, 'f', 1);
                d.prepend(ch.delta() >= 0 ? QStringLiteral("+") : QStringLiteral("−"));
                add(grew ? tr("grew") : tr("shrank"), pct(ch.shareA), pct(ch.shareB), d,
                    pct(ch.selfShareA) + QStringLiteral(" → ") + pct(ch.selfShareB), QString::fromStdString(ch.label()));
                m_stacks->item(m_stacks->rowCount() - 1, off)->setForeground(grew ? verdictColor("slower") : verdictColor("faster"));
            }
        }
        if (flame->grew.empty() && flame->shrank.empty())
            add(tr("unchanged"), {}, {}, {}, {}, tr("no function's share moved by half a point or more"));
    }
    m_stacks->resizeColumnsToContents();
}

bool CompareWindow::exportPng(const QString& path) const
{
    QWidget* page = m_tabs->currentWidget();
    if (!page) return false;
    return page->grab().save(path, "PNG");
}

bool CompareWindow::exportPdf(const QString& path) const
{
    QPdfWriter pdf(path);
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageOrientation(QPageLayout::Landscape);
    pdf.setResolution(144);
    pdf.setTitle(windowTitle());
    QPainter p;
    if (!p.begin(&pdf)) return false;
    QFont font = p.font();
    font.setPointSizeF(8);
    p.setFont(font);
    const QFontMetrics fm(font, &pdf);
    const int line = fm.height() + 6;
    const QRect page(0, 0, pdf.width(), pdf.height());
    // Columns as wide as their widest text.
    const QTableWidget* t = m_metrics;
    std::vector<int> widths(static_cast<size_t>(t->columnCount()), 0);
    const auto header = [t](int c) { return t->horizontalHeaderItem(c) ? t->horizontalHeaderItem(c)->text() : QString(); };
    for (int c = 0; c < t->columnCount(); ++c) {
        widths[static_cast<size_t>(c)] = fm.horizontalAdvance(header(c));
        for (int r = 0; r < t->rowCount(); ++r)
            if (t->item(r, c)) widths[static_cast<size_t>(c)] = std::max(widths[static_cast<size_t>(c)], fm.horizontalAdvance(t->item(r, c)->text()));
    }
    int y = 0;
    p.drawText(QRect(0, y, page.width(), line), Qt::AlignLeft | Qt::AlignVCenter, windowTitle());
    y += line * 2;
    const auto drawRow = [&](int r) {
        int x = 0;
        for (int c = 0; c < t->columnCount(); ++c) {
            const int w = widths[static_cast<size_t>(c)] + 16;
            const QTableWidgetItem* it = r < 0 ? t->horizontalHeaderItem(c) : t->item(r, c);
            if (it) {
                p.setPen(r < 0 ? it->foreground().color() : it->foreground().style() != Qt::NoBrush ? it->foreground().color() : Qt::black);
                if (r < 0 && it->foreground().style() == Qt::NoBrush) p.setPen(Qt::black);
                // Headers align as their column's values do.
                const QTableWidgetItem* first = t->rowCount() > 0 ? t->item(0, c) : nullptr;
                const bool right = r >= 0 ? (it->textAlignment() & Qt::AlignRight) != 0
                                          : first && (first->textAlignment() & Qt::AlignRight) != 0;
                p.drawText(QRect(x, y, w - 8, line), (right ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter, r < 0 ? header(c) : it->text());
            }
            x += w;
        }
        y += line;
    };
    drawRow(-1);
    p.setPen(Qt::gray);
    p.drawLine(0, y, page.width(), y);
    for (int r = 0; r < t->rowCount(); ++r) {
        if (y + line > page.height()) {
            pdf.newPage();
            y = 0;
            drawRow(-1);
        }
        drawRow(r);
    }
    return p.end();
}

QString CompareWindow::text() const
{
    QStringList parts;
    for (size_t i = 0; i < m_comparison.runs.size(); ++i)
        parts << (i == 0 ? tr("Baseline: %1") : tr("Candidate %2: %1").arg(QStringLiteral("%1")).arg(i))
                     .arg(QDir::toNativeSeparators(QString::fromStdString(m_comparison.runs[i].label)));
    parts << QString() << tableText(m_metrics) << QString() << tr("Findings") << tableText(m_findings) << QString()
          << tr("Stacks") << tableText(m_stacks);
    return parts.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

void CompareWindow::chooseExport()
{
    const QStringList filters{tr("PNG image of the current tab (*.png)"), tr("PDF of the metric table (*.pdf)")};
    QString filter = filters.front();
    const QFileInfo base(m_comparison.runs.empty() ? QString() : QString::fromStdString(m_comparison.runs.front().label));
    QString path = QFileDialog::getSaveFileName(this, tr("Export comparison"),
                                                base.dir().filePath(base.completeBaseName() + QStringLiteral("-compare.png")),
                                                filters.join(QStringLiteral(";;")), &filter);
    if (path.isEmpty()) return;
    QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("pdf")) {
        suffix = filter == filters.back() ? QStringLiteral("pdf") : QStringLiteral("png");
        path += QLatin1Char('.') + suffix;
    }
    const bool ok = suffix == QLatin1String("pdf") ? exportPdf(path) : exportPng(path);
    if (!ok) QMessageBox::warning(this, tr("Export failed"), tr("Could not write %1.").arg(QDir::toNativeSeparators(path)));
}

} // namespace runlens::app
