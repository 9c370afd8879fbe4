// COMM_BOUND from profiled steps (docs/design.md §5): the communication share a profiled step measures (collectives
// and communication kernels not overlapped by compute kernels), carried to the steps outside the profile that share
// its signature (marked extrapolated, with a lower confidence) and not to steps that differ; the saving per episode;
// and on the real runs: h200-gloo-small's baseline phase saves about what gradient accumulation measured, and
// h200x2-fsdp-hang's zero3 phase saves at least what the tuned configuration measured.

#include "analysis/rules/comm_bound_rule.h"
#include "analysis/rules/run_analysis.h"
#include "analysis/store/trace_writer.h"
#include "tests/rules_support.h"
#include "tests/test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

using namespace runlens;
using namespace runlens::analysis;
using namespace runlens::test::rules;

namespace {

// One profiled step of stepS seconds at second `at`: compute kernels over [0, computeEnd) of it, the gradient
// all-reduce on a communication thread over [commStart, commEnd) (seconds into the step).
struct Profiled
{
    int64_t at = 100;
    double computeEnd = 0.4, commStart = 0.3, commEnd = 0.9; // exposed: 0.9 − 0.4 = 0.5 of the step
    double stepS = 1.0;
};

// One node, one GPU, `seconds` at 1 s, training steps as the trainer logs them (train.step_time, 1 s each unless
// stepS says otherwise), two ranks traced over the profiled steps.
struct ProfiledRun
{
    int64_t seconds = 600;
    std::function<double(int64_t s)> sm = [](int64_t) { return 0.2; };
    std::function<double(int64_t s)> stepS = [](int64_t) { return 1.0; };
    std::function<bool(int64_t s)> logged = [](int64_t) { return true; }; // the trainer logged the step ending at s
    double util = 60;
    double cpu = 20;
    std::vector<Profiled> profiled{Profiled{}};
    // Optional stack samples at 10 Hz on rank 0's training thread: the call path (root first) of sample k.
    std::function<Stack(int64_t k)> stack;
};

std::unique_ptr<store::RunDatabase> writeProfiledRun(const QTemporaryDir& dir, const ProfiledRun& run)
{
    test::rules::SyntheticImport synthetic(dir, QStringLiteral("p.runlens"));
    if (!synthetic) return nullptr;
    store::RunWriter& w = synthetic.writer();
    auto node = w.node("node0", "option", "UTC");
    if (!node) return nullptr;
    auto series = [&](int64_t device, const char* metric, const char* unit, const std::function<double(int64_t)>& f) {
        return writeSeconds(w, device, metric, unit, run.seconds, 0, f);
    };
    auto gpu = w.device(*node, "gpu", "0");
    auto cpu = w.device(*node, "cpu", "cpu");
    auto host = w.device(*node, "host", "host");
    if (!gpu || !cpu || !host || !series(*gpu, "gpu.sm_active", "ratio", run.sm) ||
        !series(*gpu, "gpu.util", "%", [&](int64_t) { return run.util; }) ||
        !series(*cpu, "cpu.util", "%", [&](int64_t) { return run.cpu; }))
        return nullptr;
    // The trainer log: a point at the end of each step holding its duration.
    {
        auto sink = w.series(*host, "train.step_time", "s", "step_time");
        if (!sink) return nullptr;
        int64_t at = kStart;
        while (at < kStart + run.seconds * kSecond) {
            const double seconds = run.stepS((at - kStart) / kSecond);
            at += static_cast<int64_t>(std::llround(seconds * 1e9));
            if (run.logged((at - kStart) / kSecond)) (*sink)->append(at, seconds);
            if (!w.flushIfNeeded(**sink)) return nullptr;
        }
    }
    if (run.stack) {
        auto thread = w.thread(*node, "python train.py", 100, "MainThread", 100);
        if (!thread || !writeStackSamples(w, *thread, run.seconds * 10, 0, run.stack)) return nullptr;
    }
    store::TraceWriter t(w);
    for (size_t k = 0; k < run.profiled.size(); ++k)
        for (int rank = 0; rank < 2; ++rank) {
            const Profiled& pr = run.profiled[k];
            const int64_t step = kStart + pr.at * kSecond;
            const auto at = [&](double seconds) { return step + static_cast<int64_t>(std::llround(seconds * 1e9)); };
            const std::string pid = std::to_string(100 + rank);
            auto main = t.track(*node, rank, "cpu", pid, pid, "thread (python3)", std::nullopt);
            auto comm = t.track(*node, rank, "cpu", pid, pid + "7", "thread (pt_gloo_runloop)", std::nullopt);
            auto autograd = t.track(*node, rank, "cpu", pid, pid + "9", "thread (pt_autograd_0)", std::nullopt);
            auto stream = t.track(*node, rank, "gpu", "0", "7", "stream 7", *gpu);
            auto profilerStep = t.name("ProfilerStep#" + std::to_string(k + 1));
            auto allReduce = t.name("gloo:all_reduce");
            auto launch = t.name("c10d::allreduce_");
            auto kernel = t.name("ampere_sgemm_128x64_nn");
            auto eval = t.name("autograd::engine::evaluate_function: AddmmBackward0");
            if (!main || !comm || !autograd || !stream || !profilerStep || !allReduce || !launch || !kernel || !eval)
                return nullptr;
            const int64_t skew = static_cast<int64_t>(rank) * 50'000; // the ranks start 50 µs apart
            if (!t.slice(*main, store::TraceCategory::UserAnnotation, *profilerStep, step + skew, at(pr.stepS) - step,
                         std::nullopt) ||
                !t.slice(*autograd, store::TraceCategory::CpuOp, *eval, at(0.15) + skew, at(0.35) - at(0.15),
                         std::nullopt) ||
                !t.slice(*autograd, store::TraceCategory::Collective, *launch, at(pr.commStart) + skew, 100'000,
                         std::nullopt) ||
                !t.slice(*comm, store::TraceCategory::Collective, *allReduce, at(pr.commStart) + skew,
                         at(pr.commEnd) - at(pr.commStart), std::nullopt))
                return nullptr;
            // Compute kernels of 10 ms back to back.
            for (int64_t at0 = step + skew; at0 + 10'000'000 <= at(pr.computeEnd) + skew; at0 += 10'000'000)
                if (!t.slice(*stream, store::TraceCategory::Kernel, *kernel, at0, 10'000'000, std::nullopt))
                    return nullptr;
        }
    if (!t.finish()) return nullptr;
    return synthetic.finish();
}

// The ground truth of a fixture (read by the tests only): per phase, its bounds (from phase_end events, the first
// phase starting at its first step) and its steps' seconds per micro-step.
struct Truth
{
    std::map<QString, std::pair<int64_t, int64_t>> phases;
    std::map<QString, std::vector<double>> microStepS;
};

Truth readTruth(const QString& path)
{
    Truth out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    int64_t first = std::numeric_limits<int64_t>::max(), previousEnd = 0;
    std::vector<std::pair<QString, int64_t>> ends;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        const QString event = o.value(QStringLiteral("event")).toString();
        const auto ts = static_cast<int64_t>(o.value(QStringLiteral("ts_ns")).toDouble());
        if (event == QLatin1String("step")) {
            const double seconds = o.value(QStringLiteral("seconds")).toDouble();
            first = std::min(first, ts - static_cast<int64_t>(seconds * 1e9));
            out.microStepS[o.value(QStringLiteral("phase")).toString()].push_back(
                seconds / o.value(QStringLiteral("micro_steps")).toDouble(1));
        } else if (event == QLatin1String("phase_end")) {
            ends.emplace_back(o.value(QStringLiteral("phase")).toString(), ts);
        }
    }
    std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    previousEnd = first;
    for (const auto& [phase, end] : ends) {
        out.phases[phase] = {previousEnd, end};
        previousEnd = end;
    }
    return out;
}

double median(std::vector<double> v)
{
    return quantile(std::move(v), 0.5);
}

// The one COMM_BOUND finding of run, written to a database of its own; the test fails when there is not exactly one.
Finding commBoundOf(const ProfiledRun& run)
{
    QTemporaryDir dir;
    Finding f;
    oneFinding(writeProfiledRun(dir, run).get(), &commBound, nullptr, f);
    return f;
}

} // namespace

class TestRulesComm : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void profiledShareExtrapolated();
    void differentStepsNotExtrapolated();
    void onlyTheProfiledStepMeasured();
    void eachWindowItsOwnSteps();
    void backwardWaitIsCommunication();
    void fixtureBaselineSaving();
    void fixtureZero3Saving();
    void stacksOfAnotherCauseMakeItMixed_data();
    void stacksOfAnotherCauseMakeItMixed();
    void topAmountsLargestFirst();
};

void TestRulesComm::stacksOfAnotherCauseMakeItMixed_data()
{
    QTest::addColumn<double>("communication");
    QTest::addColumn<double>("gpuWait");
    QTest::addColumn<QString>("prefix");
    // The stacks barely show communication and mostly something else: the metrics point at it, the stacks do not.
    QTest::newRow("6 % communication, 84 % gpu_wait")
        << 0.06 << 0.84 << QStringLiteral("(mixed: gpu_wait 84 %, host_compute 10 %, communication 6 %) ");
    // Communication a large part, even if not the largest (a gloo all-reduce also waits in gpu_wait frames).
    QTest::newRow("38 % communication, 55 % gpu_wait") << 0.38 << 0.55 << QString();
    QTest::newRow("70 % communication") << 0.70 << 0.20 << QString();
}

void TestRulesComm::stacksOfAnotherCauseMakeItMixed()
{
    QFETCH(double, communication);
    QFETCH(double, gpuWait);
    QFETCH(QString, prefix);
    analysis::Finding f;
    f.rule = "COMM_BOUND";
    f.primary = true; // its slices are flagged over its episodes
    f.evidence.insert(QStringLiteral("cause_shares"),
                      QJsonObject{{QStringLiteral("communication"), communication},
                                  {QStringLiteral("gpu_wait"), gpuWait},
                                  {QStringLiteral("host_compute"), 1 - communication - gpuWait}});
    QCOMPARE(QString::fromStdString(analysis::rolePrefix(f)), prefix);
    QCOMPARE(analysis::roleOf(f), std::string(prefix.isEmpty() ? "primary" : "mixed"));
}

void TestRulesComm::topAmountsLargestFirst()
{
    // The evidence lists of frames and kernels: the largest first, equal ones by the later name first, at most count.
    const std::map<std::string, int64_t> amounts{{"a", 30}, {"b", 10}, {"c", 30}, {"d", 20}};
    const QJsonArray top = topAmounts(amounts, 3, QStringLiteral("frame"), QStringLiteral("share"), 100);
    QCOMPARE(top.size(), 3);
    const auto entry = [](const char* name, double share) {
        return QJsonObject{{QStringLiteral("frame"), QString::fromLatin1(name)}, {QStringLiteral("share"), share}};
    };
    QCOMPARE(top.at(0).toObject(), entry("c", 0.3));
    QCOMPARE(top.at(1).toObject(), entry("a", 0.3));
    QCOMPARE(top.at(2).toObject(), entry("d", 0.2));
    QVERIFY(topAmounts({}, 3, QStringLiteral("name"), QStringLiteral("total_s"), 1e9).isEmpty());
}

void TestRulesComm::profiledShareExtrapolated()
{
    // 10 min of 1 s steps with one signature (SM activity 0.2, CPU 20 %); one profiled step whose all-reduce leaves
    // 0.5 s of it without compute: COMM_BOUND over the whole run, its saving 50 % of the steps' time, marked
    // extrapolated, and each episode's saving adding up to the finding's.
    ProfiledRun run;
    QTemporaryDir dir;
    Finding f;
    oneFinding(writeProfiledRun(dir, run).get(), &commBound, "COMM_BOUND", f);
    if (QTest::currentTestFailed()) return;
    QVERIFY(f.primary);
    const QJsonObject ev = f.evidence;
    QCOMPARE(ev.value(QStringLiteral("comm_share_source")).toString(), QStringLiteral("extrapolated"));
    QVERIFY2(std::abs(ev.value(QStringLiteral("measured_comm_share")).toDouble() - 0.5) < 0.01,
             qPrintable(QString::number(ev.value(QStringLiteral("measured_comm_share")).toDouble())));
    QCOMPARE(ev.value(QStringLiteral("profiled_steps")).toInt(), 1);
    QVERIFY(ev.value(QStringLiteral("measured_steps")).toInt() >= 1);
    const double covered = episodeSeconds(f, kStart, kStart + run.seconds * kSecond);
    QVERIFY2(covered >= 0.95 * static_cast<double>(run.seconds), qPrintable(QString::number(covered)));
    QVERIFY(ev.value(QStringLiteral("extrapolated_steps")).toInt() >=
            static_cast<int>(0.95 * static_cast<double>(run.seconds)) - 2);
    QVERIFY2(std::abs(f.savingS - 0.5 * covered) < 0.03 * covered, qPrintable(QString::number(f.savingS)));
    QVERIFY(std::abs(ev.value(QStringLiteral("wait_per_step_s")).toDouble() - 0.5) < 0.02);
    double sum = 0;
    for (const FindingEpisode& e : f.episodes) {
        QVERIFY(e.savingS > 0);
        sum += e.savingS;
    }
    QVERIFY(std::abs(sum - f.savingS) < 1e-6);
    QVERIFY(std::abs(savingWithin(f, kStart + 200 * kSecond, kStart + 300 * kSecond) - 50) < 2);
    // The collective inside backward: the training thread's wait there would count as communication.
    QVERIFY(ev.contains(QStringLiteral("backward_comm_fraction")));
    // A longer all-reduce in the profiled step (0.7 s exposed): the saving follows it.
    ProfiledRun longer = run;
    longer.profiled = {Profiled{100, 0.3, 0.3, 1.0}};
    const Finding more = commBoundOf(longer);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(std::abs(more.savingS - 0.7 * episodeSeconds(more, kStart, kStart + run.seconds * kSecond)) <
                 0.03 * 0.7 * covered,
             qPrintable(QString::number(more.savingS)));
}

void TestRulesComm::differentStepsNotExtrapolated()
{
    // The same profiled step, but the second half of the run has other steps: 1.6 s each (a different batch, say).
    // Only the first half inherits the profiled share; the second half is neither flagged nor counted.
    ProfiledRun run;
    run.stepS = [](int64_t s) { return s < 300 ? 1.0 : 1.6; };
    const Finding f = commBoundOf(run);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(f.evidence.value(QStringLiteral("comm_share_source")).toString(), QStringLiteral("extrapolated"));
    const double first = episodeSeconds(f, kStart, kStart + 300 * kSecond);
    const double second = episodeSeconds(f, kStart + 302 * kSecond, kStart + run.seconds * kSecond);
    QVERIFY2(first >= 0.95 * 300, qPrintable(QString::number(first)));
    QVERIFY2(second == 0, qPrintable(QString::number(second)));
    QVERIFY(f.evidence.value(QStringLiteral("extrapolated_steps")).toInt() <= 300);
    QVERIFY(std::abs(f.savingS - 0.5 * first) < 0.03 * first);
    // The steps are alike but the GPUs work differently in the second half (SM activity 0.45): not extrapolated
    // there either.
    ProfiledRun busier;
    busier.sm = [](int64_t s) { return s < 300 ? 0.2 : 0.45; };
    QTemporaryDir dir2;
    auto db2 = writeProfiledRun(dir2, busier);
    Finding other;
    oneFinding(db2.get(), &commBound, nullptr, other);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(episodeSeconds(other, kStart + 302 * kSecond, kStart + run.seconds * kSecond), 0.0);
    // The comparison is the parameters': with SM activity allowed to differ by 0.3, the second half matches.
    RuleParams loose = RuleParams::defaults();
    QVERIFY(loose.set("comm_bound.match_sm_abs=0.3"));
    const auto matched = commBound(*db2, loose);
    QCOMPARE(matched.size(), size_t(1));
    QVERIFY(episodeSeconds(matched[0], kStart + 302 * kSecond, kStart + run.seconds * kSecond) > 0.9 * 298);
}

void TestRulesComm::eachWindowItsOwnSteps()
{
    // Profiled in both halves of the run, whose steps differ (1 s, then 1.6 s): the first window measures 0.5 of its
    // step, the second 0.75 of its own (1.2 s of 1.6 s). Each half's steps carry their own window's share.
    ProfiledRun run;
    run.stepS = [](int64_t s) { return s < 300 ? 1.0 : 1.6; };
    run.profiled = {Profiled{100, 0.4, 0.3, 0.9}, Profiled{460, 0.3, 0.2, 1.5, 1.6}}; // a logged step starts at 460 s
    const Finding f = commBoundOf(run);
    if (QTest::currentTestFailed()) return;
    const QJsonArray windows = f.evidence.value(QStringLiteral("profiled_windows")).toArray();
    QCOMPARE(windows.size(), qsizetype(2));
    QVERIFY(std::abs(windows[0].toObject().value(QStringLiteral("comm_share")).toDouble() - 0.5) < 0.01);
    QVERIFY(std::abs(windows[1].toObject().value(QStringLiteral("comm_share")).toDouble() - 0.75) < 0.01);
    QCOMPARE(f.evidence.value(QStringLiteral("profiled_steps")).toInt(), 2);
    const double first = savingWithin(f, kStart + 10 * kSecond, kStart + 290 * kSecond);
    const double second = savingWithin(f, kStart + 310 * kSecond, kStart + 590 * kSecond);
    QVERIFY2(std::abs(first - 0.5 * 280) < 0.03 * 0.5 * 280, qPrintable(QString::number(first)));
    QVERIFY2(std::abs(second - 0.75 * 280) < 0.03 * 0.75 * 280, qPrintable(QString::number(second)));
}

void TestRulesComm::onlyTheProfiledStepMeasured()
{
    // Every step but the profiled one differs (SM activity 0.45 elsewhere): the finding is the profiled step's
    // slice alone, "measured", with a higher confidence than an extrapolated one.
    ProfiledRun run;
    run.sm = [](int64_t s) { return s == 100 ? 0.2 : 0.45; };
    const Finding f = commBoundOf(run);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(f.evidence.value(QStringLiteral("comm_share_source")).toString(), QStringLiteral("measured"));
    QCOMPARE(f.evidence.value(QStringLiteral("extrapolated_steps")).toInt(), 0);
    QVERIFY(episodeSeconds(f, kStart, kStart + run.seconds * kSecond) <= 4);
    QVERIFY(f.savingS > 0);
    ProfiledRun alike;
    const Finding extrapolated = commBoundOf(alike);
    if (QTest::currentTestFailed()) return;
    QVERIFY(extrapolated.confidence < f.confidence);
}

void TestRulesComm::backwardWaitIsCommunication()
{
    // The training thread spends 80 % of its samples inside backward (_engine_run_backward: gpu_wait for a Python
    // stack). The trainer logged only the first half of the run, so no step there carries the profiled share; but
    // the profiled step shows the all-reduce starting inside backward, with 2/3 of the backward pass exposed
    // communication: that part of the backward samples is communication wait, and the second half is
    // communication-bound on it. Where the second half's steps are known and unlike the profiled ones (1.6 s), the
    // traces do not speak for them: no wait inside backward is read as communication there.
    ProfiledRun run;
    run.stepS = [](int64_t s) { return s < 300 ? 1.0 : 1.6; };
    run.logged = [](int64_t s) { return s < 300; };
    run.stack = [](int64_t k) -> Stack {
        Stack st = trainStepStack();
        if (k % 10 < 8) {
            st.push_back({"backward", "torch/_tensor.py"});
            st.push_back({"backward", "torch/autograd/__init__.py"});
            st.push_back({"_engine_run_backward", "torch/autograd/graph.py"});
        } else {
            st.push_back({"forward", "model.py"});
        }
        return st;
    };
    const Finding f = commBoundOf(run);
    if (QTest::currentTestFailed()) return;
    // Backward from the engine's first evaluate_function (0.15 s) to the all-reduce's end (0.9 s), 0.5 s of it exposed.
    const double fraction = f.evidence.value(QStringLiteral("backward_comm_fraction")).toDouble();
    QVERIFY2(std::abs(fraction - 0.5 / 0.75) < 0.01, qPrintable(QString::number(fraction)));
    const int64_t secondFrom = kStart + 302 * kSecond, secondTo = kStart + run.seconds * kSecond;
    const double second = episodeSeconds(f, secondFrom, secondTo);
    QVERIFY2(second >= 0.95 * 298, qPrintable(QString::number(second)));
    const double expected = 0.8 * fraction * second;
    QVERIFY2(std::abs(savingWithin(f, secondFrom, secondTo) - expected) < 0.05 * expected,
             qPrintable(QStringLiteral("%1 vs %2").arg(savingWithin(f, secondFrom, secondTo)).arg(expected)));
    // The all-reduce starting after backward (at 0.5 s, the engine done at 0.35 s): the backward samples stay the
    // GPU wait they are, and the second half has no communication evidence.
    ProfiledRun after = run;
    after.profiled = {Profiled{100, 0.4, 0.5, 0.9}};
    const Finding other = commBoundOf(after);
    if (QTest::currentTestFailed()) return;
    QVERIFY(!other.evidence.contains(QStringLiteral("backward_comm_fraction")));
    QCOMPARE(episodeSeconds(other, secondFrom, secondTo), 0.0);
    // The second half's steps logged, 2.5 s, of another kind than the profiled 1 s ones (beyond
    // comm_bound.unlike_step_ratio): its backward samples stay GPU waits.
    ProfiledRun unlike = run;
    unlike.logged = [](int64_t) { return true; };
    unlike.stepS = [](int64_t s) { return s < 300 ? 1.0 : 2.5; };
    const Finding known = commBoundOf(unlike);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(episodeSeconds(known, secondFrom, secondTo) <= 0.05 * 298,
             qPrintable(QString::number(episodeSeconds(known, secondFrom, secondTo))));
}

void TestRulesComm::fixtureBaselineSaving()
{
    // h200-gloo-small: in the baseline phase (gloo all-reduce after every step, one step profiled per rank) COMM_BOUND
    // is the finding with the largest saving, and that saving is within ±20 % (relative) of what the fix measured:
    // gradient accumulation's micro-steps against the baseline's steps.
    const QString base = test::fixtureRun("h200-gloo-small");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, base,
                            {"stacks-rank0.speedscope.json", "stacks-rank1.speedscope.json",
                             "kineto-rank0-baseline.json", "kineto-rank1-baseline.json", "trainer_log-rank0.jsonl"});
    QVERIFY(db);
    const Truth truth = readTruth(base + QStringLiteral("truth/events-rank0.jsonl"));
    QVERIFY(truth.phases.count(QStringLiteral("baseline")) && truth.microStepS.count(QStringLiteral("accum")));
    const auto [from, to] = truth.phases.at(QStringLiteral("baseline"));
    const double expected = 1 - median(truth.microStepS.at(QStringLiteral("accum"))) /
                                    median(truth.microStepS.at(QStringLiteral("baseline")));
    auto analysis = analyzeRun(*db, RuleParams::defaults());
    QVERIFY_OK(analysis);
    const Finding* best = nullptr;
    double bestS = -1;
    for (const Finding& f : analysis->findings) {
        const double s = savingWithin(f, from, to);
        qInfo("%s: %.1f s in the baseline phase", f.rule.c_str(), s);
        if (s > bestS) {
            bestS = s;
            best = &f;
        }
    }
    QVERIFY(best);
    QCOMPARE(best->rule, std::string("COMM_BOUND"));
    const double share = bestS / (static_cast<double>(to - from) / 1e9);
    QVERIFY2(std::abs(share - expected) <= 0.2 * expected,
             qPrintable(QStringLiteral("%1 vs %2").arg(share).arg(expected)));
    // Its share is measured in the profiled steps and carried to the baseline's other steps.
    QCOMPARE(best->evidence.value(QStringLiteral("comm_share_source")).toString(), QStringLiteral("extrapolated"));
    QVERIFY(best->evidence.value(QStringLiteral("extrapolated_steps")).toInt() > 50);
    QVERIFY(best->primary);
    // LOW_SM_EFF does not claim the same time again: where COMM_BOUND explains it, it is contributing.
    for (const Finding& f : analysis->findings)
        if (f.rule == "LOW_SM_EFF") QVERIFY(savingWithin(f, from, to) < 0.1 * bestS);
}

void TestRulesComm::fixtureZero3Saving()
{
    // h200x2-fsdp-hang: keeping the parameters after forward (the tuned phase) measured a shorter step than zero3;
    // COMM_BOUND's saving over the zero3 phase is at least that share of it.
    const QString base = test::fixtureRun("h200x2-fsdp-hang");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db =
        importFixture(dir, base, {"kineto-rank0-zero3.json", "kineto-rank1-zero3.json", "trainer_log-rank0.jsonl"});
    QVERIFY(db);
    const Truth truth = readTruth(base + QStringLiteral("truth/events-rank0.jsonl"));
    QVERIFY(truth.phases.count(QStringLiteral("zero3")) && truth.microStepS.count(QStringLiteral("tuned")));
    const auto [from, to] = truth.phases.at(QStringLiteral("zero3"));
    const double fix =
        1 - median(truth.microStepS.at(QStringLiteral("tuned"))) / median(truth.microStepS.at(QStringLiteral("zero3")));
    QVERIFY(fix > 0.1);
    auto analysis = analyzeRun(*db, RuleParams::defaults());
    QVERIFY_OK(analysis);
    const Finding* comm = nullptr;
    for (const Finding& f : analysis->findings)
        if (f.rule == "COMM_BOUND") comm = &f;
    QVERIFY(comm);
    QVERIFY(comm->savingS > 0);
    const double share = savingWithin(*comm, from, to) / (static_cast<double>(to - from) / 1e9);
    QVERIFY2(share >= fix, qPrintable(QStringLiteral("%1 vs %2").arg(share).arg(fix)));
    QVERIFY(comm->evidence.value(QStringLiteral("measured_comm_share")).toDouble() > 0.3);
}

QTEST_MAIN(TestRulesComm)
#include "tst_rules_comm.moc"
