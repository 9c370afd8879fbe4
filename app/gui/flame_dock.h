#pragma once

// The flame graph dock: the stack samples of the timeline's selected window (the whole run when nothing is
// selected), of the nodes and threads chosen here, as a FlamePanel. Trees are built on a worker with its own
// read-only connection; a newer request drops the older results. Threads whose names differ only by numbers
// (pt_autograd_0 … pt_autograd_7) are offered as one pattern.

#include "analysis/timeline/run_catalog.h"
#include "widgets/timeline/timeline_controller.h"

#include <QObject>
#include <QStringList>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QDockWidget;
class QMainWindow;
class QMenu;
class QThreadPool;
class QTimer;
class QToolButton;

namespace runlens::widgets {
class FlamePanel;
}

namespace runlens::app {

// Thread patterns for the filter: every run of digits in a thread name becomes \d+ (names without digits stay
// as they are), with how many threads each pattern covers, the largest group first.
std::vector<std::pair<std::string, int>> threadPatterns(const std::vector<store::ThreadStacks>& threads);

class FlameDock : public QObject
{
    Q_OBJECT
public:
    FlameDock(QMainWindow* window, widgets::TimelineController* controller);
    ~FlameDock() override;

    void setRun(std::shared_ptr<const timeline::RunCatalog> catalog);
    // Applied once the next tree is shown (from the command line): a baseline window to compare the selection
    // with, then focus (a call path 'a;b;c'), search and sandwich (a function name).
    struct View
    {
        std::optional<widgets::TimeRange> compare;
        QString focus, search, sandwich;
        bool regex = false;
    };
    void setInitialView(const View& view) { m_view = view; }
    void clear();

    QDockWidget* dock() const { return m_dock; }
    widgets::FlamePanel* panel() const { return m_panel; }
    // For tests: the thread filter, and whether a tree is being built.
    void setThreadPattern(const QString& pattern);
    // The node filter: these nodes only (all when empty), as the Nodes menu sets it.
    void setNodes(const std::vector<std::string>& nodes);
    bool busy() const { return m_inFlight || m_pending; }

Q_SIGNALS:
    void treeShown(quint64 generation);

private:
    struct Backend;
    struct Request;
    void requestTree();
    void startTree();
    void applyView();
    void applyViewToGraph(const View& view);
    Request makeRequest(std::optional<widgets::TimeRange> window) const;
    QStringList caption(const Request& r) const;

    widgets::TimelineController* m_controller;
    QDockWidget* m_dock;
    widgets::FlamePanel* m_panel;
    QToolButton* m_nodesButton;
    QMenu* m_nodesMenu;
    QComboBox* m_threads;
    QCheckBox* m_idle;
    QTimer* m_debounce;
    std::shared_ptr<const timeline::RunCatalog> m_catalog;
    std::shared_ptr<Backend> m_backend; // used on the worker only
    std::unique_ptr<QThreadPool> m_pool;
    uint64_t m_generation = 0;
    bool m_inFlight = false;
    bool m_pending = false;
    std::optional<View> m_view;
};

} // namespace runlens::app
