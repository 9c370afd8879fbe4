// Help › Keyboard shortcuts, offscreen: every shortcut the list names, driven through QTest in the main window on a
// demo run (files, docks, the timeline, the flame graph), does what the list says; a shortcut added to the list
// without a check here fails.

#include "analysis/flame/flame_search.h"
#include "app/gui/findings_dock.h"
#include "app/gui/flame_dock.h"
#include "app/gui/help_dialogs.h"
#include "app/gui/main_window.h"
#include "app/gui/run_docks.h"
#include "tests/test_support.h"
#include "tests/window_support.h"
#include "widgets/flame/flame_graph_widget.h"
#include "widgets/flame/flame_panel.h"
#include "widgets/timeline/timeline_controller.h"
#include "widgets/timeline/timeline_lane.h"
#include "widgets/timeline/timeline_widget.h"

#include <QAction>
#include <QApplication>
#include <QContextMenuEvent>
#include <QDockWidget>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>
#include <QWheelEvent>
#include <functional>
#include <map>
#include <tuple>

using namespace runlens;
using test::demoRun;

namespace {

using Check = std::function<void()>;
using Checks = std::map<QString, Check>;

// The main window on a run, its timeline and flame graph, and the steps the checks share. A check is keyed
// "group|keys" as Help › Keyboard shortcuts lists it.
struct ShortcutScene
{
    explicit ShortcutScene(app::MainWindow& w)
        : window(w), c(w.controller()), timeline(w.timeline()), lane(timeline->lanePlot("gpu_util")),
          axis(timeline->lanePlot("axis")), graph(w.flame()->panel()->graph())
    {
    }

    app::MainWindow& window;
    widgets::TimelineController* c;
    widgets::TimelineWidget* timeline;
    QCustomPlot* lane;
    QCustomPlot* axis;
    widgets::FlameGraphWidget* graph;
    widgets::TimeRange full;
    // The flame graph follows the timeline's selection: the flame checks start from the whole run's tree, settled,
    // with the root's children (a block with a sibling on its row, and one with children).
    std::shared_ptr<const analysis::FlameTree> treeHeld;
    std::vector<int32_t> top;

    // A dialog the key opens (modal): its class and title, closed as soon as it shows.
    static QString modalFrom(const std::function<void()>& act)
    {
        QString seen;
        QTimer closer;
        QObject::connect(&closer, &QTimer::timeout, [&] {
            if (QWidget* m = QApplication::activeModalWidget()) {
                seen = QString::fromLatin1(m->metaObject()->className()) + QLatin1Char(':') + m->windowTitle();
                m->close();
            }
        });
        closer.start(20);
        act();
        (void)QTest::qWaitFor([&] { return !seen.isEmpty(); }, 5000); // empty: nothing opened
        return seen;
    }
    static void key(QWidget* w, const QKeySequence& k)
    {
        w->setFocus();
        QTest::keySequence(w, k);
    }
    void middle() const { c->setRange({full.fromNs + full.span() / 4, full.toNs - full.span() / 4}); }
    QPoint laneCentre() const { return lane->axisRect()->rect().center(); }
    QScrollBar* scrollBar() const { return timeline->findChild<QScrollArea*>()->verticalScrollBar(); }
    // The flame graph's current block, after a click that makes it current.
    void pickBlock(int32_t node) const
    {
        QTest::mouseClick(graph, Qt::LeftButton, Qt::NoModifier, graph->blockRect(node).center());
        QTRY_COMPARE(graph->currentNode(), node);
    }
    std::vector<int32_t> childrenOf(int32_t n) const
    {
        std::vector<int32_t> out;
        for (int32_t i = 1; i < static_cast<int32_t>(treeHeld->nodes().size()); ++i)
            if (treeHeld->node(i).parent == n && !graph->blockRect(i).isNull()) out.push_back(i);
        return out;
    }
    void settleFlame()
    {
        c->setSelection(std::nullopt);
        QTest::qWait(150); // the dock's debounce
        QTRY_VERIFY_WITH_TIMEOUT(!window.flame()->busy() && graph->tree() && !graph->blockRect(0).isNull(), 20000);
        treeHeld = graph->tree();
        graph->resetFocus();
        const auto twoChildren = [this] {
            top = childrenOf(0);
            return top.size() >= 2;
        };
        QTRY_VERIFY_WITH_TIMEOUT(twoChildren(), 10000);
    }
    Check dialogCheck(const QKeySequence& k, const QString& want)
    {
        return [this, k, want] {
            const QString seen = modalFrom([&] { QTest::keySequence(&window, k); });
            QVERIFY2(seen.contains(want), qPrintable(k.toString() + QStringLiteral(" opened ") + seen));
        };
    }

    // File and Help: the dialogs they open; View: the docks they show and hide; Ctrl+Q closes the window.
    void addFileAndViewChecks(Checks& checks)
    {
        for (const auto& [id, keys, want] :
             {std::tuple{"File|Ctrl+O", "Ctrl+O", "QFileDialog"}, std::tuple{"File|Ctrl+I", "Ctrl+I", "QFileDialog"},
              std::tuple{"File|Ctrl+Shift+I", "Ctrl+Shift+I", "QFileDialog"},
              std::tuple{"File|Ctrl+Shift+C", "Ctrl+Shift+C", "QFileDialog"},
              std::tuple{"File|Ctrl+E", "Ctrl+E", "QFileDialog"},
              std::tuple{"File|Ctrl+Shift+E", "Ctrl+Shift+E", "Dialog"},
              std::tuple{"Help|F1", "F1", "Keyboard shortcuts"}})
            checks[QString::fromLatin1(id)] =
                dialogCheck(QKeySequence(QString::fromLatin1(keys)), QString::fromLatin1(want));
        const std::vector<QDockWidget*> docks = {window.docks()->browserDock(),  window.docks()->detailsDock(),
                                                 window.docks()->problemsDock(), window.flame()->dock(),
                                                 window.findings()->dock(),      window.docks()->clocksDock()};
        for (int i = 0; i < 6; ++i)
            checks[QStringLiteral("View|Ctrl+%1").arg(i + 1)] = [this, docks, i] {
                QDockWidget* dock = docks[static_cast<size_t>(i)];
                const bool before = dock->isVisible();
                QTest::keySequence(&window, QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)));
                QTRY_COMPARE(dock->isVisible(), !before);
                QTest::keySequence(&window, QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)));
                QTRY_COMPARE(dock->isVisible(), before);
            };
        checks[QStringLiteral("File|Ctrl+Q")] = [this] {
            QTest::keySequence(&window, QKeySequence(QStringLiteral("Ctrl+Q")));
            QTRY_VERIFY(!window.isVisible());
        };
    }

    // The timeline's keys.
    void addTimelineKeyChecks(Checks& checks)
    {
        checks[QStringLiteral("Timeline|W / S, Up / Down")] = [this] {
            for (const auto& [k, in] : {std::pair{Qt::Key_W, true}, std::pair{Qt::Key_Up, true},
                                        std::pair{Qt::Key_S, false}, std::pair{Qt::Key_Down, false}}) {
                middle();
                const auto before = c->range().span();
                key(lane, QKeySequence(k));
                QVERIFY2(in ? c->range().span() < before : c->range().span() > before,
                         qPrintable(QKeySequence(k).toString()));
            }
        };
        checks[QStringLiteral("Timeline|A / D, Left / Right")] = [this] {
            for (const auto& [k, later] : {std::pair{Qt::Key_A, false}, std::pair{Qt::Key_Left, false},
                                           std::pair{Qt::Key_D, true}, std::pair{Qt::Key_Right, true}}) {
                middle();
                const widgets::TimeRange before = c->range();
                key(lane, QKeySequence(k));
                QCOMPARE(c->range().span(), before.span());
                QVERIFY2(later ? c->range().fromNs > before.fromNs : c->range().fromNs < before.fromNs,
                         qPrintable(QKeySequence(k).toString()));
            }
        };
        checks[QStringLiteral("Timeline|Backspace, Alt+Left")] = [this] {
            for (const QKeySequence& k : {QKeySequence(Qt::Key_Backspace), QKeySequence(QStringLiteral("Alt+Left"))}) {
                middle();
                const widgets::TimeRange before = c->range();
                key(lane, QKeySequence(Qt::Key_W));
                QVERIFY(c->range() != before);
                key(lane, k);
                QVERIFY2(c->range() == before, qPrintable(k.toString()));
            }
        };
        checks[QStringLiteral("Timeline|Alt+Right")] = [this] {
            middle();
            key(lane, QKeySequence(Qt::Key_W));
            const widgets::TimeRange zoomed = c->range();
            key(lane, QKeySequence(Qt::Key_Backspace));
            key(lane, QKeySequence(QStringLiteral("Alt+Right")));
            QVERIFY(c->range() == zoomed);
        };
        checks[QStringLiteral("Timeline|F, 0")] = [this] {
            for (const Qt::Key k : {Qt::Key_F, Qt::Key_0}) {
                middle();
                key(lane, QKeySequence(k));
                QVERIFY(c->range() == full);
            }
        };
        checks[QStringLiteral("Timeline|Z")] = [this] {
            const widgets::TimeRange sel{full.fromNs + full.span() / 3, full.fromNs + full.span() / 2};
            c->setSelection(sel);
            key(lane, QKeySequence(Qt::Key_Z));
            QVERIFY(c->range() == sel);
        };
        checks[QStringLiteral("Timeline|Esc")] = [this] {
            c->setSelection(widgets::TimeRange{full.fromNs + full.span() / 3, full.fromNs + full.span() / 2});
            key(lane, QKeySequence(Qt::Key_Escape));
            QVERIFY(!c->selection());
        };
    }

    // The timeline's scrolling and mouse.
    void addTimelineMouseChecks(Checks& checks)
    {
        checks[QStringLiteral("Timeline|Page Up / Page Down")] = [this] {
            QScrollBar* bar = scrollBar();
            QVERIFY(bar->maximum() > 0);
            bar->setValue(0);
            key(lane, QKeySequence(Qt::Key_PageDown));
            QVERIFY(bar->value() > 0);
            key(lane, QKeySequence(Qt::Key_PageUp));
            QCOMPARE(bar->value(), 0);
        };
        checks[QStringLiteral("Timeline|Wheel")] = [this] {
            middle();
            const auto before = c->range().span();
            const QPoint at = laneCentre();
            QWheelEvent wheel(at, lane->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                              Qt::NoScrollPhase, false);
            QApplication::sendEvent(lane, &wheel);
            QVERIFY(c->range().span() < before);
        };
        checks[QStringLiteral("Timeline|Drag")] = [this] {
            middle();
            const widgets::TimeRange before = c->range();
            const QPoint at = laneCentre();
            QTest::mousePress(lane, Qt::LeftButton, Qt::NoModifier, at);
            QTest::mouseMove(lane, at + QPoint(-150, 0));
            QTest::mouseRelease(lane, Qt::LeftButton, Qt::NoModifier, at + QPoint(-150, 0));
            QCOMPARE(c->range().span(), before.span());
            QVERIFY(c->range().fromNs > before.fromNs); // dragged left: later data comes into view
        };
        checks[QStringLiteral("Timeline|Shift+drag, drag on the time axis")] = [this] {
            for (QCustomPlot* on : {lane, axis}) {
                c->setSelection(std::nullopt);
                const Qt::KeyboardModifiers mods = on == lane ? Qt::ShiftModifier : Qt::NoModifier;
                const QPoint at(on->axisRect()->rect().center().x() - 100, on->axisRect()->rect().center().y());
                QTest::mousePress(on, Qt::LeftButton, mods, at);
                QTest::mouseMove(on, at + QPoint(200, 0));
                QTest::mouseRelease(on, Qt::LeftButton, mods, at + QPoint(200, 0));
                QVERIFY2(c->selection().has_value(), on == lane ? "shift-drag on a lane" : "drag on the time axis");
            }
            c->setSelection(std::nullopt);
        };
        checks[QStringLiteral("Timeline|Double-click")] = [this] {
            middle();
            QTest::mouseDClick(lane, Qt::LeftButton, Qt::NoModifier, laneCentre());
            QVERIFY(c->range() == full);
        };
    }

    // The flame graph's focus and navigation.
    void addFlameNavigationChecks(Checks& checks)
    {
        checks[QStringLiteral("Flame graph|Double-click, Enter")] = [this] {
            settleFlame();
            QTest::mouseDClick(graph, Qt::LeftButton, Qt::NoModifier, graph->blockRect(top[0]).center());
            QTRY_COMPARE(graph->focus(), top[0]);
            graph->resetFocus();
            QTRY_VERIFY(!graph->blockRect(top[1]).isNull());
            pickBlock(top[1]);
            key(graph, QKeySequence(Qt::Key_Return));
            QTRY_COMPARE(graph->focus(), top[1]);
            graph->resetFocus();
            QTRY_VERIFY(!graph->blockRect(top[1]).isNull());
        };
        checks[QStringLiteral("Flame graph|Backspace, Alt+Left")] = [this] {
            settleFlame();
            for (const QKeySequence& k : {QKeySequence(Qt::Key_Backspace), QKeySequence(QStringLiteral("Alt+Left"))}) {
                graph->focusNode(top[0]);
                QTRY_COMPARE(graph->focus(), top[0]);
                key(graph, k);
                QTRY_VERIFY2(graph->focus() == 0, qPrintable(k.toString()));
            }
        };
        checks[QStringLiteral("Flame graph|Alt+Right")] = [this] {
            settleFlame();
            graph->focusNode(top[0]);
            key(graph, QKeySequence(Qt::Key_Backspace));
            QTRY_COMPARE(graph->focus(), 0);
            key(graph, QKeySequence(QStringLiteral("Alt+Right")));
            QTRY_COMPARE(graph->focus(), top[0]);
        };
        checks[QStringLiteral("Flame graph|Esc")] = [this] {
            settleFlame();
            graph->focusNode(top[0]);
            QTRY_COMPARE(graph->focus(), top[0]);
            key(graph, QKeySequence(Qt::Key_Escape));
            QTRY_COMPARE(graph->focus(), 0);
        };
        checks[QStringLiteral("Flame graph|Left / Right")] = [this] {
            settleFlame();
            QTRY_VERIFY(!graph->blockRect(top[0]).isNull());
            pickBlock(top[0]);
            key(graph, QKeySequence(Qt::Key_Right));
            const int32_t next = graph->currentNode();
            QVERIFY(next != top[0]);
            QCOMPARE(graph->blockRect(next).top(), graph->blockRect(top[0]).top()); // the same row
            key(graph, QKeySequence(Qt::Key_Left));
            QCOMPARE(graph->currentNode(), top[0]);
        };
        checks[QStringLiteral("Flame graph|Up / Down")] = [this] {
            settleFlame();
            const std::vector<int32_t> kids = childrenOf(top[0]);
            QVERIFY(!kids.empty());
            pickBlock(top[0]);
            key(graph, QKeySequence(Qt::Key_Down)); // icicle: the widest child is below
            const int32_t child = graph->currentNode();
            QVERIFY(std::find(kids.begin(), kids.end(), child) != kids.end());
            key(graph, QKeySequence(Qt::Key_Up));
            QCOMPARE(graph->currentNode(), top[0]);
        };
    }

    // The flame graph's search and context menu.
    void addFlameSearchChecks(Checks& checks)
    {
        checks[QStringLiteral("Flame graph|/")] = [this] {
            key(graph, QKeySequence(Qt::Key_Slash));
            QTRY_VERIFY(window.flame()->panel()->searchField()->hasFocus());
        };
        checks[QStringLiteral("Flame graph|F3, Shift+F3")] = [this] {
            settleFlame();
            const analysis::FlameTree& tree = *treeHeld;
            // A name that more than one block has.
            std::map<std::string, int> counts;
            for (int32_t i = 1; i < static_cast<int32_t>(tree.nodes().size()); ++i)
                ++counts[std::string(tree.name(i))];
            std::string repeated;
            for (const auto& [name, n] : counts)
                if (n > 1 && repeated.empty()) repeated = name;
            QVERIFY(!repeated.empty());
            QSignalSpy changed(graph, &widgets::FlameGraphWidget::searchChanged);
            window.flame()->panel()->setSearchText(QString::fromStdString("^" + repeated + "$"), true);
            QTRY_VERIFY(changed.count() > 0 && graph->search() && graph->search()->matches.size() > 1);
            key(graph, QKeySequence(Qt::Key_F3));
            const int32_t first = graph->currentNode();
            QCOMPARE(tree.name(first), repeated);
            key(graph, QKeySequence(Qt::Key_F3));
            const int32_t second = graph->currentNode();
            QVERIFY(second != first && tree.name(second) == repeated);
            key(graph, QKeySequence(QStringLiteral("Shift+F3")));
            QCOMPARE(graph->currentNode(), first);
            window.flame()->panel()->setSearchText(QString(), false);
        };
        checks[QStringLiteral("Flame graph|Right-click")] = [this] {
            settleFlame();
            graph->resetFocus();
            QTRY_VERIFY(!graph->blockRect(top[0]).isNull());
            QString menu;
            QTimer closer;
            QObject::connect(&closer, &QTimer::timeout, [&] {
                if (QWidget* popup = QApplication::activePopupWidget()) {
                    for (QAction* a : popup->actions())
                        menu += a->text() + QLatin1Char('|');
                    popup->close();
                }
            });
            closer.start(20);
            QContextMenuEvent event(QContextMenuEvent::Mouse, graph->blockRect(top[0]).center(),
                                    graph->mapToGlobal(graph->blockRect(top[0]).center()));
            QApplication::sendEvent(graph, &event);
            QTRY_VERIFY(!menu.isEmpty());
            QVERIFY2(menu.contains(QStringLiteral("Focus")) && menu.contains(QStringLiteral("Sandwich")),
                     qPrintable(menu));
        };
    }
};

} // namespace

class TestShortcuts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // Every shortcut of Help › Keyboard shortcuts, driven through QTest in the main window on a run, with its effect
    // checked; a shortcut added to the list without a check here fails.
    void everyHelpShortcutWorks()
    {
        QTemporaryDir dir;
        const std::string db = demoRun(dir);
        QVERIFY(!db.empty());
        QSettings().clear();
        app::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QApplication::setActiveWindow(&window);
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(QString::fromStdString(db));
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.findings()->busy(), 30000);
        ShortcutScene scene(window);
        QVERIFY(scene.lane && scene.axis && scene.graph);
        QTRY_VERIFY_WITH_TIMEOUT(scene.graph->tree() && !scene.graph->blockRect(0).isNull(), 20000);
        scene.full = scene.c->range();
        Checks checks;
        scene.addFileAndViewChecks(checks);
        scene.addTimelineKeyChecks(checks);
        scene.addTimelineMouseChecks(checks);
        scene.addFlameNavigationChecks(checks);
        scene.addFlameSearchChecks(checks);

        // Every entry of the Help list has its check; Ctrl+Q (which closes the window) last.
        std::vector<QString> order;
        for (const app::ShortcutHelp& h : app::shortcutHelp()) {
            const QString id = h.group + QLatin1Char('|') + h.keys;
            QVERIFY2(checks.count(id),
                     qPrintable(QStringLiteral("no check for the shortcut \"%1\" (%2)").arg(id, h.what)));
            if (id != QStringLiteral("File|Ctrl+Q")) order.push_back(id);
        }
        order.push_back(QStringLiteral("File|Ctrl+Q"));
        QCOMPARE(order.size(), checks.size());
        for (const QString& id : order) {
            QApplication::setActiveWindow(&window); // back from the last dialog or menu
            QTRY_COMPARE(QApplication::activeWindow(), static_cast<QWidget*>(&window));
            checks[id]();
            if (QTest::currentTestFailed()) qWarning("failed: %s", qPrintable(id));
            if (QTest::currentTestFailed()) return;
        }
    }
};

QTEST_MAIN(TestShortcuts)
#include "tst_shortcuts.moc"
