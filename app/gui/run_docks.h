#pragma once

// The docks around the timeline and their wiring to it: the run browser (series check boxes → hidden series,
// lane list → lane visibility and order), the details panel (range, selection, cursor, picked series) and the
// problems list. Everything is built from the open run's catalog value.

#include "analysis/timeline/run_catalog.h"

#include <QObject>
#include <memory>

class QDockWidget;
class QTableWidget;
class QMainWindow;
class QTreeView;

namespace runlens::widgets {
class DetailsPanel;
class LaneListWidget;
class ProblemsView;
class RunBrowserModel;
class TimelineController;
class TimelineWidget;
} // namespace runlens::widgets

namespace runlens::app {

class RunDocks : public QObject
{
    Q_OBJECT
public:
    RunDocks(QMainWindow* window, widgets::TimelineWidget* timeline, widgets::TimelineController* controller);

    // A newly opened (or reloaded) run; keepHidden keeps the series unchecked before (a reload after an import).
    void setCatalog(const std::shared_ptr<const timeline::RunCatalog>& catalog, bool keepHidden);
    void clear();

    QDockWidget* browserDock() const { return m_browserDock; }
    QDockWidget* detailsDock() const { return m_detailsDock; }
    QDockWidget* problemsDock() const { return m_problemsDock; }
    QDockWidget* clocksDock() const { return m_clocksDock; }
    QTableWidget* clocksTable() const { return m_clocks; }
    widgets::RunBrowserModel* browserModel() const { return m_model; }
    widgets::ProblemsView* problemsView() const { return m_problems; }
    widgets::DetailsPanel* details() const { return m_details; }

    void showProblems();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void refreshLanes();
    void showCurrentSeries();

    widgets::TimelineWidget* m_timeline;
    widgets::TimelineController* m_controller;
    widgets::RunBrowserModel* m_model;
    QTreeView* m_tree;
    widgets::LaneListWidget* m_lanes;
    widgets::DetailsPanel* m_details;
    widgets::ProblemsView* m_problems;
    QDockWidget* m_browserDock;
    QDockWidget* m_detailsDock;
    QDockWidget* m_problemsDock;
    QTableWidget* m_clocks;
    QDockWidget* m_clocksDock;
};

} // namespace runlens::app
