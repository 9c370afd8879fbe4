#pragma once

// The interactive flame graph: a flame tree drawn by paintFlame (the drawing the PNG/SVG export and reports
// use), with Focus Block (double-click, Enter or the context menu: the block spans the width, its ancestors stay
// above it, lightened), a focus history (Back/Forward, Esc resets), search highlighting, a tooltip per block and
// keyboard navigation. The layout (which blocks, where, "other" blocks for frames under a pixel) and the search
// run on a worker; results older than the one asked for last are dropped. A new tree (another window, node or
// thread set) keeps the focus when the same call path exists in it, and says so when it does not.

#include "analysis/flame/flame_layout.h"
#include "analysis/flame/flame_search.h"
#include "analysis/flame/flame_tree.h"
#include "widgets/flame/flame_painter.h"

#include <QStringList>
#include <QWidget>
#include <memory>
#include <string>
#include <vector>

class QScrollArea;
class QThreadPool;

namespace runlens::widgets {

class FlameGraphWidget : public QWidget
{
    Q_OBJECT

public:
    explicit FlameGraphWidget(QWidget* parent = nullptr);
    ~FlameGraphWidget() override;

    void setTree(std::shared_ptr<const analysis::FlameTree> tree);
    // A differential graph (null: back to a plain tree with setTree): drawn from diffAsFlameTree(*diff), coloured
    // by the change of each frame's share; `legend` names the two sides.
    void setDiff(std::shared_ptr<const analysis::DiffTree> diff, const QString& legend);
    const analysis::DiffTree* diff() const { return m_layoutDiff.get(); }
    std::shared_ptr<const analysis::FlameTree> tree() const { return m_tree; }

    // Focus Block on a node of the current tree (0: the root, no focus); a new history entry.
    void focusNode(int32_t node);
    void resetFocus();
    void back();
    void forward();
    bool canGoBack() const { return m_historyAt > 0; }
    bool canGoForward() const { return m_historyAt + 1 < static_cast<int>(m_history.size()); }
    int32_t focus() const { return m_focus; }
    std::vector<std::string> focusPath() const { return m_focusPath; }

    // Search: a substring (case-insensitive unless it has capitals) or a regular expression; empty clears it.
    void setSearch(const QString& pattern, bool regex);
    const analysis::FlameSearch* search() const { return m_search.get(); }
    // Makes the next / previous match the current block (focusing out when it lies outside the focus).
    void nextMatch();
    void previousMatch();

    void setColors(FlameColors colors);
    FlameColors colors() const { return m_options.colors; }
    void setIcicle(bool icicle);
    bool icicle() const { return m_options.icicle; }

    // The drawing as shown, and the options it was drawn with (for exports with a caption).
    const analysis::FlameLayout* shownLayout() const { return m_layout.get(); }
    FlamePaintOptions paintOptions() const { return m_options; }

    // For tests: where a node's block is drawn (a null rect when it is not), the block under a point, the
    // keyboard's current node, a block's tooltip, and whether a layout or search is being computed.
    QRect blockRect(int32_t node) const;
    int32_t nodeAt(const QPoint& pos) const;
    int32_t currentNode() const;
    QString tooltipFor(int32_t node) const;
    bool busy() const { return m_inFlight || m_pending; }

    QScrollArea* scrollArea() const; // the scroll area this graph is the widget of, if any

Q_SIGNALS:
    void focusChanged(int32_t node, const QStringList& path); // path: labels from the root's child down
    void focusLost(const QString& message);                   // a new tree without the focused call path
    void searchChanged(double share, int matches, const QString& error);
    void currentChanged(int32_t node);
    void sandwichRequested(int32_t node);
    void searchForRequested(const QString& name); // "Search for this frame"
    void findRequested();                         // '/' pressed
    void layoutShown();
    void layoutFailed(const QString& message); // the layout's worker failed (out of memory); the last one stays

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Result;
    void showTree(std::shared_ptr<const analysis::FlameTree> tree, std::shared_ptr<const analysis::DiffTree> diff);
    void applyFocus(int32_t node, bool record);
    void requestLayout();
    void startLayout();
    void finishLayout(const std::shared_ptr<const Result>& result);
    int rectIndexOf(int32_t node) const;
    void reveal(int index);   // scrolls the enclosing scroll area to the block
    void showFocus();         // scrolls so the focused block and its children are in view
    void stepMatch(int step); // to the next (1) or previous (-1) search match, cycling
    int rectAt(const QPoint& pos) const;
    void setCurrentRect(int index);
    void setHoverRect(int index);
    QRect drawArea() const;

    std::shared_ptr<const analysis::FlameTree> m_tree;
    std::shared_ptr<const analysis::DiffTree> m_diff; // of m_tree, when it is a diff
    int32_t m_focus = 0;
    std::vector<std::string> m_focusPath;
    std::vector<std::vector<std::string>> m_history{{}};
    int m_historyAt = 0;
    QString m_searchPattern;
    bool m_searchRegex = false;
    int m_matchAt = -1;
    FlamePaintOptions m_options;

    // What is drawn: a layout with the tree and search it belongs to.
    std::shared_ptr<const analysis::FlameTree> m_layoutTree;
    std::shared_ptr<const analysis::DiffTree> m_layoutDiff;
    std::shared_ptr<const analysis::FlameLayout> m_layout;
    std::shared_ptr<const analysis::FlameSearch> m_search;
    std::vector<std::vector<int>> m_rows; // per row, rect indices by x
    int m_hover = -1;
    int m_current = -1;
    bool m_showFocus = false;     // the next layout scrolls to the focused block
    bool m_revealCurrent = false; // the next current block set by match navigation is scrolled into view
    int32_t m_currentNode = -1;   // kept across layouts

    std::unique_ptr<QThreadPool> m_pool;
    uint64_t m_generation = 0;
    bool m_inFlight = false;
    bool m_pending = false;
    bool m_searchDirty = true;
};

} // namespace runlens::widgets
