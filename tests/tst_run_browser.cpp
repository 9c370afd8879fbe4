// The run browser's model over a hand-built catalog: a valid tree (QAbstractItemModelTester), nodes → devices →
// series, and check boxes that hide series (a node or device hides everything under it).

#include "tests/test_support.h"
#include "widgets/run_browser/run_browser_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace runlens;
using widgets::RunBrowserModel;

namespace {

// Two nodes; node a has gpu:0 (two series) and gpu:1 (one), node b has gpu:0 (one) and a node-level series.
std::shared_ptr<const timeline::RunCatalog> catalog()
{
    auto c = std::make_shared<timeline::RunCatalog>();
    c->path = "test.runlens";
    c->nodes = {{1, "a", "UTC", 0, "option", {}, {}}, {2, "b", "UTC", 0, "option", {}, {}}};
    c->devices = {{10, 1, "gpu", "0", {{"name", "NVIDIA H200"}}}, {11, 1, "gpu", "1", {}}, {20, 2, "gpu", "0", {}}};
    auto series = [](int64_t id, int64_t device, int64_t node, const char* metric, int64_t points) {
        store::SeriesInfo s;
        s.id = id;
        s.deviceId = device;
        s.nodeId = node;
        s.metric = metric;
        s.unit = "%";
        s.source = "nvidia-smi-query-csv";
        s.points = points;
        return s;
    };
    c->series = {series(100, 10, 1, "gpu.util", 10), series(101, 10, 1, "gpu.sm_active", 20),
                 series(102, 11, 1, "gpu.util", 30), series(200, 20, 2, "gpu.util", 40),
                 series(201, 0, 2, "host.mem_used", 50)};
    return c;
}

using Ids = std::vector<int64_t>;

} // namespace

Q_DECLARE_METATYPE(Ids)

class TestRunBrowser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tree()
    {
        RunBrowserModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setCatalog(catalog());
        QCOMPARE(model.rowCount(), 2);
        const QModelIndex a = model.index(0, 0), b = model.index(1, 0);
        QCOMPARE(a.data().toString(), QStringLiteral("a"));
        QCOMPARE(model.rowCount(a), 2);
        QCOMPARE(model.index(0, 0, a).data().toString(), QStringLiteral("gpu:0"));
        QCOMPARE(model.rowCount(model.index(0, 0, a)), 2);
        // b: its device, then the series of no device under the node itself.
        QCOMPARE(model.rowCount(b), 2);
        QCOMPARE(model.index(1, 0, b).data().toString(), QStringLiteral("host.mem_used"));
        QCOMPARE(model.seriesAt(model.index(1, 0, b))->id, 201);
        QVERIFY(!model.seriesAt(a));
        // Points add up over the tree.
        QCOMPARE(model.index(0, RunBrowserModel::PointsColumn).data().toString(), QLocale().toString(60));
        QCOMPARE(model.indexOfSeries(102).parent().data().toString(), QStringLiteral("gpu:1"));
        QCOMPARE(model.data(a, Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Checked);
        model.setCatalog(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void checkStates_data()
    {
        QTest::addColumn<QStringList>("path"); // labels from the top down to the item unchecked
        QTest::addColumn<Ids>("hidden");
        QTest::addColumn<Qt::CheckState>("nodeState"); // of the first node afterwards
        QTest::newRow("one series") << test::strs({"a", "gpu:0", "gpu.sm_active"}) << Ids{101} << Qt::PartiallyChecked;
        QTest::newRow("a device") << test::strs({"a", "gpu:0"}) << Ids{100, 101} << Qt::PartiallyChecked;
        QTest::newRow("a node") << test::strs({"a"}) << Ids{100, 101, 102} << Qt::Unchecked;
        QTest::newRow("the other node") << test::strs({"b"}) << Ids{200, 201} << Qt::Checked;
        QTest::newRow("series under a node") << test::strs({"b", "host.mem_used"}) << Ids{201} << Qt::Checked;
    }
    void checkStates()
    {
        QFETCH(QStringList, path);
        QFETCH(Ids, hidden);
        QFETCH(Qt::CheckState, nodeState);
        RunBrowserModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setCatalog(catalog());
        QSignalSpy spy(&model, &RunBrowserModel::hiddenSeriesChanged);

        QModelIndex item;
        for (const QString& label : path) {
            const QModelIndexList found =
                model.match(model.index(0, 0, item), Qt::DisplayRole, label, 1, Qt::MatchExactly);
            QVERIFY2(!found.isEmpty(), qPrintable(label));
            item = found.front();
        }
        QVERIFY(model.setData(item, Qt::Unchecked, Qt::CheckStateRole));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.front().front().value<Ids>(), hidden);
        QCOMPARE(model.hiddenSeries(), hidden);
        QCOMPARE(model.data(item, Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Unchecked);
        QCOMPARE(model.data(model.index(0, 0), Qt::CheckStateRole).value<Qt::CheckState>(), nodeState);

        // Unchecking again changes nothing and says nothing; checking brings everything back.
        QVERIFY(model.setData(item, Qt::Unchecked, Qt::CheckStateRole));
        QCOMPARE(spy.count(), 1);
        QVERIFY(model.setData(item, Qt::Checked, Qt::CheckStateRole));
        QCOMPARE(spy.count(), 2);
        QCOMPARE(spy.back().front().value<Ids>(), Ids{});
    }

    void restoreHidden()
    {
        RunBrowserModel model;
        model.setCatalog(catalog());
        QSignalSpy spy(&model, &RunBrowserModel::hiddenSeriesChanged);
        model.setHiddenSeries({200, 999});
        QCOMPARE(model.hiddenSeries(), Ids{200});
        QCOMPARE(spy.count(), 0);
        QCOMPARE(model.data(model.index(1, 0), Qt::CheckStateRole).value<Qt::CheckState>(), Qt::PartiallyChecked);
        // A new catalog shows everything again.
        model.setCatalog(catalog());
        QCOMPARE(model.hiddenSeries(), Ids{});
    }
};

QTEST_MAIN(TestRunBrowser)
#include "tst_run_browser.moc"
