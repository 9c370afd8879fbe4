// Comparing runs: the two-sample test, generated runs with known differences, and `runlens compare` on the
// fixtures (two recorded runs before and after a change; two phases of one run) against their ground truth.

#include "analysis/compare/loss_compare.h"
#include "analysis/compare/run_compare.h"
#include "analysis/mfu/mfu.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_settings.h"
#include "analysis/store/run_writer.h"
#include "tests/cli_support.h"
#include "tests/timeline_support.h"
#include "tests/truth_support.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <random>

using namespace runlens;
using namespace runlens::analysis;
using namespace runlens::test::binary;

namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'790'000'000'000'000'000;

// One node, two GPUs busy from the start, `seconds` of per-second utilization and SM activity, and a trainer log:
// a step time point at the end of each step, with its tokens per second.
struct Generated
{
    int64_t seconds = 600;
    unsigned seed = 1;
    double stepMean = 1.0, stepSd = 0.05;
    double sm = 0.3, smSd = 0.03;
    double tokensPerStep = 4096;
};

// The generated run's data: one node with two GPUs' SM activity and utilization, and the trainer's steps.
bool writeGeneratedData(store::RunWriter& w, const Generated& g)
{
    auto node = w.node("node0", "option", "UTC");
    if (!node) return false;
    std::mt19937 rng(g.seed);
    std::normal_distribution<double> smNoise(0, g.smSd), utilNoise(0, 1), stepNoise(0, g.stepSd);
    for (int gpu = 0; gpu < 2; ++gpu) {
        auto dev = w.device(*node, "gpu", std::to_string(gpu));
        if (!dev) return false;
        auto sm = w.series(*dev, "gpu.sm_active", "ratio", "sm");
        if (!sm) return false;
        for (int64_t s = 0; s < g.seconds; ++s) {
            (*sm)->append(kStart + s * kSecond, std::clamp(g.sm + smNoise(rng), 0.0, 1.0));
            if (!w.flushIfNeeded(**sm)) return false;
        }
        auto util = w.series(*dev, "gpu.util", "%", "util");
        if (!util) return false;
        for (int64_t s = 0; s < g.seconds; ++s) {
            (*util)->append(kStart + s * kSecond, std::clamp(95 + utilNoise(rng), 0.0, 100.0));
            if (!w.flushIfNeeded(**util)) return false;
        }
    }
    auto host = w.device(*node, "host", "");
    if (!host) return false;
    auto steps = w.series(*host, "train.step_time", "s", "step_time");
    auto tokens = w.series(*host, "train.tokens_per_s", "1/s", "tokens_per_s");
    if (!steps || !tokens) return false;
    double t = 0;
    while (true) {
        const double step = std::max(0.1, g.stepMean + stepNoise(rng));
        if (t + step >= static_cast<double>(g.seconds)) break;
        t += step;
        const int64_t ts = kStart + std::llround(t * 1e9);
        (*steps)->append(ts, step);
        (*tokens)->append(ts, g.tokensPerStep / step);
        if (!w.flushIfNeeded(**steps) || !w.flushIfNeeded(**tokens)) return false;
    }
    return true;
}

std::string writeGenerated(const QTemporaryDir& dir, const QString& name, const Generated& g)
{
    return test::writeRun(dir, name.toStdString(), [&](store::RunWriter& w) { return writeGeneratedData(w, g); });
}

RunSummary summarize(const std::string& path, const CompareWindowRequest& request = {})
{
    auto db = store::RunDatabase::open(path, store::OpenMode::ReadOnly);
    if (!db) return {};
    auto s = summarizeRun(**db, path, request);
    return s ? *s : RunSummary{};
}

const CompareRow* rowOf(const std::vector<CompareRow>& rows, const std::string& id)
{
    for (const CompareRow& r : rows)
        if (r.id == id) return &r;
    return nullptr;
}

// Imports a fixture folder (without truth/) as `runlens import` does; empty on failure.
QString importFixture(const QTemporaryDir& dir, const QString& folder, const QString& name)
{
    const QString copy = dir.filePath(name + QStringLiteral("-in"));
    if (!test::copyWithoutTruth(folder, copy)) return {};
    const QString db = dir.filePath(name + QStringLiteral(".runlens"));
    const Run r =
        cli({QStringLiteral("import"), QStringLiteral("--tz"), QStringLiteral("UTC"), QStringLiteral("-o"), db, copy});
    return r.exitCode == 0 ? db : QString();
}

// The h200-spin-pair fixture's before/ and after/ imported into dir and compared as JSON; the runs stay empty when an
// import failed.
struct SpinPair
{
    QString pair;          // the fixture folder
    QString before, after; // the run databases
    Run compared;          // `runlens compare before after --json`
    QJsonObject out;       // its output
};

SpinPair compareSpinPair(const QTemporaryDir& dir, const QString& pair)
{
    SpinPair p;
    p.pair = pair;
    p.before = importFixture(dir, pair + QStringLiteral("/before"), QStringLiteral("before"));
    p.after = importFixture(dir, pair + QStringLiteral("/after"), QStringLiteral("after"));
    if (p.before.isEmpty() || p.after.isEmpty()) return p;
    p.compared = cli({QStringLiteral("compare"), p.before, p.after, QStringLiteral("--json")});
    p.out = QJsonDocument::fromJson(p.compared.out.toUtf8()).object();
    return p;
}

QJsonObject jsonRow(const QJsonObject& out, const QString& metric)
{
    for (const auto& v : out.value(QStringLiteral("rows")).toArray())
        if (v.toObject().value(QStringLiteral("metric")).toString() == metric) return v.toObject();
    return {};
}

double value(const QJsonObject& row, int run)
{
    return row.value(QStringLiteral("values")).toArray().at(run).toDouble(NAN);
}

QJsonObject cell(const QJsonObject& row)
{
    return row.value(QStringLiteral("candidates")).toArray().at(0).toObject();
}

} // namespace

class TestCompare : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void mannWhitneyKnownValues()
    {
        // Clearly shifted samples: tiny p, b larger (z > 0).
        const MannWhitney shifted = mannWhitneyU({1, 2, 3, 4, 5, 6, 7, 8}, {11, 12, 13, 14, 15, 16, 17, 18});
        QVERIFY(shifted.p < 0.001);
        QVERIFY(shifted.z > 0);
        QCOMPARE(shifted.u, 64.0);
        // The same values: no difference; every value tied: no variance, p 1.
        QVERIFY(mannWhitneyU({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}).p > 0.9);
        QCOMPARE(mannWhitneyU({3, 3, 3, 3, 3}, {3, 3, 3, 3, 3}).p, 1.0);
        // b above a in 91 of the 100 pairs: z = (91 − 50 − 0.5) / √(100 × 21 / 12) = 3.06, two-sided p = 0.0022 (as
        // scipy.stats.mannwhitneyu with use_continuity and method "asymptotic").
        const MannWhitney mid =
            mannWhitneyU({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {4.5, 8.5, 9.5, 10.5, 11, 12, 13, 14, 15, 16});
        QCOMPARE(mid.u, 91.0);
        QVERIFY2(std::fabs(mid.p - 0.0022) < 0.0001, qPrintable(QString::number(mid.p)));
    }

    void fasterCandidate()
    {
        QTemporaryDir dir;
        Generated base, cand;
        cand.seed = 2;
        cand.stepMean = 0.8;
        cand.sm = 0.4;
        const std::string a = writeGenerated(dir, QStringLiteral("a.runlens"), base);
        const std::string b = writeGenerated(dir, QStringLiteral("b.runlens"), cand);
        QVERIFY(!a.empty() && !b.empty());
        const std::vector<RunSummary> runs{summarize(a), summarize(b)};
        QCOMPARE(runs[0].stepSource, std::string("trainer log"));
        const auto rows = compareRuns(runs);
        const CompareRow* step = rowOf(rows, "step_time_median");
        QVERIFY(step);
        QVERIFY2(std::fabs(step->cells[0].deltaPct + 20) < 2, qPrintable(QString::number(step->cells[0].deltaPct)));
        QCOMPARE(step->cells[0].verdict, std::string("faster"));
        const CompareRow* sm = rowOf(rows, "sm_active");
        QVERIFY(sm);
        QVERIFY(std::fabs(sm->values[0] - 30) < 1 && std::fabs(sm->values[1] - 40) < 1);
        QCOMPARE(sm->cells[0].verdict, std::string("higher"));
        const CompareRow* tokens = rowOf(rows, "tokens_per_s");
        QVERIFY(tokens);
        QCOMPARE(tokens->cells[0].verdict, std::string("higher"));
        const CompareRow* util = rowOf(rows, "gpu_util");
        QVERIFY(util);
        QCOMPARE(util->cells[0].verdict, std::string("no significant change"));
        // The same step size: the step time at the baseline's size is the step time.
        const CompareRow* scaled = rowOf(rows, "step_time_base_size");
        QVERIFY(scaled);
        QVERIFY(std::fabs(scaled->values[1] - step->values[1]) < 0.01);
        // Read-only: no findings were stored in either run.
        QCOMPARE(test::queryOne(a, "SELECT count(*) FROM analysis"), QStringLiteral("0"));
    }

    void mfuRowFromTheLoggedThroughput()
    {
        // A 1e9-parameter model on two GPUs of 100 TFLOP/s (the user's peak): MFU = 6·N × tokens/s / (2 × 1e14),
        // per logged value, so the row's median is the hand computation on the tokens/s row's median.
        QTemporaryDir dir;
        Generated base, cand;
        cand.seed = 2;
        cand.stepMean = 0.8;
        const std::string a = writeGenerated(dir, QStringLiteral("a.runlens"), base);
        const std::string b = writeGenerated(dir, QStringLiteral("b.runlens"), cand);
        QVERIFY(!a.empty() && !b.empty());
        for (const std::string& path : {a, b}) {
            auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
            QVERIFY(db);
            QVERIFY(store::storeRunSettings(**db, {{kSettingModelParams, "1e9"}, {kSettingPeakTflops, "100"}}));
        }
        const std::vector<RunSummary> runs{summarize(a), summarize(b)};
        const auto rows = compareRuns(runs);
        const CompareRow* mfu = rowOf(rows, "mfu");
        const CompareRow* tokens = rowOf(rows, "tokens_per_s");
        QVERIFY(mfu && tokens);
        for (size_t r = 0; r < 2; ++r) {
            const double hand = 100 * 6e9 * tokens->values[r] / (2 * 100e12);
            QVERIFY2(std::fabs(mfu->values[r] - hand) < 1e-6 * hand,
                     qPrintable(QStringLiteral("%1 vs %2").arg(mfu->values[r]).arg(hand)));
        }
        QCOMPARE(mfu->unit, std::string("%"));
        QCOMPARE(mfu->cells[0].verdict, std::string("higher")); // 20 % shorter steps, the same tokens per step
        QVERIFY(runs[1].mfuText.starts_with("MFU "));
        // The MFU line follows the throughput's moments.
        QCOMPARE(runs[0].series.at("mfu").tS.size(), runs[0].series.at("tokens_per_s").tS.size());
    }

    void alignByStep()
    {
        RunSummary run;
        QVERIFY(std::isnan(stepsAt(run, 1.0)));
        run.stepEndsS = {2, 4, 8};
        QCOMPARE(stepsAt(run, 0), 0.0);
        QCOMPARE(stepsAt(run, 1), 0.5);  // half of the first step (from the window's start)
        QCOMPARE(stepsAt(run, 4), 2.0);  // at the end of the second
        QCOMPARE(stepsAt(run, 6), 2.5);  // half of the third
        QCOMPARE(stepsAt(run, 10), 3.5); // after the last: at the last step's length
    }

    void tinySignificantDriftIsNoChange()
    {
        // Steps of 1.000 ± 0.001 s against 0.995 ± 0.001 s: the test finds the 0.5 % difference beyond doubt, but it
        // is under the minimum effect: no significant change, said so. A 3 % one is called.
        QTemporaryDir dir;
        Generated base, tiny, real;
        base.stepSd = tiny.stepSd = real.stepSd = 0.001;
        tiny.stepMean = 0.995;
        tiny.seed = real.seed = 7;
        real.stepMean = 0.97;
        const std::string a = writeGenerated(dir, QStringLiteral("a.runlens"), base);
        const std::string b = writeGenerated(dir, QStringLiteral("b.runlens"), tiny);
        const std::string c = writeGenerated(dir, QStringLiteral("c.runlens"), real);
        const auto rows = compareRuns({summarize(a), summarize(b), summarize(c)});
        const CompareRow* r = rowOf(rows, "step_time_median");
        QVERIFY(r);
        QVERIFY2(r->cells[0].p < kCompareAlpha, qPrintable(QString::number(r->cells[0].p)));
        QCOMPARE(QString::fromStdString(r->cells[0].verdict), QStringLiteral("no significant change (under 1 %)"));
        QCOMPARE(QString::fromStdString(r->cells[1].verdict), QStringLiteral("faster"));
    }

    void sameDistributionNoChange()
    {
        QTemporaryDir dir;
        Generated base, cand;
        cand.seed = 7;
        const std::string a = writeGenerated(dir, QStringLiteral("a.runlens"), base);
        const std::string b = writeGenerated(dir, QStringLiteral("b.runlens"), cand);
        const auto rows = compareRuns({summarize(a), summarize(b)});
        for (const char* id : {"step_time_median", "sm_active", "gpu_util", "iterations_per_s"}) {
            const CompareRow* r = rowOf(rows, id);
            QVERIFY2(r, id);
            QVERIFY2(r->cells[0].verdict == "no significant change",
                     qPrintable(QString::fromStdString(r->cells[0].verdict) + QLatin1Char(' ') + QLatin1String(id)));
        }
    }

    void largerStepsScaleToTheBaseline()
    {
        // Four times the tokens per step in 2.4 times the time: 0.6 s per baseline-sized step.
        QTemporaryDir dir;
        Generated base, cand;
        cand.seed = 3;
        cand.stepMean = 2.4;
        cand.stepSd = 0.1;
        cand.tokensPerStep = 4 * base.tokensPerStep;
        const std::string a = writeGenerated(dir, QStringLiteral("a.runlens"), base);
        const std::string b = writeGenerated(dir, QStringLiteral("b.runlens"), cand);
        const auto rows = compareRuns({summarize(a), summarize(b)});
        const CompareRow* step = rowOf(rows, "step_time_median");
        const CompareRow* scaled = rowOf(rows, "step_time_base_size");
        QVERIFY(step && scaled);
        QCOMPARE(step->cells[0].verdict, std::string("slower"));
        QVERIFY2(std::fabs(scaled->values[1] - 0.6) < 0.03, qPrintable(QString::number(scaled->values[1])));
        QCOMPARE(scaled->cells[0].verdict, std::string("faster"));
    }

    void cliErrors()
    {
        QTemporaryDir dir;
        const std::string a = writeGenerated(dir, QStringLiteral("a.runlens"), Generated{});
        const Run missing = cli({QStringLiteral("compare"), qs(a), dir.filePath(QStringLiteral("nope.runlens"))});
        EXPECT_EXIT(missing, 2);
        EXPECT_MATCH(missing.err, QStringLiteral("nope.runlens"));
        const Run empty =
            cli({QStringLiteral("compare"), qs(a), qs(a), QStringLiteral("--window-b"), QStringLiteral("+2h..+3h")});
        EXPECT_EXIT(empty, 2);
        EXPECT_MATCH(empty.err, QStringLiteral("empty"));
        const Run one = cli({QStringLiteral("compare"), qs(a)});
        EXPECT_EXIT(one, 2);
        // Two windows of one run, as offsets: a table with a verdict per step row.
        const Run two = cli({QStringLiteral("compare"), qs(a), qs(a), QStringLiteral("--window-a"),
                             QStringLiteral("..+300s"), QStringLiteral("--window-b"), QStringLiteral("+300s..")});
        EXPECT_EXIT(two, 0);
        EXPECT_MATCH(two.out, QStringLiteral("^step time \\(median\\) .*no significant change \\(MWU p="));
    }

    void demoZero3Tuned()
    {
        // The demo's reference case and its tuned configuration, a quarter of an hour each: 50 → 40 s steps, SM
        // activity about 21 → 28 %.
        QTemporaryDir dir;
        for (const char* scenario : {"zero3", "zero3-tuned"}) {
            const Run d = cli({QStringLiteral("demo"), QStringLiteral("--no-gui"), QStringLiteral("--scenario"),
                               QLatin1String(scenario), QStringLiteral("--hours"), QStringLiteral("0.25"),
                               QStringLiteral("-o"), dir.filePath(QLatin1String(scenario))});
            EXPECT_EXIT(d, 0);
        }
        const Run r = cli({QStringLiteral("compare"), dir.filePath(QStringLiteral("zero3/demo.runlens")),
                           dir.filePath(QStringLiteral("zero3-tuned/demo.runlens")), QStringLiteral("--json")});
        EXPECT_EXIT(r, 0);
        const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonObject step = jsonRow(out, QStringLiteral("step_time_median"));
        QVERIFY2(std::fabs(value(step, 0) - 50) < 1 && std::fabs(value(step, 1) - 40) < 1, qPrintable(r.out));
        QVERIFY(std::fabs(cell(step).value(QStringLiteral("delta_pct")).toDouble() + 20) < 2);
        QCOMPARE(cell(step).value(QStringLiteral("verdict")).toString(), QStringLiteral("faster"));
        const QJsonObject sm = jsonRow(out, QStringLiteral("sm_active"));
        QVERIFY2(std::fabs(value(sm, 0) - 21) < 2 && std::fabs(value(sm, 1) - 28) < 2, qPrintable(r.out));
        QCOMPARE(cell(sm).value(QStringLiteral("verdict")).toString(), QStringLiteral("higher"));
        // The interconnect carries more (6.0 → 7.5 GiB/s per port in the reference case), COMM_BOUND saves less of
        // the window, and the ZeRO-3 parameter wait (fetch_sub_module) takes a smaller share of the stacks.
        // Per port and direction about 6.0 and 7.5 GiB/s (the demo writes them; checkpoint minutes pull the means
        // down a little).
        const QJsonObject ib = jsonRow(out, QStringLiteral("link_per_port"));
        constexpr double kGiB = 1024.0 * 1024 * 1024;
        QVERIFY2(std::fabs(value(ib, 0) / kGiB - 6.0) < 0.3 && std::fabs(value(ib, 1) / kGiB - 7.5) < 0.4,
                 qPrintable(r.out));
        QCOMPARE(cell(ib).value(QStringLiteral("verdict")).toString(), QStringLiteral("higher"));
        const QJsonObject comm = jsonRow(out, QStringLiteral("finding_COMM_BOUND_saving_pct"));
        QVERIFY2(value(comm, 1) < value(comm, 0), qPrintable(r.out));
        // The same model, faster: MFU up with the throughput; the loss unchanged against steps, better against time.
        const QJsonObject mfu = jsonRow(out, QStringLiteral("mfu"));
        QVERIFY2(value(mfu, 1) > value(mfu, 0) && value(mfu, 0) > 0, qPrintable(r.out));
        const QJsonObject loss =
            out.value(QStringLiteral("candidates")).toArray().at(0).toObject().value(QStringLiteral("loss")).toObject();
        QCOMPARE(loss.value(QStringLiteral("verdict")).toString(), QStringLiteral("unchanged"));
        QCOMPARE(loss.value(QStringLiteral("time_verdict")).toString(), QStringLiteral("better"));
        const QJsonObject versus = out.value(QStringLiteral("candidates")).toArray().at(0).toObject();
        bool fetchShrank = false;
        for (const auto& f : versus.value(QStringLiteral("flame")).toObject().value(QStringLiteral("shrank")).toArray())
            fetchShrank =
                fetchShrank || f[QStringLiteral("frame")].toString().startsWith(QLatin1String("fetch_sub_module"));
        QVERIFY2(fetchShrank, qPrintable(r.out));
        bool commStill = false;
        for (const auto& f : versus.value(QStringLiteral("findings")).toArray())
            commStill =
                commStill || (f[QStringLiteral("rule")].toString() == QLatin1String("COMM_BOUND") &&
                              f[QStringLiteral("status")].toString() == QLatin1String("still") &&
                              f[QStringLiteral("saving_b_s")].toDouble() < f[QStringLiteral("saving_a_s")].toDouble());
        QVERIFY2(commStill, qPrintable(r.out));
    }

    void spinPairBeforeAfter()
    {
        const SpinPair* compared = spinPair();
        if (!compared) QSKIP("fixtures absent");
        QVERIFY(!compared->before.isEmpty() && !compared->after.isEmpty());
        const QString &pair = compared->pair, &before = compared->before, &after = compared->after;
        const QTemporaryDir& dir = m_spinDir;
        const Run& r = compared->compared;
        EXPECT_EXIT(r, 0);
        const QJsonObject& out = compared->out;
        const auto truthMedian = [](const QString& runDir) { // rank 0's steps
            std::vector<double> s;
            for (const test::TruthStep& step : test::readTruth(runDir).steps)
                if (step.rank == 0) s.push_back(step.seconds);
            return test::median(s);
        };
        const double truth =
            1 - truthMedian(pair + QStringLiteral("/after")) / truthMedian(pair + QStringLiteral("/before"));
        const QJsonObject step = jsonRow(out, QStringLiteral("step_time_median"));
        const double measured = -cell(step).value(QStringLiteral("delta_pct")).toDouble(NAN) / 100;
        QVERIFY2(std::fabs(measured - truth) < 0.02,
                 qPrintable(QStringLiteral("%1 vs truth %2").arg(measured).arg(truth)));
        QCOMPARE(cell(step).value(QStringLiteral("verdict")).toString(), QStringLiteral("faster"));
        const QJsonObject sm = jsonRow(out, QStringLiteral("sm_active"));
        QVERIFY2(value(sm, 1) > value(sm, 0), qPrintable(r.out));
        QCOMPARE(cell(sm).value(QStringLiteral("verdict")).toString(), QStringLiteral("higher"));
        const QJsonObject util = jsonRow(out, QStringLiteral("gpu_util"));
        // The illusion on both sides: the GPUs read busy while they train, before and after, and the comparison
        // says the utilization did not change (the checkpoints and idle seconds have rows of their own).
        QVERIFY2(
            cell(util).value(QStringLiteral("verdict")).toString().startsWith(QLatin1String("no significant change")) &&
                value(util, 0) > 90 && value(util, 1) > 90,
            QJsonDocument(util).toJson().constData());
        // Checkpoints unchanged (truth: two in each run): the checkpoint finding is still there on both sides; no
        // finding of the baseline is gone. The stacks of both windows are compared, each side as shares of its own.
        const QJsonObject versus = out.value(QStringLiteral("candidates")).toArray().at(0).toObject();
        bool ckptStill = false;
        for (const auto& f : versus.value(QStringLiteral("findings")).toArray()) {
            QVERIFY(f[QStringLiteral("status")].toString() != QLatin1String("gone"));
            ckptStill = ckptStill || (f[QStringLiteral("rule")].toString() == QLatin1String("CKPT_GAP") &&
                                      f[QStringLiteral("status")].toString() == QLatin1String("still"));
        }
        QVERIFY(ckptStill);
        const QJsonObject flame = versus.value(QStringLiteral("flame")).toObject();
        QVERIFY(flame.value(QStringLiteral("samples_a")).toInteger() > 0 &&
                flame.value(QStringLiteral("samples_b")).toInteger() > 0);
        QVERIFY(!flame.value(QStringLiteral("grew")).toArray().isEmpty() ||
                !flame.value(QStringLiteral("shrank")).toArray().isEmpty());
        // The text output lists both.
        const Run text = cli({QStringLiteral("compare"), before, after});
        EXPECT_EXIT(text, 0);
        QVERIFY(text.out.contains(QStringLiteral("Findings (baseline → candidate")) &&
                text.out.contains(QStringLiteral("Stack samples (")));

        // The same as a document: the metric rows with their verdicts, the loss charts, the metric lines, the
        // findings and stacks; as PNG pages too; and as a section of the candidate's report.
        const QString pdf = dir.filePath(QStringLiteral("compare.pdf"));
        const Run doc = cli({QStringLiteral("compare"), before, after, QStringLiteral("-o"), pdf});
        EXPECT_EXIT(doc, 0);
        EXPECT_MATCH(doc.err, QStringLiteral("^\\d+ pages → "));
        QVERIFY(doc.out.isEmpty()); // the document instead of the text
        const auto pdfText = [](const QString& file) {
            QProcess p;
            p.start(QStringLiteral("pdftotext"), {file, QStringLiteral("-")});
            p.waitForFinished(60'000);
            return QString::fromUtf8(p.readAllStandardOutput());
        };
        const bool canRead = !QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty();
        if (canRead) {
            const QString t = pdfText(pdf);
            for (const char* want :
                 {"Comparison: before.runlens vs after.runlens", "step time (median)", "faster (MWU p<0.001)", "Loss",
                  "loss against steps: unchanged", "Over the windows, aligned by time", "SM activity while training",
                  "Findings", "CKPT_GAP", "Stacks"})
                QVERIFY2(t.contains(QString::fromUtf8(want)), want);
        }
        const QString pages = dir.filePath(QStringLiteral("compare-pages"));
        const Run png = cli({QStringLiteral("compare"), before, after, QStringLiteral("--format"),
                             QStringLiteral("png"), QStringLiteral("--dpi"), QStringLiteral("50"),
                             QStringLiteral("--align"), QStringLiteral("step"), QStringLiteral("-o"), pages});
        EXPECT_EXIT(png, 0);
        QVERIFY(QDir(pages).entryList({QStringLiteral("page-*.png")}).size() >= 3);
        const Run badAlign = cli({QStringLiteral("compare"), before, after, QStringLiteral("--align"),
                                  QStringLiteral("rank"), QStringLiteral("-o"), pdf});
        EXPECT_EXIT(badAlign, 2);
        const QString report = dir.filePath(QStringLiteral("after-report.pdf"));
        const Run withSection =
            cli({QStringLiteral("report"), after, QStringLiteral("--compare"), before, QStringLiteral("-o"), report});
        EXPECT_EXIT(withSection, 0);
        if (canRead) {
            const QString t = pdfText(report);
            QVERIFY(t.contains(QStringLiteral("Compared with before.runlens")) &&
                    t.contains(QStringLiteral("faster (MWU p<0.001)")));
        }
    }

    void glooSmallTwoPhases()
    {
        const QString root = test::fixturesDir();
        if (root.isEmpty()) QSKIP("fixtures absent");
        const QString folder = root + QStringLiteral("/h200-gloo-small");
        QTemporaryDir dir;
        const QString run = importFixture(dir, folder, QStringLiteral("gloo"));
        QVERIFY(!run.isEmpty());
        // Rank 0's phases, each ending at its phase_end event.
        const test::Truth truth = test::readTruth(folder);
        const test::TruthPhase* inputstall = truth.phase("inputstall");
        const test::TruthPhase* baseline = truth.phase("baseline");
        const test::TruthPhase* accum = truth.phase("accum");
        QVERIFY(inputstall && baseline && accum && inputstall->note.empty() && baseline->note.empty() &&
                accum->note.empty());
        const auto perMicroStep = [](const test::TruthPhase& p) {
            std::vector<double> s;
            for (double seconds : p.stepSeconds)
                s.push_back(seconds / std::max(p.microSteps, 1));
            return test::median(s);
        };
        const auto epoch = [](int64_t ns) { return QString::number(static_cast<double>(ns) / 1e9, 'f', 3); };
        const Run r =
            cli({QStringLiteral("compare"), run, run, QStringLiteral("--json"), QStringLiteral("--window-a"),
                 epoch(inputstall->endNs) + QStringLiteral("..") + epoch(baseline->endNs), QStringLiteral("--window-b"),
                 epoch(baseline->endNs) + QStringLiteral("..") + epoch(accum->endNs)});
        EXPECT_EXIT(r, 0);
        const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonObject scaled = jsonRow(out, QStringLiteral("step_time_base_size"));
        QVERIFY2(!scaled.isEmpty(), qPrintable(r.out));
        const double truthBase = perMicroStep(*baseline);
        const double truthAccum = perMicroStep(*accum);
        QVERIFY2(std::fabs(value(scaled, 0) / truthBase - 1) < 0.10,
                 qPrintable(QStringLiteral("%1 vs %2").arg(value(scaled, 0)).arg(truthBase)));
        QVERIFY2(std::fabs(value(scaled, 1) / truthAccum - 1) < 0.10,
                 qPrintable(QStringLiteral("%1 vs %2").arg(value(scaled, 1)).arg(truthAccum)));
        QCOMPARE(cell(scaled).value(QStringLiteral("verdict")).toString(), QStringLiteral("faster"));
    }
    // A synthetic loss curve: loss(tokens) = offset + 2 + 3 exp(−tokens / (400 × 4096)) + noise, `steps` steps of
    // `tokensPerStep` tokens taking `stepS` seconds each, a point per step.
    static LossCurve syntheticLoss(size_t steps, double stepS, double tokensPerStep, double offset, unsigned seed)
    {
        std::mt19937 rng(seed);
        std::normal_distribution<double> noise(0, 0.005);
        LossCurve c;
        c.sizeUnit = "tokens";
        for (size_t i = 0; i < steps; ++i) {
            const double tokens = tokensPerStep * static_cast<double>(i + 1);
            c.step.push_back(static_cast<double>(i + 1));
            c.timeS.push_back(stepS * static_cast<double>(i));
            c.tokens.push_back(tokens);
            c.loss.push_back(offset + 2 + 3 * std::exp(-tokens / (400 * 4096.0)) + noise(rng));
        }
        return c;
    }

    void lossSameCurveFasterSteps()
    {
        const LossCurve base = syntheticLoss(1000, 1.0, 4096, 0, 1), cand = syntheticLoss(1000, 0.75, 4096, 0, 2);
        const LossComparison l = compareLoss(base, cand);
        QCOMPARE(l.axis, std::string("step"));
        QCOMPARE(l.verdict, std::string("unchanged"));
        QVERIFY2(std::fabs(l.medianDiff) <= l.noise,
                 qPrintable(QStringLiteral("%1 vs %2").arg(l.medianDiff).arg(l.noise)));
        QVERIFY2(std::fabs(l.timeRatio - 0.75) < 0.05, qPrintable(QString::number(l.timeRatio)));
        QCOMPARE(l.timeVerdict, std::string("better"));
        // And the other way round: slower.
        const LossComparison back = compareLoss(cand, base);
        QCOMPARE(back.verdict, std::string("unchanged"));
        QCOMPARE(back.timeVerdict, std::string("worse"));
        // The same run against itself: same.
        QCOMPARE(compareLoss(base, base).timeVerdict, std::string("same"));
    }

    void lossShiftedCurve()
    {
        const LossCurve base = syntheticLoss(800, 1.0, 4096, 0, 3);
        const LossComparison up = compareLoss(base, syntheticLoss(800, 1.0, 4096, 0.1, 4));
        QCOMPARE(up.verdict, std::string("higher"));
        QVERIFY2(std::fabs(up.medianDiff - 0.1) < 0.01, qPrintable(QString::number(up.medianDiff)));
        QCOMPARE(up.timeVerdict, std::string("worse")); // it reaches the common level later (or at its end)
        const LossComparison down = compareLoss(base, syntheticLoss(800, 1.0, 4096, -0.1, 5));
        QCOMPARE(down.verdict, std::string("lower"));
        QVERIFY2(std::fabs(down.medianDiff + 0.1) < 0.01, qPrintable(QString::number(down.medianDiff)));
        QCOMPARE(down.timeVerdict, std::string("better"));
        // Too short a curve: no verdict.
        const LossComparison none = compareLoss(base, syntheticLoss(3, 1.0, 4096, 0, 6));
        QCOMPARE(none.verdict, std::string("n/a"));
        QCOMPARE(none.timeVerdict, std::string("n/a"));
    }

    void lossGradientAccumulationAgainstTokens()
    {
        // The candidate accumulates 4 micro-batches per step: 4× the tokens per step, a quarter of the steps, the
        // same loss against tokens.
        const LossCurve base = syntheticLoss(1000, 0.5, 4096, 0, 7), cand = syntheticLoss(250, 1.8, 4 * 4096, 0, 8);
        const LossComparison l = compareLoss(base, cand);
        QCOMPARE(l.axis, std::string("tokens"));
        QCOMPARE(l.verdict, std::string("unchanged"));
        QVERIFY(l.xTo > l.xFrom && l.points > 900);
        // Against steps the candidate would look far lower: without sizes the axis stays steps.
        LossCurve unsizedBase = base, unsizedCand = cand;
        unsizedBase.sizeUnit = unsizedCand.sizeUnit = "";
        const LossComparison steps = compareLoss(unsizedBase, unsizedCand);
        QCOMPARE(steps.axis, std::string("step"));
        QCOMPARE(steps.verdict, std::string("lower"));
        // Same sizes within 10 %: steps.
        QCOMPARE(compareLoss(base, syntheticLoss(1000, 0.5, 4096 * 1.05, 0, 9)).axis, std::string("step"));
    }

    void lossSpinPairBeforeAfter()
    {
        const SpinPair* compared = spinPair();
        if (!compared) QSKIP("fixtures absent");
        QVERIFY(!compared->before.isEmpty() && !compared->after.isEmpty());
        // The README: the same job's loss, unchanged against steps and better against wall time.
        EXPECT_EXIT(compared->compared, 0);
        const QJsonObject loss = compared->out.value(QStringLiteral("candidates"))
                                     .toArray()
                                     .at(0)
                                     .toObject()
                                     .value(QStringLiteral("loss"))
                                     .toObject();
        QCOMPARE(loss.value(QStringLiteral("axis")).toString(), QStringLiteral("step"));
        QCOMPARE(loss.value(QStringLiteral("verdict")).toString(), QStringLiteral("unchanged"));
        QCOMPARE(loss.value(QStringLiteral("time_verdict")).toString(), QStringLiteral("better"));
        const double ratio = loss.value(QStringLiteral("time_ratio")).toDouble(NAN);
        QVERIFY2(ratio > 0.6 && ratio < 0.9, QJsonDocument(loss).toJson().constData());
        const Run text = cli({QStringLiteral("compare"), compared->before, compared->after});
        EXPECT_EXIT(text, 0);
        QVERIFY2(text.out.contains(QStringLiteral("Loss: against steps: unchanged")) &&
                     text.out.contains(QStringLiteral("(better")),
                 qPrintable(text.out));
    }

private:
    // The h200-spin-pair fixture's runs compared, imported once for the tests that read them; null when the fixtures
    // are absent.
    const SpinPair* spinPair()
    {
        if (!m_spinPair) {
            const QString root = test::fixturesDir();
            if (root.isEmpty()) return nullptr;
            m_spinPair = compareSpinPair(m_spinDir, root + QStringLiteral("/h200-spin-pair"));
        }
        return &*m_spinPair;
    }

    QTemporaryDir m_spinDir;
    std::optional<SpinPair> m_spinPair;
};

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
