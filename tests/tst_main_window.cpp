// The main window offscreen: it opens a run on a worker, fills the run browser and shows the imports' problems
// in the bar above the timeline and in the problems list; a run that cannot be opened says why.

#include "app/gui/main_window.h"
#include "app/gui/run_docks.h"
#include "app/jobs/import_job.h"
#include "tests/test_support.h"
#include "widgets/problems/problems_bar.h"
#include "widgets/problems/problems_view.h"
#include "widgets/run_browser/run_browser_model.h"

#include <QAbstractButton>
#include <QApplication>
#include <QDockWidget>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>

using namespace runlens;

namespace {

// An nvidia-smi CSV of two GPUs with two bad numbers.
std::string csvWithProblems(const QTemporaryDir& dir)
{
    std::string csv = "timestamp, index, name, utilization.gpu [%], power.draw [W]\n";
    for (int i = 0; i < 20; ++i)
        for (int gpu = 0; gpu < 2; ++gpu)
            csv += "2026/11/02 08:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ".000, " +
                   std::to_string(gpu) + ", NVIDIA H100, " + (i == 5 && gpu == 0 ? "1OO" : i == 9 ? "N0" : "50") +
                   " %, 100.0 W\n";
    return test::writeFile(dir, QStringLiteral("node7/gpu.csv"), csv);
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void opensRunWithProblems()
    {
        QTemporaryDir dir;
        const std::string csv = csvWithProblems(dir);
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        importers::ImportOptions options;
        options.timeZone = "UTC";
        auto plan = importers::planImport({csv}, options);
        QVERIFY_OK(plan);
        const app::ImportJobResult imported = app::runImport(db, plan.value(), options);
        QCOMPARE(imported.imported, 1);
        QCOMPARE(imported.problems, 3);

        app::MainWindow window;
        window.show();
        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(QString::fromStdString(db));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 10000);
        QVERIFY(window.catalog());
        QCOMPARE(window.catalog()->nodes.size(), size_t(1));

        QVERIFY(window.problemsBar()->isVisible());
        QCOMPARE(window.problemsBar()->text(), QStringLiteral("3 problems in 1 import (3 dropped input)"));
        QCOMPARE(window.docks()->browserModel()->rowCount(), 1);
        QCOMPARE(window.docks()->browserModel()->index(0, 0).data().toString(), QStringLiteral("node7"));

        // The bar opens the problems list: the import, its kind, every stored occurrence with its place.
        auto* show = window.problemsBar()->findChild<QAbstractButton*>(QStringLiteral("showProblems"));
        QVERIFY(show);
        QTest::mouseClick(show, Qt::LeftButton);
        QVERIFY(window.docks()->problemsDock()->isVisible());
        QTreeWidget* tree = window.docks()->problemsView()->tree();
        QCOMPARE(tree->topLevelItemCount(), 1);
        QTreeWidgetItem* kind = tree->topLevelItem(0)->child(0);
        QVERIFY(kind);
        QCOMPARE(kind->text(widgets::ProblemsView::KindColumn), QStringLiteral("bad_number"));
        QCOMPARE(kind->childCount(), 3);
        QVERIFY2(kind->child(0)->text(0).contains(QStringLiteral("gpu.csv:12:4: expected a number")),
                 qPrintable(kind->child(0)->text(0)));
    }

    void failureIsShown()
    {
        QTemporaryDir dir;
        const std::string notARun = test::writeFile(dir, QStringLiteral("x.runlens"), "not a database");
        app::MainWindow window;
        QSignalSpy failed(&window, &app::MainWindow::runFailed);
        // The message box is modal: close it as soon as it shows.
        QTimer closer;
        connect(&closer, &QTimer::timeout, [] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) box->close();
        });
        closer.start(20);
        window.openRun(QString::fromStdString(notARun));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        QVERIFY(failed.front().at(1).toString().contains(QStringLiteral("x.runlens")));
        QVERIFY(!window.catalog());
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
