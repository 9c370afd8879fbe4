#pragma once

// The findings dock: the run's findings (kept in the run by the last analysis; a run without them is analysed on
// a worker when it opens, and "Analyze again" reruns the rules), drawn as spans on the timeline. Selecting a
// finding shows its episode on the timeline (the window around it, the episode selected), restricts the flame
// graph to its nodes and searches it for the finding's evidence frame.

#include "analysis/rules/finding.h"
#include "analysis/timeline/run_catalog.h"

#include <QObject>
#include <QString>
#include <memory>
#include <vector>

class QDockWidget;
class QMainWindow;

namespace runlens::widgets {
class FindingsPanel;
class TimelineController;
class TimelineWidget;
} // namespace runlens::widgets

namespace runlens::app {

class FlameDock;

class FindingsDock : public QObject
{
    Q_OBJECT
public:
    FindingsDock(QMainWindow* window, widgets::TimelineController* controller, widgets::TimelineWidget* timeline,
                 FlameDock* flame);

    void setRun(std::shared_ptr<const timeline::RunCatalog> catalog);
    void analyze(); // runs the rules again (keeps the findings in the run when it can write it)
    void clear();
    // Selects the index-th finding (0-based) once the next findings are shown.
    void setInitialFinding(int index) { m_initialFinding = index; }

    QDockWidget* dock() const { return m_dock; }
    widgets::FindingsPanel* panel() const { return m_panel; }
    bool busy() const { return m_busy; }
    // The evidence frame a finding's flame search uses (empty when it names none).
    static QString evidenceFrame(const analysis::Finding& f);

Q_SIGNALS:
    void findingsShown();
    // A finding was selected: the nodes and GPUs ("node:gpuN"; empty: all of the nodes') it concerns (the window
    // shows their series only).
    void scopeSelected(const std::vector<std::string>& nodes, const std::vector<std::string>& gpus = {});

private:
    void load(bool rerun);
    void show(int index);
    QDockWidget* m_dock;
    widgets::FindingsPanel* m_panel;
    widgets::TimelineController* m_controller;
    widgets::TimelineWidget* m_timeline;
    FlameDock* m_flame;
    std::shared_ptr<const timeline::RunCatalog> m_catalog;
    uint64_t m_generation = 0;
    bool m_busy = false;
    int m_initialFinding = -1;
};

} // namespace runlens::app
