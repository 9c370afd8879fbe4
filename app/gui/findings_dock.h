#pragma once

// The findings dock: the run's findings (kept in the run by the last stored analysis; a run without them is
// analysed on a worker when it opens, and "Analyze again" reruns the rules; a new analysis is held in memory, the
// file opened read-only, until "Keep in run" writes it), drawn as spans on the timeline. Selecting a
// finding shows its episode on the timeline (the window around it, the episode selected), restricts the flame
// graph to its nodes and searches it for the finding's evidence frame.

#include "analysis/rules/finding.h"
#include "analysis/rules/run_analysis.h"
#include "analysis/timeline/run_catalog.h"

#include <QObject>
#include <QString>
#include <map>
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
    void analyze(); // runs the rules again (in memory: the run is not changed)
    // Writes the findings analysed now into the run (replacing its stored ones), on a worker. False when there
    // is nothing to keep or the dock is busy; keptInRun says how it went.
    bool keep();
    bool hasUnkeptFindings() const { return m_fresh != nullptr; }
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
    void keptInRun(bool ok);
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
    std::shared_ptr<const analysis::RunAnalysis> m_fresh; // analysed now, not kept in the run
    std::map<std::string, double> m_freshOverrides;
};

} // namespace runlens::app
