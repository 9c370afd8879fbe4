// File › Compare with… offscreen: two demo runs (zero3 and its tuned configuration, a quarter of an hour each,
// written by the runlens binary), the first opened in the main window and compared with the second on a worker;
// the Compare window shows the step time 20 % faster, COMM_BOUND still there, the stacks that moved, and exports
// the current tab as PNG and the table as PDF. A run that cannot be read fails the comparison naming the file.

#include "app/gui/compare_window.h"
#include "app/gui/main_window.h"
#include "tests/cli_support.h"
#include "widgets/common/qcp.h"
#include "widgets/compare/compare_charts.h"
#include "widgets/flame/flame_graph_widget.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QMenuBar>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace runlens;
using namespace runlens::test::binary;

namespace {

int rowOf(const QTableWidget* t, int column, const QString& text)
{
    for (int r = 0; r < t->rowCount(); ++r)
        if (t->item(r, column) && t->item(r, column)->text() == text) return r;
    return -1;
}

// The tables. Metrics: the step time 50 → 40 s, −20 %, faster, p-value in the tooltip; the runs' colours in the
// headers.
void checkTables(app::CompareWindow* cw)
{
    const QTableWidget* m = cw->metricsTable();
    QCOMPARE(m->columnCount(), 6);
    const int step = rowOf(m, 0, QStringLiteral("step time (median)"));
    QVERIFY2(step >= 0, qPrintable(cw->text()));
    QCOMPARE(m->item(step, 1)->text(), QStringLiteral("50 s"));
    QCOMPARE(m->item(step, 2)->text(), QStringLiteral("40 s"));
    QVERIFY2(m->item(step, 4)->text().startsWith(QStringLiteral("−20")), qPrintable(m->item(step, 4)->text()));
    QCOMPARE(m->item(step, 5)->text(), QStringLiteral("faster"));
    QVERIFY(m->item(step, 5)->toolTip().contains(QStringLiteral("p ")));
    QCOMPARE(m->horizontalHeaderItem(1)->foreground().color(), widgets::runColor(0).darker(130));
    QCOMPARE(m->horizontalHeaderItem(2)->foreground().color(), widgets::runColor(1).darker(130));
    QVERIFY(widgets::runColor(0) != widgets::runColor(1));

    // Findings: COMM_BOUND still there, with its saving before → after.
    const QTableWidget* f = cw->findingsTable();
    const int comm = rowOf(f, 1, QStringLiteral("COMM_BOUND"));
    QVERIFY2(comm >= 0, qPrintable(cw->text()));
    QCOMPARE(f->item(comm, 0)->data(Qt::UserRole).toString(), QStringLiteral("still"));
    QVERIFY(f->item(comm, 3)->text().contains(QStringLiteral(" → ")));

    // Stacks: fetch_sub_module's wait shrank.
    const QTableWidget* s = cw->stacksTable();
    bool fetchShrank = false;
    for (int r = 0; r < s->rowCount(); ++r)
        fetchShrank |= s->item(r, 0)->text() == QStringLiteral("shrank") &&
                       s->item(r, 4)->text().startsWith(QStringLiteral("fetch_sub_module"));
    QVERIFY2(fetchShrank, qPrintable(cw->text()));
}

// Charts: SM activity per run over its window, the tuned run's line higher; aligned by step its x axis
// counts the steps (about 13 min of 50 s steps: 10 to 20), by time the minutes.
void checkCharts(app::CompareWindow* cw)
{
    QCOMPARE(cw->metricBox()->currentData().toString(), QStringLiteral("sm_active"));
    QCustomPlot* line = cw->linePlot();
    QCOMPARE(line->graphCount(), 2);
    const auto meanOf = [](QCPGraph* g) {
        double sum = 0;
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
            sum += it->value;
        return g->data()->isEmpty() ? 0.0 : sum / g->data()->size();
    };
    QVERIFY2(meanOf(line->graph(1)) > meanOf(line->graph(0)) + 3,
             qPrintable(QStringLiteral("%1 vs %2").arg(meanOf(line->graph(0))).arg(meanOf(line->graph(1)))));
    bool found = false;
    const QCPRange byTime = line->graph(0)->getKeyRange(found);
    QVERIFY(line->xAxis->label().contains(QStringLiteral("time since")) &&
            line->xAxis->label().contains(QStringLiteral("min")));
    QVERIFY2(found && byTime.upper > 5 && byTime.upper <= 15, qPrintable(QString::number(byTime.upper)));
    cw->alignBox()->setCurrentIndex(1);
    const QCPRange byStep = line->graph(0)->getKeyRange(found);
    QVERIFY2(found && byStep.upper >= 10 && byStep.upper <= 20, qPrintable(QString::number(byStep.upper)));
    QVERIFY(line->xAxis->label().contains(QStringLiteral("steps")));

    // Flame: the two windows' stacks as one differential graph.
    QVERIFY(cw->flameGraph());
    QTRY_VERIFY_WITH_TIMEOUT(cw->flameGraph()->diff() != nullptr, 30'000);

    // Loss: both runs' curves (raw and smoothed), the same against steps.
    QCOMPARE(cw->lossPlot()->graphCount(), 4);
    QVERIFY2(cw->comparison().candidates[0].loss.verdict == "unchanged",
             cw->comparison().candidates[0].loss.verdict.c_str());
}

// Export: the current tab as PNG (each tab) and SVG, the whole comparison as PDF; the text has the tables.
void checkExports(app::CompareWindow* cw, const QTemporaryDir& dir)
{
    cw->tabs()->setCurrentIndex(cw->tabs()->count() - 1);
    const QString svg = dir.filePath(QStringLiteral("charts.svg"));
    QVERIFY(cw->exportSvg(svg));
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    QVERIFY(svgFile.readAll().contains("<svg"));
    for (int tab = 0; tab < cw->tabs()->count(); ++tab) {
        cw->tabs()->setCurrentIndex(tab);
        const QString png = dir.filePath(QStringLiteral("tab%1.png").arg(tab));
        QVERIFY(cw->exportPng(png));
        const QImage image(png);
        QVERIFY(!image.isNull() && image.width() > 100 && image.height() > 100);
    }
    const QString pdf = dir.filePath(QStringLiteral("compare.pdf"));
    QVERIFY(cw->exportPdf(pdf));
    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    QVERIFY(pdfFile.readAll().startsWith("%PDF"));
    const QString text = cw->text();
    QVERIFY(text.contains(QStringLiteral("faster")) && text.contains(QStringLiteral("COMM_BOUND")) &&
            text.contains(QStringLiteral("fetch_sub_module")));
}

// Other windows: the baseline's minutes 2 to 10 against the whole candidate, on a worker; a window that
// cannot be read keeps the comparison shown and says why.
void checkOtherWindows(app::CompareWindow* cw)
{
    cw->windowBox(0)->setCurrentIndex(2);
    cw->rangeEdit(0)->setText(QStringLiteral("+2m..+10m"));
    cw->windowBox(1)->setCurrentIndex(1);
    QSignalSpy again(cw, &app::CompareWindow::recompared);
    QVERIFY(cw->recompare());
    QVERIFY(cw->recomparing());
    QVERIFY(again.count() > 0 || again.wait(60'000));
    QCOMPARE(again.front().front().toBool(), true);
    QCOMPARE(cw->comparison().runs[0].windowKind, std::string("given"));
    QCOMPARE(cw->comparison().runs[0].toNs - cw->comparison().runs[0].fromNs, int64_t{480'000'000'000});
    QCOMPARE(cw->comparison().runs[1].windowKind, std::string("whole run"));
    QVERIFY(cw->metricsTable()->rowCount() > 5);
    cw->rangeEdit(0)->setText(QStringLiteral("+20m..+10m"));
    again.clear();
    QVERIFY(cw->recompare());
    QVERIFY(again.count() > 0 || again.wait(60'000));
    QCOMPARE(again.front().front().toBool(), false);
    QCOMPARE(cw->comparison().runs[0].windowKind, std::string("given")); // the one before stays
}

} // namespace

class TestCompareWindow : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_base, m_tuned, m_base2;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        for (const char* scenario : {"zero3", "zero3-tuned"}) {
            const Run d = cli({QStringLiteral("demo"), QStringLiteral("--no-gui"), QStringLiteral("--scenario"),
                               QLatin1String(scenario), QStringLiteral("--hours"), QStringLiteral("0.25"),
                               QStringLiteral("-o"), m_dir.filePath(QLatin1String(scenario))});
            EXPECT_EXIT(d, 0);
        }
        m_base = m_dir.filePath(QStringLiteral("zero3/demo.runlens"));
        m_tuned = m_dir.filePath(QStringLiteral("zero3-tuned/demo.runlens"));
        // A second copy of the baseline for the error case: a window that opens a run analyses it and keeps the
        // findings in it on a worker, which may still be writing when the next test opens the same file.
        m_base2 = m_dir.filePath(QStringLiteral("zero3-copy.runlens"));
        QVERIFY(QFile::copy(m_base, m_base2));
    }

    void compareFromTheMainWindow()
    {
        app::MainWindow window;
        window.show();
        QAction* action = nullptr;
        for (QAction* a : window.menuBar()->actions().front()->menu()->actions())
            if (a->shortcut() == QKeySequence(QStringLiteral("Ctrl+Shift+C"))) action = a;
        QVERIFY(action);
        QVERIFY(!action->isEnabled()); // no run open
        QVERIFY(!window.compareWith({m_tuned}));

        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(m_base);
        QVERIFY(opened.count() > 0 || opened.wait(30'000)); // it may come before the wait starts
        QVERIFY(action->isEnabled());
        const QDateTime modified = QFileInfo(m_tuned).lastModified();

        QSignalSpy compared(&window, &app::MainWindow::compareOpened);
        QVERIFY(window.compareWith({m_tuned}));
        QVERIFY(window.comparing());
        QVERIFY(!action->isEnabled());
        QVERIFY(compared.count() > 0 || compared.wait(60'000)); // it may come before the wait starts
        QVERIFY(!window.comparing());
        QVERIFY(action->isEnabled());
        auto* cw = compared.front().front().value<app::CompareWindow*>();
        QVERIFY(cw && cw->isVisible());
        QCOMPARE(cw->comparison().runs.size(), size_t{2});

        checkTables(cw);
        if (QTest::currentTestFailed()) return;
        checkCharts(cw);
        if (QTest::currentTestFailed()) return;
        checkExports(cw, m_dir);
        if (QTest::currentTestFailed()) return;
        checkOtherWindows(cw);
        if (QTest::currentTestFailed()) return;

        // Read-only: the candidate was not touched.
        QCOMPARE(QFileInfo(m_tuned).lastModified(), modified);
        cw->close();
    }

    void unreadableRunIsNamed()
    {
        app::MainWindow window;
        QSignalSpy opened(&window, &app::MainWindow::runOpened);
        window.openRun(m_base2);
        QVERIFY(opened.count() > 0 || opened.wait(30'000)); // it may come before the wait starts
        const QString bogus = m_dir.filePath(QStringLiteral("not-a-run.runlens"));
        {
            QFile f(bogus);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("this is not a database");
        }
        // The message box is closed as soon as it shows.
        QTimer closer;
        connect(&closer, &QTimer::timeout, [] {
            for (QWidget* w : QApplication::topLevelWidgets())
                if (auto* box = qobject_cast<QMessageBox*>(w); box && box->isVisible()) box->accept();
        });
        closer.start(50);
        QSignalSpy failed(&window, &app::MainWindow::compareFailed);
        QVERIFY(window.compareWith({bogus}));
        QVERIFY(failed.count() > 0 || failed.wait(30'000)); // it may come before the wait starts
        QVERIFY2(failed.front().front().toString().contains(QStringLiteral("not-a-run.runlens")),
                 qPrintable(failed.front().front().toString()));
        QVERIFY(!window.comparing());
    }

    void cancelledComparisonSaysSo()
    {
        // Cancelled before it starts: no comparison, no error, said so (the dialog's Cancel sets the same flag).
        const std::atomic<bool> cancel{true};
        const app::RunComparison r = app::compareRunFiles({m_base2, m_tuned}, {}, &cancel);
        QVERIFY(r.cancelled);
        QVERIFY(r.error.isEmpty());
        QVERIFY(r.runs.empty());
    }
};

QTEST_MAIN(TestCompareWindow)
#include "tst_compare_window.moc"
