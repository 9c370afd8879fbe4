#include "widgets/flame/flame_graph_widget.h"

#include "widgets/common/background_job.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QThreadPool>
#include <QTimer>
#include <QToolTip>
#include <algorithm>
#include <utility>

namespace runlens::widgets {

namespace {
constexpr int kFocusContextRows = 1; // ancestor rows kept in view beside a focused block
} // namespace

using analysis::FlameLayout;
using analysis::FlameSearch;
using analysis::FlameTree;

// A layout (and, when asked, a search) computed on the worker.
struct FlameGraphWidget::Result
{
    uint64_t generation = 0;
    std::shared_ptr<const FlameTree> tree;
    std::shared_ptr<const analysis::DiffTree> diff;
    std::shared_ptr<const FlameLayout> layout;
    std::shared_ptr<const FlameSearch> search; // null: keep the one shown
    QString searchError;
    std::vector<std::vector<int>> rows;
    QString error; // the worker failed: nothing else is set
};

FlameGraphWidget::FlameGraphWidget(QWidget* parent) : QWidget(parent), m_pool(std::make_unique<QThreadPool>())
{
    m_pool->setMaxThreadCount(1);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    m_options.legend = true;
    setMinimumHeight(60);
}

FlameGraphWidget::~FlameGraphWidget()
{
    m_pool->waitForDone();
}

void FlameGraphWidget::setDiff(std::shared_ptr<const analysis::DiffTree> diff, const QString& legend)
{
    m_options.diffLegend = legend;
    auto tree = diff ? analysis::diffAsFlameTree(*diff) : nullptr;
    showTree(std::move(tree), std::move(diff));
}

void FlameGraphWidget::setTree(std::shared_ptr<const FlameTree> tree)
{
    showTree(std::move(tree), nullptr);
}

void FlameGraphWidget::showTree(std::shared_ptr<const FlameTree> tree, std::shared_ptr<const analysis::DiffTree> diff)
{
    m_tree = std::move(tree);
    m_diff = std::move(diff);
    m_searchDirty = true;
    int32_t focus = 0;
    if (m_tree && !m_focusPath.empty()) {
        focus = m_tree->find(m_focusPath);
        if (focus < 0) {
            const QString path = QString::fromStdString(m_focusPath.back());
            m_focusPath.clear();
            focus = 0;
            Q_EMIT focusLost(tr("The focused call path (%1) is not in this selection; the focus is reset.").arg(path));
        }
    }
    m_focus = focus;
    Q_EMIT focusChanged(m_focus, [&] {
        QStringList l;
        for (const auto& s : m_focusPath)
            l << QString::fromStdString(s);
        return l;
    }());
    requestLayout();
}

void FlameGraphWidget::focusNode(int32_t node)
{
    applyFocus(node, true);
}

void FlameGraphWidget::resetFocus()
{
    applyFocus(0, true);
}

void FlameGraphWidget::applyFocus(int32_t node, bool record)
{
    if (!m_tree || node < 0 || static_cast<size_t>(node) >= m_tree->nodes().size()) return;
    m_focus = node;
    m_focusPath = node > 0 ? m_tree->path(node) : std::vector<std::string>{};
    if (record && m_history[static_cast<size_t>(m_historyAt)] != m_focusPath) {
        m_history.resize(static_cast<size_t>(m_historyAt) + 1);
        m_history.push_back(m_focusPath);
        m_historyAt = static_cast<int>(m_history.size()) - 1;
    }
    QStringList path;
    for (const auto& s : m_focusPath)
        path << QString::fromStdString(s);
    Q_EMIT focusChanged(m_focus, path);
    m_showFocus = true; // once laid out, the focused block and its children are scrolled into view
    requestLayout();
}

void FlameGraphWidget::back()
{
    if (!canGoBack() || !m_tree) return;
    --m_historyAt;
    const int32_t node = m_history[static_cast<size_t>(m_historyAt)].empty()
                             ? 0
                             : m_tree->find(m_history[static_cast<size_t>(m_historyAt)]);
    applyFocus(std::max(node, 0), false);
}

void FlameGraphWidget::forward()
{
    if (!canGoForward() || !m_tree) return;
    ++m_historyAt;
    const int32_t node = m_history[static_cast<size_t>(m_historyAt)].empty()
                             ? 0
                             : m_tree->find(m_history[static_cast<size_t>(m_historyAt)]);
    applyFocus(std::max(node, 0), false);
}

void FlameGraphWidget::setSearch(const QString& pattern, bool regex)
{
    if (pattern == m_searchPattern && regex == m_searchRegex) return;
    m_searchPattern = pattern;
    m_searchRegex = regex;
    m_searchDirty = true;
    m_matchAt = -1;
    requestLayout();
}

void FlameGraphWidget::nextMatch()
{
    stepMatch(1);
}

void FlameGraphWidget::previousMatch()
{
    stepMatch(-1);
}

void FlameGraphWidget::stepMatch(int step)
{
    if (!m_search || m_search->matches.empty() || !m_layoutTree) return;
    const int n = static_cast<int>(m_search->matches.size());
    m_matchAt = m_matchAt < 0 ? (step > 0 ? 0 : n - 1) : ((m_matchAt + step) % n + n) % n;
    const int32_t node = m_search->matches[static_cast<size_t>(m_matchAt)];
    m_currentNode = node;
    m_revealCurrent = true; // scrolled into view now, or once the new focus is laid out
    // A match outside the focus (or folded into "other") is brought into view by focusing its parent.
    if (rectIndexOf(node) < 0)
        applyFocus(std::max(0, m_layoutTree->node(node).parent), true);
    else
        setCurrentRect(rectIndexOf(node));
}

void FlameGraphWidget::setColors(FlameColors colors)
{
    m_options.colors = colors;
    update();
}

void FlameGraphWidget::setIcicle(bool icicle)
{
    m_options.icicle = icicle;
    update();
    // The root moved to the other end: keep the focused block (the root, unfocused) in view.
    QTimer::singleShot(0, this, [this] { showFocus(); });
}

QRect FlameGraphWidget::drawArea() const
{
    return rect();
}

void FlameGraphWidget::requestLayout()
{
    if (!m_tree) {
        m_layout.reset();
        m_layoutTree.reset();
        update();
        return;
    }
    if (m_inFlight) {
        m_pending = true;
        return;
    }
    startLayout();
}

void FlameGraphWidget::startLayout()
{
    if (!m_tree) return; // requestLayout clears the view instead
    m_inFlight = true;
    m_pending = false;
    const uint64_t generation = ++m_generation;
    auto tree = m_tree;
    auto diff = m_diff;
    const int32_t focus = m_focus;
    const int drawWidth = std::max(QWidget::width(), 100);
    const bool doSearch = m_searchDirty;
    m_searchDirty = false;
    const std::string pattern = m_searchPattern.toStdString();
    const bool regex = m_searchRegex;
    const FlamePaintOptions options = m_options;
    auto failed = [generation](const QString& error) -> std::shared_ptr<const Result> {
        auto r = std::make_shared<Result>();
        r->generation = generation;
        r->error = error;
        return r;
    };
    startJob(
        this, m_pool.get(),
        [=]() -> std::shared_ptr<const Result> {
            auto r = std::make_shared<Result>();
            r->generation = generation;
            r->tree = tree;
            r->diff = diff;
            auto layout = std::make_shared<FlameLayout>(analysis::layoutFlame(*tree, focus, flameMinWidth(drawWidth)));
            // Rows of rect indices by x, for hit tests and arrow keys.
            r->rows.resize(static_cast<size_t>(std::max(layout->rows, 0)));
            for (size_t k = 0; k < layout->rects.size(); ++k)
                r->rows[static_cast<size_t>(layout->rects[k].row)].push_back(static_cast<int>(k));
            for (auto& row : r->rows)
                std::sort(row.begin(), row.end(), [&](int a, int b) {
                    return layout->rects[static_cast<size_t>(a)].x < layout->rects[static_cast<size_t>(b)].x;
                });
            r->layout = std::move(layout);
            if (doSearch) {
                auto found = analysis::searchFlame(*tree, pattern, regex);
                if (found)
                    r->search = std::make_shared<const FlameSearch>(std::move(*found));
                else {
                    r->search = std::make_shared<const FlameSearch>();
                    r->searchError = QString::fromStdString(found.error().message);
                }
            }
            return r;
        },
        failed, [this](const std::shared_ptr<const Result>& r) { finishLayout(r); });
}

void FlameGraphWidget::finishLayout(const std::shared_ptr<const Result>& result)
{
    m_inFlight = false;
    if (result->tree != m_tree || result->diff != m_diff) {
        // Laid out for a tree no longer shown (another selection, or the run closed): dropped.
        m_pending = false;
        requestLayout();
        return;
    }
    if (!result->error.isEmpty()) {
        Q_EMIT layoutFailed(tr("The flame graph could not be laid out: %1").arg(result->error));
        if (std::exchange(m_pending, false)) requestLayout(); // the tree may have gone meanwhile
        return;
    }
    if (m_pending) {
        // A newer request waits; a search this one carried is kept (the next one does not redo it).
        if (result->search) {
            m_search = result->search;
            Q_EMIT searchChanged(m_search->share, static_cast<int>(m_search->matches.size()), result->searchError);
        }
        m_pending = false;
        requestLayout(); // the tree may have gone meanwhile (a run closed): then nothing is laid out
        return;
    }
    const bool treeChanged = m_layoutTree != result->tree;
    m_layoutTree = result->tree;
    m_layoutDiff = result->diff;
    m_layout = result->layout;
    m_rows = result->rows;
    if (result->search) {
        m_search = result->search;
        Q_EMIT searchChanged(m_search->share, static_cast<int>(m_search->matches.size()), result->searchError);
    } else if (treeChanged) {
        m_search.reset();
    }
    m_hover = -1;
    // The keyboard's current block stays on its node when it is still drawn, else on the focus.
    if (treeChanged) m_currentNode = -1;
    int current = m_currentNode >= 0 ? rectIndexOf(m_currentNode) : -1;
    if (current < 0) current = rectIndexOf(m_focus);
    m_current = current;
    m_options.search = m_search.get();
    setMinimumHeight(flameHeight(*m_layout, m_options));
    updateGeometry();
    update();
    const bool focusMoved = std::exchange(m_showFocus, false);
    const int revealIndex = m_current >= 0 && std::exchange(m_revealCurrent, false) ? m_current : -1;
    if (focusMoved || revealIndex >= 0) {
        // The scroll area has not taken the new height yet: scroll once it has (the focus first, then a search
        // match that must be seen).
        QTimer::singleShot(0, this, [this, focusMoved, revealIndex] {
            if (!m_layout) return;
            if (focusMoved) showFocus();
            if (revealIndex >= 0 && revealIndex == m_current) reveal(revealIndex);
        });
    }
    Q_EMIT layoutShown();
}

void FlameGraphWidget::reveal(int index)
{
    // The graph is the widget of a scroll area (a dock shorter than the graph): scroll the block into view.
    QScrollArea* area = scrollArea();
    if (!area) return;
    const QRect r = flameBlockRect(drawArea(), *m_layout, static_cast<size_t>(index), m_options);
    area->ensureVisible(r.center().x(), r.center().y(), r.width() / 2, r.height() * 2);
}

QScrollArea* FlameGraphWidget::scrollArea() const
{
    for (QWidget* w = parentWidget(); w; w = w->parentWidget())
        if (auto* area = qobject_cast<QScrollArea*>(w)) return area->widget() == this ? area : nullptr;
    return nullptr;
}

void FlameGraphWidget::showFocus()
{
    // The focused block near the edge its children grow away from, with one ancestor row beside it for context:
    // at the top of the view for an icicle (children below), at the bottom for a flame (children above).
    QScrollArea* area = scrollArea();
    const int index = rectIndexOf(m_focus);
    if (!area || !m_layout || index < 0) return;
    const QRect r = flameBlockRect(drawArea(), *m_layout, static_cast<size_t>(index), m_options);
    QScrollBar* bar = area->verticalScrollBar();
    const int context = kFocusContextRows * (r.height() + 1) + 2; // rows are a pixel apart
    bar->setValue(m_options.icicle ? r.top() - context : r.bottom() + context - area->viewport()->height());
}

int FlameGraphWidget::rectIndexOf(int32_t node) const
{
    if (!m_layout) return -1;
    for (size_t k = 0; k < m_layout->rects.size(); ++k)
        if (m_layout->rects[k].node == node) return static_cast<int>(k);
    return -1;
}

int FlameGraphWidget::rectAt(const QPoint& pos) const
{
    if (!m_layout || m_rows.empty()) return -1;
    // The row from y (the same arithmetic as the drawing), then the block by x.
    const QRect first = flameBlockRect(drawArea(), *m_layout, 0, m_options);
    const int rowTop0 = m_options.icicle
                            ? first.top() - m_layout->rects[0].row * m_options.rowHeight
                            : first.top() - (m_layout->rows - 1 - m_layout->rects[0].row) * m_options.rowHeight;
    if (pos.y() < rowTop0) return -1;
    int row = (pos.y() - rowTop0) / m_options.rowHeight;
    if (!m_options.icicle) row = m_layout->rows - 1 - row;
    if (row < 0 || row >= static_cast<int>(m_rows.size())) return -1;
    for (int k : m_rows[static_cast<size_t>(row)])
        if (flameBlockRect(drawArea(), *m_layout, static_cast<size_t>(k), m_options).contains(pos)) return k;
    return -1;
}

QRect FlameGraphWidget::blockRect(int32_t node) const
{
    const int k = rectIndexOf(node);
    return k < 0 ? QRect() : flameBlockRect(drawArea(), *m_layout, static_cast<size_t>(k), m_options);
}

int32_t FlameGraphWidget::nodeAt(const QPoint& pos) const
{
    const int k = rectAt(pos);
    return k < 0 ? -1 : m_layout->rects[static_cast<size_t>(k)].node;
}

int32_t FlameGraphWidget::currentNode() const
{
    return m_current < 0 || !m_layout ? -1 : m_layout->rects[static_cast<size_t>(m_current)].node;
}

QString FlameGraphWidget::tooltipFor(int32_t node) const
{
    const int k = rectIndexOf(node);
    return k < 0 || !m_layoutTree ? QString()
                                  : flameTooltip(*m_layoutTree, *m_layout, static_cast<size_t>(k), m_layoutDiff.get());
}

void FlameGraphWidget::setHoverRect(int index)
{
    if (index == m_hover) return;
    // Only the two blocks whose outline changes are repainted.
    if (m_hover >= 0)
        update(flameBlockRect(drawArea(), *m_layout, static_cast<size_t>(m_hover), m_options).adjusted(-2, -2, 2, 2));
    m_hover = index;
    if (m_hover >= 0)
        update(flameBlockRect(drawArea(), *m_layout, static_cast<size_t>(m_hover), m_options).adjusted(-2, -2, 2, 2));
}

void FlameGraphWidget::setCurrentRect(int index)
{
    if (!m_layout || index < 0) return;
    if (m_current >= 0)
        update(flameBlockRect(drawArea(), *m_layout, static_cast<size_t>(m_current), m_options).adjusted(-2, -2, 2, 2));
    m_current = index;
    m_currentNode = m_layout->rects[static_cast<size_t>(index)].node;
    update(flameBlockRect(drawArea(), *m_layout, static_cast<size_t>(index), m_options).adjusted(-2, -2, 2, 2));
    if (std::exchange(m_revealCurrent, false)) reveal(index);
    Q_EMIT currentChanged(m_currentNode);
}

void FlameGraphWidget::paintEvent(QPaintEvent* event)
{
    QPainter p(this);
    p.setRenderHint(QPainter::TextAntialiasing);
    if (!m_layout || !m_layoutTree) {
        p.fillRect(rect(), palette().color(QPalette::Base));
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, m_tree ? tr("laying out…") : tr("No stack samples in this selection."));
        return;
    }
    FlamePaintOptions o = m_options;
    o.hover = m_hover;
    o.current = m_current;
    o.clip = event->rect();
    o.search = m_search.get();
    o.diff = m_layoutDiff.get();
    paintFlame(p, drawArea(), *m_layoutTree, *m_layout, o);
}

void FlameGraphWidget::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (m_tree && (!m_layout || event->oldSize().width() != width())) requestLayout();
}

void FlameGraphWidget::mouseMoveEvent(QMouseEvent* event)
{
    setHoverRect(rectAt(event->position().toPoint()));
}

void FlameGraphWidget::mousePressEvent(QMouseEvent* event)
{
    const int k = rectAt(event->position().toPoint());
    if (k >= 0) setCurrentRect(k);
    QWidget::mousePressEvent(event);
}

void FlameGraphWidget::mouseDoubleClickEvent(QMouseEvent* event)
{
    const int k = rectAt(event->position().toPoint());
    if (k < 0) return;
    const auto& r = m_layout->rects[static_cast<size_t>(k)];
    // An ancestor of the focus focuses back out to it; an "other" block to its parent.
    focusNode(r.node >= 0 ? r.node : r.parent);
}

void FlameGraphWidget::leaveEvent(QEvent* event)
{
    setHoverRect(-1);
    QWidget::leaveEvent(event);
}

bool FlameGraphWidget::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int k = rectAt(help->pos());
        if (k >= 0 && m_layoutTree)
            QToolTip::showText(help->globalPos(),
                               flameTooltip(*m_layoutTree, *m_layout, static_cast<size_t>(k), m_layoutDiff.get()), this,
                               flameBlockRect(drawArea(), *m_layout, static_cast<size_t>(k), m_options));
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void FlameGraphWidget::contextMenuEvent(QContextMenuEvent* event)
{
    const int k = rectAt(event->pos());
    QMenu menu(this);
    if (k >= 0 && m_layoutTree) {
        setCurrentRect(k);
        const auto& r = m_layout->rects[static_cast<size_t>(k)];
        const int32_t node = r.node >= 0 ? r.node : r.parent;
        auto tree = m_layoutTree;
        menu.addAction(tr("Focus Block"), this, [this, node] { focusNode(node); });
        if (r.node > 0) {
            const QString name =
                QString::fromUtf8(tree->name(node).data(), static_cast<qsizetype>(tree->name(node).size()));
            menu.addAction(tr("Copy function name"), this, [name] { QApplication::clipboard()->setText(name); });
            menu.addAction(tr("Copy stack"), this, [tree, node] {
                QStringList lines;
                for (const std::string& l : tree->path(node))
                    lines << QString::fromStdString(l);
                QApplication::clipboard()->setText(lines.join(QLatin1Char('\n')));
            });
            menu.addAction(tr("Sandwich view"), this, [this, node] { Q_EMIT sandwichRequested(node); });
            menu.addAction(tr("Search for this frame"), this, [this, name] { Q_EMIT searchForRequested(name); });
        }
        menu.addSeparator();
    }
    menu.addAction(tr("Reset focus"), this, &FlameGraphWidget::resetFocus)->setEnabled(m_focus > 0);
    menu.addAction(tr("Back"), this, &FlameGraphWidget::back)->setEnabled(canGoBack());
    menu.addAction(tr("Forward"), this, &FlameGraphWidget::forward)->setEnabled(canGoForward());
    menu.exec(event->globalPos());
}

void FlameGraphWidget::keyPressEvent(QKeyEvent* event)
{
    if (!m_layout || m_layout->rects.empty()) {
        QWidget::keyPressEvent(event);
        return;
    }
    const bool alt = event->modifiers() & Qt::AltModifier;
    int cur = m_current >= 0 ? m_current : 0;
    const analysis::FlameRect& r = m_layout->rects[static_cast<size_t>(cur)];
    auto neighbour = [&](int step) {
        const auto& row = m_rows[static_cast<size_t>(r.row)];
        const auto it = std::find(row.begin(), row.end(), cur);
        const long i = (it - row.begin()) + step;
        return i >= 0 && i < static_cast<long>(row.size()) ? row[static_cast<size_t>(i)] : -1;
    };
    auto parentRect = [&] {
        const int32_t parent = r.node >= 0 ? m_layoutTree->node(r.node).parent : r.parent;
        return parent >= 0 ? rectIndexOf(parent) : -1;
    };
    auto widestChild = [&] {
        int best = -1;
        double w = -1;
        if (r.row + 1 >= static_cast<int>(m_rows.size())) return -1;
        for (int k : m_rows[static_cast<size_t>(r.row) + 1]) {
            const auto& c = m_layout->rects[static_cast<size_t>(k)];
            const bool under = c.node >= 0
                                   ? m_layoutTree->node(c.node).parent == r.node || (r.ancestor && c.row == r.row + 1)
                                   : c.parent == r.node;
            if (under && c.width > w) {
                w = c.width;
                best = k;
            }
        }
        return best;
    };
    int next = -1;
    switch (event->key()) {
    case Qt::Key_Left:
        if (alt) {
            back();
            return;
        }
        next = neighbour(-1);
        break;
    case Qt::Key_Right:
        if (alt) {
            forward();
            return;
        }
        next = neighbour(+1);
        break;
    case Qt::Key_Up:
        next = m_options.icicle ? parentRect() : widestChild();
        break;
    case Qt::Key_Down:
        next = m_options.icicle ? widestChild() : parentRect();
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        focusNode(r.node >= 0 ? r.node : r.parent);
        return;
    case Qt::Key_Backspace:
        back();
        return;
    case Qt::Key_Escape:
        resetFocus();
        return;
    case Qt::Key_Slash:
        Q_EMIT findRequested();
        return;
    case Qt::Key_F3:
        if (event->modifiers() & Qt::ShiftModifier)
            previousMatch();
        else
            nextMatch();
        return;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    if (next >= 0) setCurrentRect(next);
    event->accept();
}

} // namespace runlens::widgets
