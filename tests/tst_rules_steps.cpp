// Step detection on generated runs: steps from the trainer log and from the GPUs' SM activity agree with the
// generated period, noise has no steps; shifting every timestamp moves the steps and findings (THROTTLE, STRAGGLER)
// and nothing else; the real h200-gloo-small run has neither finding.

#include "analysis/rules/step_detection.h"
#include "analysis/rules/straggler_rule.h"
#include "analysis/rules/throttle_rule.h"
#include "analysis/store/run_database.h"
#include "tests/rules_support.h"
#include "tests/steps_support.h"
#include "tests/test_support.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <functional>

using namespace runlens;
using namespace runlens::analysis;
using namespace runlens::test::steps;

namespace {

using test::rules::importFixture; // fixture files into a temporary run

} // namespace

class TestRulesSteps : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parameters();
    void stepsFromTrainerLogAndSm_data();
    void stepsFromTrainerLogAndSm();
    void stepsFromUtilization();
    void stepsFromSparseTrainerLog();
    void stepsFromNarrowDips_data();
    void stepsFromNarrowDips();
    void noStepsWithoutPeriod_data();
    void noStepsWithoutPeriod();
    void shiftMovesFindingsOnly();
    void fixtureHasNeither();
};

void TestRulesSteps::parameters()
{
    // That every parameter is declared and read by a rule is tst_rules' everyParameterIsRead; these are the values
    // step detection, THROTTLE and STRAGGLER run with by default, counts as integers.
    const RuleParams p = RuleParams::defaults();
    QCOMPARE(p.get("throttle.clock_ratio"), 0.85);
    QCOMPARE(p.get("straggler.z"), 3.0);
    QCOMPARE(p.get("steps.max_period_s"), 1800.0);
    const StepParams steps = StepParams::from(p);
    QCOMPARE(steps.maxPeriodS, 1800.0);
    QCOMPARE(steps.minCycles, 5);
    QCOMPARE(steps.minLogged, 3);
    const StragglerParams straggler = StragglerParams::from(p);
    QCOMPARE(straggler.z, 3.0);
    QCOMPARE(straggler.minSteps, 10);
    QCOMPARE(straggler.maxSamples, 3'000'000);
    QCOMPARE(straggler.steps.minContrast, 0.1);
    QCOMPARE(ThrottleParams::from(p).tempHotC, 85.0);
}

void TestRulesSteps::stepsFromTrainerLogAndSm_data()
{
    QTest::addColumn<double>("computeS");
    QTest::addColumn<double>("commS");
    QTest::addColumn<int>("checkpointEvery"); // steps; 0: none
    QTest::addColumn<double>("noise");
    QTest::newRow("10 s steps") << 7.0 << 3.0 << 0 << 0.02;
    QTest::newRow("7.5 s steps (not a whole number of samples)") << 5.5 << 2.0 << 0 << 0.02;
    QTest::newRow("45 s steps") << 38.0 << 7.0 << 0 << 0.02;
    QTest::newRow("10 s steps with a 20 s checkpoint every 30 steps") << 7.0 << 3.0 << 30 << 0.02;
    QTest::newRow("10 s steps, noisy") << 7.0 << 3.0 << 0 << 0.08;
}

void TestRulesSteps::stepsFromTrainerLogAndSm()
{
    QFETCH(double, computeS);
    QFETCH(double, commS);
    QFETCH(int, checkpointEvery);
    QFETCH(double, noise);
    auto model = std::make_shared<StepModel>();
    model->computeS = computeS;
    model->commS = commS;
    model->checkpointEvery = checkpointEvery;
    model->checkpointS = 20;
    model->build(1, 1800);
    const double period = computeS + commS;
    Synthetic run;
    run.seconds = 1800;
    run.series = {{"gpu.util", "%", [](int, int, int64_t) { return 99.0; }},
                  {"gpu.sm_active", "ratio",
                   [=](int n, int g, int64_t s) { return model->slotMean(n, s) + noise * gauss(g, s); }}};
    const RuleParams p = RuleParams::defaults();

    // From the SM activity.
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    const auto fromSm = computeStepTimes(*m, p);
    QCOMPARE(fromSm.size(), size_t(1));
    QCOMPARE(fromSm[0].source, std::string("sm_periodicity"));
    QCOMPARE(fromSm[0].node, std::string("node0"));
    QVERIFY2(std::abs(fromSm[0].medianStepS - period) <= 1.0, qPrintable(QString::number(fromSm[0].medianStepS)));
    QVERIFY(fromSm[0].confidence > 0.3 && fromSm[0].confidence <= 1);
    // Nearly every true step start is found within one sample, and nothing else is.
    size_t matched = 0;
    for (double s : model->starts) {
        const auto ts = kStart + std::llround(s * 1e9);
        matched += std::any_of(fromSm[0].startsNs.begin(), fromSm[0].startsNs.end(),
                               [&](int64_t f) { return std::abs(f - ts) <= kSecond; });
    }
    QVERIFY2(static_cast<double>(matched) >= 0.9 * static_cast<double>(model->starts.size()),
             qPrintable(QStringLiteral("%1 of %2 starts").arg(matched).arg(model->starts.size())));
    QVERIFY2(fromSm[0].startsNs.size() <= model->starts.size() + 1,
             qPrintable(QString::number(fromSm[0].startsNs.size())));

    // From the trainer log (each step's end and duration): the log wins, and the two agree within one sample.
    run.stepLog = [model](int) { return model->trainerLog(); };
    QTemporaryDir dir2;
    auto logged = writeRun(dir2, run);
    QVERIFY(logged);
    auto m2 = metricsOf(*logged);
    QVERIFY_OK(m2);
    QCOMPARE(m2->nodes[0].stepTimes.size(), model->starts.size() - 1);
    const auto fromLog = computeStepTimes(*m2, p);
    QCOMPARE(fromLog.size(), size_t(1));
    QCOMPARE(fromLog[0].source, std::string("trainer_log"));
    QVERIFY(std::abs(fromLog[0].medianStepS - period) < 1e-6);
    QCOMPARE(fromLog[0].startsNs.front(), kStart);
    QVERIFY(std::abs(fromLog[0].medianStepS - fromSm[0].medianStepS) <= 1.0);
}

void TestRulesSteps::stepsFromSparseTrainerLog()
{
    // A trainer that logs every 10 steps of 2 s: each line holds the mean step time since the line before and the
    // step number. Every step gets its start (not one per line), each 2 s after the one before; without the step
    // numbers a line is one step, as before.
    RunMetrics m;
    m.grid = TimeGrid{0, 1'000'000'000, 1000};
    NodeMetrics node;
    node.node = "node0";
    constexpr int kLines = 20, kEvery = 10;
    constexpr double kStepS = 2.0;
    for (int line = 1; line <= kLines; ++line) {
        const int64_t ts = static_cast<int64_t>(line * kEvery * kStepS * 1e9);
        node.stepTimes.push_back(store::Point{ts, kStepS, false});
        node.stepNumbers.push_back(store::Point{ts, static_cast<double>(line * kEvery), false});
    }
    m.nodes.push_back(node);
    const RuleParams p = RuleParams::defaults();
    auto steps = computeStepTimes(m, p);
    QCOMPARE(steps.size(), size_t{1});
    QCOMPARE(steps[0].source, std::string("trainer_log"));
    // The first line's steps are not known to be 10 (no line before it): it stands for one.
    QCOMPARE(steps[0].startsNs.size(), size_t{1 + (kLines - 1) * kEvery});
    for (size_t i = 1; i < steps[0].startsNs.size(); ++i)
        QCOMPARE(steps[0].startsNs[i] - steps[0].startsNs[i - 1], int64_t{2'000'000'000});
    QCOMPARE(steps[0].medianStepS, kStepS);
    m.nodes[0].stepNumbers.clear();
    QCOMPARE(computeStepTimes(m, p)[0].startsNs.size(), size_t{kLines});
}

void TestRulesSteps::stepsFromUtilization()
{
    // No SM activity: utilization 99 % computing, 40 % waiting, 12 s steps.
    auto model = std::make_shared<StepModel>();
    model->computeS = 9;
    model->commS = 3;
    model->build(1, 1200);
    Synthetic run;
    run.seconds = 1200;
    run.series = {
        {"gpu.util", "%", [=](int n, int, int64_t s) { return 40 + (model->slotMean(n, s) - 0.1) / 0.6 * 59; }}};
    QTemporaryDir dir;
    StepTimes step;
    oneStepSeries(writeRun(dir, run).get(), "utilization_periodicity", step);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(std::abs(step.medianStepS - 12) <= 1.0, qPrintable(QString::number(step.medianStepS)));
}

void TestRulesSteps::stepsFromNarrowDips_data()
{
    QTest::addColumn<int>("period");    // s
    QTest::addColumn<QString>("stall"); // a 120 s checkpoint stall: "none", "mid" (steps resume after it), "end"
    QTest::newRow("50 s steps") << 50 << "none";
    QTest::newRow("37 s steps") << 37 << "none";
    QTest::newRow("50 s steps, a 120 s stall mid-run") << 50 << "mid";
    QTest::newRow("37 s steps, a 120 s stall mid-run") << 37 << "mid";
    QTest::newRow("50 s steps, a 120 s stall at the end") << 50 << "end";
}

void TestRulesSteps::stepsFromNarrowDips()
{
    QFETCH(int, period);
    QFETCH(QString, stall);
    // ZeRO-3 at 1 s sampling: SM activity 0.21 but for a one-sample dip to 0.06 at the end of each step (the wait at
    // its collective), noise sd 0.02 (one GPU), after 30 s of idle start-up; the stall's GPUs are idle (0).
    constexpr int64_t kSeconds = 1800, kStartUp = 30, kStallS = 120;
    std::vector<double> level(kSeconds, 0.0); // the noise-free activity per second
    std::vector<int64_t> starts;
    bool stalled = false;
    for (int64_t t = kStartUp; t + period <= kSeconds - (stall == QLatin1String("end") ? kStallS : 0);) {
        if (stall == QLatin1String("mid") && !stalled && t >= kSeconds / 2) {
            stalled = true;
            t += kStallS;
            continue;
        }
        starts.push_back(t);
        for (int64_t i = t; i < t + period; ++i)
            level[static_cast<size_t>(i)] = i == t + period - 1 ? 0.06 : 0.21;
        t += period;
    }
    Synthetic run;
    run.gpus = 1;
    run.seconds = kSeconds;
    run.series = {{"gpu.util", "%", [](int, int, int64_t) { return 99.0; }},
                  {"gpu.sm_active", "ratio", [&](int, int g, int64_t s) {
                       const double v = level[static_cast<size_t>(s)];
                       return v > 0 ? std::max(0.0, v + 0.02 * gauss(100 + g, s)) : 0.0;
                   }}};
    QTemporaryDir dir;
    StepTimes step;
    oneStepSeries(writeRun(dir, run).get(), "sm_periodicity", step);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(std::abs(step.medianStepS - period) <= 1.0, qPrintable(QString::number(step.medianStepS)));
    QVERIFY2(step.confidence > 0.8 && step.confidence <= 1, qPrintable(QString::number(step.confidence)));
    // The true step starts (the first as the GPUs leave idle, the one after the stall where it ends) are found
    // within one sample, but for a dip the noise fills in (one in ~150 at 2.5 sd), and nothing else is.
    auto near = [](const std::vector<int64_t>& in, int64_t ts) {
        return std::any_of(in.begin(), in.end(), [&](int64_t f) { return std::abs(f - ts) <= kSecond; });
    };
    std::vector<int64_t> truth;
    for (int64_t t : starts)
        truth.push_back(kStart + t * kSecond);
    size_t matched = 0;
    for (int64_t ts : truth)
        matched += near(step.startsNs, ts);
    QVERIFY2(static_cast<double>(matched) >= 0.95 * static_cast<double>(truth.size()),
             qPrintable(QStringLiteral("%1 of %2 starts").arg(matched).arg(truth.size())));
    for (int64_t f : step.startsNs)
        QVERIFY2(near(truth, f),
                 qPrintable(QStringLiteral("a start at %1 s").arg(static_cast<double>(f - kStart) / 1e9)));
}

void TestRulesSteps::noStepsWithoutPeriod_data()
{
    QTest::addColumn<int>("kind");
    QTest::newRow("white noise around 0.5") << 0;
    QTest::newRow("flat busy GPUs") << 1;
    QTest::newRow("random busy and idle stretches") << 2;
    QTest::newRow("one 10-minute busy stretch") << 3;
    QTest::newRow("one-sample dips in a flat level at random times") << 4;
}

void TestRulesSteps::noStepsWithoutPeriod()
{
    QFETCH(int, kind);
    // Random stretches: each 1–40 s long (uniform), alternately busy and idle.
    std::vector<uint8_t> busy(1800, 0);
    for (int64_t s = 0, k = 0; s < 1800; ++k) {
        const auto len = 1 + static_cast<int64_t>(std::abs(gauss(7, static_cast<uint64_t>(k))) * 15);
        for (int64_t i = s; i < std::min<int64_t>(1800, s + len); ++i)
            busy[static_cast<size_t>(i)] = k % 2;
        s += len;
    }
    // Random dips: 5–95 s apart (uniform).
    std::vector<uint8_t> dip(1800, 0);
    for (int64_t s = 0, k = 0; s < 1800; ++k) {
        dip[static_cast<size_t>(s)] = 1;
        s += 5 + static_cast<int64_t>(std::erfc(-gauss(8, static_cast<uint64_t>(k)) / std::sqrt(2.0)) / 2 * 90);
    }
    Synthetic run;
    run.series = {{"gpu.util", "%", [](int, int, int64_t) { return 99.0; }},
                  {"gpu.sm_active", "ratio", [&](int, int g, int64_t s) {
                       switch (kind) {
                       case 4:
                           return (dip[static_cast<size_t>(s)] ? 0.06 : 0.21) + 0.02 * gauss(g, s);
                       case 0:
                           return std::clamp(0.5 + 0.2 * gauss(g, s), 0.0, 1.0);
                       case 1:
                           return 0.7;
                       case 2:
                           return busy[static_cast<size_t>(s)] ? 0.7 + 0.02 * gauss(g, s) : 0.1;
                       default:
                           return s >= 600 && s < 1200 ? 0.7 : 0.1;
                       }
                   }}};
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    const auto steps = computeStepTimes(*m, RuleParams::defaults());
    QVERIFY2(steps.empty(), steps.empty() ? "" : qPrintable(QStringLiteral("a %1 s period").arg(steps[0].medianStepS)));
}

void TestRulesSteps::shiftMovesFindingsOnly()
{
    // A straggler (node2) and a throttled node (node1) in one run: every timestamp moved by a constant moves the
    // steps and findings by it and changes nothing else.
    StragglerCase c;
    c.late = [](int n, int64_t k) { return n == 2 && k % 5 < 3 ? 1.5 : 0.0; };
    auto model = std::make_shared<StepModel>(stragglerModel(c, 1800));
    Synthetic run = stragglerRun(c, model);
    run.series.push_back({"gpu.sm_clock", "Hz", [](int n, int, int64_t s) {
                              return (n == 1 && s >= 600 && s < 1200 ? 1600.0 : 1980.0) * 1e6;
                          }});
    run.series.push_back(
        {"gpu.power", "W", [](int n, int, int64_t s) { return n == 1 && s >= 600 && s < 1200 ? 700.0 : 600.0; }});
    run.series.push_back({"gpu.power_limit", "W", [](int, int, int64_t) { return 700.0; }});
    struct Result
    {
        std::vector<StepTimes> steps;
        std::vector<Finding> findings;
    };
    auto analyze = [](const Synthetic& r) {
        QTemporaryDir dir;
        auto db = writeRun(dir, r);
        Result out;
        if (!db) return out;
        auto m = metricsOf(*db);
        if (!m) return out;
        const RuleParams p = RuleParams::defaults();
        out.steps = computeStepTimes(*m, p);
        out.findings = throttleRule(*m, p);
        for (Finding& f : stragglerRule(*m, out.steps, p))
            out.findings.push_back(std::move(f));
        return out;
    };
    const Result base = analyze(run);
    QCOMPARE(base.findings.size(), size_t(2));
    QCOMPARE(base.findings[0].rule, std::string("THROTTLE"));
    QCOMPARE(base.findings[1].rule, std::string("STRAGGLER"));
    Synthetic shifted = run;
    shifted.offsetNs = 4321 * kSecond + 123'456'789;
    const Result moved = analyze(shifted);
    QCOMPARE(moved.steps.size(), base.steps.size());
    for (size_t k = 0; k < base.steps.size(); ++k) {
        QCOMPARE(moved.steps[k].medianStepS, base.steps[k].medianStepS);
        QCOMPARE(moved.steps[k].startsNs.size(), base.steps[k].startsNs.size());
        for (size_t i = 0; i < base.steps[k].startsNs.size(); ++i)
            QCOMPARE(moved.steps[k].startsNs[i] - shifted.offsetNs, base.steps[k].startsNs[i]);
    }
    QCOMPARE(moved.findings.size(), base.findings.size());
    for (size_t k = 0; k < base.findings.size(); ++k) {
        const Finding &a = base.findings[k], &b = moved.findings[k];
        QCOMPARE(b.rule, a.rule);
        QCOMPARE(b.severity, a.severity);
        QCOMPARE(b.nodes, a.nodes);
        QCOMPARE(b.gpus, a.gpus);
        QCOMPARE(b.savingS, a.savingS);
        QCOMPARE(b.impact, a.impact);
        QCOMPARE(b.episodes.size(), a.episodes.size());
        for (size_t e = 0; e < a.episodes.size(); ++e) {
            QCOMPARE(b.episodes[e].startNs - shifted.offsetNs, a.episodes[e].startNs);
            QCOMPARE(b.episodes[e].endNs - shifted.offsetNs, a.episodes[e].endNs);
        }
        QCOMPARE(b.evidence, a.evidence);
    }
}

void TestRulesSteps::fixtureHasNeither()
{
    // h200-gloo-small: one healthy H200 (two ranks on it), nothing throttles and no one straggles.
    const QString base = test::fixtureRun("h200-gloo-small");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, base);
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QVERIFY(!m->gpus.empty());
    QVERIFY(std::any_of(m->gpus.begin(), m->gpus.end(),
                        [](const GpuMetrics& g) { return !g.smClock.empty() && !g.power.empty(); }));
    const RuleParams p = RuleParams::defaults();
    const auto throttles = throttleRule(*m, p);
    QVERIFY2(throttles.empty(), throttles.empty() ? "" : throttles[0].title.c_str());
    const auto found = stragglerRule(*m, computeStepTimes(*m, p), p);
    QVERIFY2(found.empty(), found.empty() ? "" : found[0].title.c_str());
}

QTEST_MAIN(TestRulesSteps)
#include "tst_rules_steps.moc"