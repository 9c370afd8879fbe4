// The main window offscreen: it opens a run on a worker, fills the run browser and shows the imports' problems
// in the bar above the timeline and in the problems list; a run that cannot be opened says why; File › Export
// report writes the report of the open run (its model built on a worker), of a window, and can be cancelled.

#include "analysis/rules/run_analysis.h"
#include "analysis/store/node_clock.h"
#include "analysis/store/run_database.h"
#include "analysis/timeline/run_catalog.h"
#include "app/demo/demo_run.h"
#include "app/gui/findings_dock.h"
#include "app/gui/flame_dock.h"
#include "app/gui/import_dialog.h"
#include "app/gui/main_window.h"
#include "app/gui/report_export.h"
#include "app/gui/run_docks.h"
#include "app/jobs/import_job.h"
#include "tests/test_support.h"
#include "tests/window_support.h"
#include "widgets/findings/findings_panel.h"
#include "widgets/flame/flame_graph_widget.h"
#include "widgets/flame/flame_painter.h"
#include "widgets/flame/flame_panel.h"
#include "widgets/problems/problems_bar.h"
#include "widgets/problems/problems_view.h"
#include "widgets/run_browser/run_browser_model.h"
#include "widgets/timeline/timeline_controller.h"
#include "widgets/timeline/timeline_lane.h"
#include "widgets/timeline/timeline_widget.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QProgressDialog>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>
#include <map>

using namespace runlens;
using test::csvWithProblems;
using test::demoRun;
using test::menuAction;

namespace {

// The windows of each phase of a fixture run from its ground truth (read by the test only): from the end of the
// phase's first step to the end of its last.
std::map<QString, widgets::TimeRange> phaseWindows(const QString& truthFile)
{
    std::map<QString, widgets::TimeRange> out;
    QFile f(truthFile);
    if (!f.open(QIODevice::ReadOnly)) return out;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value(QStringLiteral("event")).toString() != QLatin1String("step")) continue;
        const QString phase = o.value(QStringLiteral("phase")).toString();
        const auto ts = static_cast<int64_t>(o.value(QStringLiteral("ts_ns")).toDouble());
        auto it = out.find(phase);
        if (it == out.end())
            out.emplace(phase, widgets::TimeRange{ts, ts});
        else
            it->second.toNs = std::max(it->second.toNs, ts);
    }
    return out;
}

// The node of a tree named `name` with the most samples (-1: none).
int32_t largest(const analysis::FlameTree& t, std::string_view name)
{
    int32_t best = -1;
    for (int32_t i = 1; i < static_cast<int32_t>(t.nodes().size()); ++i)
        if (t.name(i) == name && (best < 0 || t.node(i).samples > t.node(best).samples)) best = i;
    return best;
}

// A demo run's input files (one GPU per node) in DIR/inputs, for the Import dialog.
bool writeDemoInputs(const QTemporaryDir& dir, int nodes, double hours)
{
    app::DemoSpec spec;
    spec.nodes = nodes;
    spec.gpusPerNode = 1;
    spec.hours = hours;
    return app::writeDemoRun(spec, dir.filePath(QStringLiteral("inputs")).toStdString()).ok();
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // A trainer log without times whose steps match no GPU data of the run (a flat 20 s of one utilization): the bar
    // says it is not on the timeline.
    void problemsBarNamesUnanchoredLog()
    {
        QTemporaryDir dir;
        const std::string csv = csvWithProblems(dir);
        std::string log;
        for (int step = 1; step <= 20; ++step)
            log += "{\"current_steps\": " + std::to_string(step) +
                   ", \"total_steps\": 100, \"loss\": 2.0, "
                   "\"elapsed_time\": \"0:00:" +
                   (step < 10 ? "0" : "") + std::to_string(step) + "\"}\n";
        const std::string logPath = test::writeFile(dir, QStringLiteral("trainer/trainer_log.jsonl"), log);
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        importers::ImportOptions options;
        options.timeZone = "UTC";
        auto plan = importers::planImport({csv, logPath}, options);
        QVERIFY_OK(plan);
        const app::ImportJobResult imported = app::runImport(db, plan.value(), options);
        QCOMPARE(imported.imported, 2);
        QCOMPARE(test::queryOne(db, "SELECT anchor FROM import WHERE format = 'llamafactory-trainer-log'"),
                 QStringLiteral("unanchored"));

        app::MainWindow window;
        window.show();
        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(QString::fromStdString(db));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 10000);
        QVERIFY(window.problemsBar()->isVisible());
        QCOMPARE(window.problemsBar()->text(),
                 QStringLiteral("4 problems in 2 imports (3 dropped input); 1 source without wall-clock times matched "
                                "nothing: not on the timeline"));
    }

    // Importing a multi-node run in the dialog lines up the nodes' clocks and lists them in its summary.
    void importDialogEstimatesClocks()
    {
        QTemporaryDir dir;
        QVERIFY(writeDemoInputs(dir, 2, 0.1));
        app::ImportDialog dialog(QString{});
        QSignalSpy planned(&dialog, &app::ImportDialog::planned);
        QSignalSpy finished(&dialog, &app::ImportDialog::importFinished);
        dialog.setNewRunPath(dir.filePath(QStringLiteral("run.runlens")));
        dialog.addPaths({dir.filePath(QStringLiteral("inputs"))});
        QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, 10000);
        dialog.startImport();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        const QString summary = dialog.summaryText();
        qInfo("%s", qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("clock node0: ")) && summary.contains(QStringLiteral("clock node1: ")),
                 qPrintable(summary));
        QVERIFY2(!test::queryOne(dir.filePath(QStringLiteral("run.runlens")).toStdString(),
                                 "SELECT group_concat(clock_offset_source) FROM node")
                      .isEmpty(),
                 "no clock source stored");
    }

    // The Import dialog from the keyboard alone: Tab leaves the file table and, with Shift+Tab, reaches every
    // control; Alt+N picks a new run, the typed path and Enter (the default button) import.
    void importDialogKeyboardOnly()
    {
        QTemporaryDir dir;
        QVERIFY(writeDemoInputs(dir, 1, 0.05));
        app::ImportDialog dialog(QStringLiteral("/nonexistent/open.runlens"));
        QSignalSpy planned(&dialog, &app::ImportDialog::planned);
        QSignalSpy finished(&dialog, &app::ImportDialog::importFinished);
        dialog.addPaths({dir.filePath(QStringLiteral("inputs"))});
        QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, 10000);
        dialog.show();
        QApplication::setActiveWindow(&dialog);
        QVERIFY(QTest::qWaitForWindowActive(&dialog));
        auto* table = dialog.findChild<QTableView*>();
        QVERIFY(table);
        auto* newPath = [&]() -> QLineEdit* {
            for (auto* e : dialog.findChildren<QLineEdit*>())
                if (e->placeholderText() == QStringLiteral("run.runlens")) return e;
            return nullptr;
        }();
        QVERIFY(newPath);
        QPushButton* import = nullptr;
        for (auto* b : dialog.findChildren<QPushButton*>())
            if (b->text() == QStringLiteral("&Import")) import = b;
        QVERIFY(import);
        for (const auto key : {Qt::Key_Tab, Qt::Key_Backtab}) {
            table->setFocus();
            QSet<QWidget*> seen;
            for (int i = 0; i < 40 && !(seen.contains(newPath) && seen.contains(import)); ++i) {
                QTest::keyClick(QApplication::focusWidget(), key);
                seen.insert(QApplication::focusWidget());
            }
            QVERIFY2(seen.contains(newPath), key == Qt::Key_Tab ? "Tab never reached the new run's path"
                                                                : "Shift+Tab never reached the new run's path");
            QVERIFY2(seen.contains(import), "the Import button was never reached");
        }
        // With RUNLENS_DIALOG_SHOTS=DIR the dialog is saved as DIR/import-dialog.png, for looking at it.
        if (const QString shots = qEnvironmentVariable("RUNLENS_DIALOG_SHOTS"); !shots.isEmpty())
            dialog.grab().save(shots + QStringLiteral("/import-dialog.png"));
        // Alt+N: a new run rather than the open one; the path typed; Enter imports.
        QTest::keyClick(&dialog, Qt::Key_N, Qt::AltModifier);
        auto* intoNew = qobject_cast<QRadioButton*>(QApplication::focusWidget());
        QVERIFY(intoNew && intoNew->text() == QStringLiteral("A &new run:"));
        QTRY_VERIFY(intoNew->isChecked()); // a mnemonic clicks after the button's short press animation
        newPath->setFocus();
        QTest::keyClicks(newPath, dir.filePath(QStringLiteral("keys.runlens")));
        QTest::keyClick(newPath, Qt::Key_Return);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY2(QFileInfo::exists(dir.filePath(QStringLiteral("keys.runlens"))), qPrintable(dialog.summaryText()));
    }

    // The Clocks dock (Ctrl+6) lists every node's offset, its ± and how it was found.
    void clocksDockShowsOffsets()
    {
        QTemporaryDir dir;
        const std::string db = demoRun(dir);
        QVERIFY(!db.empty());
        {
            auto run = store::RunDatabase::open(db, store::OpenMode::ReadWrite);
            QVERIFY_OK(run);
            const QString second = test::queryRows(db, "SELECT name FROM node ORDER BY name").value(1);
            QVERIFY_OK(store::setNodeClockOffset(**run, second.toStdString(), -3'000'000'000, 10'000,
                                                 store::kClockSourceTraces));
        }
        app::MainWindow window;
        window.show();
        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(QString::fromStdString(db));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 10000);
        QAction* toggle = menuAction(window, QStringLiteral("Clocks"));
        QVERIFY(toggle);
        QCOMPARE(toggle->shortcut(), QKeySequence(QStringLiteral("Ctrl+6")));
        toggle->trigger();
        QVERIFY(window.docks()->clocksDock()->isVisible());
        QTableWidget* table = window.docks()->clocksTable();
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->item(0, 3)->text(), QStringLiteral("not set"));
        QCOMPARE(table->item(1, 1)->text(), QStringLiteral("-3.000 s"));
        QVERIFY2(table->item(1, 2)->text().startsWith(QStringLiteral("10")), qPrintable(table->item(1, 2)->text()));
        QCOMPARE(table->item(1, 3)->text(), QStringLiteral("traces"));
    }

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

    void flameFollowsSelectionOnFixture()
    {
        const QString fixtures = test::fixturesDir();
        if (fixtures.isEmpty()) QSKIP("../shared/fixtures is absent");
        const QString base = fixtures + QStringLiteral("/h200-gloo-small/");
        const auto phases = phaseWindows(base + QStringLiteral("truth/events-rank0.jsonl"));
        QVERIFY(phases.count(QStringLiteral("inputstall")) && phases.count(QStringLiteral("accum")));
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("h200.runlens")).toStdString();
        importers::ImportOptions options;
        auto plan = importers::planImport({(base + QStringLiteral("stacks-rank0.speedscope.json")).toStdString(),
                                           (base + QStringLiteral("stacks-rank1.speedscope.json")).toStdString()},
                                          options);
        QVERIFY_OK(plan);
        QCOMPARE(app::runImport(db, plan.value(), options).imported, 2);

        app::MainWindow window;
        window.resize(1600, 1000);
        window.show();
        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(QString::fromStdString(db));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 10000);
        app::FlameDock* flame = window.flame();
        widgets::FlamePanel* panel = flame->panel();
        QVERIFY(flame->dock()->isVisible());
        auto settle = [&] {
            QTRY_VERIFY_WITH_TIMEOUT(!flame->busy(), 20000);
            QTest::qWait(150); // the debounce, then the tree
            QTRY_VERIFY_WITH_TIMEOUT(!flame->busy() && !panel->graph()->busy(), 20000);
        };
        settle();

        // The inputstall phase selected on the timeline: heavy_input_prep is a major block.
        window.controller()->setSelection(phases.at(QStringLiteral("inputstall")));
        settle();
        auto stall = panel->graph()->tree();
        QVERIFY(stall);
        const int32_t prep = largest(*stall, "heavy_input_prep");
        QVERIFY(prep > 0);
        const double share =
            static_cast<double>(stall->node(prep).samples) / static_cast<double>(stall->totalSamples());
        QVERIFY2(share > 0.2, qPrintable(QString::number(share)));
        QVERIFY(panel->graph()->blockRect(prep).width() > panel->graph()->width() / 6);

        // The accum phase as baseline A, then inputstall as B: heavy_input_prep grew, and is drawn red.
        window.controller()->setSelection(phases.at(QStringLiteral("accum")));
        settle();
        QVERIFY(largest(*panel->graph()->tree(), "heavy_input_prep") < 0 ||
                panel->graph()->tree()->node(largest(*panel->graph()->tree(), "heavy_input_prep")).samples * 20 <
                    panel->graph()->tree()->totalSamples());
        panel->pinBaseline();
        window.controller()->setSelection(phases.at(QStringLiteral("inputstall")));
        settle();
        panel->setDiffShown(true);
        QTRY_VERIFY_WITH_TIMEOUT(panel->graph()->diff() && !panel->graph()->busy(), 10000);
        const analysis::DiffTree* diff = panel->graph()->diff();
        int32_t grown = -1;
        for (int32_t i = 1; i < static_cast<int32_t>(diff->nodes().size()); ++i)
            if (diff->node(i).name == "heavy_input_prep" &&
                (grown < 0 || diff->node(i).samplesB > diff->node(grown).samplesB))
                grown = i;
        QVERIFY(grown > 0);
        QVERIFY2(diff->node(grown).delta() > 0.2, qPrintable(QString::number(diff->node(grown).delta())));
        const QColor c = widgets::diffColor(diff->node(grown));
        QVERIFY(c.red() > 200 && c.blue() < 80);
        const QRect box = panel->graph()->blockRect(grown);
        QVERIFY(!box.isNull());
        const QColor drawn =
            panel->graph()->grab().toImage().pixelColor(box.left() + 1, box.top() + 2); // left of the label
        QVERIFY2(drawn.red() > 150 && drawn.red() > drawn.blue() + 60, qPrintable(drawn.name()));
        if (const QString shots = qEnvironmentVariable("RUNLENS_FLAME_SHOTS"); !shots.isEmpty())
            window.grab().save(shots + QStringLiteral("/diff-inputstall-vs-accum.png"));
    }

    void findingsClickThrough()
    {
        // A demo run (communication-bound, a checkpoint stall every 6 min): opening it analyses it on a worker, in
        // memory (the file is not changed), and Keep in run writes the findings; selecting a finding sets the timeline
        // to its episode and the flame graph to its nodes and evidence frame; the primary findings are spans on the
        // timeline.
        QTemporaryDir dir;
        const std::string db = demoRun(dir);
        QVERIFY(!db.empty());

        app::MainWindow window;
        window.show();
        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(QString::fromStdString(db));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 10000);
        app::FindingsDock* findings = window.findings();
        QTRY_VERIFY_WITH_TIMEOUT(!findings->busy() && !findings->panel()->findings().empty(), 30000);
        const auto& list = findings->panel()->findings();
        QCOMPARE(list.front().rule, std::string("COMM_BOUND"));
        QVERIFY(findings->panel()->findChild<QTreeWidget*>()->topLevelItem(0)->text(5).contains(
            QStringLiteral("all 2 nodes")));
        QVERIFY(!window.timeline()->spans().empty());
        // A node unticked in the run browser leaves the flame graph's node set: its caption names the other.
        {
            widgets::RunBrowserModel* model = window.docks()->browserModel();
            QModelIndex node1;
            for (int r = 0; r < model->rowCount(); ++r)
                if (model->index(r, 0).data().toString() == QStringLiteral("node1")) node1 = model->index(r, 0);
            QVERIFY(node1.isValid());
            QVERIFY(model->setData(node1, Qt::Unchecked, Qt::CheckStateRole));
            QTRY_VERIFY2_WITH_TIMEOUT(window.flame()->panel()->captionText().contains(QStringLiteral("nodes: node0")),
                                      qPrintable(window.flame()->panel()->captionText()), 10000);
            QVERIFY(model->setData(node1, Qt::Checked, Qt::CheckStateRole));
            QTRY_VERIFY2_WITH_TIMEOUT(window.flame()->panel()->captionText().contains(QStringLiteral("all nodes")),
                                      qPrintable(window.flame()->panel()->captionText()), 10000);
        }
        // View › Shade findings on the lanes: off, no lane is tinted (the ruler keeps the marks); on again, they are.
        {
            auto* lane = static_cast<widgets::TimelineLane*>(window.timeline()->lanePlot("net"));
            QVERIFY(lane);
            QVERIFY(lane->spanCount() > 0);
            QAction* shade = menuAction(window, QStringLiteral("&Shade findings on the lanes"));
            QVERIFY(shade && shade->isCheckable() && shade->isChecked());
            shade->trigger();
            QCOMPARE(lane->spanCount(), size_t(0));
            QVERIFY(!window.timeline()->spans().empty());
            shade->trigger();
            QVERIFY(lane->spanCount() > 0);
        }
        {
            // Viewing wrote nothing: the analysis is in memory, offered to keep.
            auto before = store::RunDatabase::open(db, store::OpenMode::ReadOnly);
            QVERIFY_OK(before);
            auto none = analysis::loadStoredAnalysis(**before);
            QVERIFY(none && !*none);
        }
        QVERIFY(findings->hasUnkeptFindings() && findings->panel()->keepable());
        QSignalSpy keptSpy(findings, &app::FindingsDock::keptInRun);
        QVERIFY(findings->keep());
        QVERIFY(keptSpy.count() > 0 || keptSpy.wait(30'000));
        QCOMPARE(keptSpy.front().front().toBool(), true);
        QVERIFY(!findings->hasUnkeptFindings() && !findings->panel()->keepable());
        {
            auto kept = store::RunDatabase::open(db, store::OpenMode::ReadOnly);
            QVERIFY_OK(kept);
            auto stored = analysis::loadStoredAnalysis(**kept);
            QVERIFY2(stored && *stored, qPrintable(findings->panel()->findChild<QLabel*>()->text()));
            QCOMPARE((*stored)->analysis.findings.size(), list.size());
        }
        findings->panel()->select(0);
        const analysis::FindingEpisode e = list.front().episodes.front();
        QCOMPARE(window.controller()->selection(),
                 std::optional<widgets::TimeRange>(widgets::TimeRange{e.startNs, e.endNs}));
        QVERIFY(window.controller()->range().fromNs < e.startNs && window.controller()->range().toNs > e.endNs);
        // The evidence frame with its file and line: the search finds that function, not every one of its name.
        const QString searched = window.flame()->panel()->searchField()->text();
        QVERIFY2(searched.startsWith(QStringLiteral("fetch_sub_module (")) && searched.contains(QStringLiteral(".py:")),
                 qPrintable(searched));
        QVERIFY(window.docks()->browserModel()->hiddenSeries().empty()); // the finding covers both nodes and GPUs
        // A finding on one GPU: the other GPU's series are hidden, the node's other devices stay.
        Q_EMIT findings->scopeSelected({"node0"}, {"node0:gpu1"});
        {
            const std::vector<int64_t> h = window.docks()->browserModel()->hiddenSeries();
            for (const store::SeriesInfo& si : window.catalog()->series) {
                const store::DeviceInfo* d = window.catalog()->device(si.deviceId);
                const std::string node =
                    window.catalog()->nodes[static_cast<size_t>(window.catalog()->nodeIndex(si.nodeId))].name;
                const bool shown = node == "node0" && (d->kind != "gpu" || d->name == "1");
                QCOMPARE(std::binary_search(h.begin(), h.end(), si.id), !shown);
            }
        }
        // A finding on one node shows that node's series only.
        Q_EMIT findings->scopeSelected({"node1"});
        const std::vector<int64_t> hidden = window.docks()->browserModel()->hiddenSeries();
        QVERIFY(!hidden.empty());
        for (const store::SeriesInfo& si : window.catalog()->series) {
            const bool isHidden = std::binary_search(hidden.begin(), hidden.end(), si.id);
            QCOMPARE(isHidden,
                     window.catalog()->nodes[static_cast<size_t>(window.catalog()->nodeIndex(si.nodeId))].name !=
                         "node1");
        }

        QVERIFY(findings->panel()->detailsText().contains(QStringLiteral("What to change")));
        QVERIFY(findings->panel()->detailsText().contains(QStringLiteral("stage3_prefetch_bucket_size")));
        // The checkpoint finding: its first stall (335–360 s of the run) becomes the window.
        int ckpt = -1;
        for (size_t i = 0; i < list.size(); ++i)
            if (list[i].rule == "CKPT_GAP") ckpt = static_cast<int>(i);
        QVERIFY(ckpt >= 0);
        findings->panel()->select(ckpt);
        const analysis::FindingEpisode c = list[static_cast<size_t>(ckpt)].episodes.front();
        QCOMPARE(window.controller()->selection(),
                 std::optional<widgets::TimeRange>(widgets::TimeRange{c.startNs, c.endNs}));
        QVERIFY(c.endNs - c.startNs >= 20'000'000'000 && c.endNs - c.startNs <= 30'000'000'000);
        QVERIFY(window.docks()->browserModel()->hiddenSeries().empty()); // both nodes again
        // Its evidence names the checkpoint frames the stalls were spent in, and the flame graph searches them.
        const QString frame = app::FindingsDock::evidenceFrame(list[static_cast<size_t>(ckpt)]);
        QVERIFY2(frame.contains(QStringLiteral("save")), qPrintable(frame));
        // Searched with its file and line, not as a bare name that other functions share.
        QVERIFY2(QRegularExpression(QStringLiteral(R"(^\S.* \(.+:\d+\)$)")).match(frame).hasMatch(), qPrintable(frame));
        QCOMPARE(window.flame()->panel()->searchField()->text(), frame);
    }

    void exportsReport()
    {
        QTemporaryDir dir;
        const std::string db = demoRun(dir);
        QVERIFY(!db.empty());
        app::MainWindow window;
        window.show();
        QAction* exportAction = menuAction(window, QStringLiteral("Export &report…"));
        QVERIFY(exportAction);
        QCOMPARE(exportAction->shortcut(), QKeySequence(QStringLiteral("Ctrl+Shift+E")));
        QVERIFY(!exportAction->isEnabled()); // no run open
        QVERIFY(!window.exportReport(dir.filePath(QStringLiteral("none.pdf")), false));
        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(QString::fromStdString(db));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 10000);
        QVERIFY(exportAction->isEnabled());
        // The findings dock analyses the run and keeps the analysis: the report reads it.
        QTRY_VERIFY_WITH_TIMEOUT(!window.findings()->busy() && !window.findings()->panel()->findings().empty(), 30000);

        app::ReportExport* report = window.reportExport();
        QSignalSpy finished(report, &app::ReportExport::finished);
        QSignalSpy failed(report, &app::ReportExport::failed);
        const QString pdf = dir.filePath(QStringLiteral("report.pdf"));
        QVERIFY(window.exportReport(pdf, false));
        QVERIFY(report->busy());
        QVERIFY(!exportAction->isEnabled());
        QVERIFY(!window.exportReport(dir.filePath(QStringLiteral("second.pdf")), false)); // one at a time
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 120000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().at(0).toString()));
        QCOMPARE(finished.front().at(0).toString(), pdf);
        const int pages = finished.front().at(1).toInt();
        QVERIFY2(pages > 2, qPrintable(QString::number(pages)));
        QVERIFY(exportAction->isEnabled());
        QVERIFY(!report->busy());
        const QList<QLabel*> labels = window.statusBar()->findChildren<QLabel*>();
        QVERIFY(std::any_of(labels.begin(), labels.end(), [&](const QLabel* l) {
            return l->text() == QStringLiteral("report.pdf: %1 pages").arg(pages);
        }));
        QFile file(pdf);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.read(5).startsWith("%PDF"));
        if (!QStandardPaths::findExecutable(QStringLiteral("pdfinfo")).isEmpty()) {
            QProcess info;
            info.start(QStringLiteral("pdfinfo"), {pdf});
            QVERIFY(info.waitForFinished(60000));
            const QString text = QString::fromUtf8(info.readAllStandardOutput());
            const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("Pages:\\s+(\\d+)")).match(text);
            QVERIFY2(m.hasMatch(), qPrintable(text));
            QCOMPARE(m.captured(1).toInt(), pages);
        }

        // The first checkpoint stall's window, as PNG pages: one file per page, and the pages say so.
        const analysis::Finding* ckpt = nullptr;
        for (const analysis::Finding& f : window.findings()->panel()->findings())
            if (f.rule == "CKPT_GAP") ckpt = &f;
        QVERIFY(ckpt && !ckpt->episodes.empty());
        const widgets::TimeRange stall{ckpt->episodes.front().startNs - 10'000'000'000,
                                       ckpt->episodes.front().endNs + 10'000'000'000};
        const QString folder = dir.filePath(QStringLiteral("pages"));
        finished.clear();
        QVERIFY(window.exportReport(folder, true, stall));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 120000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().at(0).toString()));
        const int pngPages = finished.front().at(1).toInt();
        QVERIFY(pngPages >= 1);
        QCOMPARE(QDir(folder).entryList({QStringLiteral("page-*.png")}, QDir::Files).size(), pngPages);

        // Cancelled from the progress dialog: nothing is written, and the status says so.
        QSignalSpy cancelled(report, &app::ReportExport::cancelled);
        const QString never = dir.filePath(QStringLiteral("cancelled.pdf"));
        finished.clear();
        QVERIFY(window.exportReport(never, false));
        const QList<QProgressDialog*> dialogs = window.findChildren<QProgressDialog*>();
        QVERIFY(!dialogs.isEmpty());
        auto* cancel = dialogs.back()->findChild<QPushButton*>(); // the newest (the earlier ones are deleted later)
        QVERIFY(cancel);
        cancel->click();
        QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 60000);
        QVERIFY(finished.isEmpty() && failed.isEmpty());
        QVERIFY(!QFile::exists(never));
        QVERIFY(!report->busy());
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
