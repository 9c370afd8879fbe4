// The main window's layout, offscreen: lane order and visibility are kept per run (and come back with it in a new
// window), and at 1024×700 the window fits, the flame bar's controls stay reachable, the run browser shows device
// names, and View › Reset layout sizes the docks for the window.

#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"
#include "app/gui/findings_dock.h"
#include "app/gui/flame_dock.h"
#include "app/gui/main_window.h"
#include "app/gui/run_docks.h"
#include "app/jobs/import_job.h"
#include "importers/import_session.h"
#include "tests/test_support.h"
#include "tests/window_support.h"
#include "widgets/flame/flame_panel.h"
#include "widgets/run_browser/run_browser_model.h"
#include "widgets/timeline/timeline_widget.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <algorithm>

using namespace runlens;
using test::csvWithProblems;
using test::demoRun;
using test::menuAction;

class TestWindowLayout : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // Lane order and visibility belong to a run: changed in one, they do not follow into another, and they come
    // back with their run (also in a new window).
    void laneLayoutPerRun()
    {
        QTemporaryDir dirA, dirB;
        const std::string a = demoRun(dirA);
        const std::string csv = csvWithProblems(dirB);
        const std::string b = dirB.filePath(QStringLiteral("b.runlens")).toStdString();
        importers::ImportOptions options;
        options.timeZone = "UTC";
        auto plan = importers::planImport({csv}, options);
        QVERIFY_OK(plan);
        QCOMPARE(app::runImport(b, plan.value(), options).imported, 1);

        auto ids = [](const std::vector<timeline::LaneSpec>& lanes, bool shownOnly) {
            std::vector<std::string> out;
            for (const auto& l : lanes)
                if (!shownOnly || l.shownByDefault) out.push_back(l.id);
            return out;
        };
        auto open = [](app::MainWindow& w, const std::string& path) {
            QSignalSpy opened(&w, &app::MainWindow::runOpened);
            w.openRun(QString::fromStdString(path));
            QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 10000);
        };
        std::vector<std::string> changedA;
        {
            app::MainWindow window;
            window.show();
            open(window, a);
            widgets::TimelineWidget* t = window.timeline();
            const std::vector<std::string> defaultsA = t->visibleLaneIds();
            QVERIFY(std::find(defaultsA.begin(), defaultsA.end(), "net") != defaultsA.end());
            t->setLaneVisible("net", false);
            t->moveLane("cpu", -2);
            changedA = t->visibleLaneIds();
            QVERIFY(changedA != defaultsA);
            QVERIFY(std::find(changedA.begin(), changedA.end(), "net") == changedA.end());

            open(window, b);
            auto cat = timeline::loadRunCatalog(b);
            QVERIFY_OK(cat);
            QCOMPARE(t->visibleLaneIds(), ids(timeline::laneSpecs(**cat), true)); // B's defaults, untouched by A
            t->moveLane(t->visibleLaneIds().back(), -1);
            const std::vector<std::string> changedB = t->visibleLaneIds();

            open(window, a);
            QCOMPARE(t->visibleLaneIds(), changedA);
            open(window, b);
            QCOMPARE(t->visibleLaneIds(), changedB);
            open(window, a);
            window.close(); // saves the settings
        }
        app::MainWindow again;
        again.show();
        open(again, a);
        QCOMPARE(again.timeline()->visibleLaneIds(), changedA);
    }

    // At 1024×700 the window fits the screen, every flame control is in its bar or in the bar's "»" menu, the
    // run browser shows device names, and View › Reset layout sizes the docks for the window.
    void smallScreen()
    {
        QTemporaryDir dir;
        const std::string db = demoRun(dir);
        QVERIFY(!db.empty());
        QSettings().clear(); // a first start: no layout saved by the other tests' windows
        app::MainWindow window;
        window.resize(1024, 700);
        window.show();
        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(QString::fromStdString(db));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 10000);
        QTest::qWait(50);
        const QSize least = window.minimumSizeHint();
        QVERIFY2(least.width() <= 1024 && least.height() <= 700,
                 qPrintable(QStringLiteral("needs %1×%2").arg(least.width()).arg(least.height())));
        QCOMPARE(window.size(), QSize(1024, 700));

        // The flame bar: at this width every control is in it; in a narrow (floating) dock the last ones go
        // into the "»" menu, which shows.
        auto* bar = window.flame()->panel()->findChild<QToolBar*>(QStringLiteral("flameToolBar"));
        QVERIFY(bar);
        auto barControlsShown = [&] {
            int shown = 0;
            for (QAction* a : bar->actions())
                shown += bar->widgetForAction(a) && bar->widgetForAction(a)->isVisible() ? 1 : 0;
            return shown;
        };
        auto* extension = bar->findChild<QToolButton*>(QStringLiteral("qt_toolbar_ext_button"));
        QVERIFY(extension);
        QTRY_COMPARE(barControlsShown(), static_cast<int>(bar->actions().size()));
        QVERIFY(!extension->isVisible());
        QDockWidget* flameDock = window.flame()->dock();
        flameDock->setFloating(true);
        flameDock->resize(520, 300);
        QTRY_VERIFY(extension->isVisible());
        QVERIFY(barControlsShown() < static_cast<int>(bar->actions().size()));

        // The run browser shows device names; narrow, it drops the points column (its tooltips keep them).
        auto* tree = window.findChild<QTreeView*>(QStringLiteral("runBrowser"));
        QVERIFY(tree);
        QVERIFY2(tree->columnWidth(widgets::RunBrowserModel::NameColumn) >= 120,
                 qPrintable(QString::number(tree->columnWidth(widgets::RunBrowserModel::NameColumn))));
        const QModelIndex node = tree->model()->index(0, widgets::RunBrowserModel::NameColumn);
        QVERIFY(tree->model()->data(node, Qt::ToolTipRole).toString().contains(QStringLiteral(" points")));
        window.resizeDocks({window.docks()->browserDock()}, {400}, Qt::Horizontal);
        QTRY_VERIFY(!tree->isColumnHidden(widgets::RunBrowserModel::PointsColumn));
        window.resizeDocks({window.docks()->browserDock()}, {150}, Qt::Horizontal);
        QTRY_VERIFY(tree->isColumnHidden(widgets::RunBrowserModel::PointsColumn));

        // View › Reset layout: the flame dock back at the bottom, the findings a sensible width for 1024 px.
        window.resizeDocks({window.findings()->dock()}, {700}, Qt::Horizontal);
        QAction* reset = menuAction(window, QStringLiteral("&Reset layout"));
        QVERIFY(reset);
        reset->trigger();
        QTRY_VERIFY(!flameDock->isFloating() && flameDock->isVisible());
        QCOMPARE(window.dockWidgetArea(flameDock), Qt::BottomDockWidgetArea);
        QTRY_VERIFY2(std::abs(window.findings()->dock()->width() - 1024 * 3 / 10) < 40,
                     qPrintable(QString::number(window.findings()->dock()->width())));
        QVERIFY(!tree->isColumnHidden(widgets::RunBrowserModel::NameColumn));
        QCOMPARE(window.size(), QSize(1024, 700));
        const QString shots = qEnvironmentVariable("RUNLENS_DIALOG_SHOTS");
        if (!shots.isEmpty()) window.grab().save(QDir(shots).filePath(QStringLiteral("window-1024x700.png")));
    }
};

QTEST_MAIN(TestWindowLayout)
#include "tst_window_layout.moc"
