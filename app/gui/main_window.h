#pragma once

#include "app/gui/gui_main.h"

// The main window: wiring only. The timeline in the centre under the problems bar (or the welcome page when no
// run is open), the docks of RunDocks around it, File/View/Help menus, drag and drop, saved geometry and layout.
// Opening, importing and reports run on workers (RunLoader, ImportDialog, ReportExport); this class only hands their
// values on.

#include "app/gui/run_loader.h"
#include "widgets/timeline/timeline_controller.h"

#include <QMainWindow>
#include <QStringList>
#include <memory>
#include <optional>

class QAction;
class QLabel;
class QStackedWidget;

namespace runlens::widgets {
class ProblemsBar;
class TimelineWidget;
} // namespace runlens::widgets

namespace runlens::app {

class CompareWindow;
class FindingsDock;
class FlameDock;
class RecentFiles;
class ReportExport;
class RunDocks;
class WelcomeWidget;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    void openRun(const QString& path);
    // Applied once, when the next run has opened.
    void setInitialView(const InitialView& view) { m_initialView = view; }
    void importPaths(const QStringList& paths); // opens the import dialog with these inputs

    // The open run (null when none), for tests and the dialogs.
    std::shared_ptr<const timeline::RunCatalog> catalog() const { return m_catalog; }
    widgets::TimelineWidget* timeline() const { return m_timeline; }
    widgets::TimelineController* controller() const { return m_controller; }
    widgets::ProblemsBar* problemsBar() const { return m_problemsBar; }
    RunDocks* docks() const { return m_docks; }
    // View › Reset layout: every dock in its default place (placeDocks), sized for the window as it is now.
    void resetLayout(bool placeDocks);
    FlameDock* flame() const { return m_flame; }
    FindingsDock* findings() const { return m_findings; }
    ReportExport* reportExport() const { return m_report; }
    bool loading() const;

    // What File › Export report… does after its dialogs: the report of the open run to `out` (a .pdf, or with png
    // a folder of pages), over `window` when given, on a worker then drawn here; the status bar shows the pages
    // written. False when no run is open or a report is being written.
    bool exportReport(const QString& out, bool png, std::optional<widgets::TimeRange> window = std::nullopt);

    // What File › Compare with… does after its dialog: the open run (the baseline) against `candidates`, on a
    // worker with a busy indicator, then a Compare window (compareOpened). False when no run is open or a
    // comparison is running.
    bool compareWith(const QStringList& candidates);
    bool comparing() const { return m_comparing; }

Q_SIGNALS:
    void runOpened(const QString& path);
    void runFailed(const QString& path, const QString& message);
    void compareOpened(runlens::app::CompareWindow* window);
    void compareFailed(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createMenus();
    void showOpened(const OpenedRun& run);
    void showFailed(const QString& path, const QString& message);
    void chooseRun();
    void chooseCompare();
    void chooseImportFiles();
    void chooseImportFolder();
    void exportTimeline();
    void saveSettings();
    void saveRunLayout(); // the open run's lane layout, under runLayoutKey
    static QString runLayoutKey(const QString& runPath);
    void updateActions();

    widgets::TimelineController* m_controller;
    widgets::TimelineWidget* m_timeline;
    widgets::ProblemsBar* m_problemsBar;
    WelcomeWidget* m_welcome;
    QStackedWidget* m_stack;
    RunDocks* m_docks;
    FlameDock* m_flame;
    FindingsDock* m_findings;
    RunLoader* m_loader;
    RecentFiles* m_recent;
    QLabel* m_status;
    ReportExport* m_report;
    QAction* m_exportTimeline = nullptr;
    QAction* m_exportReport = nullptr;
    QAction* m_exportReportPng = nullptr;
    QAction* m_compare = nullptr;
    QAction* m_keepFindings = nullptr;
    bool m_comparing = false;
    std::shared_ptr<const timeline::RunCatalog> m_catalog;
    QString m_loadingPath;
    InitialView m_initialView;
    void applyInitialView();
};

} // namespace runlens::app
