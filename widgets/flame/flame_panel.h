#pragma once

// The flame graph with everything around it: Back / Forward / Reset and a breadcrumb of the focus (each step a
// link back to it), a search field ('/' from the graph; substring or regex) with "matched: X % of total" and
// next / previous, colours by phase or by package, flame or icicle orientation, PNG, SVG and PDF export with the
// view state in the caption, and the sandwich view of a function (callers above, callees below, merged over all its
// occurrences) with a table of every function by self and total to pick from.

#include "analysis/flame/flame_search.h"
#include "analysis/flame/flame_tree.h"

#include <QStringList>
#include <QWidget>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSplitter;
class QToolBar;
class QStackedWidget;
class QTableWidget;
class QThreadPool;
class QToolButton;

namespace runlens::widgets {

class FlameGraphWidget;

class FlamePanel : public QWidget
{
    Q_OBJECT

public:
    explicit FlamePanel(QWidget* parent = nullptr);
    ~FlamePanel() override;

    void setTree(std::shared_ptr<const analysis::FlameTree> tree);
    // What the tree shows (run, window, nodes, threads): the caption of exports, and the line under the graph.
    void setCaption(const QStringList& lines);
    QString captionText() const;          // the line under the graph: the view, and baseline A when one is pinned
    void setMessage(const QString& text); // building…, errors

    FlameGraphWidget* graph() const { return m_graph; }
    QLineEdit* searchField() const { return m_search; }
    QString matchedText() const;
    bool sandwichShown() const;
    FlameGraphWidget* sandwichCallers() const { return m_callers; }
    FlameGraphWidget* sandwichCallees() const { return m_callees; }
    QTableWidget* functionTable() const { return m_functions; }

    // Differential view: the tree shown now is pinned as side A; later trees (another window, node or thread set)
    // are drawn as B against it while the diff is on.
    void pinBaseline();
    void setBaseline(std::shared_ptr<const analysis::FlameTree> tree, const QStringList& caption);
    void setSearchText(const QString& text, bool regex);
    std::shared_ptr<const analysis::FlameTree> tree() const { return m_tree; }
    void clearBaseline();
    void setDiffShown(bool on);
    bool diffShown() const;
    bool hasBaseline() const { return m_baseline != nullptr; }

    void showSandwich(int32_t node); // of the function of a node of the current tree
    void showGraph();
    // The export caption: the given lines plus focus and search.
    QStringList exportCaption() const;
    bool exportTo(const QString& path); // .png, .svg or .pdf (one page the size of the drawing)

private:
    QToolBar* buildToolBar();
    QWidget* buildSandwichPage();
    void updateCaption();
    void updateBreadcrumb(const QStringList& path);
    void showCurrent(); // the plain tree, or its diff against the baseline
    void applySearch();
    void fillFunctionTable();
    void chooseExport();

    FlameGraphWidget* m_graph;
    FlameGraphWidget* m_callers;
    FlameGraphWidget* m_callees;
    QTableWidget* m_functions;
    QStackedWidget* m_stack;
    QSplitter* m_sides = nullptr;
    QToolButton* m_back;
    QToolButton* m_forward;
    QToolButton* m_reset;
    QLabel* m_breadcrumb;
    QLineEdit* m_search;
    QCheckBox* m_regex;
    QLabel* m_matched;
    QComboBox* m_colors;
    QToolButton* m_flip;
    QToolButton* m_compare;
    QCheckBox* m_diff;
    QLabel* m_captionLabel;
    QLabel* m_message;
    QLabel* m_sandwichTitle;
    QStringList m_caption;
    std::shared_ptr<const analysis::FlameTree> m_tree;
    std::shared_ptr<const analysis::FlameTree> m_baseline;
    QStringList m_baselineCaption;
    uint64_t m_diffGeneration = 0;
    std::vector<analysis::FunctionTotal> m_totals;
    std::unique_ptr<QThreadPool> m_pool;
    uint64_t m_sandwichGeneration = 0;
};

} // namespace runlens::widgets
