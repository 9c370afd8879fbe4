// The flame graph widget and panel, offscreen, on hand-made trees: Focus Block spans the width and keeps its
// ancestors painted, shares of the total do not change under focus, the search's matched share equals the one
// counted by hand (nested matches once), the sandwich's totals equal the function's, the focus survives a new
// tree that has its call path and is dropped with a message when it does not, history and keyboard.

#include "analysis/flame/flame_diff.h"
#include "analysis/flame/flame_tree.h"
#include "tests/flame_support.h"
#include "widgets/flame/flame_graph_widget.h"
#include "widgets/flame/flame_painter.h"
#include "widgets/flame/flame_panel.h"

#include <QApplication>
#include <QCheckBox>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

using namespace runlens;
using namespace runlens::analysis;
using namespace runlens::widgets;

namespace {

const std::vector<std::string> kMain{"main (train.py)"};
const std::vector<std::string> kMainA{"main (train.py)", "a (train.py)"};

void waitShown(FlameGraphWidget& w)
{
    QTRY_VERIFY_WITH_TIMEOUT(!w.busy() && w.shownLayout(), 10000);
    QCoreApplication::processEvents();
}

// The known tree (flame_support.h) set in a graph or a panel of that size, shown.
template <typename Widget> std::shared_ptr<const FlameTree> showKnownTree(Widget& w, int width, int height)
{
    w.resize(width, height);
    w.show();
    auto tree = test::knownFlameTree();
    w.setTree(tree);
    return tree;
}

bool painted(const QImage& img, const QRect& r)
{
    // The middle of a block is not the white background.
    const QColor c = img.pixelColor(r.center());
    return c != QColor(Qt::white);
}

double percentOfTotal(const QString& tooltip)
{
    // "... \n12.34 % of total, ..."
    const qsizetype at = tooltip.indexOf(QStringLiteral(" % of total"));
    if (at < 0) return -1;
    qsizetype start = at;
    while (start > 0 && (tooltip[start - 1].isDigit() || tooltip[start - 1] == QLatin1Char('.')))
        --start;
    return tooltip.mid(start, at - start).toDouble();
}

} // namespace

class FlameWidgetTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void focusSpansTheWidthAndKeepsAncestors();
    void sharesOfTotalUnchangedUnderFocus();
    void focusSurvivesANewTreeWithItsPath();
    void historyAndKeyboard();
    void searchMatchedShare();
    void nextMatchScrollsIntoView();
    void focusShowsItsChildren();
    void captionNamesBaselineA();
    void treeGoneWhileLayingOut();
    void sandwichTotals();
    void diffOfItselfIsNeutralOnScreen();
    void exportsCarryTheView();
};

void FlameWidgetTest::focusSpansTheWidthAndKeepsAncestors()
{
    FlameGraphWidget w;
    auto tree = showKnownTree(w, 900, 300);
    waitShown(w);
    const int32_t main = tree->find(kMain), a = tree->find(kMainA);
    QVERIFY(main > 0 && a > 0);
    const QRect rootBox = w.blockRect(0);
    QVERIFY(!rootBox.isNull());
    const QRect aBefore = w.blockRect(a);
    QVERIFY(aBefore.width() < rootBox.width() / 2); // 15 of 35 samples
    // The hit test finds the block under its centre.
    QCOMPARE(w.nodeAt(aBefore.center()), a);

    QSignalSpy focused(&w, &FlameGraphWidget::focusChanged);
    QTest::mouseDClick(&w, Qt::LeftButton, Qt::NoModifier, aBefore.center());
    waitShown(w);
    QCOMPARE(w.focus(), a);
    QCOMPARE(focused.count(), 1);
    const QRect aAfter = w.blockRect(a);
    QVERIFY2(std::abs(aAfter.width() - rootBox.width()) <= 1, "the focused block spans the width");
    // Its descendants rescale: b under a had 10 of 15 samples.
    const int32_t b = tree->find({"main (train.py)", "a (train.py)", "b (train.py)"});
    QVERIFY(std::abs(w.blockRect(b).width() - rootBox.width() * 10 / 15) <= 2);
    // Its ancestors stay, above it, full width and painted; blocks outside the focus (idle) are gone.
    const QImage img = w.grab().toImage();
    for (int32_t anc : {0, main}) {
        const QRect r = w.blockRect(anc);
        QVERIFY(!r.isNull());
        QVERIFY(r.bottom() < aAfter.top());
        QVERIFY(std::abs(r.width() - rootBox.width()) <= 1);
        QVERIFY(painted(img, r));
    }
    QVERIFY(w.blockRect(tree->find({"idle (train.py)"})).isNull());
    // Double-clicking an ancestor focuses back out to it.
    QTest::mouseDClick(&w, Qt::LeftButton, Qt::NoModifier, w.blockRect(0).center());
    waitShown(w);
    QCOMPARE(w.focus(), 0);
}

void FlameWidgetTest::sharesOfTotalUnchangedUnderFocus()
{
    FlameGraphWidget w;
    auto tree = showKnownTree(w, 900, 300);
    waitShown(w);
    const int32_t b = tree->find({"main (train.py)", "a (train.py)", "b (train.py)"});
    const QString before = w.tooltipFor(b);
    QCOMPARE(percentOfTotal(before), 28.57); // 10 of 35
    QVERIFY(!before.contains(QStringLiteral("of focus")));
    w.focusNode(tree->find(kMainA));
    waitShown(w);
    const QString after = w.tooltipFor(b);
    QCOMPARE(percentOfTotal(after), 28.57);
    QVERIFY2(after.contains(QStringLiteral("66.67 % of focus")), qPrintable(after)); // 10 of 15
    QVERIFY(after.contains(QStringLiteral("train.py")));
}

void FlameWidgetTest::focusSurvivesANewTreeWithItsPath()
{
    FlameGraphWidget w;
    w.resize(900, 300);
    w.show();
    w.setTree(test::knownFlameTree());
    waitShown(w);
    w.focusNode(w.tree()->find(kMainA));
    waitShown(w);
    // Another window: the same call path with other counts. The focus moves to it.
    QSignalSpy lost(&w, &FlameGraphWidget::focusLost);
    auto other = test::knownFlameTree(20);
    w.setTree(other);
    waitShown(w);
    QCOMPARE(w.focus(), other->find(kMainA));
    QCOMPARE(other->node(w.focus()).samples, int64_t(35));
    QCOMPARE(lost.count(), 0);
    QVERIFY(std::abs(w.blockRect(w.focus()).width() - w.blockRect(0).width()) <= 1);
    // A window without it: the focus is dropped, and the widget says why.
    w.setTree(FlameTree::fromStacks({test::flameStack({"main", "c"}, 9), test::flameStack({"idle"}, 2)}));
    waitShown(w);
    QCOMPARE(w.focus(), 0);
    QCOMPARE(lost.count(), 1);
    QVERIFY(lost.at(0).at(0).toString().contains(QStringLiteral("a (train.py)")));
}

void FlameWidgetTest::historyAndKeyboard()
{
    FlameGraphWidget w;
    auto tree = showKnownTree(w, 900, 300);
    waitShown(w);
    const int32_t main = tree->find(kMain), a = tree->find(kMainA);
    w.focusNode(main);
    waitShown(w);
    w.focusNode(a);
    waitShown(w);
    QVERIFY(w.canGoBack());
    QTest::keyClick(&w, Qt::Key_Backspace);
    waitShown(w);
    QCOMPARE(w.focus(), main);
    QTest::keyClick(&w, Qt::Key_Right, Qt::AltModifier);
    waitShown(w);
    QCOMPARE(w.focus(), a);
    QTest::keyClick(&w, Qt::Key_Escape);
    waitShown(w);
    QCOMPARE(w.focus(), 0);
    // Arrows: from the root down to main (the widest child), left to idle (siblings in name order), back up to
    // the root, down twice to main's widest child; Enter focuses it.
    QCOMPARE(w.currentNode(), 0);
    QTest::keyClick(&w, Qt::Key_Down);
    QCOMPARE(w.currentNode(), main);
    QTest::keyClick(&w, Qt::Key_Left);
    const int32_t idle = tree->find({"idle (train.py)"});
    QCOMPARE(w.currentNode(), idle);
    QTest::keyClick(&w, Qt::Key_Right);
    QCOMPARE(w.currentNode(), main);
    QTest::keyClick(&w, Qt::Key_Up);
    QCOMPARE(w.currentNode(), 0);
    QTest::keyClick(&w, Qt::Key_Down);
    QTest::keyClick(&w, Qt::Key_Down);
    QCOMPARE(w.currentNode(), a); // main's widest child: a (15) over c (10) and b (4)
    QTest::keyClick(&w, Qt::Key_Return);
    waitShown(w);
    QCOMPARE(w.focus(), a);
}

void FlameWidgetTest::searchMatchedShare()
{
    FlamePanel panel;
    auto tree = showKnownTree(panel, 1000, 400);
    waitShown(*panel.graph());
    QSignalSpy changed(panel.graph(), &FlameGraphWidget::searchChanged);
    panel.searchField()->setText(QStringLiteral("b"));
    QTRY_VERIFY_WITH_TIMEOUT(changed.count() > 0, 5000);
    waitShown(*panel.graph());
    // b: 10 + 7 + 3 + 4 (the b inside b counted once) = 24 of 35 = 68.6 %, in 5 blocks.
    QCOMPARE(panel.matchedText(), QStringLiteral("68.6 % (5)"));
    const FlameSearch* s = panel.graph()->search();
    QVERIFY(s);
    QCOMPARE(s->matchedSamples, int64_t(24));
    // Matches are painted in the match colour, idle (no match on its path) dimmed.
    const QImage img = panel.graph()->grab().toImage();
    const int32_t b = tree->find({"main (train.py)", "a (train.py)", "b (train.py)"});
    QCOMPARE(img.pixelColor(panel.graph()->blockRect(b).center() + QPoint(0, 4)), QColor(0xe8, 0x3e, 0x8c));
    const QColor idle =
        img.pixelColor(panel.graph()->blockRect(tree->find({"idle (train.py)"})).center() + QPoint(0, 4));
    QVERIFY2(idle.hsvSaturation() < 60, qPrintable(idle.name()));
    // Next match walks the matches in depth-first order.
    panel.graph()->nextMatch();
    QCOMPARE(panel.graph()->currentNode(), s->matches.front());
    // A bad regular expression says so instead of matching.
    auto* regex = panel.findChild<QCheckBox*>();
    QVERIFY(regex);
    regex->setChecked(true);
    panel.searchField()->setText(QStringLiteral("b("));
    QTRY_COMPARE_WITH_TIMEOUT(panel.matchedText(), QStringLiteral("bad pattern"), 5000);
    QVERIFY(panel.graph()->search()->matches.empty());
}

// In a dock shorter than the graph, F3 scrolls the next match into view instead of outlining it off-screen.
// One stack 81 frames deep (f0 … f79, then "needle"), and f0 alone: a graph much taller than a short dock.
std::shared_ptr<const FlameTree> deepTree()
{
    std::vector<FlameTree::Stack> stacks(2);
    for (int i = 0; i < 80; ++i) {
        store::FrameInfo f;
        f.name = "f" + std::to_string(i);
        f.file = "deep.py";
        f.line = i + 1;
        stacks[0].frames.push_back(f);
    }
    store::FrameInfo leaf;
    leaf.name = "needle";
    leaf.file = "deep.py";
    leaf.line = 99;
    stacks[0].frames.push_back(leaf);
    stacks[0].samples = 5;
    stacks[1].frames = {stacks[0].frames.front()};
    stacks[1].samples = 5;
    return FlameTree::fromStacks(stacks);
}

// deepTree() in a panel of 1000 × 260 px: the graph scrolls.
struct DeepPanel
{
    FlamePanel panel;
    std::shared_ptr<const FlameTree> tree = deepTree();
    FlameGraphWidget* graph = panel.graph();
    QScrollArea* area = nullptr;

    DeepPanel()
    {
        panel.resize(1000, 260);
        panel.show();
        panel.setTree(tree);
        waitShown(*graph);
        area = graph->scrollArea();
    }
    // The node's block is drawn and wholly inside the visible part.
    bool inView(int32_t node) const
    {
        const QRect r = graph->blockRect(node).translated(graph->mapTo(area->viewport(), QPoint(0, 0)));
        return !r.isNull() && area->viewport()->rect().contains(r);
    }
    int32_t named(const std::string& name) const
    {
        for (int32_t i = 1; i < static_cast<int32_t>(tree->nodes().size()); ++i)
            if (tree->name(i) == name) return i;
        return -1;
    }
};

void FlameWidgetTest::nextMatchScrollsIntoView()
{
    DeepPanel d;
    FlamePanel& panel = d.panel;
    FlameGraphWidget* graph = d.graph;
    QScrollArea* area = d.area;
    QVERIFY(area && area->widget() == graph);
    QVERIFY(graph->height() > 3 * area->viewport()->height()); // the graph does not fit
    const auto visible = [&](int32_t node) { return d.inView(node); };
    const int32_t needle = d.named("needle"), root = d.named("f0");
    const auto& tree = d.tree;
    QVERIFY(needle > 0 && root > 0);
    for (const int32_t target : {needle, root}) {
        QSignalSpy changed(graph, &FlameGraphWidget::searchChanged);
        panel.searchField()->setText(QString::fromStdString(tree->label(target)));
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() > 0, 5000);
        waitShown(*graph);
        // Scrolled to whichever end of the graph leaves the target out of view.
        QScrollBar* bar = area->verticalScrollBar();
        bar->setValue(0);
        QCoreApplication::processEvents();
        if (visible(target)) bar->setValue(bar->maximum());
        QCoreApplication::processEvents();
        QVERIFY2(!visible(target), "the match was in view before F3: nothing to show");
        QTest::keyClick(graph, Qt::Key_F3);
        QCOMPARE(graph->currentNode(), target);
        QTRY_VERIFY_WITH_TIMEOUT(visible(target), 5000);
    }
}

void FlameWidgetTest::focusShowsItsChildren()
{
    // In a 260 px dock, focusing a block 40 frames deep shows it with one ancestor row and its children below
    // (icicle) or above (flame); turning the graph into a flame with no focus shows the root at the bottom.
    DeepPanel d;
    FlamePanel& panel = d.panel;
    FlameGraphWidget* graph = d.graph;
    QScrollArea* area = d.area;
    QVERIFY(area);
    const auto inView = [&](int32_t node) { return d.inView(node); };
    const auto named = [&](const std::string& name) { return d.named(name); };
    const int32_t f39 = named("f39"), f40 = named("f40"), f41 = named("f41"), f42 = named("f42"), root = named("f0");
    QVERIFY(f40 > 0 && f41 > 0 && f42 > 0 && root > 0);
    auto* flip = panel.findChild<QToolButton*>(QStringLiteral("flameFlip"));
    QVERIFY(flip);
    for (const bool flame : {false, true}) {
        if (flip->isChecked() != flame) flip->click();
        graph->focusNode(f40);
        waitShown(*graph);
        QTRY_VERIFY_WITH_TIMEOUT(inView(f40) && inView(f41) && inView(f42), 5000);
        QVERIFY2(inView(f39), qPrintable(QStringLiteral("flame %1: f39 %2, f40 %3, scroll %4, viewport %5")
                                             .arg(flame)
                                             .arg(graph->blockRect(f39).top())
                                             .arg(graph->blockRect(f40).top())
                                             .arg(area->verticalScrollBar()->value())
                                             .arg(area->viewport()->height()))); // one ancestor row for context
        // The focused block sits at the edge its children grow away from.
        const QRect r = graph->blockRect(f40).translated(graph->mapTo(area->viewport(), QPoint(0, 0)));
        if (flame)
            QVERIFY2(r.bottom() > area->viewport()->height() * 2 / 3, qPrintable(QString::number(r.bottom())));
        else
            QVERIFY2(r.top() < area->viewport()->height() / 3, qPrintable(QString::number(r.top())));
        graph->resetFocus();
        waitShown(*graph);
        QTRY_VERIFY_WITH_TIMEOUT(inView(root), 5000);
    }
    // Back to an icicle: the root at the top again.
    flip->click();
    QTRY_VERIFY_WITH_TIMEOUT(inView(root) && area->verticalScrollBar()->value() == 0, 5000);
}

void FlameWidgetTest::captionNamesBaselineA()
{
    // The line under the graph says which selection is A once one is pinned, and the diff's export says it too.
    FlamePanel panel;
    auto tree = showKnownTree(panel, 900, 300);
    panel.setCaption(
        {QStringLiteral("run.runlens"), QStringLiteral("window 10:00 → 10:05"), QStringLiteral("nodes: node0")});
    QVERIFY(!panel.captionText().contains(QStringLiteral("A")));
    panel.pinBaseline();
    panel.setCaption(
        {QStringLiteral("run.runlens"), QStringLiteral("window 11:00 → 11:05"), QStringLiteral("nodes: node0")});
    QVERIFY2(panel.captionText().contains(QStringLiteral("baseline A pinned: window 10:00 → 10:05, nodes: node0")),
             qPrintable(panel.captionText()));
    panel.setDiffShown(true);
    QVERIFY2(panel.captionText().startsWith(QStringLiteral("B: window 11:00 → 11:05")) &&
                 panel.captionText().contains(QStringLiteral("against A: window 10:00 → 10:05")),
             qPrintable(panel.captionText()));
    QVERIFY(panel.exportCaption().join(QLatin1Char('\n')).contains(QStringLiteral("against baseline A: window 10:00")));
    panel.clearBaseline();
    QVERIFY(!panel.captionText().contains(QStringLiteral("A:")));
}

void FlameWidgetTest::treeGoneWhileLayingOut()
{
    // A run closed while its flame graph is laid out, with a newer request waiting: nothing of the old tree is
    // shown afterwards, and nothing is laid out for a tree that is gone.
    FlameGraphWidget w;
    w.resize(900, 300);
    w.show();
    auto tree = deepTree();
    for (int round = 0; round < 20; ++round) {
        w.setTree(tree);                          // a layout in flight
        w.setSearch(QStringLiteral("f1"), false); // a request waiting behind it
        w.setTree(nullptr);                       // the run closed
        QTest::qWait(round % 3);
    }
    QTest::qWait(200);
    QVERIFY(!w.tree());
    QVERIFY(w.blockRect(0).isNull());
    // And a new tree afterwards is shown.
    w.setTree(tree);
    waitShown(w);
    QVERIFY(!w.blockRect(0).isNull());
}

void FlameWidgetTest::sandwichTotals()
{
    FlamePanel panel;
    auto tree = showKnownTree(panel, 1000, 500);
    waitShown(*panel.graph());
    const int32_t b = tree->find({"main (train.py)", "c (train.py)", "b (train.py)"});
    panel.showSandwich(b);
    QVERIFY(panel.sandwichShown());
    QTRY_VERIFY_WITH_TIMEOUT(panel.sandwichCallers()->tree() && panel.sandwichCallees()->tree(), 5000);
    QCOMPARE(panel.sandwichCallers()->tree()->totalSamples(), int64_t(24));
    QCOMPARE(panel.sandwichCallees()->tree()->totalSamples(), int64_t(24));
    waitShown(*panel.sandwichCallers());
    // The callers are drawn root-down (the function at the bottom, its callers above it).
    const auto callers = panel.sandwichCallers()->tree();
    const int32_t fn = callers->find({"b (train.py)"});
    const int32_t viaA = callers->find({"b (train.py)", "a (train.py)"});
    QVERIFY(fn > 0 && viaA > 0);
    QVERIFY(panel.sandwichCallers()->blockRect(viaA).bottom() < panel.sandwichCallers()->blockRect(fn).top());
    // The function table lists b first (the largest self), with its self and total.
    QTableWidget* table = panel.functionTable();
    QVERIFY(table->rowCount() >= 4);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("b"));
    QCOMPARE(table->item(0, 1)->data(Qt::DisplayRole).toLongLong(), 24LL);
    QCOMPARE(table->item(0, 2)->data(Qt::DisplayRole).toLongLong(), 24LL);
    panel.showGraph();
    QVERIFY(!panel.sandwichShown());
}

void FlameWidgetTest::diffOfItselfIsNeutralOnScreen()
{
    FlamePanel panel;
    auto tree = showKnownTree(panel, 1000, 400);
    waitShown(*panel.graph());
    panel.pinBaseline();
    panel.setTree(test::knownFlameTree()); // the same samples again, as another window would bring them
    panel.setDiffShown(true);
    QTRY_VERIFY_WITH_TIMEOUT(panel.graph()->diff() && !panel.graph()->busy(), 5000);
    const analysis::DiffTree* diff = panel.graph()->diff();
    const QImage img = panel.graph()->grab().toImage();
    for (int32_t i = 1; i < static_cast<int32_t>(diff->nodes().size()); ++i) {
        QCOMPARE(diff->node(i).delta(), 0.0);
        QCOMPARE(diffColor(diff->node(i)), QColor(0xdc, 0xdc, 0xdc));
        const QRect box = panel.graph()->blockRect(i);
        QVERIFY(!box.isNull());
        QCOMPARE(img.pixelColor(box.left() + 1, box.top() + 2), QColor(0xdc, 0xdc, 0xdc));
    }
    // Sizes follow the mean of both normalised sides: here, the tree's own shares.
    const int32_t a = panel.graph()->tree()->find(kMainA);
    QVERIFY(std::abs(panel.graph()->blockRect(a).width() - panel.graph()->blockRect(0).width() * 15 / 35) <= 2);
    QVERIFY(panel.graph()->tooltipFor(a).contains(QStringLiteral("change: +0.00 points")));
}

void FlameWidgetTest::exportsCarryTheView()
{
    QTemporaryDir dir;
    FlamePanel panel;
    auto tree = showKnownTree(panel, 1000, 400);
    panel.setCaption({QStringLiteral("run.runlens"), QStringLiteral("window 08:00 → 08:10 UTC (10 min)"),
                      QStringLiteral("nodes: node0"), QStringLiteral("threads: ^pt_autograd_\\d+$")});
    waitShown(*panel.graph());
    panel.graph()->focusNode(tree->find(kMainA));
    panel.setSearchText(QStringLiteral("b"), false);
    QTRY_VERIFY_WITH_TIMEOUT(
        !panel.graph()->busy() && panel.graph()->search() && !panel.graph()->search()->matches.empty(), 5000);
    const QString svg = dir.filePath(QStringLiteral("f.svg")), png = dir.filePath(QStringLiteral("f.png"));
    QVERIFY(panel.exportTo(svg));
    QVERIFY(panel.exportTo(png));
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    for (const QString& want :
         {QStringLiteral("window 08:00"), QStringLiteral("nodes: node0"), QStringLiteral("pt_autograd"),
          QStringLiteral("focus: a (train.py)"), QStringLiteral("search: b")})
        QVERIFY2(text.contains(want), qPrintable(want));
    const QImage img(png);
    QVERIFY(img.width() >= 800 && img.height() > 100);
    // PDF: one page of vectors; a folder that does not exist fails.
    const QString pdf = dir.filePath(QStringLiteral("f.pdf"));
    QVERIFY(panel.exportTo(pdf));
    QFile p(pdf);
    QVERIFY(p.open(QIODevice::ReadOnly));
    const QByteArray bytes = p.readAll();
    QVERIFY(bytes.startsWith("%PDF"));
    QVERIFY(bytes.contains("/Count 1"));
    QVERIFY(!panel.exportTo(dir.filePath(QStringLiteral("missing/f.pdf"))));
}

QTEST_MAIN(FlameWidgetTest)
#include "tst_flame_widget.moc"
