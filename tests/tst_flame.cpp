// Flame trees built from imported stacks: totals round-trip through folded output, windows select exactly the
// samples inside them, focus/find, phase filters and shares, diff trees, and the real fixtures.

#include "analysis/flame/flame_diff.h"
#include "analysis/flame/flame_export.h"
#include "analysis/flame/flame_layout.h"
#include "analysis/flame/flame_search.h"
#include "analysis/flame/flame_tree.h"
#include "analysis/store/run_database.h"
#include "importers/import_session.h"
#include "tests/flame_support.h"
#include "tests/test_support.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <fmt/format.h>
#include <map>
#include <random>

using namespace runlens;
using namespace runlens::analysis;

namespace {

struct Run
{
    std::unique_ptr<store::RunDatabase> db;
    std::string error;
};

Run importAll(const std::string& dbPath, const std::vector<std::string>& paths,
              const importers::ImportOptions& options = {})
{
    Run r;
    auto plan = importers::planImport(paths, options);
    if (!plan) {
        r.error = plan.error().toString();
        return r;
    }
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::Create);
    if (!db) {
        r.error = db.error().toString();
        return r;
    }
    for (const auto& f : *plan) {
        const auto res = importers::importFile(**db, f, options);
        if (res.outcome != importers::FileOutcome::Imported) {
            r.error = f.path + ": " + (res.error ? res.error->toString() : "not imported");
            return r;
        }
    }
    r.db = std::move(*db);
    return r;
}

std::shared_ptr<const PhaseClassifier> classifier()
{
    auto c = PhaseClassifier::builtIn();
    if (!c) qFatal("%s", c.error().toString().c_str());
    return std::make_shared<PhaseClassifier>(std::move(*c));
}

// "stack count" lines summed per stack (an independent reading of a folded file).
std::map<std::string, int64_t> foldedCounts(const std::string& text)
{
    std::map<std::string, int64_t> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(pos, nl - pos);
        pos = nl + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        const size_t sp = line.rfind(' ');
        if (sp == std::string::npos) continue;
        out[line.substr(0, sp)] += std::stoll(line.substr(sp + 1));
    }
    return out;
}

// A random py-spy-like folded profile: a few threads, a prefix tree of frames, repeated lines.
std::string randomFolded(uint32_t seed, std::map<std::string, int64_t>& expected)
{
    std::mt19937 rng(seed);
    const std::vector<std::string> names = {"train (train.py:10)",
                                            "forward (model.py:20)",
                                            "backward (model.py:30)",
                                            "all_reduce (torch/distributed/distributed_c10d.py:2500)",
                                            "_next_data (torch/utils/data/dataloader.py:700)",
                                            "matmul",
                                            "sort"};
    std::string out;
    for (int line = 0; line < 400; ++line) {
        std::string stack =
            fmt::format("process 7:\"python train.py\";thread ({}): worker{}", 100 + line % 3, line % 3);
        const int depth = 1 + static_cast<int>(rng() % 6);
        for (int d = 0; d < depth; ++d)
            stack += ";" + names[rng() % names.size()];
        const int64_t count = 1 + static_cast<int64_t>(rng() % 50);
        expected[stack] += count;
        out += fmt::format("{} {}\n", stack, count);
    }
    return out;
}

} // namespace

class TestFlame : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void foldedRoundTrip_data();
    void foldedRoundTrip();
    void windowsSelectTheirSamples();
    void focusAndFind();
    void phaseFilterAndShares();
    void diffOfItselfIsNeutral();
    void searchCountsNestedMatchesOnce_data();
    void searchCountsNestedMatchesOnce();
    void functionTotalsAndSandwich();
    void layoutKeepsNarrowBlocks();
    void fixtureTotalsRoundTrip();
    void fixtureInputStallAndCheckpoints();
};

void TestFlame::foldedRoundTrip_data()
{
    QTest::addColumn<uint>("seed");
    QTest::newRow("seed 1") << 1u;
    QTest::newRow("seed 2") << 2u;
    QTest::newRow("seed 3") << 3u;
}

void TestFlame::foldedRoundTrip()
{
    QFETCH(uint, seed);
    QTemporaryDir dir;
    std::map<std::string, int64_t> expected;
    const std::string path = test::writeFile(dir, QStringLiteral("p.folded"), randomFolded(seed, expected));
    Run run = importAll(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {path});
    QVERIFY2(run.db, run.error.c_str());
    FlameSource source(*run.db, classifier());
    FlameQuery q;
    q.perThread = true;
    auto tree = source.tree(q);
    QVERIFY2(tree, tree ? "" : tree.error().toString().c_str());
    QCOMPARE(foldedCounts(foldedText(**tree, FlameValue::Samples)), expected);
    int64_t total = 0;
    for (const auto& [s, n] : expected)
        total += n;
    QCOMPARE((*tree)->totalSamples(), total);
    // Without per-thread levels the same totals, merged across threads.
    q.perThread = false;
    auto merged = source.tree(q);
    QVERIFY(merged);
    QCOMPARE((*merged)->totalSamples(), total);
    // A window excludes untimed stacks by default.
    q.window = {0, 1};
    auto windowed = source.tree(q);
    QVERIFY(windowed);
    QCOMPARE((*windowed)->totalSamples(), int64_t{0});
}

void TestFlame::windowsSelectTheirSamples()
{
    // A speedscope profile: 3000 samples 100 ms apart (5 min: several 2^36 ns buckets and chunks), stacks cycling
    // through three paths.
    QTemporaryDir dir;
    const int64_t start = 1'790'000'000'000'000'000;
    std::string samples, weights;
    for (int i = 0; i < 3000; ++i) {
        samples += std::string(i ? "," : "") + (i % 3 == 0 ? "[0,1]" : i % 3 == 1 ? "[0,2]" : "[0,1,3]");
        weights += std::string(i ? "," : "") + "100";
    }
    const std::string json = fmt::format(
        R"({{"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {{"frames": [
        {{"name": "main", "file": "train.py", "line": 1}},
        {{"name": "forward", "file": "torch/nn/modules/module.py", "line": 2}},
        {{"name": "_next_data", "file": "torch/utils/data/dataloader.py", "line": 3}},
        {{"name": "all_reduce", "file": "torch/distributed/distributed_c10d.py", "line": 4}}]}},
        "profiles": [{{"type": "sampled", "name": "Thread 5 \"MainThread\"", "unit": "milliseconds",
        "startValue": 0, "endValue": 300000, "startUnixNs": {}, "samples": [{}], "weights": [{}]}}]}})",
        start, samples, weights);
    const std::string path = test::writeFile(dir, QStringLiteral("s.speedscope.json"), json);
    // The same capture also kept as a folded file (untimed), as profilers often leave both.
    const std::string folded = test::writeFile(dir, QStringLiteral("s.folded"),
                                               "main (train.py:1);forward 2000\n"
                                               "main (train.py:1);_next_data 1000\n");
    Run run = importAll(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {path, folded});
    QVERIFY2(run.db, run.error.c_str());
    FlameSource source(*run.db, classifier());
    auto threads = source.threads({});
    QVERIFY(threads && threads->size() == 2);
    {
        // Without a window the untimed copy is left out by default (it would count the samples twice).
        auto whole = source.tree({});
        QVERIFY(whole);
        QCOMPARE((*whole)->totalSamples(), int64_t{3000});
        FlameQuery both;
        both.untimed = UntimedStacks::Include;
        auto all = source.tree(both);
        QVERIFY(all);
        QCOMPARE((*all)->totalSamples(), int64_t{6000});
        QCOMPARE((*all)->untimedSamples(), int64_t{3000});
    }
    threads->erase(std::remove_if(threads->begin(), threads->end(),
                                  [](const store::StackThreadInfo& t) { return t.timedSamples == 0; }),
                   threads->end());
    QVERIFY(threads->size() == 1);
    const int64_t first = *threads->front().firstNs; // placement as the importer decided it
    std::mt19937 rng(7);
    for (int k = 0; k < 60; ++k) {
        int a = static_cast<int>(rng() % 3000), b = a + static_cast<int>(rng() % (3000 - a));
        if (k % 4 == 1) a = 0; // windows from the first sample and to the last one use buckets that stick out
        if (k % 4 == 2) b = 2999;
        if (k == 3) a = 0, b = 2999;
        FlameQuery q;
        q.window = {first + a * 100'000'000LL, first + b * 100'000'000LL};
        auto tree = source.tree(q);
        QVERIFY(tree);
        QCOMPARE((*tree)->totalSamples(), int64_t{b - a + 1});
        // Independently: samples i in [a, b] with i % 3 == 1 are in _next_data.
        int64_t input = 0;
        for (int i = a; i <= b; ++i)
            input += i % 3 == 1 ? 1 : 0;
        const int32_t node = (*tree)->find({"main (train.py:1)", "_next_data"});
        QCOMPARE(node < 0 ? int64_t{0} : (*tree)->node(node).samples, input);
    }
}

void TestFlame::focusAndFind()
{
    QTemporaryDir dir;
    const std::string path =
        test::writeFile(dir, QStringLiteral("f.folded"), "x (x.py:4);y 7\na;e 2\na;b;d 3\na;b;c 5\n");
    Run run = importAll(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {path});
    QVERIFY2(run.db, run.error.c_str());
    FlameSource source(*run.db, classifier());
    auto tree = source.tree({});
    QVERIFY(tree);
    const FlameTree& t = **tree;
    QCOMPARE(t.totalSamples(), int64_t{17});
    // Siblings in label order, whatever order the stacks came in.
    std::vector<std::string> top;
    for (int32_t c : t.children(0))
        top.push_back(t.label(c));
    QCOMPARE(top, (std::vector<std::string>{"a", "x (x.py:4)"}));
    std::vector<std::string> underA;
    for (int32_t c : t.children(t.find({"a"})))
        underA.push_back(t.label(c));
    QCOMPARE(underA, (std::vector<std::string>{"b", "e"}));
    const int32_t b = t.find({"a", "b"});
    QVERIFY(b > 0);
    QCOMPARE(t.node(b).samples, int64_t{8});
    QCOMPARE(t.find({"x"}), t.find({"x (x.py:4)"})); // a bare name matches the labelled frame
    QCOMPARE(t.find({"a", "zz"}), -1);
    // Focused folded output keeps the ancestors and only the subtree.
    QCOMPARE(foldedCounts(foldedText(t, FlameValue::Samples, b)),
             (std::map<std::string, int64_t>{{"a;b;c", 5}, {"a;b;d", 3}}));
    // Layout under focus: the focus spans the width, ancestors stay above it.
    const FlameLayout layout = layoutFlame(t, b, 0.0);
    bool focusFull = false, ancestorAbove = false;
    for (const FlameRect& r : layout.rects) {
        if (r.node == b) focusFull = r.x == 0 && r.width == 1 && r.row == 2;
        if (r.node == t.find({"a"})) ancestorAbove = r.ancestor && r.row == 1;
    }
    QVERIFY(focusFull);
    QVERIFY(ancestorAbove);
}

void TestFlame::phaseFilterAndShares()
{
    QTemporaryDir dir;
    const std::string path =
        test::writeFile(dir, QStringLiteral("f.folded"),
                        "train (train.py:1);all_reduce (torch/distributed/distributed_c10d.py:10) 6\n"
                        "train (train.py:1);__next__ (torch/utils/data/dataloader.py:20);_next_data "
                        "(torch/utils/data/dataloader.py:30) 3\n"
                        "train (train.py:1);my_own_step (train.py:5) 1\n");
    Run run = importAll(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {path});
    QVERIFY2(run.db, run.error.c_str());
    FlameSource source(*run.db, classifier());
    auto shares = phaseShares(source, {});
    QVERIFY(shares);
    QCOMPARE(shares->samples, int64_t{10});
    QCOMPARE(shares->share(Phase::Comm), 0.6);
    QCOMPARE(shares->share(Phase::Input), 0.3);
    FlameQuery q;
    q.phases = {Phase::Comm};
    auto comm = source.tree(q);
    QVERIFY(comm);
    QCOMPARE((*comm)->totalSamples(), int64_t{6});
}

void TestFlame::diffOfItselfIsNeutral()
{
    QTemporaryDir dir;
    std::map<std::string, int64_t> expected;
    const std::string path = test::writeFile(dir, QStringLiteral("p.folded"), randomFolded(9, expected));
    Run run = importAll(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {path});
    QVERIFY2(run.db, run.error.c_str());
    FlameSource source(*run.db, classifier());
    auto tree = source.tree({});
    QVERIFY(tree);
    auto diff = diffTree(**tree, **tree);
    QCOMPARE(diff->nodes().size(), (*tree)->nodes().size());
    for (const DiffNode& n : diff->nodes()) {
        QCOMPARE(n.delta(), 0.0);
        QVERIFY(!n.onlyInA() && !n.onlyInB());
    }
    // Against the comm-only tree: everything else shrank to nothing, comm frames grew in share.
    FlameQuery q;
    q.phases = {Phase::Comm};
    auto comm = source.tree(q);
    QVERIFY(comm);
    auto d = diffTree(**tree, **comm);
    const int32_t ar = d->find({"train (train.py:10)", "all_reduce (torch/distributed/distributed_c10d.py:2500)"});
    if (ar >= 0) QVERIFY(d->node(ar).delta() > 0);
}

void TestFlame::searchCountsNestedMatchesOnce_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<bool>("regex");
    QTest::addColumn<int>("samples"); // by hand from test::knownFlameTree()
    QTest::addColumn<int>("matches");
    QTest::newRow("b: nested in a, c and itself") << "b" << false << 24 << 5;
    QTest::newRow("^a$: a, and a under c") << "^a$" << true << 18 << 2;
    QTest::newRow("substring of main: everything under main once") << "mai" << false << 29 << 1;
    QTest::newRow("case-insensitive") << "MAIN" << false << 0 << 0;
    QTest::newRow("file name") << "train\\.py" << true << 35 << 10;
    QTest::newRow("nothing") << "zzz" << false << 0 << 0;
}

void TestFlame::searchCountsNestedMatchesOnce()
{
    QFETCH(QString, pattern);
    QFETCH(bool, regex);
    QFETCH(int, samples);
    QFETCH(int, matches);
    auto tree = test::knownFlameTree();
    QCOMPARE(tree->totalSamples(), int64_t(35));
    auto found = searchFlame(*tree, pattern.toStdString(), regex);
    QVERIFY_OK(found);
    QCOMPARE(found->matchedSamples, int64_t(samples));
    QCOMPARE(static_cast<int>(found->matches.size()), matches);
    QVERIFY(std::abs(found->share - samples / 35.0) < 1e-12);
    // A match, the path to it and everything below it are relevant; idle is not (unless it matches).
    for (int32_t m : found->matches) {
        for (int32_t a = m; a >= 0; a = tree->node(a).parent)
            QVERIFY(found->relevant[static_cast<size_t>(a)]);
    }
    const int32_t idle = tree->find({"idle (train.py)"});
    QVERIFY(idle > 0);
    QCOMPARE(bool(found->relevant[static_cast<size_t>(idle)]), samples == 35);
    QVERIFY(!searchFlame(*tree, "a(", true)); // a bad regular expression is an error
}

void TestFlame::functionTotalsAndSandwich()
{
    auto tree = test::knownFlameTree();
    std::map<std::string, std::pair<int64_t, int64_t>> totals; // name -> self, total
    for (const FunctionTotal& f : functionTotals(*tree))
        totals[f.name] = {f.selfSamples, f.samples};
    QCOMPARE(totals["b"], std::make_pair(int64_t(24), int64_t(24)));
    QCOMPARE(totals["a"], std::make_pair(int64_t(5), int64_t(18)));
    QCOMPARE(totals["main"], std::make_pair(int64_t(0), int64_t(29)));
    QCOMPARE(totals["idle"], std::make_pair(int64_t(6), int64_t(6)));
    QCOMPARE(functionTotals(*tree).front().name, std::string("b")); // the largest self first

    const int32_t b = tree->find({"main (train.py)", "a (train.py)", "b (train.py)"});
    QVERIFY(b > 0);
    const Sandwich sw = sandwichOf(*tree, b);
    QCOMPARE(sw.name, std::string("b"));
    QCOMPARE(sw.samples, int64_t(24)); // the function's total
    QCOMPARE(sw.callers->totalSamples(), int64_t(24));
    QCOMPARE(sw.callees->totalSamples(), int64_t(24));
    const int32_t cb = sw.callers->find({"b (train.py)"});
    QVERIFY(cb > 0);
    QCOMPARE(sw.callers->node(cb).samples, int64_t(24));
    std::map<std::string, int64_t> callers;
    for (int32_t c : sw.callers->children(cb))
        callers[std::string(sw.callers->name(c))] = sw.callers->node(c).samples;
    QCOMPARE(callers, (std::map<std::string, int64_t>{{"a", 13}, {"c", 7}, {"main", 4}}));
    const int32_t bb = sw.callees->find({"b (train.py)", "b (train.py)"});
    QVERIFY(bb > 0);
    QCOMPARE(sw.callees->node(bb).samples, int64_t(4));
    QCOMPARE(sw.callees->node(sw.callees->find({"b (train.py)"})).selfSamples, int64_t(20));
}

void TestFlame::layoutKeepsNarrowBlocks()
{
    QTemporaryDir dir;
    std::string text = "big 10000\n";
    for (int i = 0; i < 50; ++i)
        text += fmt::format("tiny{} 1\n", i);
    const std::string path = test::writeFile(dir, QStringLiteral("f.folded"), text);
    Run run = importAll(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {path});
    QVERIFY2(run.db, run.error.c_str());
    FlameSource source(*run.db, nullptr);
    auto tree = source.tree({});
    QVERIFY(tree);
    const FlameLayout layout = layoutFlame(**tree, 0, 1.0 / 1000);
    int64_t other = 0;
    int merged = 0;
    for (const FlameRect& r : layout.rects)
        if (r.node < 0) {
            other += r.samples;
            merged += r.merged;
        }
    QCOMPARE(merged, 50);
    QCOMPARE(other, int64_t{50});
    for (const FlameRect& r : layout.rects)
        QVERIFY(r.row < layout.rows);
    // Narrow children only: their "other" block is alone in its row, and the layout still counts that row.
    std::vector<FlameTree::Stack> stacks{{{store::FrameInfo{"big", "", 0, ""}}, 10000, 0, Phase::Other}};
    for (int i = 0; i < 50; ++i)
        stacks.push_back({{store::FrameInfo{"big", "", 0, ""}, store::FrameInfo{fmt::format("tiny{}", i), "", 0, ""}},
                          1,
                          0,
                          Phase::Other});
    const FlameLayout narrow = layoutFlame(*FlameTree::fromStacks(stacks), 0, 1.0 / 1000);
    QCOMPARE(narrow.rows, 3);
    QCOMPARE(narrow.rects.back().node, -1);
    QCOMPARE(narrow.rects.back().row, 2);
}

void TestFlame::fixtureTotalsRoundTrip()
{
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures is absent");
    // Every folded, perf and speedscope fixture: the flame tree's total equals an independent count.
    struct Case
    {
        QString path;
        int64_t samples;
    };
    std::vector<Case> cases;
    QDirIterator it(fixtures, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString p = it.next();
        if (p.contains(QLatin1String("/truth/"))) continue;
        QFile f(p);
        if (!f.open(QIODevice::ReadOnly)) continue;
        const QByteArray bytes = f.readAll();
        if (p.endsWith(QLatin1String(".folded"))) {
            int64_t n = 0;
            for (const auto& [s, c] : foldedCounts(bytes.toStdString()))
                n += c;
            cases.push_back({p, n});
        } else if (p.endsWith(QLatin1String(".speedscope.json"))) {
            const QJsonObject o = QJsonDocument::fromJson(bytes).object();
            int64_t n = 0;
            for (const auto& prof : o.value(QStringLiteral("profiles")).toArray()) {
                const QJsonObject po = prof.toObject();
                n += po.value(QStringLiteral("type")).toString() == QLatin1String("sampled")
                         ? po.value(QStringLiteral("samples")).toArray().size()
                         : 0;
            }
            if (n > 0) cases.push_back({p, n});
        } else if (p.contains(QLatin1String("perf")) && p.endsWith(QLatin1String(".txt")) &&
                   !p.contains(QLatin1String("captures"))) {
            // perf script: one sample per header line (a line that is not indented and not a comment, followed
            // by frames), counted by blank-line separated blocks.
            int64_t n = 0;
            bool inBlock = false;
            for (const QByteArray& line : bytes.split('\n')) {
                const bool blank = line.trimmed().isEmpty();
                if (line.startsWith('#')) continue;
                if (!blank && !inBlock) ++n;
                inBlock = !blank;
            }
            cases.push_back({p, n});
        }
    }
    QVERIFY(cases.size() >= 8);
    for (const Case& c : cases) {
        QTemporaryDir dir;
        Run run = importAll(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {c.path.toStdString()});
        QVERIFY2(run.db, run.error.c_str());
        FlameSource source(*run.db, nullptr);
        FlameQuery q;
        q.untimed = UntimedStacks::Include;
        auto tree = source.tree(q);
        QVERIFY(tree);
        if ((*tree)->totalSamples() != c.samples)
            QFAIL(qPrintable(QStringLiteral("%1: %2 samples in the flame tree, %3 counted")
                                 .arg(c.path)
                                 .arg((*tree)->totalSamples())
                                 .arg(c.samples)));
        if (c.path.endsWith(QLatin1String(".folded"))) {
            // Folded files come back line for line (py-spy process/thread root frames included).
            q.perThread = true;
            auto perThread = source.tree(q);
            QVERIFY(perThread);
            QFile f(c.path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QCOMPARE(foldedCounts(foldedText(**perThread, FlameValue::Samples)),
                     foldedCounts(f.readAll().toStdString()));
        }
    }
}

void TestFlame::fixtureInputStallAndCheckpoints()
{
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures is absent");
    const QString base = fixtures + QStringLiteral("/h200-gloo-small/");
    for (int rank = 0; rank < 2; ++rank) {
        // Ground truth (read by the test only): the end of the inputstall phase and the checkpoint intervals.
        QFile truth(base + QStringLiteral("truth/events-rank%1.jsonl").arg(rank));
        QVERIFY(truth.open(QIODevice::ReadOnly));
        int64_t inputStallEnd = 0;
        std::vector<std::pair<int64_t, int64_t>> checkpoints;
        for (const QByteArray& line : truth.readAll().split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            const QString event = o.value(QStringLiteral("event")).toString();
            const auto ns = [&](const char* key) {
                return static_cast<int64_t>(o.value(QLatin1String(key)).toDouble());
            };
            if (event == QLatin1String("phase_end") &&
                o.value(QStringLiteral("phase")).toString() == QLatin1String("inputstall"))
                inputStallEnd = ns("ts_ns");
            if (event == QLatin1String("checkpoint")) checkpoints.emplace_back(ns("ts_ns"), ns("end_ns"));
        }
        QVERIFY(inputStallEnd > 0);

        QTemporaryDir dir;
        Run run = importAll(dir.filePath(QStringLiteral("r.runlens")).toStdString(),
                            {(base + QStringLiteral("stacks-rank%1.speedscope.json").arg(rank)).toStdString()});
        QVERIFY2(run.db, run.error.c_str());
        store::StackReader reader(*run.db);
        auto cat = reader.catalog();
        QVERIFY(cat);
        const auto inPath = [&](int64_t callsite, std::string_view name) {
            for (auto c = static_cast<size_t>(callsite); c != 0; c = static_cast<size_t>((*cat)->parent[c]))
                if ((*cat)->frames[static_cast<size_t>((*cat)->frame[c])].name == name) return true;
            return false;
        };
        int64_t prep = 0, prepInside = 0, ckpt = 0, ckptInside = 0;
        // A sample is stamped when taken; a frame seen in a sample was on the stack within one sampling
        // period (10 ms) of it.
        constexpr int64_t kPeriod = 10'000'000;
        for (const auto& t : (*cat)->threads) {
            auto samples = reader.samples(t.id, {});
            QVERIFY(samples);
            for (const auto& s : *samples) {
                if (inPath(s.callsiteId, "heavy_input_prep")) {
                    ++prep;
                    prepInside += s.tsNs <= inputStallEnd + kPeriod ? 1 : 0;
                }
                if (inPath(s.callsiteId, "save_checkpoint") || inPath(s.callsiteId, "_save")) {
                    ++ckpt;
                    for (const auto& [a, b] : checkpoints)
                        if (s.tsNs >= a - kPeriod && s.tsNs <= b + kPeriod) {
                            ++ckptInside;
                            break;
                        }
                }
            }
        }
        QVERIFY2(prep > 100, qPrintable(QStringLiteral("rank %1: %2 heavy_input_prep samples").arg(rank).arg(prep)));
        QCOMPARE(prepInside, prep);
        if (rank == 0) QVERIFY2(ckpt > 50, qPrintable(QStringLiteral("%1 checkpoint samples").arg(ckpt)));
        QCOMPARE(ckptInside, ckpt);
    }
}

QTEST_GUILESS_MAIN(TestFlame)
#include "tst_flame.moc"
