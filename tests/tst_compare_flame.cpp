// Comparing two runs (issue 19): flame trees of two run files merged by frame (not by store ids), normalised per
// side, with the functions that grew or shrank; findings matched into gone / still there / new.

#include "analysis/compare/findings_compare.h"
#include "analysis/compare/flame_compare.h"
#include "analysis/flame/flame_diff.h"
#include "analysis/store/run_database.h"
#include "importers/import_session.h"
#include "tests/cli_support.h"
#include "tests/flame_support.h"
#include "tests/test_support.h"

#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>

using namespace runlens;
using namespace runlens::analysis;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

// A run file holding one folded profile (untimed stacks: the whole run is the window).
std::string writeRun(const QTemporaryDir& dir, const QString& name, const std::string& folded)
{
    const std::string folder = test::writeFile(dir, name + QStringLiteral(".folded"), folded);
    const std::string path = dir.filePath(name + QStringLiteral(".runlens")).toStdString();
    importers::ImportOptions options;
    auto plan = importers::planImport({folder}, options);
    if (!plan) qFatal("%s", plan.error().toString().c_str());
    auto db = store::RunDatabase::open(path, store::OpenMode::Create);
    if (!db) qFatal("%s", db.error().toString().c_str());
    for (const auto& f : *plan) {
        const auto res = importers::importFile(**db, f, options);
        if (res.outcome != importers::FileOutcome::Imported) qFatal("%s: not imported", f.path.c_str());
    }
    return path;
}

const FrameChange* findChange(const std::vector<FrameChange>& list, const std::string& name)
{
    const auto it = std::find_if(list.begin(), list.end(), [&](const FrameChange& c) { return c.name == name; });
    return it == list.end() ? nullptr : &*it;
}

bool near(double got, double want)
{
    return std::fabs(got - want) < 1e-9;
}

Finding finding(const char* rule, std::vector<std::string> nodes, double impact, double savingS,
                QJsonObject evidence = {})
{
    Finding f;
    f.rule = rule;
    f.severity = "warn";
    f.nodes = std::move(nodes);
    f.impact = impact;
    f.savingS = savingS;
    f.evidence = std::move(evidence);
    f.episodes = {{0, 1000 * kSecond, -1}}; // the saving spread over the first 1000 s
    return f;
}

QJsonObject evidence(const char* key, const char* value)
{
    return QJsonObject{{QString::fromLatin1(key), QString::fromLatin1(value)}};
}

const FindingChange* findRule(const std::vector<FindingChange>& list, const std::string& rule)
{
    const auto it =
        std::find_if(list.begin(), list.end(), [&](const FindingChange& c) { return c.finding().rule == rule; });
    return it == list.end() ? nullptr : &*it;
}

// Run A: 100 samples, wait 40 %. Run B: 200 samples, wait 20 %, load only in B; B is written in another order
// (other frame and callsite ids) and from a version whose lines moved.
const char* const kRunA = "main (train.py:1);step (train.py:5);wait (comm.py:10) 40\n"
                          "main (train.py:1);step (train.py:5);compute (model.py:20) 60\n";
const char* const kRunB = "main (train.py:1);load (data.py:3) 20\n"
                          "main (train.py:1);step (train.py:7);compute (model.py:22) 140\n"
                          "main (train.py:1);step (train.py:7);wait (comm.py:11) 40\n";

} // namespace

class TestCompareFlame : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void twoRunsMatchByFrameNotId();
    void linesMatchedOnlyWhenAsked();
    void emptySideListsNothing();
    void perThreadRefused();
    void cliDiffRun();
    void findingsGoneStillNew();
    void findingsSavingsWithinWindows();
};

// Runs A and B (kRunA, kRunB): their frames match by name and file, not by id or line.
void TestCompareFlame::twoRunsMatchByFrameNotId()
{
    QTemporaryDir dir;
    const std::string a = writeRun(dir, QStringLiteral("a"), kRunA);
    const std::string b = writeRun(dir, QStringLiteral("b"), kRunB);
    auto cmp = compareRunFlames(a, {}, b, {}, nullptr);
    QVERIFY2(cmp, cmp ? "" : cmp.error().toString().c_str());
    QCOMPARE(cmp->totalA, int64_t{100});
    QCOMPARE(cmp->totalB, int64_t{200});

    // The store ids differ between the two files...
    const int32_t stepA = cmp->a->find({"main", "step"});
    const int32_t stepB = cmp->b->find({"main", "step"});
    QVERIFY(stepA > 0 && stepB > 0);
    QVERIFY(cmp->a->node(stepA).frame != cmp->b->node(stepB).frame);

    // ... yet the frames match: wait went from 40 % to 20 % of its side's samples, both self and inclusive.
    const int32_t wait = cmp->diff->find({"main", "step", "wait"});
    QVERIFY(wait > 0);
    const DiffNode& w = cmp->diff->node(wait);
    QCOMPARE(w.samplesA, int64_t{40});
    QCOMPARE(w.samplesB, int64_t{40});
    QVERIFY(near(w.delta(), -0.2));
    QCOMPARE(w.line, int64_t{10});
    QCOMPARE(w.lineB, int64_t{11});
    QVERIFY(!w.onlyInA() && !w.onlyInB());
    const int32_t load = cmp->diff->find({"main", "load"});
    QVERIFY(load > 0 && cmp->diff->node(load).onlyInB());

    // The ranked lists: wait shrank by 20 points (the most), step by 10; compute grew 10, load is new.
    QVERIFY(!cmp->shrank.empty());
    QCOMPARE(cmp->shrank.front().name, std::string("wait"));
    const FrameChange& ws = cmp->shrank.front();
    QVERIFY(near(ws.delta(), -0.2));
    QVERIFY(near(ws.selfDelta(), -0.2));
    QVERIFY(near(ws.change(), -0.2));
    QCOMPARE(ws.samplesA, int64_t{40});
    QCOMPARE(ws.samplesB, int64_t{40});
    QCOMPARE(ws.lineA, int64_t{10});
    QCOMPARE(ws.lineB, int64_t{11});
    QCOMPARE(ws.label(), std::string("wait (comm.py:10)"));
    const FrameChange* step = findChange(cmp->shrank, "step");
    QVERIFY(step && near(step->delta(), -0.1));
    const FrameChange* loadChange = findChange(cmp->grew, "load");
    QVERIFY(loadChange && loadChange->onlyInB() && near(loadChange->change(), 0.1));
    QCOMPARE(loadChange->label(), std::string("load (data.py:3)"));
    const FrameChange* compute = findChange(cmp->grew, "compute");
    QVERIFY(compute && near(compute->selfDelta(), 0.1));
    QVERIFY(!findChange(cmp->grew, "main") && !findChange(cmp->shrank, "main")); // 100 % on both sides
    QCOMPARE(cmp->grew.size() + cmp->shrank.size(), size_t{4});

    // A threshold and a limit.
    FlameCompareOptions options;
    options.minChange = 0.15;
    auto big = compareRunFlames(a, {}, b, {}, nullptr, options);
    QVERIFY(big);
    QCOMPARE(big->shrank.size(), size_t{1});
    QVERIFY(big->grew.empty());
    options.minChange = 0;
    options.limit = 1;
    auto one = compareRunFlames(a, {}, b, {}, nullptr, options);
    QVERIFY(one);
    QCOMPARE(one->grew.size(), size_t{1});
    QCOMPARE(one->shrank.size(), size_t{1});
}

// Frames of one parent that differ only by line are one frame unless lines are matched.
void TestCompareFlame::linesMatchedOnlyWhenAsked()
{
    auto stack = [](const std::vector<std::pair<const char*, int64_t>>& frames, int64_t n) {
        FlameTree::Stack st;
        for (const auto& [name, line] : frames) {
            store::FrameInfo f;
            f.name = name;
            f.file = "train.py";
            f.line = line;
            st.frames.push_back(f);
        }
        st.samples = n;
        return st;
    };
    auto a = FlameTree::fromStacks({stack({{"main", 1}, {"wait", 10}}, 30), stack({{"main", 1}, {"wait", 12}}, 10),
                                    stack({{"main", 1}, {"work", 20}}, 60)});
    auto b = FlameTree::fromStacks({stack({{"main", 1}, {"wait", 14}}, 20), stack({{"main", 1}, {"work", 21}}, 80)});
    FlameCompareOptions byName;
    const FlameComparison merged = compareFlameTrees(a, b, byName);
    const int32_t wait = merged.diff->find({"main", "wait"});
    QVERIFY(wait > 0);
    QCOMPARE(merged.diff->node(wait).samplesA, int64_t{40}); // lines 10 and 12 of A merged
    QCOMPARE(merged.diff->node(wait).line, int64_t{10});     // the heavier one's
    QCOMPARE(merged.diff->node(wait).lineB, int64_t{14});
    QVERIFY(near(merged.diff->node(wait).delta(), -0.2));
    QCOMPARE(merged.shrank.front().name, std::string("wait"));

    FlameCompareOptions byLine;
    byLine.matchLines = true;
    const FlameComparison exact = compareFlameTrees(a, b, byLine);
    const int32_t w10 = exact.diff->find({"main", "wait (train.py:10)"});
    const int32_t w14 = exact.diff->find({"main", "wait (train.py:14)"});
    QVERIFY(w10 > 0 && w14 > 0);
    QVERIFY(exact.diff->node(w10).onlyInA());
    QVERIFY(exact.diff->node(w14).onlyInB());
    // The function lists are by name and file whatever the tree matched on.
    QVERIFY(near(exact.shrank.front().delta(), -0.2));
}

// A side without samples in its selection: the trees and totals are there, no function is listed as changed.
void TestCompareFlame::emptySideListsNothing()
{
    auto a = test::knownFlameTree();
    auto b = FlameTree::fromStacks({});
    const FlameComparison cmp = compareFlameTrees(a, b);
    QCOMPARE(cmp.totalA, int64_t{35});
    QCOMPARE(cmp.totalB, int64_t{0});
    QVERIFY(cmp.grew.empty() && cmp.shrank.empty());
}

void TestCompareFlame::perThreadRefused()
{
    QTemporaryDir dir;
    const std::string a = writeRun(dir, QStringLiteral("a"), "main (train.py:1) 5\n");
    FlameQuery q;
    q.perThread = true;
    auto cmp = compareRunFlames(a, q, a, {}, nullptr);
    QVERIFY(!cmp);
    QCOMPARE(cmp.error().code, ErrorCode::Usage);
    auto missing = compareRunFlames(a, {}, dir.filePath(QStringLiteral("none.runlens")).toStdString(), {}, nullptr);
    QVERIFY(!missing);
}

// runlens flame A --diff-run B: the functions that grew and shrank as text.
void TestCompareFlame::cliDiffRun()
{
    QTemporaryDir dir;
    const std::string a = writeRun(dir, QStringLiteral("a"), kRunA);
    const std::string b = writeRun(dir, QStringLiteral("b"), kRunB);
    const QString qa = QString::fromStdString(a), qb = QString::fromStdString(b);
    const test::binary::Run run = test::binary::cli({QStringLiteral("flame"), qa, QStringLiteral("--diff-run"), qb});
    EXPECT_EXIT(run, 0);
    QVERIFY2(run.out.contains(QStringLiteral("-20.0  wait (comm.py:10)")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("total 40.0 % → 20.0 %, self 40.0 % → 20.0 %, samples 40 → 40")),
             qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("+10.0  load (data.py:3)  [only in B]")), qPrintable(run.out));
    QVERIFY(run.out.indexOf(QStringLiteral("Shrank")) < run.out.indexOf(QStringLiteral("Grew")));
    const test::binary::Run top = test::binary::cli(
        {QStringLiteral("flame"), qa, QStringLiteral("--diff-run"), qb, QStringLiteral("--top"), QStringLiteral("1")});
    EXPECT_EXIT(top, 0);
    QVERIFY(!top.out.contains(QStringLiteral("step (train.py")));
    const test::binary::Run perThread = test::binary::cli(
        {QStringLiteral("flame"), qa, QStringLiteral("--diff-run"), qb, QStringLiteral("--per-thread")});
    EXPECT_EXIT(perThread, 2);
    const test::binary::Run svg = test::binary::cli({QStringLiteral("flame"), qa, QStringLiteral("--diff-run"), qb,
                                                     QStringLiteral("-o"), dir.filePath(QStringLiteral("x.svg"))});
    EXPECT_EXIT(svg, 2);
}

void TestCompareFlame::findingsGoneStillNew()
{
    const std::vector<Finding> a = {
        finding("COMM_BOUND", {"n0", "n1"}, 0.30, 300, evidence("sub_type", "zero3_gather")),
        finding("INPUT_STALL", {"n0"}, 0.10, 100, evidence("sub_cause", "loader_workers")),
        finding("HOST_STALL", {"n1"}, 0.05, 50, evidence("frame", "collect (gc.py)")),
        finding("STRAGGLER", {"n2"}, 0.08, 80),
    };
    const std::vector<Finding> b = {
        finding("CKPT_GAP", {}, 0.02, 20),
        finding("HOST_STALL", {"n1"}, 0.04, 40, evidence("frame", "flush (log.py)")),
        finding("COMM_BOUND", {"n0", "n1"}, 0.10, 100, evidence("sub_type", "zero3_gather")),
        finding("STRAGGLER", {"n3"}, 0.06, 60), // another node of the same cluster: another straggler
        finding("INPUT_STALL", {"n0"}, 0.03, 30, evidence("sub_cause", "storage")),
    };
    const FindingsComparison cmp = compareFindings(a, {}, b, {});
    QCOMPARE(cmp.still.size(), size_t{1});
    const FindingChange& comm = cmp.still.front();
    QCOMPARE(comm.status, FindingChange::Status::Still);
    QCOMPARE(comm.a->rule, std::string("COMM_BOUND"));
    QVERIFY(near(comm.impactA, 0.30) && near(comm.impactB, 0.10));
    QVERIFY(near(comm.savingA, 300) && near(comm.savingB, 100));
    QVERIFY(comm.sameNodes);

    QCOMPARE(cmp.gone.size(), size_t{3});
    QCOMPARE(cmp.gone.front().a->rule, std::string("INPUT_STALL")); // the largest saving first
    QVERIFY(findRule(cmp.gone, "HOST_STALL") && findRule(cmp.gone, "STRAGGLER"));
    for (const FindingChange& c : cmp.gone)
        QVERIFY(c.status == FindingChange::Status::Gone && c.a && !c.b && c.savingB == 0);

    QCOMPARE(cmp.added.size(), size_t{4});
    QCOMPARE(cmp.added.front().b->rule, std::string("STRAGGLER"));
    QVERIFY(findRule(cmp.added, "CKPT_GAP") && findRule(cmp.added, "HOST_STALL") && findRule(cmp.added, "INPUT_STALL"));
    for (const FindingChange& c : cmp.added)
        QVERIFY(c.status == FindingChange::Status::New && c.b && !c.a);

    // Runs on other machines (no node name in common): findings of the same character still match.
    std::vector<Finding> other = a;
    for (Finding& f : other)
        for (std::string& n : f.nodes)
            n = "host-" + n;
    const FindingsComparison moved = compareFindings(a, {}, other, {});
    QCOMPARE(moved.still.size(), a.size());
    QVERIFY(moved.gone.empty() && moved.added.empty());
    QVERIFY(!moved.still.front().sameNodes);

    // A merged finding on more nodes matches the same one on fewer; the closest match wins over a partial one.
    const std::vector<Finding> partial = {
        finding("COMM_BOUND", {"n0"}, 0.2, 200, evidence("sub_type", "zero3_gather")),
        finding("COMM_BOUND", {"n0", "n1"}, 0.1, 100, evidence("sub_type", "zero3_gather"))};
    const FindingsComparison closest = compareFindings({a.front()}, {}, partial, {});
    QCOMPARE(closest.still.size(), size_t{1});
    QVERIFY(closest.still.front().sameNodes);
    QVERIFY(near(closest.still.front().savingB, 100));
    QCOMPARE(closest.added.size(), size_t{1});

    // A symptom is another finding than the standing one of the same rule.
    Finding symptom = a.front();
    symptom.causedBy = "STRAGGLER n2 (rank 3)";
    QVERIFY(findingCharacter(symptom) != findingCharacter(a.front()));
    QCOMPARE(findingCharacter(a.front()), std::string("COMM_BOUND/sub_type=zero3_gather"));
}

void TestCompareFlame::findingsSavingsWithinWindows()
{
    // A: 300 s over its first 1000 s; B: 100 s over its first 1000 s, compared on [0, 500 s) and [0, 250 s).
    const std::vector<Finding> a = {finding("COMM_BOUND", {"n0"}, 0.3, 300, evidence("sub_type", "x"))};
    const std::vector<Finding> b = {finding("COMM_BOUND", {"n0"}, 0.1, 100, evidence("sub_type", "x"))};
    const FindingsComparison cmp = compareFindings(a, {0, 500 * kSecond - 1}, b, {0, 250 * kSecond - 1});
    QCOMPARE(cmp.still.size(), size_t{1});
    const FindingChange& c = cmp.still.front();
    QVERIFY(std::fabs(c.savingA - 150) < 1e-6);
    QVERIFY(std::fabs(c.savingB - 25) < 1e-6);
    QVERIFY(std::fabs(c.savingShareA - 0.3) < 1e-6);
    QVERIFY(std::fabs(c.savingShareB - 0.1) < 1e-6);
    QCOMPARE(std::string(statusName(c.status)), std::string("still"));
}

QTEST_GUILESS_MAIN(TestCompareFlame)
#include "tst_compare_flame.moc"
