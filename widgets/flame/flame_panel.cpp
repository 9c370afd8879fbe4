#include "widgets/flame/flame_panel.h"

#include "analysis/flame/flame_diff.h"
#include "widgets/common/background_job.h"
#include "widgets/common/flush_column.h"
#include "widgets/flame/flame_graph_widget.h"
#include "widgets/flame/flame_painter.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QShortcut>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QThreadPool>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace runlens::widgets {

namespace {

QScrollArea* scrolled(QWidget* w)
{
    auto* area = new QScrollArea;
    area->setWidget(w);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    return area;
}

constexpr int kMinGraphHeight = 60;  // px: three rows of blocks
constexpr int kSearchMinWidth = 170; // px

QToolButton* toolButton(const QString& text, const QString& tip)
{
    auto* b = new QToolButton;
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    return b;
}

// A label that asks for little width and takes what the bar leaves (the breadcrumb: clipped when long, the full
// path in its tooltip), so the controls after it stay in the bar.
class ShrinkingLabel : public QLabel
{
public:
    QSize sizeHint() const override { return {80, QLabel::sizeHint().height()}; }
    QSize minimumSizeHint() const override { return {40, QLabel::minimumSizeHint().height()}; }
};

struct SandwichResult
{
    analysis::Sandwich sandwich;
    std::vector<analysis::FunctionTotal> totals;
    QString error; // the worker failed: nothing else is set
};

} // namespace

FlamePanel::FlamePanel(QWidget* parent)
    : QWidget(parent), m_graph(new FlameGraphWidget), m_callers(new FlameGraphWidget), m_callees(new FlameGraphWidget),
      m_functions(new QTableWidget), m_stack(new QStackedWidget), m_pool(std::make_unique<QThreadPool>())
{
    m_pool->setMaxThreadCount(1);
    QToolBar* bar = buildToolBar();
    QWidget* sandwichPage = buildSandwichPage();
    m_stack->addWidget(scrolled(m_graph));
    m_stack->addWidget(sandwichPage);
    m_stack->setMinimumHeight(kMinGraphHeight); // a short dock scrolls the graph rather than growing the window
    m_captionLabel = new QLabel;
    m_captionLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_message = new QLabel;
    m_message->setStyleSheet(QStringLiteral("color: #a05000"));
    auto* status = new QHBoxLayout;
    status->setContentsMargins(6, 0, 6, 2);
    status->addWidget(m_captionLabel, 1);
    status->addWidget(m_message);

    QVBoxLayout* layout = flushColumn(this);
    layout->addWidget(bar);
    layout->addWidget(m_stack, 1);
    layout->addLayout(status);

    connect(m_graph, &FlameGraphWidget::focusChanged, this,
            [this](int32_t, const QStringList& path) { updateBreadcrumb(path); });
    connect(m_graph, &FlameGraphWidget::focusLost, this, &FlamePanel::setMessage);
    connect(m_graph, &FlameGraphWidget::layoutFailed, this, &FlamePanel::setMessage);
    connect(m_graph, &FlameGraphWidget::searchChanged, this, [this](double share, int matches, const QString& error) {
        if (!error.isEmpty())
            m_matched->setText(tr("bad pattern"));
        else if (m_search->text().isEmpty())
            m_matched->clear();
        else
            m_matched->setText(tr("%1 % (%2)").arg(100.0 * share, 0, 'f', 1).arg(matches)); // short: the bar is narrow
        m_matched->setToolTip(!error.isEmpty() ? error
                              : m_search->text().isEmpty()
                                  ? QString()
                                  : tr("The matches hold %1 % of all samples (nested matches counted once); %2 "
                                       "blocks match")
                                        .arg(100.0 * share, 0, 'f', 1)
                                        .arg(matches));
    });
    connect(m_graph, &FlameGraphWidget::findRequested, this, [this] {
        m_search->setFocus(Qt::ShortcutFocusReason);
        m_search->selectAll();
    });
    connect(m_graph, &FlameGraphWidget::searchForRequested, this, [this](const QString& name) {
        m_regex->setChecked(true);
        m_search->setText(QLatin1Char('^') + QRegularExpression::escape(name) + QLatin1Char('$'));
        applySearch();
    });
    connect(m_graph, &FlameGraphWidget::sandwichRequested, this, &FlamePanel::showSandwich);
    updateBreadcrumb({});
}

// The tool bar: focus history, breadcrumb, search, colours, orientation, compare and export; what does not fit a
// narrow dock goes into its "»" menu instead of widening the window.
QToolBar* FlamePanel::buildToolBar()
{
    m_back = toolButton(QStringLiteral("◀"), tr("Back in the focus history (Backspace, Alt+Left)"));
    m_forward = toolButton(QStringLiteral("▶"), tr("Forward in the focus history (Alt+Right)"));
    m_reset = toolButton(tr("Reset"), tr("Show the whole tree (Esc)"));
    m_breadcrumb = new ShrinkingLabel;
    m_breadcrumb->setTextFormat(Qt::RichText);
    m_breadcrumb->setTextInteractionFlags(Qt::LinksAccessibleByMouse);
    m_breadcrumb->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    m_search = new QLineEdit;
    m_search->setPlaceholderText(tr("Search frames (/)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMinimumWidth(kSearchMinWidth); // a file:line search stays readable in a narrow bar
    m_search->setMaximumWidth(260);
    m_regex = new QCheckBox(tr("Regex"));
    m_regex->setToolTip(tr("A regular expression on the function name or on \"name (file:line)\""));
    m_matched = new QLabel;
    auto* prev = toolButton(QStringLiteral("↑"), tr("Previous match (Shift+F3)"));
    auto* next = toolButton(QStringLiteral("↓"), tr("Next match (F3)"));
    m_colors = new QComboBox;
    m_colors->addItem(tr("Colour: phase"));
    m_colors->addItem(tr("Colour: package"));
    m_flip = toolButton(tr("Flame"), tr("Root at the bottom (flame) instead of the top (icicle)"));
    m_flip->setCheckable(true);
    m_flip->setObjectName(QStringLiteral("flameFlip"));
    auto* exportButton =
        toolButton(tr("Export…"), tr("Save the flame graph as PNG, SVG or PDF, with the view in the caption"));
    m_compare = toolButton(tr("Compare"), tr("Pin this flame graph as side A, then select another window or node set "
                                             "and compare (differential flame graph)"));
    m_compare->setPopupMode(QToolButton::InstantPopup);
    auto* compareMenu = new QMenu(m_compare);
    compareMenu->addAction(tr("Pin this selection as baseline (A)"), this, &FlamePanel::pinBaseline);
    compareMenu->addAction(tr("Clear the baseline"), this, &FlamePanel::clearBaseline);
    m_compare->setMenu(compareMenu);
    m_diff = new QCheckBox(tr("Diff vs A"));
    m_diff->setEnabled(false);
    m_diff->setToolTip(tr("Red: grew from A to this selection (B), blue: shrank, as shares of each side's total"));

    auto* bar = new QToolBar;
    bar->setObjectName(QStringLiteral("flameToolBar"));
    bar->setContentsMargins(2, 0, 2, 0);
    for (QWidget* w :
         {static_cast<QWidget*>(m_back), static_cast<QWidget*>(m_forward), static_cast<QWidget*>(m_reset),
          static_cast<QWidget*>(m_breadcrumb), static_cast<QWidget*>(m_search), static_cast<QWidget*>(m_regex),
          static_cast<QWidget*>(prev), static_cast<QWidget*>(next), static_cast<QWidget*>(m_matched),
          static_cast<QWidget*>(m_colors), static_cast<QWidget*>(m_flip), static_cast<QWidget*>(m_compare),
          static_cast<QWidget*>(m_diff), static_cast<QWidget*>(exportButton)})
        bar->addWidget(w);

    connect(m_back, &QToolButton::clicked, m_graph, &FlameGraphWidget::back);
    connect(m_forward, &QToolButton::clicked, m_graph, &FlameGraphWidget::forward);
    connect(m_reset, &QToolButton::clicked, m_graph, &FlameGraphWidget::resetFocus);
    connect(m_breadcrumb, &QLabel::linkActivated, this, [this](const QString& link) {
        // "#k": the k-th step of the path (0: the root).
        const int depth = link.mid(1).toInt();
        int32_t node = m_graph->focus();
        if (!m_graph->tree()) return;
        while (node > 0 && m_graph->tree()->node(node).depth > depth)
            node = m_graph->tree()->node(node).parent;
        m_graph->focusNode(std::max(node, 0));
    });
    auto* searchTimer = new QTimer(this);
    searchTimer->setSingleShot(true);
    searchTimer->setInterval(120);
    connect(searchTimer, &QTimer::timeout, this, &FlamePanel::applySearch);
    connect(m_search, &QLineEdit::textChanged, searchTimer, qOverload<>(&QTimer::start));
    connect(m_search, &QLineEdit::returnPressed, m_graph, &FlameGraphWidget::nextMatch);
    connect(m_regex, &QCheckBox::toggled, this, &FlamePanel::applySearch);
    connect(next, &QToolButton::clicked, m_graph, &FlameGraphWidget::nextMatch);
    connect(prev, &QToolButton::clicked, m_graph, &FlameGraphWidget::previousMatch);
    connect(m_colors, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int i) {
        const auto c = i == 1 ? FlameColors::Package : FlameColors::Phase;
        for (auto* g : {m_graph, m_callers, m_callees})
            g->setColors(c);
    });
    connect(m_flip, &QToolButton::toggled, this, [this](bool flame) { m_graph->setIcicle(!flame); });
    connect(m_diff, &QCheckBox::toggled, this, [this] {
        showCurrent();
        updateCaption();
    });
    connect(exportButton, &QToolButton::clicked, this, &FlamePanel::chooseExport);
    return bar;
}

// Sandwich: callers above the function (drawn root-down so the function sits at the bottom), callees below, and
// every function by self / total on the right.
QWidget* FlamePanel::buildSandwichPage()
{
    m_callers->setIcicle(false);
    m_sandwichTitle = new QLabel;
    auto* backToGraph = toolButton(tr("◀ Flame graph"), tr("Back to the flame graph"));
    auto* sandwichBar = new QHBoxLayout;
    sandwichBar->setContentsMargins(4, 2, 4, 2);
    sandwichBar->addWidget(backToGraph);
    sandwichBar->addWidget(m_sandwichTitle, 1);
    auto* halves = new QSplitter(Qt::Vertical);
    QScrollArea* callersArea = scrolled(m_callers);
    halves->addWidget(callersArea);
    // The callers end at the function, at the bottom of their pane, next to its callees: keep that end in view.
    connect(m_callers, &FlameGraphWidget::layoutShown, callersArea, [callersArea] {
        QTimer::singleShot(0, callersArea, [callersArea] {
            callersArea->verticalScrollBar()->setValue(callersArea->verticalScrollBar()->maximum());
        });
    });
    halves->addWidget(scrolled(m_callees));
    m_functions->setColumnCount(3);
    m_functions->setHorizontalHeaderLabels({tr("Function"), tr("Self"), tr("Total")});
    m_functions->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_functions->verticalHeader()->hide();
    m_functions->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_functions->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* sides = new QSplitter(Qt::Horizontal);
    sides->addWidget(halves);
    sides->addWidget(m_functions);
    sides->setStretchFactor(0, 3);
    sides->setStretchFactor(1, 1);
    m_sides = sides;
    auto* sandwichPage = new QWidget;
    auto* sl = new QVBoxLayout(sandwichPage);
    sl->setContentsMargins(0, 0, 0, 0);
    sl->addLayout(sandwichBar);
    sl->addWidget(sides, 1);

    connect(backToGraph, &QToolButton::clicked, this, &FlamePanel::showGraph);
    connect(m_functions, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (!m_tree || row < 0 || row >= static_cast<int>(m_totals.size())) return;
        const auto& f = m_totals[static_cast<size_t>(row)];
        for (size_t i = 1; i < m_tree->nodes().size(); ++i)
            if (m_tree->name(static_cast<int32_t>(i)) == f.name && m_tree->file(static_cast<int32_t>(i)) == f.file) {
                showSandwich(static_cast<int32_t>(i));
                return;
            }
    });
    return sandwichPage;
}

FlamePanel::~FlamePanel()
{
    m_pool->waitForDone();
}

void FlamePanel::setTree(std::shared_ptr<const analysis::FlameTree> tree)
{
    m_tree = std::move(tree);
    m_message->clear();
    showCurrent();
    if (sandwichShown()) showGraph(); // the sandwich was of the previous tree
}

void FlamePanel::showCurrent()
{
    const uint64_t generation = ++m_diffGeneration;
    if (!diffShown() || !m_tree) {
        m_graph->setTree(m_tree);
        return;
    }
    const QString legend =
        tr("A: %1   B: %2")
            .arg(m_baselineCaption.mid(1).join(QStringLiteral(", ")), m_caption.mid(1).join(QStringLiteral(", ")));
    auto a = m_baseline, b = m_tree;
    using DiffResult = std::pair<std::shared_ptr<const analysis::DiffTree>, QString>; // the diff, or an error
    startJob(
        this, m_pool.get(),
        [a, b] {
            return DiffResult{analysis::diffTree(*a, *b), {}};
        },
        [](const QString& error) {
            return DiffResult{nullptr, error};
        },
        [this, generation, legend](const DiffResult& diff) {
            if (generation != m_diffGeneration) return; // a newer tree or the diff switched off
            if (!diff.first) {
                setMessage(tr("The difference could not be computed: %1").arg(diff.second));
                return;
            }
            m_graph->setDiff(diff.first, legend);
        });
}

void FlamePanel::pinBaseline()
{
    setBaseline(m_tree, m_caption);
    if (m_baseline) setMessage(tr("Baseline pinned: select another window or node set, then Diff vs A"));
}

void FlamePanel::setSearchText(const QString& text, bool regex)
{
    m_regex->setChecked(regex);
    m_search->setText(text);
    applySearch();
}

void FlamePanel::setBaseline(std::shared_ptr<const analysis::FlameTree> tree, const QStringList& caption)
{
    if (!tree) return;
    m_baseline = std::move(tree);
    m_baselineCaption = caption;
    m_diff->setEnabled(true);
    m_compare->setToolTip(tr("Baseline A: %1").arg(caption.join(QStringLiteral(", "))));
    updateCaption();
}

void FlamePanel::clearBaseline()
{
    m_baseline.reset();
    m_diff->setChecked(false);
    m_diff->setEnabled(false);
    showCurrent();
    updateCaption();
}

void FlamePanel::setDiffShown(bool on)
{
    m_diff->setChecked(on && m_baseline);
}

bool FlamePanel::diffShown() const
{
    return m_diff->isChecked() && m_baseline;
}

void FlamePanel::setCaption(const QStringList& lines)
{
    m_caption = lines;
    updateCaption();
}

void FlamePanel::updateCaption()
{
    QString text = m_caption.join(QStringLiteral(" · "));
    QString tip = m_caption.join(QLatin1Char('\n'));
    if (m_baseline) {
        // Which selection A is: the graph is set against it (diff), or it waits pinned.
        const QString a = m_baselineCaption.mid(1).join(QStringLiteral(", "));
        text = diffShown() ? tr("B: %1 · against A: %2").arg(m_caption.mid(1).join(QStringLiteral(", ")), a)
                           : tr("%1 · baseline A pinned: %2").arg(text, a);
        tip += QLatin1Char('\n') + tr("baseline A: %1").arg(a);
    }
    m_captionLabel->setText(text);
    m_captionLabel->setToolTip(tip);
}

QString FlamePanel::captionText() const
{
    return m_captionLabel->text();
}

void FlamePanel::setMessage(const QString& text)
{
    m_message->setText(text);
}

QString FlamePanel::matchedText() const
{
    return m_matched->text();
}

bool FlamePanel::sandwichShown() const
{
    return m_stack->currentIndex() == 1;
}

void FlamePanel::updateBreadcrumb(const QStringList& path)
{
    m_back->setEnabled(m_graph->canGoBack());
    m_forward->setEnabled(m_graph->canGoForward());
    m_reset->setEnabled(!path.isEmpty());
    if (path.isEmpty()) {
        m_breadcrumb->setText(tr("<b>all</b>"));
        m_breadcrumb->setToolTip(tr("Double-click a block (or Enter) to focus it"));
        return;
    }
    QStringList parts{QStringLiteral("<a href=\"#0\">all</a>")};
    // Long paths keep their first step and the last three.
    const int n = static_cast<int>(path.size());
    for (int i = 0; i < n; ++i) {
        if (n > 4 && i == 1) parts << QStringLiteral("…");
        if (n > 4 && i >= 1 && i < n - 3) continue;
        QString name = path[i].section(QStringLiteral(" ("), 0, 0).toHtmlEscaped();
        parts << (i == n - 1 ? QStringLiteral("<b>%1</b>").arg(name)
                             : QStringLiteral("<a href=\"#%1\">%2</a>").arg(i + 1).arg(name));
    }
    m_breadcrumb->setText(parts.join(QStringLiteral(" › ")));
    m_breadcrumb->setToolTip(path.join(QLatin1Char('\n')));
}

void FlamePanel::applySearch()
{
    m_graph->setSearch(m_search->text(), m_regex->isChecked());
}

void FlamePanel::showGraph()
{
    m_stack->setCurrentIndex(0);
    m_graph->setFocus();
}

void FlamePanel::showSandwich(int32_t node)
{
    if (!m_tree || node <= 0) return;
    if (m_stack->currentIndex() != 1) {
        // The graphs take three quarters of the width, the function table the rest.
        const int w = std::max(width(), 400);
        m_sides->setSizes({w * 3 / 4, w / 4});
    }
    m_stack->setCurrentIndex(1);
    m_sandwichTitle->setText(
        tr("Sandwich of %1: computing…")
            .arg(QString::fromUtf8(m_tree->name(node).data(), static_cast<qsizetype>(m_tree->name(node).size()))));
    const uint64_t generation = ++m_sandwichGeneration;
    auto tree = m_tree;
    startJob(
        this, m_pool.get(),
        [tree, node] {
            auto r = std::make_shared<SandwichResult>();
            r->sandwich = analysis::sandwichOf(*tree, node);
            r->totals = analysis::functionTotals(*tree);
            return std::shared_ptr<const SandwichResult>(std::move(r));
        },
        [](const QString& error) {
            auto r = std::make_shared<SandwichResult>();
            r->error = error;
            return std::shared_ptr<const SandwichResult>(std::move(r));
        },
        [this, generation, tree](const std::shared_ptr<const SandwichResult>& r) {
            if (generation != m_sandwichGeneration || tree != m_tree) return; // a newer request or another tree
            if (!r->error.isEmpty()) {
                m_sandwichTitle->setText(tr("The sandwich could not be computed: %1").arg(r->error.toHtmlEscaped()));
                return;
            }
            const auto& sw = r->sandwich;
            const double total = static_cast<double>(std::max<int64_t>(tree->totalSamples(), 1));
            m_sandwichTitle->setText(
                tr("Sandwich of <b>%1</b> (%2): %3 samples, %4 % of total — callers above, callees below")
                    .arg(QString::fromStdString(sw.name).toHtmlEscaped(),
                         QString::fromStdString(sw.file).toHtmlEscaped())
                    .arg(sw.samples)
                    .arg(100.0 * static_cast<double>(sw.samples) / total, 0, 'f', 1));
            m_callers->setTree(sw.callers);
            m_callees->setTree(sw.callees);
            m_totals = r->totals;
            fillFunctionTable();
        });
}

void FlamePanel::fillFunctionTable()
{
    const size_t shown = std::min<size_t>(m_totals.size(), 500);
    m_functions->setSortingEnabled(false);
    m_functions->setRowCount(static_cast<int>(shown));
    for (size_t i = 0; i < shown; ++i) {
        const auto& f = m_totals[i];
        auto* name = new QTableWidgetItem(QString::fromStdString(f.name));
        name->setToolTip(QString::fromStdString(f.file));
        auto* self = new QTableWidgetItem;
        self->setData(Qt::DisplayRole, static_cast<qlonglong>(f.selfSamples));
        auto* total = new QTableWidgetItem;
        total->setData(Qt::DisplayRole, static_cast<qlonglong>(f.samples));
        m_functions->setItem(static_cast<int>(i), 0, name);
        m_functions->setItem(static_cast<int>(i), 1, self);
        m_functions->setItem(static_cast<int>(i), 2, total);
    }
}

QStringList FlamePanel::exportCaption() const
{
    QStringList lines = m_caption;
    const auto path = m_graph->focusPath();
    if (!path.empty()) lines << tr("focus: %1").arg(QString::fromStdString(path.back()));
    if (!m_search->text().isEmpty())
        lines << tr("search: %1 (%2)")
                     .arg(m_search->text(), m_matched->toolTip().isEmpty() ? m_matched->text() : m_matched->toolTip());
    if (diffShown()) lines << tr("against baseline A: %1").arg(m_baselineCaption.mid(1).join(QStringLiteral(", ")));
    return lines;
}

bool FlamePanel::exportTo(const QString& path)
{
    if (!m_graph->tree()) return false;
    FlamePaintOptions o = m_graph->paintOptions();
    o.caption = exportCaption();
    o.search = m_graph->search();
    o.diff = m_graph->diff();
    o.hover = o.current = -1;
    o.clip = QRect();
    const int width = std::max(m_graph->width(), 800);
    if (path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive)) {
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return false;
        const std::string svg = renderFlameSvg(*m_graph->tree(), m_graph->focus(), width, o);
        return f.write(svg.data(), static_cast<qint64>(svg.size())) == static_cast<qint64>(svg.size());
    }
    if (path.endsWith(QStringLiteral(".pdf"), Qt::CaseInsensitive)) {
        // The PNG's drawing as vectors: one page its size, 96 units per inch as on screen.
        const analysis::FlameLayout layout =
            analysis::layoutFlame(*m_graph->tree(), m_graph->focus(), flameMinWidth(width));
        const QRect area(0, 0, width, flameHeight(layout, o));
        QPdfWriter writer(path);
        writer.setCreator(QStringLiteral("RunLens"));
        writer.setTitle(QStringLiteral("RunLens flame graph"));
        writer.setResolution(96);
        writer.setPageSize(
            QPageSize(QSizeF(area.width() * 72.0 / 96.0, area.height() * 72.0 / 96.0), QPageSize::Point));
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        QPainter p(&writer);
        if (!p.isActive()) return false;
        p.setRenderHint(QPainter::TextAntialiasing);
        paintFlame(p, area, *m_graph->tree(), layout, o);
        return p.end();
    }
    return renderFlameImage(*m_graph->tree(), m_graph->focus(), width, o).save(path, "PNG");
}

void FlamePanel::chooseExport()
{
    const QStringList filters{tr("PNG image (*.png)"), tr("SVG drawing (*.svg)"), tr("PDF (*.pdf)")};
    const QStringList suffixes{QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")};
    QString filter = filters.front();
    QString path = QFileDialog::getSaveFileName(this, tr("Export flame graph"), QStringLiteral("flame.png"),
                                                filters.join(QStringLiteral(";;")), &filter);
    if (path.isEmpty()) return;
    // No known suffix: the chosen filter's.
    if (!suffixes.contains(QFileInfo(path).suffix().toLower()))
        path += QLatin1Char('.') + suffixes[std::max(0, static_cast<int>(filters.indexOf(filter)))];
    if (!exportTo(path)) setMessage(tr("Could not write %1").arg(path));
}

} // namespace runlens::widgets
