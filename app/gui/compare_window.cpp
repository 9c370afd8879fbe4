#include "app/gui/compare_window.h"

#include "analysis/compare/compare_format.h"
#include "analysis/phase/phase_classifier.h"
#include "analysis/store/run_database.h"
#include "app/cli/window_args.h"
#include "widgets/common/background_job.h"
#include "widgets/common/qcp.h"
#include "widgets/flame/flame_graph_widget.h"
#include "widgets/report/compare_report.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QScreen>
#include <QScrollBar>
#include <QSplitter>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>

namespace runlens::app {

using widgets::runColor;
using widgets::runName;

namespace {

constexpr size_t kFlameRows = 12; // functions listed per direction

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
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() +
                                               8); // compact rows: more of the table at once
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

RunComparison compareRunFiles(const QStringList& paths, const std::vector<WindowChoice>& windows,
                              const std::atomic<bool>* cancel)
{
    RunComparison out;
    std::vector<analysis::CompareInput> inputs;
    for (qsizetype i = 0; i < paths.size(); ++i) {
        analysis::CompareInput in;
        in.path = paths.at(i).toStdString();
        const WindowChoice choice =
            static_cast<size_t>(i) < windows.size() ? windows[static_cast<size_t>(i)] : WindowChoice{};
        in.window.wholeRun = choice.kind == WindowChoice::Kind::WholeRun;
        if (choice.kind == WindowChoice::Kind::Given) { // a window relative to the run's start: read the start first
            auto db = store::RunDatabase::open(in.path, store::OpenMode::ReadOnly);
            if (!db) {
                out.error = QObject::tr("Cannot compare: cannot read %1: %2")
                                .arg(paths.at(i), QString::fromStdString(db.error().toString()));
                return out;
            }
            auto w = parseWindowRange(i == 0 ? "window-a" : "window-b", choice.range.trimmed().toStdString(),
                                      runStartNs(**db));
            if (!w) {
                out.error = QObject::tr("%1: %2").arg(QFileInfo(paths.at(i)).fileName(),
                                                      QString::fromStdString(w.error().message));
                return out;
            }
            in.window.window = *w;
        }
        inputs.push_back(std::move(in));
    }
    analysis::CompareOptions options;
    options.flameRows = kFlameRows;
    options.cancel = cancel;
    auto comparison = analysis::compareRunFiles(inputs, options);
    if (comparison)
        static_cast<analysis::RunComparison&>(out) = std::move(*comparison);
    else if (comparison.error().code == ErrorCode::Cancelled)
        out.cancelled = true;
    else
        out.error = QObject::tr("Cannot compare: %1").arg(QString::fromStdString(comparison.error().toString()));
    return out;
}

RunComparison failedComparison(const QString& error)
{
    RunComparison failed;
    failed.error = QObject::tr("Cannot compare: %1").arg(error);
    return failed;
}

CompareWindow::CompareWindow(RunComparison comparison, QWidget* parent)
    : QWidget(parent, Qt::Window), m_tabs(new QTabWidget), m_metrics(nullptr), m_findings(nullptr), m_stacks(nullptr)
{
    setAttribute(Qt::WA_DeleteOnClose);
    for (const analysis::RunSummary& r : comparison.runs)
        m_paths << QString::fromStdString(r.label);

    // Which runs and windows: one line per run in its colour, with its window to compare.
    auto* windows = new QGridLayout;
    windows->setColumnStretch(3, 1);
    for (size_t i = 0; i < comparison.runs.size(); ++i) {
        const int row = static_cast<int>(i);
        auto* name = new QLabel(tr("<span style='color:%1'>■</span> <b>%2</b> %3")
                                    .arg(runColor(i).name(), i == 0 ? tr("Baseline") : tr("Candidate %1").arg(i),
                                         runName(comparison.runs, i).toHtmlEscaped()));
        name->setToolTip(QDir::toNativeSeparators(m_paths.at(row)));
        auto* box = new QComboBox;
        box->addItems({tr("Steady state"), tr("Whole run"), tr("Window:")});
        box->setToolTip(
            tr("The part of the run compared: its steady state (after the start-up the rules leave out), the whole "
               "run, or the window given"));
        auto* range = new QLineEdit;
        range->setPlaceholderText(tr("FROM..TO, e.g. +10m..+2h or 08:40:00..09:10:00 (UTC)"));
        range->setToolTip(
            tr("FROM..TO: ISO 8601, epoch seconds, +offset from the run's start (+90s, +1h30m) or a UTC time "
               "of day; a side may be empty"));
        const analysis::RunSummary& r = comparison.runs[i];
        // Full UTC dates: a time of day alone would be read on the run's first day.
        const auto clock = [](int64_t ns) {
            return QDateTime::fromMSecsSinceEpoch(ns / 1'000'000, Qt::UTC)
                .toString(QStringLiteral("yyyy-MM-ddThh:mm:ss"));
        };
        range->setText(clock(r.fromNs) + QStringLiteral("..") + clock(r.toNs));
        range->setMinimumWidth(range->fontMetrics().horizontalAdvance(range->text()) + 24);
        box->setCurrentIndex(r.windowKind == "whole run" ? 1 : r.windowKind == "given" ? 2 : 0);
        range->setEnabled(box->currentIndex() == 2);
        connect(box, &QComboBox::currentIndexChanged, range, [range](int index) {
            range->setEnabled(index == 2);
            if (index == 2) range->setFocus();
        });
        connect(range, &QLineEdit::returnPressed, this, &CompareWindow::recompare);
        auto* line = new QLabel;
        line->setStyleSheet(QStringLiteral("color: palette(mid)"));
        windows->addWidget(name, row, 0);
        windows->addWidget(box, row, 1);
        windows->addWidget(range, row, 2);
        windows->addWidget(line, row, 3);
        m_windowBoxes.push_back(box);
        m_rangeEdits.push_back(range);
        m_runLines.push_back(line);
    }
    m_recompare = new QPushButton(tr("&Compare again"));
    m_recompare->setToolTip(tr("Compare the runs over the windows chosen (Ctrl+R); while it runs, Cancel stops it"));
    m_recompare->setShortcut(QKeySequence(tr("Ctrl+R")));
    connect(m_recompare, &QPushButton::clicked, this, [this] {
        if (m_cancel)
            m_cancel->store(true);
        else
            recompare();
    });
    m_windowNote = new QLabel;
    m_windowNote->setWordWrap(true);
    auto* windowRow = new QHBoxLayout;
    windowRow->addLayout(windows, 1);
    windowRow->addWidget(m_recompare, 0, Qt::AlignBottom);

    auto* exportButton = new QPushButton(tr("Export…"));
    exportButton->setToolTip(tr("The current tab as a PNG or SVG image, or the whole comparison as PDF"));
    auto* copyButton = new QPushButton(tr("Copy as text"));
    auto* closeButton = new QPushButton(tr("Close"));
    connect(exportButton, &QPushButton::clicked, this, &CompareWindow::chooseExport);
    connect(copyButton, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(text()); });
    connect(closeButton, &QPushButton::clicked, this, &QWidget::close);
    auto* buttons = new QHBoxLayout;
    auto* note =
        new QLabel(tr("Verdicts: Mann–Whitney U, two-sided, α = %1 (p-value in the tooltip). The runs are opened "
                      "read-only.")
                       .arg(analysis::kCompareAlpha));
    note->setStyleSheet(QStringLiteral("color: palette(mid)"));
    buttons->addWidget(note, 1);
    buttons->addWidget(exportButton);
    buttons->addWidget(copyButton);
    buttons->addWidget(closeButton);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(windowRow);
    layout->addWidget(m_windowNote);
    layout->addWidget(m_tabs, 1);
    layout->addLayout(buttons);
    m_windowNote->hide();
    display(std::move(comparison));
    // As wide as the metric table wants (several candidates add four columns each), within the screen.
    int tableWidth = m_metrics->verticalScrollBar()->sizeHint().width() + 2 * m_metrics->frameWidth() + 40;
    for (int c = 0; c < m_metrics->columnCount(); ++c)
        tableWidth += m_metrics->columnWidth(c);
    const QScreen* screen = parent ? parent->screen() : QGuiApplication::primaryScreen();
    const int maxWidth = screen ? screen->availableGeometry().width() * 92 / 100 : 1600;
    resize(std::clamp(tableWidth, 1000, std::max(1000, maxWidth)), 760);
}

void CompareWindow::display(RunComparison comparison)
{
    m_comparison = std::move(comparison);
    const auto& runs = m_comparison.runs;
    QStringList names;
    for (size_t i = 1; i < runs.size(); ++i)
        names << runName(runs, i);
    setWindowTitle(
        tr("%1 vs %2 — RunLens").arg(runs.empty() ? QString() : runName(runs, 0), names.join(QStringLiteral(", "))));
    for (size_t i = 0; i < runs.size() && i < m_runLines.size(); ++i) {
        const auto& r = runs[i];
        m_runLines[i]->setText(tr("%1 (%2); steps from %3")
                                   .arg(formatValue(static_cast<double>(r.toNs - r.fromNs) / 1e9, "s"),
                                        QString::fromStdString(r.windowKind),
                                        r.stepSource.empty() ? tr("nowhere") : QString::fromStdString(r.stepSource)));
        m_runLines[i]->setToolTip(QString::fromStdString(r.mfuText));
    }
    const int current = m_tabs->currentIndex();
    while (m_tabs->count() > 0) {
        QWidget* page = m_tabs->widget(0);
        m_tabs->removeTab(0);
        page->deleteLater();
    }
    fillMetrics();
    fillFindings();
    fillStacks();
    m_tabs->addTab(m_metrics, tr("&Metrics"));
    m_tabs->addTab(m_findings, tr("&Findings"));
    m_tabs->addTab(m_stacks, tr("&Stacks"));
    m_tabs->addTab(makeFlame(), tr("F&lame"));
    m_tabs->addTab(makeCharts(), tr("C&harts"));
    if (current >= 0) m_tabs->setCurrentIndex(current);
}

bool CompareWindow::recompare()
{
    if (m_cancel) return false;
    std::vector<WindowChoice> windows;
    for (size_t i = 0; i < m_windowBoxes.size(); ++i) {
        WindowChoice w;
        w.kind = static_cast<WindowChoice::Kind>(m_windowBoxes[i]->currentIndex());
        w.range = m_rangeEdits[i]->text();
        if (w.kind == WindowChoice::Kind::Given && !w.range.contains(QStringLiteral(".."))) {
            m_windowNote->setText(
                tr("<span style='color:#c0392b'>%1: the window is FROM..TO</span>").arg(runName(m_comparison.runs, i)));
            m_windowNote->show();
            m_rangeEdits[i]->setFocus();
            return false;
        }
        windows.push_back(w);
    }
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_recompare->setText(tr("Cancel"));
    m_windowNote->setText(tr("Comparing over the windows chosen…"));
    m_windowNote->show();
    QApplication::setOverrideCursor(Qt::BusyCursor);
    const QStringList paths = m_paths;
    auto cancel = m_cancel;
    widgets::startJob(
        this, nullptr, [paths, windows, cancel] { return compareRunFiles(paths, windows, cancel.get()); },
        failedComparison,
        [this](RunComparison result) {
            QApplication::restoreOverrideCursor();
            m_cancel.reset();
            m_recompare->setText(tr("&Compare again"));
            if (result.cancelled || !result.error.isEmpty()) {
                m_windowNote->setText(
                    result.cancelled ? tr("Cancelled: the comparison shown is the one before")
                                     : tr("<span style='color:#c0392b'>%1</span>").arg(result.error.toHtmlEscaped()));
                Q_EMIT recompared(false);
                return;
            }
            m_windowNote->hide();
            display(std::move(result));
            Q_EMIT recompared(true);
        });
    return true;
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
        m_metrics->setHorizontalHeaderItem(
            static_cast<int>(2 + 4 * (c - 1)),
            runHeader(runName(runs, c), runColor(c), QDir::toNativeSeparators(QString::fromStdString(runs[c].label))));
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
                verdict->setToolTip(
                    cell.p < 0.001 ? tr("Mann–Whitney U on %1: p < 0.001").arg(QString::fromStdString(row.samplesOf))
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
    headers << tr("Status") << tr("Rule") << tr("Impact before → after") << tr("Saving before → after")
            << tr("Finding");
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
                const QString status = change.status == analysis::FindingChange::Status::Gone    ? tr("gone")
                                       : change.status == analysis::FindingChange::Status::Still ? tr("still there")
                                                                                                 : tr("new");
                auto* s = item(status);
                s->setData(Qt::UserRole, QString::fromLatin1(analysis::statusName(change.status)));
                s->setForeground(change.status == analysis::FindingChange::Status::Gone ? verdictColor("faster")
                                 : change.status == analysis::FindingChange::Status::New
                                     ? verdictColor("slower")
                                     : palette().color(QPalette::Text));
                m_findings->setItem(r, off, s);
                auto* rule = item(QString::fromStdString(change.finding().rule));
                rule->setToolTip(QString::fromStdString(analysis::findingCharacter(change.finding())));
                m_findings->setItem(r, off + 1, rule);
                const auto side = [&](bool present, const QString& v) { return present ? v : QStringLiteral("—"); };
                m_findings->setItem(
                    r, off + 2,
                    number(side(change.a.has_value(), QStringLiteral("%1 %").arg(100 * change.impactA, 0, 'f', 1)) +
                           QStringLiteral(" → ") +
                           side(change.b.has_value(), QStringLiteral("%1 %").arg(100 * change.impactB, 0, 'f', 1))));
                m_findings->setItem(
                    r, off + 3,
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
        const auto add = [&](const QString& what, const QString& a, const QString& b, const QString& d,
                             const QString& self, const QString& function) {
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
                    pct(ch.selfShareA) + QStringLiteral(" → ") + pct(ch.selfShareB),
                    QString::fromStdString(ch.label()));
                m_stacks->item(m_stacks->rowCount() - 1, off)
                    ->setForeground(grew ? verdictColor("slower") : verdictColor("faster"));
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
    widgets::ReportPageSetup setup;
    setup.pageSize = widgets::defaultPageSize();
    widgets::CompareReportOptions options;
    options.align = m_align && m_align->currentIndex() == 1 ? widgets::CompareAlign::Step : widgets::CompareAlign::Time;
    return static_cast<bool>(widgets::renderCompareReport(m_comparison, path, false, setup, options));
}

bool CompareWindow::exportSvg(const QString& path) const
{
    QWidget* page = m_tabs->currentWidget();
    if (!page) return false;
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(page->size());
    svg.setViewBox(QRect(QPoint(0, 0), page->size()));
    svg.setTitle(windowTitle());
    QPainter p;
    if (!p.begin(&svg)) return false;
    page->render(&p, QPoint(), QRegion(), QWidget::DrawChildren);
    return p.end() && QFileInfo(path).size() > 0;
}

QWidget* CompareWindow::makeFlame()
{
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    m_flame = new widgets::FlameGraphWidget;
    auto* candidate = new QComboBox;
    for (size_t c = 1; c < m_comparison.runs.size(); ++c)
        candidate->addItem(runName(m_comparison.runs, c));
    candidate->setVisible(m_comparison.runs.size() > 2);
    auto* search = new QLineEdit;
    search->setPlaceholderText(tr("Search frames (substring; capitals make it case-sensitive)"));
    search->setClearButtonEnabled(true);
    auto* note = new QLabel;
    note->setWordWrap(true);
    auto* controls = new QHBoxLayout;
    controls->addWidget(candidate);
    controls->addWidget(search, 1);
    layout->addLayout(controls);
    layout->addWidget(note);
    layout->addWidget(m_flame, 1);
    const auto showCandidate = [this, note](int index) {
        const size_t c = static_cast<size_t>(std::max(0, index));
        const auto& flame = c < m_comparison.candidates.size() ? m_comparison.candidates[c].flame : std::nullopt;
        if (!flame) {
            m_flame->setTree(nullptr);
            note->setText(tr("Not compared: a run has no timed stack samples in its window."));
            return;
        }
        note->setText(
            tr("The stack samples of both windows merged by call path, each side as shares of its own samples "
               "(%1 → %2): a block's colour is how its share changed from the baseline to %3. Double-click "
               "to focus, hover for the shares.")
                .arg(flame->totalA)
                .arg(flame->totalB)
                .arg(runName(m_comparison.runs, c + 1)));
        m_flame->setDiff(flame->diff,
                         tr("A: %1   B: %2").arg(runName(m_comparison.runs, 0), runName(m_comparison.runs, c + 1)));
    };
    connect(candidate, &QComboBox::currentIndexChanged, this, showCandidate);
    connect(search, &QLineEdit::textChanged, m_flame, [this](const QString& text) { m_flame->setSearch(text, false); });
    showCandidate(0);
    return page;
}

QWidget* CompareWindow::makeCharts()
{
    auto* page = new QWidget;
    m_lossAxis = new QComboBox;
    m_lossAxis->addItem(tr("Step"), static_cast<int>(widgets::LossAxis::Step));
    if (widgets::hasLoss(m_comparison, widgets::LossAxis::Size)) {
        const std::string unit = !m_comparison.curves.empty() && !m_comparison.curves[0].sizeUnit.empty()
                                     ? m_comparison.curves[0].sizeUnit
                                     : "tokens";
        m_lossAxis->addItem(tr("%1 seen").arg(QString::fromStdString(unit)), static_cast<int>(widgets::LossAxis::Size));
    }
    m_lossAxis->addItem(tr("Wall time"), static_cast<int>(widgets::LossAxis::Time));
    // Against tokens by default when that is what the verdict compared (the steps differ in size).
    if (!m_comparison.candidates.empty() && m_comparison.candidates[0].loss.axis != "step" && m_lossAxis->count() == 3)
        m_lossAxis->setCurrentIndex(1);
    m_lossAxis->setToolTip(
        tr("The loss curves' x axis: is the curve unchanged against steps (or tokens), and does a run reach a "
           "loss sooner in wall time?"));
    m_metric = new QComboBox;
    for (const std::string& id : widgets::chartRows(m_comparison))
        for (const analysis::CompareRow& r : m_comparison.rows)
            if (r.id == id) m_metric->addItem(QString::fromStdString(r.label), QString::fromStdString(id));
    const int sm = m_metric->findData(QStringLiteral("sm_active"));
    if (sm >= 0) m_metric->setCurrentIndex(sm);
    m_align = new QComboBox;
    m_align->addItem(tr("Time since the window's start"));
    m_align->addItem(tr("Steps since the window's start"));
    m_align->setToolTip(tr("Align the runs' lines by elapsed time, or by the steps each has done (runs with different "
                           "step times then line up step for step)"));
    auto* lossLabel = new QLabel(tr("&Loss against:"));
    lossLabel->setBuddy(m_lossAxis);
    auto* metricLabel = new QLabel(tr("&Metric:"));
    metricLabel->setBuddy(m_metric);
    auto* alignLabel = new QLabel(tr("&Align by:"));
    alignLabel->setBuddy(m_align);
    auto* controls = new QHBoxLayout;
    controls->addWidget(lossLabel);
    controls->addWidget(m_lossAxis);
    controls->addSpacing(24);
    controls->addWidget(metricLabel);
    controls->addWidget(m_metric);
    controls->addWidget(alignLabel);
    controls->addWidget(m_align);
    controls->addStretch(1);

    m_lossPlot = new QCustomPlot;
    m_linePlot = new QCustomPlot;
    for (QCustomPlot* plot : {m_lossPlot, m_linePlot}) {
        plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
        plot->setMinimumHeight(160);
    }
    auto* summary = new QLabel(widgets::lossSummary(m_comparison));
    summary->setWordWrap(true);
    summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_lossPlot);
    split->addWidget(m_linePlot);
    auto* layout = new QVBoxLayout(page);
    layout->addLayout(controls);
    layout->addWidget(summary);
    layout->addWidget(split, 1);

    const auto redrawLoss = [this] {
        widgets::plotLoss(*m_lossPlot, m_comparison, static_cast<widgets::LossAxis>(m_lossAxis->currentData().toInt()));
        m_lossPlot->replot();
    };
    const auto redrawLine = [this] {
        widgets::plotRow(*m_linePlot, m_comparison, m_metric->currentData().toString().toStdString(),
                         m_align->currentIndex() == 1 ? widgets::CompareAlign::Step : widgets::CompareAlign::Time);
        m_linePlot->replot();
    };
    connect(m_lossAxis, &QComboBox::currentIndexChanged, this, redrawLoss);
    connect(m_metric, &QComboBox::currentIndexChanged, this, redrawLine);
    connect(m_align, &QComboBox::currentIndexChanged, this, redrawLine);
    redrawLoss();
    redrawLine();
    return page;
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
    const QStringList filters{tr("PNG image of the current tab (*.png)"), tr("SVG image of the current tab (*.svg)"),
                              tr("PDF of the whole comparison (*.pdf)")};
    QString filter = filters.front();
    const QFileInfo base(m_comparison.runs.empty() ? QString()
                                                   : QString::fromStdString(m_comparison.runs.front().label));
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export comparison"), base.dir().filePath(base.completeBaseName() + QStringLiteral("-compare.png")),
        filters.join(QStringLiteral(";;")), &filter);
    if (path.isEmpty()) return;
    QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("pdf") && suffix != QLatin1String("svg")) {
        suffix = filter == filters.at(2)   ? QStringLiteral("pdf")
                 : filter == filters.at(1) ? QStringLiteral("svg")
                                           : QStringLiteral("png");
        path += QLatin1Char('.') + suffix;
    }
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const bool ok = suffix == QLatin1String("pdf")   ? exportPdf(path)
                    : suffix == QLatin1String("svg") ? exportSvg(path)
                                                     : exportPng(path);
    QApplication::restoreOverrideCursor();
    if (!ok)
        QMessageBox::warning(this, tr("Export failed"), tr("Could not write %1.").arg(QDir::toNativeSeparators(path)));
}

} // namespace runlens::app
