// STRAGGLER by node: generated runs where a node reaches the step's collective late in most steps (persistent) or
// some of them (intermittent), and where jitter, a different late node every step, rare or small lateness make no
// straggler.
// STRAGGLER by rank: generated runs where one rank does extra host work before every step while its peers wait at
// the collective (found from profiled traces alone, from the stack samples alone, and from both when the peers wait
// in a frame only the traces show to hold the collectives), ranks late in turn at random (jitter: no straggler), the
// peers' communication wait linked to the straggler as its symptom; and the real h200-gloo-straggler run against its
// ground truth (rank 1, slow_rank_work, 0.25 s a step, in the straggler phase only) and h200-gloo-small (no straggler).

#include "analysis/rules/run_analysis.h"
#include "analysis/rules/step_detection.h"
#include "analysis/rules/straggler_rule.h"
#include "analysis/rules/straggler_support.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "analysis/store/trace_writer.h"
#include "app/demo/demo_run.h"
#include "tests/fixture_run.h"
#include "tests/rules_support.h"
#include "tests/steps_support.h"
#include "tests/test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <bit>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <random>

using namespace runlens;
using namespace runlens::analysis;
using namespace runlens::test::rules;
using namespace runlens::test::steps;

namespace {

// A data-parallel run on one node: `ranks` processes share its GPU. Step k: every rank first does extra(rank, k)
// seconds of its own host work (slow_rank_work), then computes for workS (forward, then backward), then waits at the
// gradient all-reduce until the last rank arrives, and the all-reduce takes commS.
struct RankRun
{
    int ranks = 4;
    int nodes = 1; // the ranks spread evenly over node0, node1, …
    int64_t seconds = 240;
    double workS = 0.3, commS = 0.1;
    std::function<double(int rank, int64_t k)> extra;
    bool stacks = true;
    double rateHz = 50;
    // The wait shows inside the trainer's own backward-and-reduce frame (native collectives, no communication
    // frame sampled) rather than in all_reduce.
    bool waitInOwnFrame = false;
    std::vector<int64_t> profiled; // steps with a profiler trace on every rank
    double jitterS = 0.002;        // of the traced arrivals
    bool rendezvous = true;        // false: the traced spans end without waiting for the others (not one collective)
    // The model's steps.
    std::vector<double> starts;
    void build()
    {
        starts = {0};
        for (int64_t k = 0; starts.back() < static_cast<double>(seconds); ++k) {
            double latest = 0;
            for (int r = 0; r < ranks; ++r)
                latest = std::max(latest, (extra ? extra(r, k) : 0.0) + workS);
            starts.push_back(starts.back() + latest + commS);
        }
    }
    double extraOf(int r, int64_t k) const { return extra ? extra(r, k) : 0.0; }
};

int64_t ns(double s)
{
    return kStart + std::llround(s * 1e9);
}

// Per node: the shared GPU, under-used (SM activity 0.3), and the trainer's step times; the nodes' ids, empty on a
// failure.
std::vector<int64_t> writeRankNodes(store::RunWriter& w, const RankRun& run)
{
    std::vector<int64_t> nodes;
    for (int n = 0; n < run.nodes; ++n) {
        auto node = w.node("node" + std::to_string(n), "option", "UTC");
        if (!node) return {};
        nodes.push_back(*node);
        auto gpu = w.device(*node, "gpu", "0");
        if (!gpu) return {};
        for (const char* metric : {"gpu.util", "gpu.sm_active"}) {
            auto sink = w.series(*gpu, metric, std::string(metric) == "gpu.util" ? "%" : "ratio", metric);
            if (!sink) return {};
            for (int64_t s = 0; s < run.seconds; ++s)
                (*sink)->append(kStart + s * kSecond, std::string(metric) == "gpu.util" ? 60.0 : 0.3);
        }
        auto host = w.device(*node, "host", "");
        if (!host) return {};
        auto stepSink = w.series(*host, "train.step_time", "s", "step_time");
        if (!stepSink) return {};
        for (size_t k = 0; k + 1 < run.starts.size() && run.starts[k + 1] <= static_cast<double>(run.seconds); ++k)
            (*stepSink)->append(ns(run.starts[k + 1]), run.starts[k + 1] - run.starts[k]);
    }
    return nodes;
}

// The node rank r runs on.
int64_t nodeOfRank(const std::vector<int64_t>& nodes, const RankRun& run, int r)
{
    return nodes[static_cast<size_t>(r * run.nodes / run.ranks)];
}

// Stack samples at run.rateHz on every rank's main thread: its own host work, forward, backward and the all-reduce.
bool writeRankStacks(store::RunWriter& w, const RankRun& run, const std::vector<int64_t>& nodes)
{
    std::map<std::string, int64_t> frames;
    auto frame = [&](const std::string& name, const std::string& file) -> int64_t {
        auto it = frames.find(name + "|" + file);
        if (it != frames.end()) return it->second;
        auto f = w.frame(name, file, 10, {});
        return frames[name + "|" + file] = f ? *f : -1;
    };
    std::map<std::vector<int64_t>, int64_t> callsites;
    auto callsite = [&](const Stack& path) -> int64_t {
        std::vector<int64_t> ids;
        int64_t cs = 0;
        for (const auto& [name, file] : path) {
            ids.push_back(frame(name, file));
            auto it = callsites.find(ids);
            if (it == callsites.end()) {
                auto c = w.callsite(cs, ids.back());
                if (!c) return -1;
                it = callsites.emplace(ids, *c).first;
            }
            cs = it->second;
        }
        return cs;
    };
    const std::pair<std::string, std::string> module{"<module>", "train.py"}, main{"main", "train.py"};
    for (int r = 0; r < run.ranks; ++r) {
        auto thread =
            w.thread(nodeOfRank(nodes, run, r), "", 0, fmt::format("rank {} pid {} thread MainThread", r, 1000 + r), 0);
        if (!thread) return false;
        size_t k = 0;
        const auto n = static_cast<int64_t>(static_cast<double>(run.seconds) * run.rateHz);
        for (int64_t i = 0; i < n; ++i) {
            const double t = static_cast<double>(i) / run.rateHz + 0.003 * r;
            while (k + 1 < run.starts.size() && run.starts[k + 1] <= t)
                ++k;
            const double o = t - run.starts[k], extra = run.extraOf(r, static_cast<int64_t>(k));
            Stack path{module, main};
            if (o < extra) {
                path.push_back({"slow_rank_work", "train.py"});
                if (i % 2) path.push_back({"sort", "numpy/_core/fromnumeric.py"});
            } else if (o < extra + run.workS / 2) {
                path.push_back({"forward", "torch/nn/modules/module.py"});
            } else if (run.waitInOwnFrame) {
                path.push_back({"backward_and_reduce", "train.py"});
            } else if (o < extra + run.workS) {
                path.push_back({"backward", "torch/_tensor.py"});
                path.push_back({"_engine_run_backward", "torch/autograd/graph.py"});
            } else {
                path.push_back({"all_reduce", "torch/distributed/distributed_c10d.py"});
            }
            const int64_t cs = callsite(path);
            if (cs < 0 || !w.stackSample(*thread, cs, ns(t), 1, 1 / run.rateHz)) return false;
        }
    }
    return true;
}

// Profiler traces of the profiled steps on every rank: the step, and two gradient buckets' all-reduces enqueued on
// the autograd thread and run on the gloo worker.
bool writeRankTraces(store::RunWriter& w, const RankRun& run, const std::vector<int64_t>& nodes)
{
    store::TraceWriter tw(w);
    std::mt19937_64 rng(11);
    std::normal_distribution<double> jitter(0, run.jitterS);
    auto step = tw.name("ProfilerStep");
    auto enqueue = tw.name("c10d::allreduce_");
    auto gloo = tw.name("gloo:all_reduce");
    if (!step || !enqueue || !gloo) return false;
    for (int r = 0; r < run.ranks; ++r) {
        const std::string pid = std::to_string(1000 + r);
        const int64_t node = nodeOfRank(nodes, run, r);
        auto mainTrack = tw.track(node, r, "cpu", pid, pid, "thread (python)", std::nullopt);
        auto autograd = tw.track(node, r, "cpu", pid, std::to_string(2000 + r), "thread (pt_autograd_0)", std::nullopt);
        auto worker = tw.track(node, r, "cpu", pid, std::to_string(3000 + r), "thread (pt_gloo_runloop)", std::nullopt);
        if (!mainTrack || !autograd || !worker) return false;
        for (int64_t k : run.profiled) {
            const auto kk = static_cast<size_t>(k);
            auto name = tw.name(fmt::format("ProfilerStep#{}", k));
            if (!name) return false;
            const double from = run.starts[kk], to = run.starts[kk + 1];
            if (!tw.slice(*mainTrack, store::TraceCategory::UserAnnotation, *name, ns(from), ns(to) - ns(from),
                          std::nullopt))
                return false;
            // Two gradient buckets: each all-reduce enqueued as the rank reaches it, done when the last one has.
            for (int b = 0; b < 2; ++b) {
                const double arrive = from + run.extraOf(r, k) + run.workS * (0.8 + 0.2 * b) + jitter(rng);
                const double done = run.rendezvous ? to - run.commS * (1 - b) * 0.5 : arrive + 0.01;
                if (!tw.slice(*autograd, store::TraceCategory::Collective, *enqueue, ns(arrive), 80'000,
                              std::nullopt) ||
                    !tw.slice(*worker, store::TraceCategory::Collective, *gloo, ns(arrive) + 100'000,
                              ns(done) - ns(arrive) - 100'000, std::nullopt))
                    return false;
            }
        }
    }
    if (!tw.finish()) return false;
    return true;
}

std::unique_ptr<store::RunDatabase> writeRankRun(const QTemporaryDir& dir, RankRun& run)
{
    run.build();
    test::rules::SyntheticImport synthetic(dir, QStringLiteral("ranks.runlens"));
    if (!synthetic) return nullptr;
    store::RunWriter& w = synthetic.writer();
    const std::vector<int64_t> nodes = writeRankNodes(w, run);
    if (nodes.empty()) return nullptr;
    if (run.stacks && !writeRankStacks(w, run, nodes)) return nullptr;
    if (!run.profiled.empty() && !writeRankTraces(w, run, nodes)) return nullptr;
    return synthetic.finish();
}

// The rank stragglers of a run, as analyzeRun finds them.
std::vector<Finding> rankStragglers(store::RunDatabase& db, const RuleParams& p = RuleParams::defaults())
{
    auto m = loadRunMetrics(db, static_cast<int64_t>(p.get("rules.grid_s") * 1e9));
    auto classifier = PhaseClassifier::builtIn();
    if (!m || !classifier) return {};
    FlameSource stacks(db, std::make_shared<PhaseClassifier>(std::move(*classifier)));
    store::TraceReader traces(db);
    auto found = rankStragglerRule(*m, computeStepTimes(*m, p), stacks, &traces, p);
    if (!found) qWarning("%s", found.error().message.c_str());
    return found ? *found : std::vector<Finding>{};
}

QString ev(const Finding& f, const char* key)
{
    return f.evidence.value(QLatin1String(key)).toString();
}

double num(const Finding& f, const char* key)
{
    return f.evidence.value(QLatin1String(key)).toDouble();
}

QString firstFrame(const Finding& f)
{
    const QJsonArray top = f.evidence.value(QStringLiteral("top_frames")).toArray();
    return top.isEmpty() ? QString() : top[0].toObject().value(QStringLiteral("frame")).toString();
}

// The node and GPU stragglers (stragglerRule) of a generated run.
std::vector<Finding> nodeStragglers(store::RunDatabase& db)
{
    auto m = metricsOf(db);
    if (!m) return {};
    const RuleParams p = RuleParams::defaults();
    return stragglerRule(*m, computeStepTimes(*m, p), p);
}

} // namespace

class TestStraggler : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parameters();
    void peersMediansMatchEachSkip();
    void nodeStraggler_data();
    void nodeStraggler();
    void noNodeStraggler_data();
    void noNodeStraggler();
    void lateRankFromTraces();
    void lateRankFromStacks();
    void lateRankWaitsInOwnFrame();
    void noStragglerWhenRanksTakeTurns_data();
    void noStragglerWhenRanksTakeTurns();
    void commWaitIsItsSymptom();
    void stragglersOnTwoNodesStayApart();
    void symptomNeedsOverlapAndNode();
    void fixtureStraggler();
    void fixtureBalancedRun();
    void noStragglerInManyBalancedRanks();
};

void TestStraggler::parameters()
{
    const RuleParams p = RuleParams::defaults();
    for (const char* name :
         {"straggler.window_samples", "straggler.max_reads", "straggler.max_samples",
          "straggler.collective_frame_share", "straggler.trace_gap_s", "straggler.trace_min_steps",
          "straggler.trace_min_lag", "straggler.trace_share", "straggler.top_frame_share", "straggler.symptom_overlap"})
        QVERIFY2(std::any_of(p.all().begin(), p.all().end(),
                             [&](const RuleParam& rp) { return rp.name == name && !rp.doc.empty(); }),
                 name);
}

// The peers' medians from one sorted copy are peersMedian's to the bit, with ties and absent (NaN) values, for every
// size (none, one, two …).
void TestStraggler::peersMediansMatchEachSkip()
{
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int> few(0, 5); // few distinct values: many ties; 5 is absent
    for (int round = 0; round < 200; ++round)
        for (size_t n = 0; n <= 12; ++n) {
            std::vector<double> v(n);
            for (double& x : v) {
                const int f = few(rng);
                x = f == 5 ? NAN : round % 2 ? 0.1 * f : std::ldexp(static_cast<double>(rng() >> 11), -53);
            }
            const straggler::PeersMedians peers(v);
            for (size_t i = 0; i < n; ++i)
                QCOMPARE(std::bit_cast<uint64_t>(peers.without(v[i])),
                         std::bit_cast<uint64_t>(straggler::peersMedian(v, i)));
        }
}

void TestStraggler::lateRankFromTraces()
{
    // No stacks: ten profiled steps (two profiling windows of five), rank 2 arrives 0.25 s late at each all-reduce.
    RankRun run;
    run.stacks = false;
    run.extra = [](int r, int64_t) { return r == 2 ? 0.25 : 0.0; };
    run.profiled = {20, 21, 22, 23, 24, 200, 201, 202, 203, 204};
    QTemporaryDir dir;
    Finding f;
    oneFinding(writeRankRun(dir, run).get(), &rankStragglers, "STRAGGLER", f);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(f.evidence.value(QStringLiteral("late_rank")).toInteger(), qint64(2));
    QCOMPARE(f.evidence.value(QStringLiteral("pid")).toInteger(), qint64(1002));
    QCOMPARE(ev(f, "source"), QStringLiteral("traces"));
    QCOMPARE(num(f, "trace_steps"), 10.0);
    QCOMPARE(num(f, "trace_late_steps"), 10.0);
    QVERIFY2(std::abs(num(f, "lateness_per_step_s") - 0.25) <= 0.02,
             qPrintable(QString::number(num(f, "lateness_per_step_s"))));
    QCOMPARE(f.nodes, std::vector<std::string>{"node0"});
    QCOMPARE(f.episodes.size(), size_t(2)); // the two profiling windows
    // The saving: the others' wait in the profiled steps, spread over the episodes.
    QVERIFY2(std::abs(f.savingS - 2.5) <= 0.2, qPrintable(QString::number(f.savingS)));
    double episodes = 0;
    for (const FindingEpisode& e : f.episodes)
        episodes += e.savingS;
    QVERIFY(std::abs(episodes - f.savingS) < 1e-6);
    QVERIFY(f.title.find("rank 2") != std::string::npos);

    // Spans that end before the late rank arrives are not one collective (point-to-point kernels matched out of
    // turn, say): no one waited, nothing is claimed.
    RankRun apart = run;
    apart.rendezvous = false;
    QTemporaryDir dir3;
    auto db3 = writeRankRun(dir3, apart);
    QVERIFY(db3);
    QVERIFY(rankStragglers(*db3).empty());

    // One profiled step is not enough on its own.
    RankRun once = run;
    once.profiled = {20};
    QTemporaryDir dir2;
    auto db2 = writeRankRun(dir2, once);
    QVERIFY(db2);
    QVERIFY(rankStragglers(*db2).empty());
}

void TestStraggler::lateRankFromStacks()
{
    // No traces: rank 2 does 0.25 s of slow_rank_work before every step; the others wait in all_reduce.
    RankRun run;
    run.extra = [](int r, int64_t) { return r == 2 ? 0.25 : 0.0; };
    QTemporaryDir dir;
    Finding f;
    auto db = writeRankRun(dir, run);
    oneFinding(db.get(), &rankStragglers, nullptr, f);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(f.evidence.value(QStringLiteral("late_rank")).toInteger(), qint64(2));
    QCOMPARE(f.evidence.value(QStringLiteral("pid")).toInteger(), qint64(1002));
    QCOMPARE(ev(f, "source"), QStringLiteral("stacks"));
    QCOMPARE(ev(f, "late_process"), QStringLiteral("rank 2 pid 1002 thread MainThread"));
    QVERIFY2(firstFrame(f).startsWith(QLatin1String("slow_rank_work (train.py")), qPrintable(firstFrame(f)));
    QVERIFY(f.title.find("rank 2") != std::string::npos && f.title.find("slow_rank_work") != std::string::npos);
    const double late = num(f, "lateness_per_step_s");
    QVERIFY2(std::abs(late - 0.25) <= 0.03, qPrintable(QString::number(late)));
    QVERIFY(num(f, "share_of_steps") >= 0.9);
    QVERIFY(f.evidence.value(QStringLiteral("steps")).toInteger() >= 300); // 240 s of 0.65 s steps
    // It is late all along: one episode over the run; it saves the others' wait, lateness × steps.
    QCOMPARE(f.episodes.size(), size_t(1));
    QVERIFY(episodeSeconds(f, kStart, kStart + 240 * kSecond) >= 220);
    const double perSteps = late * f.evidence.value(QStringLiteral("steps")).toDouble();
    QVERIFY2(std::abs(f.savingS - perSteps) <= 0.05 * perSteps, qPrintable(QString::number(f.savingS)));
    QCOMPARE(f.episodes[0].savingS, f.savingS);
    QVERIFY(f.impact > 0.3 && f.severity == "critical");

    // With a small read budget the windows read are spread over the run, and each speaks for those up to the next.
    RuleParams p = RuleParams::defaults();
    QVERIFY(p.set("straggler.max_reads=120")); // 30 of the ~370 steps for 4 ranks
    const auto sampled = rankStragglers(*db, p);
    QCOMPARE(sampled.size(), size_t(1));
    const Finding& g = sampled[0];
    QCOMPARE(g.evidence.value(QStringLiteral("windows_read")).toInteger(), qint64(30));
    QCOMPARE(g.evidence.value(QStringLiteral("late_rank")).toInteger(), qint64(2));
    QCOMPARE(g.episodes.size(), size_t(1));
    QVERIFY(episodeSeconds(g, kStart, kStart + 240 * kSecond) >= 220);
    QVERIFY2(std::abs(g.savingS - f.savingS) <= 0.05 * f.savingS, qPrintable(QString::number(g.savingS)));
    QVERIFY2(std::abs(num(g, "lateness_per_step_s") - 0.25) <= 0.03,
             qPrintable(QString::number(num(g, "lateness_per_step_s"))));
}

void TestStraggler::lateRankWaitsInOwnFrame()
{
    // The others wait for the all-reduce inside the trainer's own backward_and_reduce (its collectives run in native
    // code: no communication frame is sampled). The profiled collectives say which frame they run under, so the wait
    // there is told from work.
    RankRun run;
    run.ranks = 2;
    run.waitInOwnFrame = true;
    run.extra = [](int r, int64_t k) { return r == 1 && k < 180 ? 0.25 : 0.0; }; // then balanced
    run.profiled = {20, 21, 22, 300, 301};
    QTemporaryDir dir;
    Finding f;
    oneFinding(writeRankRun(dir, run).get(), &rankStragglers, nullptr, f);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(f.evidence.value(QStringLiteral("late_rank")).toInteger(), qint64(1));
    QCOMPARE(ev(f, "source"), QStringLiteral("traces+stacks"));
    QVERIFY(f.evidence.value(QStringLiteral("wait_frames"))
                .toArray()
                .contains(QStringLiteral("backward_and_reduce (train.py:10)")));
    QVERIFY2(firstFrame(f).startsWith(QLatin1String("slow_rank_work")), qPrintable(firstFrame(f)));
    QVERIFY2(std::abs(num(f, "lateness_per_step_s") - 0.25) <= 0.03,
             qPrintable(QString::number(num(f, "lateness_per_step_s"))));
    QVERIFY2(std::abs(num(f, "trace_lateness_per_step_s") - 0.25) <= 0.02,
             qPrintable(QString::number(num(f, "trace_lateness_per_step_s"))));
    // The episodes: the first 180 steps, not the balanced rest.
    const int64_t change = ns(run.starts[180]);
    QVERIFY(episodeSeconds(f, kStart, change) >= 0.9 * static_cast<double>(change - kStart) / 1e9);
    QVERIFY(episodeSeconds(f, change, kStart + 240 * kSecond) <= 5);

    // Without the traces the wait there looks like work: no rank is told apart, and nothing is claimed.
    run.profiled.clear();
    QTemporaryDir dir2;
    auto db2 = writeRankRun(dir2, run);
    QVERIFY(db2);
    const auto none = rankStragglers(*db2);
    QVERIFY2(none.empty(), none.empty() ? "" : none[0].title.c_str());
}

void TestStraggler::noStragglerWhenRanksTakeTurns_data()
{
    QTest::addColumn<int>("kind");
    QTest::newRow("a random rank 0.25 s late every step") << 0;
    QTest::newRow("every rank 0-30 ms late at random") << 1;
    QTest::newRow("one rank 10 ms late every step (2 % of the step)") << 2;
}

void TestStraggler::noStragglerWhenRanksTakeTurns()
{
    QFETCH(int, kind);
    RankRun run;
    auto rng = std::make_shared<std::mt19937_64>(7);
    auto late = std::make_shared<std::map<std::pair<int, int64_t>, double>>();
    run.extra = [=](int r, int64_t k) {
        const auto key = std::make_pair(r, k);
        if (!late->count(key)) {
            if (kind == 0) {
                const int who = static_cast<int>((*rng)() % 4);
                for (int q = 0; q < 4; ++q)
                    (*late)[{q, k}] = q == who ? 0.25 : 0.0;
            } else if (kind == 1) {
                (*late)[key] = std::uniform_real_distribution<double>(0, 0.03)(*rng);
            } else {
                (*late)[key] = r == 3 ? 0.01 : 0.0;
            }
        }
        return (*late)[key];
    };
    run.profiled = {20, 21, 22, 23, 24, 25, 26, 27};
    QTemporaryDir dir;
    auto db = writeRankRun(dir, run);
    QVERIFY(db);
    const auto found = rankStragglers(*db);
    QVERIFY2(found.empty(), found.empty() ? "" : found[0].title.c_str());
}

void TestStraggler::commWaitIsItsSymptom()
{
    // The whole analysis: the others' wait in all_reduce on under-used GPUs is COMM_BOUND, caused by rank 2.
    RankRun run;
    run.extra = [](int r, int64_t) { return r == 2 ? 0.25 : 0.0; };
    QTemporaryDir dir;
    auto db = writeRankRun(dir, run);
    QVERIFY(db);
    auto a = analyzeRun(*db, RuleParams::defaults());
    QVERIFY_OK(a);
    const auto straggler = std::find_if(a->findings.begin(), a->findings.end(), [](const Finding& f) {
        return f.rule == "STRAGGLER" &&
               f.evidence.value(QStringLiteral("unit_kind")).toString() == QLatin1String("rank");
    });
    QVERIFY(straggler != a->findings.end());
    // The waits during the straggling, up to what the straggler saves there, are its symptom; what stands on its
    // own there saves less than the straggler.
    const auto comm = std::find_if(a->findings.begin(), a->findings.end(),
                                   [](const Finding& f) { return f.rule == "COMM_BOUND" && !f.causedBy.empty(); });
    QVERIFY(comm != a->findings.end());
    QCOMPARE(comm->causedBy, std::string("STRAGGLER rank 2"));
    QCOMPARE(roleOf(*comm), std::string("symptom"));
    QCOMPARE(roleOf(*straggler), std::string("primary"));
    QCOMPARE(toJson(*comm).value(QStringLiteral("caused_by")).toString(), QStringLiteral("STRAGGLER rank 2"));
    QVERIFY(comm->savingS <= straggler->savingS + 0.01);
    for (const Finding& f : a->findings)
        if (f.rule == "COMM_BOUND" && f.causedBy.empty())
            for (const FindingEpisode& e : straggler->episodes)
                QVERIFY(savingWithin(f, e.startNs, e.endNs) < savingWithin(*straggler, e.startNs, e.endNs));
}

void TestStraggler::stragglersOnTwoNodesStayApart()
{
    // Eight ranks on two nodes, rank 1 (node0) and rank 6 (node1) both late: two findings, one per rank and node.
    RankRun run;
    run.ranks = 8;
    run.nodes = 2;
    run.seconds = 150;
    run.extra = [](int r, int64_t) { return r == 1 ? 0.25 : r == 6 ? 0.2 : 0.0; };
    QTemporaryDir dir;
    auto db = writeRankRun(dir, run);
    QVERIFY(db);
    auto a = analyzeRun(*db, RuleParams::defaults());
    QVERIFY_OK(a);
    std::map<qint64, std::vector<std::string>> byRank;
    for (const Finding& f : a->findings)
        if (isRankStraggler(f)) byRank[f.evidence.value(QStringLiteral("late_rank")).toInteger()] = f.nodes;
    QCOMPARE(byRank.size(), size_t(2));
    QCOMPARE(byRank[1], std::vector<std::string>{"node0"});
    QCOMPARE(byRank[6], std::vector<std::string>{"node1"});
}

void TestStraggler::symptomNeedsOverlapAndNode()
{
    Finding s;
    s.rule = "STRAGGLER";
    s.nodes = {"node0"};
    s.episodes = {{kStart, kStart + 100 * kSecond, 25}};
    s.evidence = QJsonObject{{QStringLiteral("unit_kind"), QStringLiteral("rank")},
                             {QStringLiteral("unit"), QStringLiteral("rank 3")}};
    Finding mostly;
    mostly.rule = "COMM_BOUND";
    mostly.nodes = {"node0"};
    mostly.episodes = {{kStart + 10 * kSecond, kStart + 90 * kSecond, 80},
                       {kStart + 150 * kSecond, kStart + 160 * kSecond, 10}};
    mostly.savingS = 90;
    Finding outside = mostly;
    outside.episodes = {{kStart + 95 * kSecond, kStart + 200 * kSecond}};
    Finding elsewhere = mostly;
    elsewhere.nodes = {"node1"};
    Finding node = s;
    node.evidence = QJsonObject{{QStringLiteral("unit_kind"), QStringLiteral("node")},
                                {QStringLiteral("unit"), QStringLiteral("node0")}};
    std::vector<Finding> all{s, mostly, outside, elsewhere};
    linkStragglerSymptoms(all, RuleParams::defaults());
    // Mostly during the straggling: split. The symptom is the waits then up to the straggler's saving there
    // (25 s over 100 s: 20 s of [10, 90) s); the rest of them (60 s) and the 10 s outside stand on their own.
    QCOMPARE(all.size(), size_t(5));
    QCOMPARE(all[4].causedBy, std::string("STRAGGLER rank 3"));
    QCOMPARE(all[4].episodes.size(), size_t(1));
    QCOMPARE(all[4].episodes[0].startNs, kStart + 10 * kSecond);
    QCOMPARE(all[4].episodes[0].endNs, kStart + 90 * kSecond);
    QVERIFY(std::abs(all[4].savingS - 20) < 0.01);
    QVERIFY(all[1].causedBy.empty());
    QVERIFY(std::abs(all[1].savingS - 70) < 0.01);
    QVERIFY(all[2].causedBy.empty()); // 5 s of it overlaps
    QVERIFY(all[3].causedBy.empty()); // another node
    QVERIFY(all[0].causedBy.empty());
    std::vector<Finding> byNode{node, mostly};
    linkStragglerSymptoms(byNode, RuleParams::defaults());
    QVERIFY(byNode[1].causedBy.empty()); // a node straggler is not a rank
}

void TestStraggler::fixtureStraggler()
{
    const QString base = test::fixtureRun("h200-gloo-straggler");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, base,
                            {"megatron-rank0.log", "stacks-rank0.speedscope.json", "stacks-rank1.speedscope.json",
                             "kineto-rank0-straggler.json", "kineto-rank1-straggler.json", "kineto-rank0-balanced.json",
                             "kineto-rank1-balanced.json"});
    QVERIFY(db);
    // Ground truth, read by the test only: rank 1's extra work per step, and the two phases.
    std::vector<double> slow;
    int64_t stragglerFrom = 0, stragglerTo = 0, balancedTo = 0;
    QFile t(base + QStringLiteral("truth/events-rank1.jsonl"));
    QVERIFY(t.open(QIODevice::ReadOnly));
    for (const QByteArray& line : t.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        const QString event = o.value(QStringLiteral("event")).toString(),
                      phase = o.value(QStringLiteral("phase")).toString();
        const auto ts = static_cast<int64_t>(o.value(QStringLiteral("ts_ns")).toDouble());
        if (event == QLatin1String("step") && phase == QLatin1String("straggler")) {
            slow.push_back(o.value(QStringLiteral("slow_work_s")).toDouble());
            if (!stragglerFrom)
                stragglerFrom = ts - static_cast<int64_t>(o.value(QStringLiteral("seconds")).toDouble() * 1e9);
        } else if (event == QLatin1String("phase_end")) {
            (phase == QLatin1String("straggler") ? stragglerTo : balancedTo) = ts;
        }
    }
    QVERIFY(!slow.empty() && stragglerFrom && stragglerTo > stragglerFrom && balancedTo > stragglerTo);
    const double truth = quantile(slow, 0.5);

    auto a = analyzeRun(*db, RuleParams::defaults());
    QVERIFY_OK(a);
    std::vector<const Finding*> ranks;
    for (const Finding& f : a->findings)
        if (f.rule == "STRAGGLER") ranks.push_back(&f);
    QCOMPARE(ranks.size(), size_t(1));
    const Finding& f = *ranks[0];
    QCOMPARE(ev(f, "unit_kind"), QStringLiteral("rank"));
    QCOMPARE(f.evidence.value(QStringLiteral("late_rank")).toInteger(), qint64(1));
    QVERIFY2(firstFrame(f).startsWith(QLatin1String("slow_rank_work")), qPrintable(firstFrame(f)));
    QVERIFY(f.title.find("rank 1") != std::string::npos && f.title.find("slow_rank_work") != std::string::npos);
    QCOMPARE(ev(f, "source"), QStringLiteral("traces+stacks"));
    const double late = num(f, "lateness_per_step_s");
    QVERIFY2(std::abs(late - truth) <= 0.3 * truth,
             qPrintable(QStringLiteral("%1 s against %2 s").arg(late).arg(truth)));
    // The episodes: the straggler phase (but for its checkpoint), hardly any of the balanced one.
    const double phase = static_cast<double>(stragglerTo - stragglerFrom) / 1e9,
                 balanced = static_cast<double>(balancedTo - stragglerTo) / 1e9;
    const double in = episodeSeconds(f, stragglerFrom, stragglerTo), out = episodeSeconds(f, stragglerTo, balancedTo);
    QVERIFY2(in >= 0.75 * phase, qPrintable(QStringLiteral("%1 s of the %2 s straggler phase").arg(in).arg(phase)));
    QVERIFY2(out <= 0.1 * balanced,
             qPrintable(QStringLiteral("%1 s of the %2 s balanced phase").arg(out).arg(balanced)));
    // It saves the others' wait: about the lateness in each straggler step.
    const double expected = truth * static_cast<double>(slow.size());
    QVERIFY2(f.savingS >= 0.6 * expected && f.savingS <= 1.2 * expected, qPrintable(QString::number(f.savingS)));
    // The others' communication wait over the straggler's steps is its symptom: what a standing COMM_BOUND still
    // claims there (the collectives' own time) saves less than the straggler does, and a linked symptom exists.
    bool linked = false;
    for (const Finding& c : a->findings) {
        if (c.rule != "COMM_BOUND") continue;
        if (!c.causedBy.empty()) {
            linked = linked || c.causedBy == "STRAGGLER rank 1";
            continue;
        }
        const double own = savingWithin(c, stragglerFrom, stragglerTo),
                     its = savingWithin(f, stragglerFrom, stragglerTo);
        QVERIFY2(own < its,
                 qPrintable(QStringLiteral("COMM_BOUND %1 s against the straggler's %2 s").arg(own).arg(its)));
    }
    QVERIFY(linked);
}

void TestStraggler::fixtureBalancedRun()
{
    // h200-gloo-small: two ranks on one GPU doing the same work (an input stall, communication, checkpoints): no rank
    // is a straggler.
    const QString base = test::fixtureRun("h200-gloo-small");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, base,
                            {"trainer_log-rank0.jsonl", "stacks-rank0.speedscope.json", "stacks-rank1.speedscope.json",
                             "kineto-rank0-baseline.json", "kineto-rank1-baseline.json"});
    QVERIFY(db);
    const auto found = rankStragglers(*db);
    QVERIFY2(found.empty(), found.empty() ? "" : found[0].title.c_str());
}

void TestStraggler::nodeStraggler_data()
{
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("everyOf10"); // node 2 (node 1 with two nodes) is 1.5 s late in this many steps of 10
    QTest::addColumn<bool>("stepLog");
    QTest::addColumn<QString>("type");
    QTest::newRow("4 nodes, late in 60 % of steps") << 4 << 6 << false << "persistent";
    QTest::newRow("4 nodes, late in 60 %, steps from the trainer log") << 4 << 6 << true << "persistent";
    QTest::newRow("4 nodes, late in 30 %: intermittent") << 4 << 3 << false << "intermittent";
    QTest::newRow("2 nodes, late in every step") << 2 << 10 << false << "persistent";
    QTest::newRow("2 nodes, late in half the steps") << 2 << 5 << false << ""; // either type: the share is at the bound
}

void TestStraggler::nodeStraggler()
{
    QFETCH(int, nodes);
    QFETCH(int, everyOf10);
    QFETCH(bool, stepLog);
    QFETCH(QString, type);
    const int slow = nodes == 2 ? 1 : 2;
    StragglerCase c;
    c.nodes = nodes;
    c.stepLog = stepLog;
    c.late = [=](int n, int64_t k) { return n == slow && (k * 7) % 10 < everyOf10 ? 1.5 : 0.0; };
    auto model = std::make_shared<StepModel>(stragglerModel(c, 1800));
    QTemporaryDir dir;
    auto db = writeRun(dir, stragglerRun(c, model));
    QVERIFY(db);
    const auto found = nodeStragglers(*db);
    QCOMPARE(found.size(), size_t(1));
    const Finding& f = found[0];
    const std::string node = "node" + std::to_string(slow);
    QCOMPARE(f.rule, std::string("STRAGGLER"));
    QCOMPARE(f.nodes, std::vector<std::string>{node});
    QCOMPARE(f.gpus, (std::vector<std::string>{node + ":gpu0", node + ":gpu1"}));
    if (!type.isEmpty()) QCOMPARE(f.evidence.value(QStringLiteral("type")).toString(), type);
    QCOMPARE(f.evidence.value(QStringLiteral("step_source")).toString(),
             stepLog ? QStringLiteral("trainer_log") : QStringLiteral("sm_periodicity"));
    const double share = f.evidence.value(QStringLiteral("share_of_steps")).toDouble();
    QVERIFY2(std::abs(share - everyOf10 / 10.0) <= 0.08, qPrintable(QString::number(share)));
    const double lag = f.evidence.value(QStringLiteral("median_lag_s")).toDouble();
    QVERIFY2(std::abs(lag - 1.5) <= 0.25, qPrintable(QString::number(lag)));
    QVERIFY(f.evidence.value(QStringLiteral("median_z")).toDouble() >= 3);
    QVERIFY(f.savingS > 0 && f.impact > 0 && f.impact < 0.2);
    QVERIFY(!f.episodes.empty());
    QVERIFY(f.recommendation.find(node) != std::string::npos);
}

void TestStraggler::noNodeStraggler_data()
{
    QTest::addColumn<int>("kind");
    QTest::newRow("jitter only (0.15 s)") << 0;
    QTest::newRow("a different node 1.5 s late every step") << 1;
    QTest::newRow("late in 10 % of steps") << 2;
    QTest::newRow("late by 0.3 s (3 % of the step) in every step") << 3;
}

void TestStraggler::noNodeStraggler()
{
    QFETCH(int, kind);
    StragglerCase c;
    c.jitterS = kind == 0 ? 0.15 : 0.05;
    c.late = [=](int n, int64_t k) {
        switch (kind) {
        case 1:
            return n == (k * 3) % 4 ? 1.5 : 0.0;
        case 2:
            return n == 2 && k % 10 == 0 ? 1.5 : 0.0;
        case 3:
            return n == 2 ? 0.3 : 0.0;
        default:
            return 0.0;
        }
    };
    auto model = std::make_shared<StepModel>(stragglerModel(c, 1800));
    QTemporaryDir dir;
    auto db = writeRun(dir, stragglerRun(c, model));
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QVERIFY(!computeStepTimes(*m, RuleParams::defaults()).empty()); // the steps were found; no one straggles
    const auto found = nodeStragglers(*db);
    QVERIFY2(found.empty(), found.empty() ? "" : found[0].title.c_str());
}

// The demo run on 8 nodes × 8 GPUs for 6 minutes with stacks at 1 Hz: 64 ranks doing the same work, each sampled
// a few times per step. By chance and by the phase it is sampled at, some rank counts a sample or two more in the
// wait than its peers in several windows; none is late beyond what that chance allows, so no rank, node or GPU is a
// straggler.
void TestStraggler::noStragglerInManyBalancedRanks()
{
    app::DemoSpec spec;
    spec.nodes = 8;
    spec.gpusPerNode = 8;
    spec.hours = 0.1;
    spec.stackRateHz = 1;
    QTemporaryDir dir;
    const std::string inputs = dir.filePath(QStringLiteral("inputs")).toStdString();
    QVERIFY(app::writeDemoRun(spec, inputs));
    auto analysed = test::importAndAnalyseFolder(inputs, dir.filePath(QStringLiteral("run.runlens")).toStdString());
    QVERIFY2(analysed, analysed ? "" : analysed.error().toString().c_str());
    std::vector<std::string> stragglers;
    for (const Finding& f : analysed->findings)
        if (f.rule == "STRAGGLER") stragglers.push_back(f.title);
    QVERIFY2(
        stragglers.empty(),
        fmt::format("{} stragglers, first: {}", stragglers.size(), stragglers.empty() ? "" : stragglers[0]).c_str());
}

QTEST_MAIN(TestStraggler)
#include "tst_straggler.moc"
