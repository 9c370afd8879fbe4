// Step detection, THROTTLE and STRAGGLER on generated runs: steps from the trainer log and from the GPUs' SM
// activity agree with the generated period, noise has no steps; a node whose GPUs run slower clocks at their power
// limit (or with a thermal reason) is throttled and its equal peers are not; a node that reaches the step's
// collective late in most steps is a persistent straggler, jitter and a different late rank every step are not;
// shifting every timestamp moves the findings and nothing else; the real h200-gloo-small run has neither.

#include "analysis/rules/step_detection.h"
#include "analysis/rules/straggler_rule.h"
#include "analysis/rules/throttle_rule.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "importers/import_session.h"
#include "tests/rules_support.h"
#include "tests/test_support.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <functional>
#include <limits>

using namespace runlens;
using namespace runlens::analysis;

namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'790'000'000'000'000'000;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A deterministic normal deviate per (stream, index): the same run generated twice is the same run.
double gauss(uint64_t stream, uint64_t index)
{
    auto mix = [](uint64_t x) {
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
    };
    const uint64_t a = mix(stream * 0x100000001b3ULL + index), b = mix(a);
    const double u1 = (static_cast<double>(a >> 11) + 0.5) / 9007199254740992.0, u2 = static_cast<double>(b >> 11) / 9007199254740992.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

// A generated run: `nodes` nodes with `gpus` GPUs each, one point a second per GPU series (NaN: no point), and
// per node optional trainer-log step times (end of the step, seconds), all moved by offsetNs.
struct Synthetic
{
    struct Series
    {
        const char* metric;
        const char* unit;
        std::function<double(int node, int gpu, int64_t s)> value;
    };
    int nodes = 1, gpus = 2;
    int64_t seconds = 1800;
    int64_t offsetNs = 0;
    std::vector<Series> series;
    std::function<std::vector<std::pair<double, double>>(int node)> stepLog;
};

std::unique_ptr<store::RunDatabase> writeRun(const QTemporaryDir& dir, const Synthetic& run)
{
    auto db = store::RunDatabase::open(dir.filePath(QStringLiteral("r.runlens")).toStdString(), store::OpenMode::Create);
    if (!db || !(*db)->begin()) return nullptr;
    store::RunWriter w(**db);
    store::ImportRecord rec;
    rec.path = "synthetic";
    rec.contentHash = "synthetic";
    rec.format = "test";
    if (!w.beginImport(rec)) return nullptr;
    for (int n = 0; n < run.nodes; ++n) {
        auto node = w.node("node" + std::to_string(n), "option", "UTC");
        if (!node) return nullptr;
        for (int g = 0; g < run.gpus; ++g) {
            auto gpu = w.device(*node, "gpu", std::to_string(g));
            if (!gpu) return nullptr;
            for (const Synthetic::Series& s : run.series) {
                auto sink = w.series(*gpu, s.metric, s.unit, s.metric);
                if (!sink) return nullptr;
                for (int64_t t = 0; t < run.seconds; ++t) {
                    const double v = s.value(n, g, t);
                    if (std::isnan(v)) continue;
                    (*sink)->append(kStart + run.offsetNs + t * kSecond, v);
                    if (!w.flushIfNeeded(**sink)) return nullptr;
                }
            }
        }
        if (run.stepLog) {
            auto host = w.device(*node, "host", "");
            if (!host) return nullptr;
            auto sink = w.series(*host, "train.step_time", "s", "step_time");
            if (!sink) return nullptr;
            for (const auto& [end, seconds] : run.stepLog(n))
                (*sink)->append(kStart + run.offsetNs + std::llround(end * 1e9), seconds);
        }
    }
    store::ImportTotals totals;
    totals.contentHash = rec.contentHash;
    if (!w.finishImport(totals, store::Diagnostics()) || !(*db)->commit()) return nullptr;
    return std::move(*db);
}

// Training steps in continuous time: step k starts at start[k]; each node computes for compute(node, k) seconds,
// then waits at the collective until the last node arrives, plus the collective itself (commS). Every
// checkpointEvery steps the GPUs stall for checkpointS first.
struct StepModel
{
    double computeS = 7, commS = 3;
    int checkpointEvery = 0;
    double checkpointS = 0;
    std::function<double(int node, int64_t k)> extra; // seconds a node computes beyond computeS in step k
    std::vector<double> starts, stallStarts;

    void build(int nodes, double seconds)
    {
        starts.clear();
        stallStarts.clear();
        double t = 0;
        for (int64_t k = 0; t < seconds; ++k) {
            if (checkpointEvery > 0 && k > 0 && k % checkpointEvery == 0) {
                stallStarts.push_back(t);
                t += checkpointS;
            }
            starts.push_back(t);
            double longest = 0;
            for (int n = 0; n < nodes; ++n)
                longest = std::max(longest, compute(n, k));
            t += longest + commS;
        }
    }
    double compute(int node, int64_t k) const { return computeS + (extra ? extra(node, k) : 0.0); }
    // SM activity at time t: 0.7 computing, 0.1 waiting, 0 in a checkpoint stall.
    double activity(int node, double t) const
    {
        for (double s : stallStarts)
            if (t >= s && t < s + checkpointS) return 0.0;
        const auto it = std::upper_bound(starts.begin(), starts.end(), t);
        if (it == starts.begin()) return 0.0;
        const auto k = static_cast<int64_t>(it - starts.begin()) - 1;
        return t - starts[static_cast<size_t>(k)] < compute(node, k) ? 0.7 : 0.1;
    }
    // The mean over the second [s, s + 1), as an averaging sampler reports it.
    double slotMean(int node, int64_t s) const
    {
        constexpr int kSub = 100;
        double sum = 0;
        for (int i = 0; i < kSub; ++i)
            sum += activity(node, static_cast<double>(s) + (i + 0.5) / kSub);
        return sum / kSub;
    }
};

Expected<RunMetrics> metricsOf(store::RunDatabase& db)
{
    return loadRunMetrics(db, static_cast<int64_t>(RuleParams::defaults().get("rules.grid_s") * 1e9));
}

using test::rules::importFixture; // fixture files into a temporary run

// A throttling run: `nodes` × 4 GPUs busy at 95 %, 1980 MHz and 650 W against a 700 W limit; `throttled` says
// which GPUs at which second run `mhz` at `watts` instead.
struct ThrottleCase
{
    int nodes = 2;
    double mhz = 1650, watts = 700;
    bool recordLimit = true;
    std::function<bool(int node, int gpu, int64_t s)> throttled;
};

Synthetic throttleRun(const ThrottleCase& c)
{
    Synthetic run;
    run.nodes = c.nodes;
    run.gpus = 4;
    run.seconds = 1800;
    auto hit = c.throttled;
    run.series = {
        {"gpu.util", "%", [](int, int, int64_t) { return 95.0; }},
        {"gpu.sm_active", "ratio", [](int n, int g, int64_t s) { return 0.6 + 0.02 * gauss(n * 8 + g, s); }},
        {"gpu.sm_clock", "Hz",
         [=](int n, int g, int64_t s) { return (hit(n, g, s) ? c.mhz : 1980.0 + 10 * gauss(100 + n * 8 + g, s)) * 1e6; }},
        {"gpu.power", "W", [=](int n, int g, int64_t s) { return hit(n, g, s) ? c.watts : 650.0 + 5 * gauss(200 + n * 8 + g, s); }},
        {"gpu.temp", "C", [](int, int, int64_t) { return 70.0; }},
    };
    if (c.recordLimit) run.series.push_back({"gpu.power_limit", "W", [](int, int, int64_t) { return 700.0; }});
    return run;
}

// A straggler run: `nodes` × 2 GPUs, 10 s steps (7 s compute, 3 s collective); `late(node, k)` adds seconds of
// compute to a node in step k; `jitterS` adds normal jitter to every node's compute.
struct StragglerCase
{
    int nodes = 4;
    double jitterS = 0.05;
    std::function<double(int node, int64_t k)> late;
    bool stepLog = false;
};

StepModel stragglerModel(const StragglerCase& c, double seconds)
{
    StepModel model;
    auto late = c.late;
    const double jitter = c.jitterS;
    model.extra = [=](int n, int64_t k) { return std::abs(jitter * gauss(300 + n, static_cast<uint64_t>(k))) + (late ? late(n, k) : 0.0); };
    model.build(c.nodes, seconds);
    return model;
}

Synthetic stragglerRun(const StragglerCase& c, std::shared_ptr<StepModel> model)
{
    Synthetic run;
    run.nodes = c.nodes;
    run.gpus = 2;
    run.seconds = 1800;
    run.series = {
        {"gpu.util", "%", [](int, int, int64_t) { return 99.0; }},
        {"gpu.sm_active", "ratio", [model](int n, int g, int64_t s) { return model->slotMean(n, s) + 0.01 * gauss(400 + n * 2 + g, s); }},
    };
    if (c.stepLog)
        run.stepLog = [model](int) {
            std::vector<std::pair<double, double>> log;
            for (size_t k = 0; k + 1 < model->starts.size(); ++k)
                log.emplace_back(model->starts[k + 1], model->starts[k + 1] - model->starts[k]);
            return log;
        };
    return run;
}

std::vector<Finding> stragglers(store::RunDatabase& db)
{
    auto m = metricsOf(db);
    if (!m) return {};
    const RuleParams p = RuleParams::defaults();
    return stragglerRule(*m, computeStepTimes(*m, p), p);
}

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
    void throttleAtPowerLimit_data();
    void throttleAtPowerLimit();
    void throttleFromReasonBits();
    void noThrottle_data();
    void noThrottle();
    void straggler_data();
    void straggler();
    void noStraggler_data();
    void noStraggler();
    void shiftMovesFindingsOnly();
    void fixtureHasNeither();
};

void TestRulesSteps::parameters()
{
    // Every parameter these rules read is in resources/rules/defaults.params (get() asserts on unknown names).
    const RuleParams p = RuleParams::defaults();
    for (const char* name :
         {"steps.min_logged", "steps.idle_level", "steps.min_contrast", "steps.min_period_s", "steps.max_period_s",
          "steps.min_cycles", "steps.min_acf", "steps.peak_share", "steps.min_prominence", "steps.min_dip_depth",
          "steps.min_regular", "steps.dip_noise_z", "steps.min_dip_area", "steps.max_dip_share", "throttle.busy_util", "throttle.clock_ratio", "throttle.own_clock_quantile",
          "throttle.power_at_limit", "throttle.temp_hot_c", "throttle.min_s", "throttle.warn", "throttle.critical",
          "straggler.max_step_factor", "straggler.min_step_samples", "straggler.min_steps", "straggler.scale_floor",
          "straggler.z", "straggler.persistent", "straggler.intermittent", "straggler.dominance", "straggler.min_lag",
          "straggler.warn", "straggler.critical", "rules.episode_gap_samples", "rules.grid_s"})
        QVERIFY2(std::any_of(p.all().begin(), p.all().end(), [&](const RuleParam& rp) { return rp.name == name && !rp.doc.empty(); }),
                 name);
    QCOMPARE(p.get("throttle.clock_ratio"), 0.85);
    QCOMPARE(p.get("straggler.z"), 3.0);
    QCOMPARE(p.get("steps.max_period_s"), 1800.0);
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
                  {"gpu.sm_active", "ratio", [=](int n, int g, int64_t s) { return model->slotMean(n, s) + noise * gauss(g, s); }}};
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
    QVERIFY2(fromSm[0].startsNs.size() <= model->starts.size() + 1, qPrintable(QString::number(fromSm[0].startsNs.size())));

    // From the trainer log (each step's end and duration): the log wins, and the two agree within one sample.
    run.stepLog = [model](int) {
        std::vector<std::pair<double, double>> log;
        for (size_t k = 0; k + 1 < model->starts.size(); ++k)
            log.emplace_back(model->starts[k + 1], model->starts[k + 1] - model->starts[k]);
        return log;
    };
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
    run.series = {{"gpu.util", "%", [=](int n, int, int64_t s) { return 40 + (model->slotMean(n, s) - 0.1) / 0.6 * 59; }}};
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    const auto steps = computeStepTimes(*m, RuleParams::defaults());
    QCOMPARE(steps.size(), size_t(1));
    QCOMPARE(steps[0].source, std::string("utilization_periodicity"));
    QVERIFY2(std::abs(steps[0].medianStepS - 12) <= 1.0, qPrintable(QString::number(steps[0].medianStepS)));
}

void TestRulesSteps::stepsFromNarrowDips_data()
{
    QTest::addColumn<int>("period"); // s
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
    auto db = writeRun(dir, run);
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    const auto steps = computeStepTimes(*m, RuleParams::defaults());
    QCOMPARE(steps.size(), size_t(1));
    QCOMPARE(steps[0].source, std::string("sm_periodicity"));
    QVERIFY2(std::abs(steps[0].medianStepS - period) <= 1.0, qPrintable(QString::number(steps[0].medianStepS)));
    QVERIFY2(steps[0].confidence > 0.8 && steps[0].confidence <= 1, qPrintable(QString::number(steps[0].confidence)));
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
        matched += near(steps[0].startsNs, ts);
    QVERIFY2(static_cast<double>(matched) >= 0.95 * static_cast<double>(truth.size()),
             qPrintable(QStringLiteral("%1 of %2 starts").arg(matched).arg(truth.size())));
    for (int64_t f : steps[0].startsNs)
        QVERIFY2(near(truth, f), qPrintable(QStringLiteral("a start at %1 s").arg(static_cast<double>(f - kStart) / 1e9)));
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
                       case 4: return (dip[static_cast<size_t>(s)] ? 0.06 : 0.21) + 0.02 * gauss(g, s);
                       case 0: return std::clamp(0.5 + 0.2 * gauss(g, s), 0.0, 1.0);
                       case 1: return 0.7;
                       case 2: return busy[static_cast<size_t>(s)] ? 0.7 + 0.02 * gauss(g, s) : 0.1;
                       default: return s >= 600 && s < 1200 ? 0.7 : 0.1;
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

void TestRulesSteps::throttleAtPowerLimit_data()
{
    QTest::addColumn<int>("fromS");
    QTest::addColumn<int>("toS");
    QTest::addColumn<bool>("recordLimit");
    QTest::addColumn<QString>("severity");
    QTest::newRow("the whole run, limit recorded") << 0 << 1800 << true << "critical";
    QTest::newRow("the whole run, limit from the most drawn") << 0 << 1800 << false << "critical";
    QTest::newRow("4 of 30 min: warn") << 600 << 840 << true << "warn";
    QTest::newRow("1 of 30 min: info") << 600 << 660 << true << "info";
}

void TestRulesSteps::throttleAtPowerLimit()
{
    QFETCH(int, fromS);
    QFETCH(int, toS);
    QFETCH(bool, recordLimit);
    QFETCH(QString, severity);
    // node1's GPUs run 1650 MHz (17 % below their peers' 1980) at their 700 W limit.
    ThrottleCase c;
    c.recordLimit = recordLimit;
    c.throttled = [=](int n, int, int64_t s) { return n == 1 && s >= fromS && s < toS; };
    QTemporaryDir dir;
    auto db = writeRun(dir, throttleRun(c));
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QVERIFY(!m->gpus[0].smClock.empty() && !m->gpus[0].power.empty() && !m->gpus[0].temp.empty());
    const auto found = throttleRule(*m, RuleParams::defaults());
    QCOMPARE(found.size(), size_t(1));
    const Finding& f = found[0];
    QCOMPARE(f.rule, std::string("THROTTLE"));
    QCOMPARE(f.nodes, std::vector<std::string>{"node1"});
    QCOMPARE(f.gpus, (std::vector<std::string>{"node1:gpu0", "node1:gpu1", "node1:gpu2", "node1:gpu3"}));
    QCOMPARE(QString::fromStdString(f.severity), severity);
    QCOMPARE(f.episodes.size(), size_t(1));
    QCOMPARE(f.episodes[0].startNs, kStart + fromS * kSecond);
    QCOMPARE(f.episodes[0].endNs, kStart + toS * kSecond);
    QVERIFY(std::abs(f.impact - (toS - fromS) / 1800.0) < 1e-9);
    // The clock deficit: 1 - 1650/1980 of the throttled time, within the peers' noise.
    const double deficit = (1 - 1650.0 / 1980.0) * (toS - fromS);
    QVERIFY2(std::abs(f.savingS - deficit) < 0.05 * deficit, qPrintable(QString::number(f.savingS)));
    QCOMPARE(f.evidence.value(QStringLiteral("cause")).toString(), QStringLiteral("power_cap"));
    const QJsonObject g0 = f.evidence.value(QStringLiteral("gpus")).toArray()[0].toObject();
    QVERIFY(std::abs(g0.value(QStringLiteral("median_sm_clock_mhz")).toDouble() - 1650) < 1e-6);
    QVERIFY(std::abs(g0.value(QStringLiteral("peers_median_sm_clock_mhz")).toDouble() - 1980) < 20); // its throttled node-mates are peers too
    QVERIFY(std::abs(g0.value(QStringLiteral("median_power_w")).toDouble() - 700) < 1e-6);
    QCOMPARE(g0.value(QStringLiteral("power_limit_source")).toString(),
             recordLimit ? QStringLiteral("recorded") : QStringLiteral("max_seen"));
    QVERIFY(f.confidence < (recordLimit ? 0.8 : 0.7));
    QVERIFY(f.recommendation.find("nvidia-smi -pl") != std::string::npos);
}

void TestRulesSteps::throttleFromReasonBits()
{
    // node0:gpu2 reports HW thermal slowdown (the nvidia-smi boolean) from 300 s to 900 s, at 1500 MHz and 88 °C;
    // node1:gpu0 reports the same through DCGM's reason mask. Power stays low: the reasons say why.
    Synthetic run;
    run.nodes = 2;
    run.gpus = 4;
    auto hot = [](int n, int g, int64_t s) { return s >= 300 && s < 900 && ((n == 0 && g == 2) || (n == 1 && g == 0)); };
    run.series = {
        {"gpu.util", "%", [](int, int, int64_t) { return 95.0; }},
        {"gpu.sm_clock", "Hz", [&](int n, int g, int64_t s) { return (hot(n, g, s) ? 1500.0 : 1980.0) * 1e6; }},
        {"gpu.power", "W", [](int, int, int64_t) { return 450.0; }},
        {"gpu.power_limit", "W", [](int, int, int64_t) { return 700.0; }},
        {"gpu.temp", "C", [&](int n, int g, int64_t s) { return hot(n, g, s) ? 88.0 : 70.0; }},
        {"gpu.clock_event.hw_thermal_slowdown", "", [&](int n, int g, int64_t s) { return n == 0 ? (hot(n, g, s) ? 1.0 : 0.0) : kNaN; }},
        {"gpu.clock_event_reasons", "", [&](int n, int g, int64_t s) { return n == 1 ? (hot(n, g, s) ? 64.0 : 0.0) : kNaN; }},
    };
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QCOMPARE(m->gpus[2].clockEventReasons[400], static_cast<double>(kClockEventHwThermal));
    QCOMPARE(m->gpus[2].clockEventReasons[100], 0.0);
    const auto found = throttleRule(*m, RuleParams::defaults());
    QCOMPARE(found.size(), size_t(2));
    QCOMPARE(found[0].gpus, std::vector<std::string>{"node0:gpu2"});
    QCOMPARE(found[1].gpus, std::vector<std::string>{"node1:gpu0"});
    for (const Finding& f : found) {
        QCOMPARE(f.evidence.value(QStringLiteral("cause")).toString(), QStringLiteral("thermal"));
        QVERIFY(f.evidence.value(QStringLiteral("reason_bits_recorded")).toBool());
        QCOMPARE(f.evidence.value(QStringLiteral("gpus")).toArray()[0].toObject().value(QStringLiteral("reasons")).toObject().value(
                     QStringLiteral("thermal")).toDouble(),
                 1.0);
        QCOMPARE(f.episodes.size(), size_t(1));
        QCOMPARE(f.episodes[0].startNs, kStart + 300 * kSecond);
        QCOMPARE(f.episodes[0].endNs, kStart + 900 * kSecond);
        QCOMPARE(f.severity, std::string("critical")); // 600 of 1800 s
        QVERIFY(f.confidence >= 0.9);
        QVERIFY(f.recommendation.find("fans") != std::string::npos);
    }
}

void TestRulesSteps::noThrottle_data()
{
    QTest::addColumn<double>("mhz");
    QTest::addColumn<double>("watts");
    QTest::addColumn<int>("throttledNodes");
    QTest::newRow("equal peers") << 1980.0 << 650.0 << 1;
    QTest::newRow("every GPU alike at the power limit") << 1650.0 << 700.0 << 2;
    QTest::newRow("slower clocks well below the power limit and cool (an application clock setting)") << 1650.0 << 400.0 << 1;
    QTest::newRow("8 % slower at the limit (above 0.85 ×)") << 1820.0 << 700.0 << 1;
}

void TestRulesSteps::noThrottle()
{
    QFETCH(double, mhz);
    QFETCH(double, watts);
    QFETCH(int, throttledNodes);
    ThrottleCase c;
    c.mhz = mhz;
    c.watts = watts;
    c.throttled = [=](int n, int, int64_t) { return n < throttledNodes; };
    QTemporaryDir dir;
    auto db = writeRun(dir, throttleRun(c));
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QCOMPARE(throttleRule(*m, RuleParams::defaults()).size(), size_t(0));
}

void TestRulesSteps::straggler_data()
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

void TestRulesSteps::straggler()
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
    const auto found = stragglers(*db);
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

void TestRulesSteps::noStraggler_data()
{
    QTest::addColumn<int>("kind");
    QTest::newRow("jitter only (0.15 s)") << 0;
    QTest::newRow("a different node 1.5 s late every step") << 1;
    QTest::newRow("late in 10 % of steps") << 2;
    QTest::newRow("late by 0.3 s (3 % of the step) in every step") << 3;
}

void TestRulesSteps::noStraggler()
{
    QFETCH(int, kind);
    StragglerCase c;
    c.jitterS = kind == 0 ? 0.15 : 0.05;
    c.late = [=](int n, int64_t k) {
        switch (kind) {
        case 1: return n == (k * 3) % 4 ? 1.5 : 0.0;
        case 2: return n == 2 && k % 10 == 0 ? 1.5 : 0.0;
        case 3: return n == 2 ? 0.3 : 0.0;
        default: return 0.0;
        }
    };
    auto model = std::make_shared<StepModel>(stragglerModel(c, 1800));
    QTemporaryDir dir;
    auto db = writeRun(dir, stragglerRun(c, model));
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QVERIFY(!computeStepTimes(*m, RuleParams::defaults()).empty()); // the steps were found; no one straggles
    const auto found = stragglers(*db);
    QVERIFY2(found.empty(), found.empty() ? "" : found[0].title.c_str());
}

void TestRulesSteps::shiftMovesFindingsOnly()
{
    // A straggler (node2) and a throttled node (node1) in one run: every timestamp moved by a constant moves the
    // steps and findings by it and changes nothing else.
    StragglerCase c;
    c.late = [](int n, int64_t k) { return n == 2 && k % 5 < 3 ? 1.5 : 0.0; };
    auto model = std::make_shared<StepModel>(stragglerModel(c, 1800));
    Synthetic run = stragglerRun(c, model);
    run.series.push_back({"gpu.sm_clock", "Hz", [](int n, int, int64_t s) { return (n == 1 && s >= 600 && s < 1200 ? 1600.0 : 1980.0) * 1e6; }});
    run.series.push_back({"gpu.power", "W", [](int n, int, int64_t s) { return n == 1 && s >= 600 && s < 1200 ? 700.0 : 600.0; }});
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
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures is absent");
    const QString base = fixtures + QStringLiteral("/h200-gloo-small/");
    QTemporaryDir dir;
    auto db = importFixture(dir, base, {"nvidia-smi-query.csv", "nvidia-smi-dmon.txt", "nvidia-smi-dmon-gpm.txt", "prometheus"});
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QVERIFY(!m->gpus.empty());
    QVERIFY(std::any_of(m->gpus.begin(), m->gpus.end(), [](const GpuMetrics& g) { return !g.smClock.empty() && !g.power.empty(); }));
    const RuleParams p = RuleParams::defaults();
    const auto throttles = throttleRule(*m, p);
    QVERIFY2(throttles.empty(), throttles.empty() ? "" : throttles[0].title.c_str());
    const auto found = stragglerRule(*m, computeStepTimes(*m, p), p);
    QVERIFY2(found.empty(), found.empty() ? "" : found[0].title.c_str());
}

QTEST_MAIN(TestRulesSteps)
#include "tst_rules_steps.moc"
