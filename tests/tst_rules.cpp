// Diagnosis rules: episodes on a grid (the parameters are in tst_rule_params), and CKPT_GAP on generated runs (periodic
// checkpoint stalls found with their period and cost; stalls without writes, and writes without stalls, are not
// checkpoint gaps) and on the real h200-gloo-small run against its ground truth.

#include "analysis/rules/ckpt_gap_rule.h"
#include "analysis/rules/comm_bound_rule.h"
#include "analysis/rules/hang_rule.h"
#include "analysis/rules/host_stall_rule.h"
#include "analysis/rules/input_stall_rule.h"
#include "analysis/rules/low_sm_eff_rule.h"
#include "analysis/rules/run_analysis.h"
#include "analysis/rules/slot_values.h"
#include "analysis/rules/step_detection.h"
#include "analysis/rules/straggler_rule.h"
#include "analysis/rules/throttle_rule.h"
#include "analysis/store/run_database.h"
#include "tests/rules_support.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <bit>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>

using namespace runlens;
using namespace runlens::analysis;

using namespace runlens::test::rules;

class TestRules : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void episodesJoinShortGaps();
    void medianLeavingOneOut();
    void gridSeriesKeepEveryValue_data();
    void gridSeriesKeepEveryValue();
    void checkpointGapsPeriodic();
    void noCheckpointGapWithoutBoth_data();
    void noCheckpointGapWithoutBoth();
    void fixtureCheckpoints();
    void hangFound_data();
    void hangFound();
    void fixtureHang();
    void inputStallFromHostWork();
    void fixtureInputStall();
    void commBoundFromTheIllusion();
    void fixtureCommBound();
    void noCommBoundWithoutCommunication();
    void lowSmEfficiency();
    void hostStallNamesTheBlockingFrame();
    void lowSmEfficiencyLaunchBound();
    void shiftAndResample();
    void fixtureBaselineIsFlagged();
};

void TestRules::episodesJoinShortGaps()
{
    TimeGrid grid{kStart, kSecond, 20};
    //                            0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19
    const std::vector<uint8_t> f{0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1};
    const auto eps = episodesOf(f, grid, 2);
    QCOMPARE(eps.size(), size_t(3)); // 1–5 (a gap of 2 joined), 9 (3 apart: not), 18–19
    QCOMPARE(eps[0].first, size_t(1));
    QCOMPARE(eps[0].last, size_t(5));
    QCOMPARE(eps[1].first, size_t(9));
    QCOMPARE(eps[1].last, size_t(9));
    QCOMPARE(eps[2].last, size_t(19));
    QCOMPARE(eps[2].endNs, kStart + 20 * kSecond);
    QCOMPARE(episodesOf(f, grid, 0).size(), size_t(4)); // 1–2, 5, 9, 18–19
    QCOMPARE(quantile({3, 1, NAN, 2}, 0.5), 2.0);
}

// The median with one value left out is quantile(rest, 0.5) exactly, with ties, for every value left out and every
// size (none, one, two …).
void TestRules::medianLeavingOneOut()
{
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<int> few(0, 5); // few distinct values: many ties
    for (int round = 0; round < 200; ++round)
        for (size_t n = 0; n <= 12; ++n) {
            std::vector<double> values(n);
            for (double& v : values)
                v = round % 2 ? 1000 + 10 * few(rng) : std::ldexp(static_cast<double>(rng() >> 11), -53);
            std::vector<double> scratch = values;
            const MedianLeavingOneOut median(scratch);
            QCOMPARE(std::bit_cast<uint64_t>(median.all()), std::bit_cast<uint64_t>(quantile(values, 0.5)));
            for (size_t j = 0; j < n; ++j) {
                std::vector<double> rest = values;
                rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(j));
                QCOMPARE(std::bit_cast<uint64_t>(median.without(values[j])),
                         std::bit_cast<uint64_t>(quantile(rest, 0.5)));
            }
        }
}

// The rules' compact grid series give back every value to the bit, whatever the values are, and take less room
// where collectors print short decimals.
void TestRules::gridSeriesKeepEveryValue_data()
{
    QTest::addColumn<std::vector<double>>("values");
    QTest::addColumn<bool>("smaller"); // at most a third of the doubles' bytes
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> percent(0, 100), milli(0, 1000);
    std::uniform_real_distribution<double> any(-1e6, 1e6);
    const size_t n = 3 * kSlotBlock + 17; // several blocks and a short last one
    std::vector<double> util(n), sm(n), power(n), noisy(n), gaps(n, NAN), hz(n);
    for (size_t i = 0; i < n; ++i) {
        util[i] = i % 50 == 7 ? NAN : percent(rng);
        sm[i] = milli(rng) / 1000.0;
        power[i] = std::stod(fmt::format("{:.2f}", 300 + percent(rng) + percent(rng) / 100.0)); // as printed
        noisy[i] = any(rng);
        hz[i] = 1'980'000'000.0 - 15'000'000.0 * (i % 3);
    }
    for (size_t i = kSlotBlock + 5; i < n; i += 997)
        gaps[i] = 0.5;
    std::vector<double> odd = sm;
    odd[kSlotBlock + 1] = -0.0; // a signed zero, an infinity and a sum that is not a short decimal
    odd[2 * kSlotBlock + 2] = std::numeric_limits<double>::infinity();
    odd[3] = 0.1 + 0.2;
    QTest::newRow("utilization in whole percent, with gaps") << util << true;
    QTest::newRow("SM activity in thousandths") << sm << true;
    QTest::newRow("power in hundredths of a watt") << power << true;
    QTest::newRow("clock in Hz") << hz << true;
    QTest::newRow("mostly empty") << gaps << true;
    QTest::newRow("no short decimals") << noisy << false;
    QTest::newRow("odd values among short decimals") << odd << false;
    QTest::newRow("empty") << std::vector<double>{} << false;
}

void TestRules::gridSeriesKeepEveryValue()
{
    QFETCH(std::vector<double>, values);
    QFETCH(bool, smaller);
    const SlotValues compact(values);
    QCOMPARE(compact.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        const double got = compact[i];
        if (std::isnan(values[i])) {
            QVERIFY2(std::isnan(got), qPrintable(QStringLiteral("slot %1").arg(i)));
            continue;
        }
        QVERIFY2(
            std::bit_cast<uint64_t>(got) == std::bit_cast<uint64_t>(values[i]),
            qPrintable(QStringLiteral("slot %1: %2 became %3").arg(i).arg(values[i], 0, 'g', 17).arg(got, 0, 'g', 17)));
    }
    const std::vector<double> back = compact.toVector();
    QCOMPARE(back.size(), values.size());
    QCOMPARE(std::count_if(compact.begin(), compact.end(), [](double v) { return std::isfinite(v); }),
             std::count_if(values.begin(), values.end(), [](double v) { return std::isfinite(v); }));
    if (smaller)
        QVERIFY2(compact.bytes() * 3 <= values.size() * sizeof(double), qPrintable(QString::number(compact.bytes())));
}

void TestRules::checkpointGapsPeriodic()
{
    // SM activity 0.6 ± noise; every 300 s from 150 s a 20 s checkpoint: every GPU at 0, 1.5 GB/s written.
    std::mt19937_64 rng(5);
    std::normal_distribution<double> noise(0, 0.03);
    auto inCkpt = [](int64_t s) { return s >= 150 && (s - 150) % 300 < 20; };
    Synthetic run;
    run.sm = [&](int, int64_t s) { return inCkpt(s) ? 0.0 : 0.6 + noise(rng); };
    run.util = [&](int, int64_t s) { return inCkpt(s) ? 0.0 : 99.0; };
    run.write = [&](int64_t s) { return inCkpt(s) ? 1.5e9 : 2e6; };
    QTemporaryDir dir;
    Finding f;
    oneFinding(writeRun(dir, run).get(), &ckptGaps, "CKPT_GAP", f);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(f.nodes, std::vector<std::string>{"node0"});
    QCOMPARE(f.gpus.size(), size_t(2));
    QCOMPARE(f.episodes.size(), size_t(12)); // 150, 450, ..., 3450
    for (size_t k = 0; k < f.episodes.size(); ++k) {
        QCOMPARE(f.episodes[k].startNs, kStart + (150 + 300 * static_cast<int64_t>(k)) * kSecond);
        QCOMPARE(f.episodes[k].endNs, kStart + (170 + 300 * static_cast<int64_t>(k)) * kSecond);
    }
    QVERIFY(f.evidence.value(QStringLiteral("periodic")).toBool());
    QCOMPARE(f.evidence.value(QStringLiteral("period_s")).toDouble(), 300.0);
    QCOMPARE(f.evidence.value(QStringLiteral("mean_stall_s")).toDouble(), 20.0);
    const QJsonArray events = f.evidence.value(QStringLiteral("events")).toArray();
    QCOMPARE(events.size(), 12);
    QCOMPARE(events[0].toObject().value(QStringLiteral("bytes_written")).toDouble(), 20 * 1.5e9);
    QCOMPARE(f.savingS, 240.0);
    QVERIFY(std::abs(f.impact - 240.0 / 3600.0) < 1e-9);
    QCOMPARE(f.severity, std::string("critical")); // 6.7 % ≥ 5 %
    QVERIFY(f.recommendation.find("async") != std::string::npos);
}

void TestRules::noCheckpointGapWithoutBoth_data()
{
    QTest::addColumn<bool>("stalls");
    QTest::addColumn<bool>("writes");
    QTest::newRow("stalls without writes (an input stall)") << true << false;
    QTest::newRow("writes without stalls (an asynchronous checkpoint)") << false << true;
    QTest::newRow("a small periodic log write during stalls") << true << true;
}

void TestRules::noCheckpointGapWithoutBoth()
{
    QFETCH(bool, stalls);
    QFETCH(bool, writes);
    const bool smallWrites = stalls && writes;
    auto inEvent = [](int64_t s) { return s >= 150 && (s - 150) % 300 < 20; };
    Synthetic run;
    run.sm = [&](int, int64_t s) { return stalls && inEvent(s) ? 0.0 : 0.6; };
    run.util = [&](int, int64_t s) { return stalls && inEvent(s) ? 0.0 : 99.0; };
    // The small write: 60 MB/s (under 100 MB/s) while the GPUs stall.
    run.write = [&](int64_t s) { return writes && inEvent(s) ? (smallWrites ? 60e6 : 1.5e9) : 2e6; };
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    QVERIFY(db);
    QCOMPARE(ckptGaps(*db).size(), size_t(0));
}

void TestRules::fixtureCheckpoints()
{
    const QString base = test::fixtureRun("h200-gloo-small");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    // The metrics only (no stacks): the checkpoints come from GPU stalls and disk writes.
    QTemporaryDir dir;
    auto db = importFixture(dir, base);
    QVERIFY(db);
    // Ground truth, read by the test only.
    std::vector<std::pair<int64_t, int64_t>> truth;
    const auto checkpoints =
        truthEvents(base + QStringLiteral("truth/events-rank0.jsonl"), QStringLiteral("checkpoint"));
    QVERIFY(checkpoints);
    for (const QJsonObject& o : *checkpoints)
        truth.emplace_back(truthNs(o, "ts_ns"), truthNs(o, "end_ns"));
    QCOMPARE(truth.size(), size_t(3));
    const auto found = ckptGaps(*db);
    QCOMPARE(found.size(), size_t(1));
    const Finding& f = found[0];
    // Exactly the three checkpoints, each boundary within 2 s; nothing claimed elsewhere.
    QCOMPARE(f.episodes.size(), truth.size());
    for (size_t k = 0; k < truth.size(); ++k) {
        const double startOff = std::abs(static_cast<double>(f.episodes[k].startNs - truth[k].first)) / 1e9;
        const double endOff = std::abs(static_cast<double>(f.episodes[k].endNs - truth[k].second)) / 1e9;
        QVERIFY2(startOff <= 2 && endOff <= 2,
                 qPrintable(
                     QStringLiteral("checkpoint %1: start off by %2 s, end by %3 s").arg(k).arg(startOff).arg(endOff)));
    }
    QVERIFY(f.evidence.value(QStringLiteral("periodic")).toBool());
    const double period = f.evidence.value(QStringLiteral("period_s")).toDouble();
    const double truePeriod = static_cast<double>(truth[2].first - truth[0].first) / 2e9;
    QVERIFY2(std::abs(period - truePeriod) <= 2, qPrintable(QString::number(period)));
    // About 1.7 GB per checkpoint (the README of the fixture).
    for (const auto& e : f.evidence.value(QStringLiteral("events")).toArray()) {
        const double gb = e.toObject().value(QStringLiteral("bytes_written")).toDouble() / 1e9;
        QVERIFY2(gb > 1.2 && gb < 2.5, qPrintable(QString::number(gb)));
    }
}

void TestRules::hangFound_data()
{
    QTest::addColumn<double>("spinSm");   // SM activity while "spinning"
    QTest::addColumn<int>("spinSeconds"); // how long
    QTest::addColumn<int>("expected");    // findings
    QTest::newRow("60 s at 100 % with SM 0: a hang") << 0.0 << 60 << 1;
    QTest::newRow("busy: 100 % with SM 0.5") << 0.5 << 60 << 0;
    QTest::newRow("a 10 s spin: a slow collective, not a hang") << 0.0 << 10 << 0;
}

void TestRules::hangFound()
{
    QFETCH(double, spinSm);
    QFETCH(int, spinSeconds);
    QFETCH(int, expected);
    // 10 min of SM activity 0.45 at 99 %; from 500 s both GPUs spin (GPU 1 joins 2 s later) until the end.
    Synthetic run;
    run.seconds = 500 + spinSeconds;
    run.sm = [&](int g, int64_t s) { return s >= 500 + 2 * g ? spinSm : 0.45; };
    run.util = [](int, int64_t) { return 100.0; };
    run.write = [](int64_t) { return 1e6; };
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    QVERIFY(db);
    const auto found = runRule(*db, &hangRule);
    QCOMPARE(static_cast<int>(found.size()), expected);
    if (!expected) return;
    const Finding& f = found[0];
    QCOMPARE(f.rule, std::string("HANG"));
    QCOMPARE(f.severity, std::string("critical"));
    QCOMPARE(f.gpus, (std::vector<std::string>{"node0:gpu0", "node0:gpu1"}));
    QCOMPARE(f.episodes.size(), size_t(1));
    QCOMPARE(f.episodes[0].startNs, kStart + 500 * kSecond);
    QCOMPARE(f.episodes[0].endNs, kStart + (500 + spinSeconds) * kSecond);
    QCOMPARE(f.evidence.value(QStringLiteral("gpus")).toArray().size(), 2);
}

void TestRules::fixtureHang()
{
    const QString base = test::fixtureRun("h200x2-fsdp-hang");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, base);
    QVERIFY(db);
    // The NCCL error time from the job's own error output (ground truth, read by the test only): "[2026-11-29
    // 09:34:49]". The abort: the watchdog "taking the entire process down" ("[E1129 09:35:49.347...").
    QFile err(base + QStringLiteral("truth/train-stderr.txt"));
    QVERIFY(err.open(QIODevice::ReadOnly));
    const QString stderrText = QString::fromUtf8(err.readAll());
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("\\[(\\d{4}-\\d\\d-\\d\\d) (\\d\\d:\\d\\d:\\d\\d)\\][^\\n]*NCCL WARN"))
            .match(stderrText);
    const QRegularExpressionMatch down =
        QRegularExpression(QStringLiteral("\\[E\\d{4} (\\d\\d:\\d\\d:\\d\\d)[^\\n]*taking the entire process down"))
            .match(stderrText);
    QVERIFY(m.hasMatch() && down.hasMatch());
    auto utcNs = [&](const QString& time) {
        QDateTime at =
            QDateTime::fromString(m.captured(1) + QLatin1Char(' ') + time, QStringLiteral("yyyy-MM-dd hh:mm:ss"));
        at.setTimeSpec(Qt::UTC);
        return at.toMSecsSinceEpoch() * 1'000'000;
    };
    const int64_t errorNs = utcNs(m.captured(2)), abortNs = utcNs(down.captured(1));
    const auto found = runRule(*db, &hangRule);
    QCOMPARE(found.size(), size_t(1));
    const Finding& f = found[0];
    QCOMPARE(f.gpus.size(), size_t(2)); // both GPUs
    const double startOff = std::abs(static_cast<double>(f.episodes[0].startNs - errorNs)) / 1e9;
    QVERIFY2(startOff <= 5, qPrintable(QStringLiteral("the hang starts %1 s from the NCCL error").arg(startOff)));
    // It lasts the final minute, until the watchdog aborts the job.
    const double seconds = static_cast<double>(f.episodes[0].endNs - f.episodes[0].startNs) / 1e9;
    QVERIFY2(seconds >= 50 && seconds <= 70, qPrintable(QString::number(seconds)));
    const double endOff = std::abs(static_cast<double>(f.episodes[0].endNs - abortNs)) / 1e9;
    QVERIFY2(endOff <= 5, qPrintable(QStringLiteral("the hang ends %1 s from the abort").arg(endOff)));
    // No hang claimed in the healthy, communication-bound phases before it (one finding only, checked above),
    // and the checkpoints of this run are found as checkpoint gaps, not hangs.
    QCOMPARE(ckptGaps(*db).size(), size_t(1));
}

void TestRules::inputStallFromHostWork()
{
    // 10 min, SM activity 0.2 and utilization 40 % throughout (the GPU idles between kernels). The first 5 min
    // the training thread spends 60 % of its samples in its own preprocessing, the last 5 min 70 % in all_reduce
    // (communication): only the first half is an input stall, and it names the preprocessing.
    Synthetic run;
    run.seconds = 600;
    run.gpus = 1;
    run.sm = [](int, int64_t) { return 0.2; };
    run.util = [](int, int64_t) { return 40.0; };
    run.write = [](int64_t) { return 1e6; };
    run.stack = [](int64_t k) -> Stack {
        const bool first = k < 3000;
        const bool own = k % 10 < (first ? 6 : 0), comm = !first && k % 10 < 7;
        Stack st = trainStepStack();
        if (own)
            st.push_back({"tokenize_and_pack", "prep.py"});
        else if (comm)
            st.push_back({"all_reduce", "torch/distributed/distributed_c10d.py"});
        else
            st.push_back({"_engine_run_backward", "torch/autograd/graph.py"});
        return st;
    };
    QTemporaryDir dir;
    Finding f;
    oneFinding(writeRun(dir, run).get(), &inputStalls, "INPUT_STALL", f);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(f.episodes.size(), size_t(1));
    QCOMPARE(f.episodes[0].startNs, kStart);
    QVERIFY(std::abs(static_cast<double>(f.episodes[0].endNs - (kStart + 300 * kSecond))) <= 2e9);
    QCOMPARE(f.evidence.value(QStringLiteral("sub_cause")).toString(), QStringLiteral("host_compute"));
    const QJsonArray top = f.evidence.value(QStringLiteral("top_frames")).toArray();
    QVERIFY(!top.isEmpty());
    QCOMPARE(top[0].toObject().value(QStringLiteral("frame")).toString(), QStringLiteral("tokenize_and_pack"));
    QVERIFY(std::abs(f.evidence.value(QStringLiteral("host_compute_share")).toDouble() - 0.6) < 0.02);
    QVERIFY(f.primary);
    QVERIFY(f.recommendation.find("tokenize_and_pack") != std::string::npos);
    // Well-used GPUs (SM activity 0.7) are no input stall, whatever the host does.
    run.sm = [](int, int64_t) { return 0.7; };
    QTemporaryDir dir2;
    auto busy = writeRun(dir2, run);
    QVERIFY(busy);
    QCOMPARE(inputStalls(*busy).size(), size_t(0));
    // Nor are GPUs that always have a kernel resident (utilization 95 %): the host work overlaps them.
    run.sm = [](int, int64_t) { return 0.2; };
    run.util = [](int, int64_t) { return 95.0; };
    QTemporaryDir dir3;
    auto queued = writeRun(dir3, run);
    QVERIFY(queued);
    QCOMPARE(inputStalls(*queued).size(), size_t(0));
    // A start-up before the GPUs first work (idle for 2 min while the host loads the model) is not judged.
    run.util = [](int, int64_t s) { return s < 120 ? 0.0 : 40.0; };
    run.sm = [](int, int64_t s) { return s < 120 ? 0.0 : 0.2; };
    QTemporaryDir dir4;
    auto startup = writeRun(dir4, run);
    QVERIFY(startup);
    const auto late = inputStalls(*startup);
    QCOMPARE(late.size(), size_t(1));
    QVERIFY(std::abs(static_cast<double>(late[0].episodes[0].startNs - (kStart + 120 * kSecond))) <= 2e9);
}

void TestRules::fixtureInputStall()
{
    const QString base = test::fixtureRun("h200-gloo-small");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, base, {"stacks-rank0.speedscope.json", "stacks-rank1.speedscope.json"});
    QVERIFY(db);
    // The phases from the ground truth's steps (read by the test only).
    std::map<QString, std::pair<int64_t, int64_t>> phases;
    const auto steps = truthEvents(base + QStringLiteral("truth/events-rank0.jsonl"), QStringLiteral("step"));
    QVERIFY(steps);
    for (const QJsonObject& o : *steps) {
        const int64_t ts = truthNs(o, "ts_ns");
        const auto start = ts - static_cast<int64_t>(o.value(QStringLiteral("seconds")).toDouble() * 1e9);
        auto [it, added] = phases.emplace(o.value(QStringLiteral("phase")).toString(), std::make_pair(start, ts));
        if (!added) it->second.second = ts;
    }
    const auto found = inputStalls(*db);
    QVERIFY(!found.empty());
    auto covered = [&](const std::pair<int64_t, int64_t>& w) {
        int64_t ns = 0;
        for (const Finding& f : found)
            ns += episodeNs(f, w.first, w.second);
        return static_cast<double>(ns) / static_cast<double>(w.second - w.first);
    };
    const auto stall = phases.at(QStringLiteral("inputstall"));
    QVERIFY2(covered(stall) >= 0.8, qPrintable(QString::number(covered(stall))));
    QVERIFY2(covered(phases.at(QStringLiteral("baseline"))) < 0.1,
             qPrintable(QString::number(covered(phases.at(QStringLiteral("baseline"))))));
    QVERIFY2(covered(phases.at(QStringLiteral("accum"))) < 0.1,
             qPrintable(QString::number(covered(phases.at(QStringLiteral("accum"))))));
    const Finding& f = found[0];
    QCOMPARE(f.evidence.value(QStringLiteral("sub_cause")).toString(), QStringLiteral("host_compute"));
    QCOMPARE(f.evidence.value(QStringLiteral("top_frames"))
                 .toArray()[0]
                 .toObject()
                 .value(QStringLiteral("frame"))
                 .toString(),
             QStringLiteral("heavy_input_prep"));
}

void TestRules::commBoundFromTheIllusion()
{
    // 10 min at 99 % utilization: SM activity 0.2 for the first 6 min (the illusion: kernels resident and
    // waiting), then 0.75 (real work). Only the first 6 min are communication-bound; the training thread waits in
    // all_reduce then (the communication the illusion needs as evidence).
    Synthetic run;
    run.seconds = 600;
    run.sm = [](int, int64_t s) { return s < 360 ? 0.2 : 0.75; };
    run.util = [](int, int64_t) { return 99.0; };
    run.write = [](int64_t) { return 1e6; };
    run.stack = [](int64_t k) -> Stack {
        Stack st = trainStepStack();
        if (k < 3600)
            st.push_back({"all_reduce", "torch/distributed/distributed_c10d.py"});
        else
            st.push_back({"forward", "model.py"});
        return st;
    };
    QTemporaryDir dir;
    Finding f;
    oneFinding(writeRun(dir, run).get(), &commBound, "COMM_BOUND", f);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(f.episodes.size(), size_t(1));
    QCOMPARE(f.episodes[0].startNs, kStart);
    QVERIFY(std::abs(static_cast<double>(f.episodes[0].endNs - (kStart + 360 * kSecond))) <= 2e9);
    QVERIFY(f.primary);
    QCOMPARE(f.evidence.value(QStringLiteral("median_sm_active")).toDouble(), 0.2);
    QVERIFY(f.evidence.value(QStringLiteral("illusion_share")).toDouble() > 0.99);
    QVERIFY(f.recommendation.find("stage3_prefetch_bucket_size") != std::string::npos);
    // The same illusion on one process with no communication anywhere (no communication frames, traces, second rank,
    // node or InfiniBand traffic): a waiting kernel is not a network problem, so not this rule.
    run.stack = nullptr;
    {
        QTemporaryDir lonely;
        auto single = writeRun(lonely, run);
        QVERIFY(single);
        QCOMPARE(commBound(*single).size(), size_t(0));
    }
    // Under-used GPUs without any sign of communication (no illusion, no stacks, no traces): not this rule.
    run.util = [](int, int64_t) { return 40.0; };
    QTemporaryDir dir2;
    auto quiet = writeRun(dir2, run);
    QVERIFY(quiet);
    QCOMPARE(commBound(*quiet).size(), size_t(0));
}

void TestRules::noCommBoundWithoutCommunication()
{
    // A real single-process run with no communication at all (its README: no collective, one rank), whose tiny phase
    // shows busy GPUs with low SM activity: whatever explains it, it is not communication.
    const QString base = test::fixtureRun("h200-mixed-stalls");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, base, {"stacks-rank0.speedscope.json"});
    QVERIFY(db);
    QCOMPARE(commBound(*db).size(), size_t(0));
}

void TestRules::fixtureCommBound()
{
    const QString base = test::fixtureRun("h200x2-fsdp-hang");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, base, {"kineto-rank0-zero3.json", "kineto-rank1-zero3.json"});
    QVERIFY(db);
    // The zero3 phase from the ground truth's steps (read by the test only).
    const auto steps = truthEvents(base + QStringLiteral("truth/events-rank0.jsonl"), QStringLiteral("step"));
    QVERIFY(steps);
    const auto [from, to] = stepEndsOf(*steps, QStringLiteral("zero3"));
    QVERIFY(to > from);
    const auto found = commBound(*db);
    QCOMPARE(found.size(), size_t(1));
    const Finding& f = found[0];
    QVERIFY(f.primary);
    QCOMPARE(f.gpus.size(), size_t(2));
    const int64_t covered = episodeNs(f, from, to);
    QVERIFY2(static_cast<double>(covered) >= 0.8 * static_cast<double>(to - from),
             qPrintable(QString::number(static_cast<double>(covered) / static_cast<double>(to - from))));
    // The profiled step's NCCL kernels are its evidence.
    bool nccl = false;
    for (const auto& k : f.evidence.value(QStringLiteral("top_comm_kernels")).toArray())
        nccl =
            nccl || k.toObject().value(QStringLiteral("name")).toString().startsWith(QLatin1String("ncclDevKernel_"));
    QVERIFY(nccl);
    // The hang is not counted as communication-bound time: it is the HANG rule's.
    auto m = loadRunMetrics(*db, kSecond);
    QVERIFY_OK(m);
    const auto hangs = hangRule(*m, RuleParams::defaults());
    QCOMPARE(hangs.size(), size_t(1));
    for (const FindingEpisode& e : f.episodes)
        QVERIFY(e.endNs <= hangs[0].episodes[0].startNs || e.startNs >= hangs[0].episodes[0].endNs);
}

void TestRules::lowSmEfficiency()
{
    // 10 min of busy GPUs (80 % utilization): SM activity 0.25 for 4 min, then 0.7.
    Synthetic run;
    run.seconds = 600;
    run.sm = [](int, int64_t s) { return s < 240 ? 0.25 : 0.7; };
    run.util = [](int, int64_t) { return 80.0; };
    run.write = [](int64_t) { return 1e6; };
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    QVERIFY(db);
    auto m = loadRunMetrics(*db, kSecond);
    QVERIFY_OK(m);
    const RuleParams p = RuleParams::defaults();
    auto found = lowSmEfficiencyRule(*m, p, {});
    QCOMPARE(found.size(), size_t(1));
    QCOMPARE(found[0].severity, std::string("critical")); // 0.25 < 0.3
    QVERIFY(found[0].primary);
    QCOMPARE(found[0].episodes.size(), size_t(1));
    QCOMPARE(found[0].episodes[0].endNs, kStart + 240 * kSecond);
    QVERIFY(std::abs(found[0].evidence.value(QStringLiteral("mean_sm_active")).toDouble() - 0.25) < 1e-9);
    // Explained by another finding over the same time: contributing only, and it says so.
    Finding comm;
    comm.rule = "COMM_BOUND";
    comm.nodes = {"node0"};
    comm.episodes = {{kStart, kStart + 240 * kSecond}};
    found = lowSmEfficiencyRule(*m, p, {comm});
    QCOMPARE(found.size(), size_t(1));
    QVERIFY(!found[0].primary);
    QCOMPARE(found[0].evidence.value(QStringLiteral("explained_share")).toDouble(), 1.0);
    QCOMPARE(found[0].savingS, 0.0);
    // Well-used GPUs: nothing.
    run.sm = [](int, int64_t) { return 0.7; };
    QTemporaryDir dir2;
    auto good = writeRun(dir2, run);
    QVERIFY(good);
    auto m2 = loadRunMetrics(*good, kSecond);
    QVERIFY_OK(m2);
    QCOMPARE(lowSmEfficiencyRule(*m2, p, {}).size(), size_t(0));
}

void TestRules::fixtureBaselineIsFlagged()
{
    // h200-gloo-small: the baseline phase (gloo all-reduce after every step) is flagged as communication-bound or
    // as low SM efficiency over ≥ 80 % of it, from the metrics, the stacks and the Kineto trace.
    const QString base = test::fixtureRun("h200-gloo-small");
    if (base.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, base,
                            {"stacks-rank0.speedscope.json", "stacks-rank1.speedscope.json",
                             "kineto-rank0-baseline.json", "kineto-rank1-baseline.json"});
    QVERIFY(db);
    const auto steps = truthEvents(base + QStringLiteral("truth/events-rank0.jsonl"), QStringLiteral("step"));
    QVERIFY(steps);
    const auto [from, to] = stepEndsOf(*steps, QStringLiteral("baseline"));
    QVERIFY(to > from);
    auto m = loadRunMetrics(*db, kSecond);
    QVERIFY_OK(m);
    const RuleParams p = RuleParams::defaults();
    std::vector<Finding> all = commBound(*db);
    for (auto& f : ckptGaps(*db))
        all.push_back(f);
    for (auto& f : inputStalls(*db))
        all.push_back(f);
    std::vector<uint8_t> flagged(m->grid.size, 0);
    for (const Finding& f : lowSmEfficiencyRule(*m, p, all))
        all.push_back(f);
    for (const Finding& f : all)
        if (f.rule == "COMM_BOUND" || f.rule == "LOW_SM_EFF")
            for (const FindingEpisode& e : f.episodes)
                for (size_t i = m->grid.slotOf(e.startNs); i < m->grid.size && m->grid.slotStart(i) < e.endNs; ++i)
                    flagged[i] = 1;
    size_t in = 0, total = 0;
    for (size_t i = m->grid.slotOf(from); i < m->grid.size && m->grid.slotStart(i) < to; ++i) {
        ++total;
        in += flagged[i];
    }
    QVERIFY(total > 30);
    QVERIFY2(in >= 0.8 * static_cast<double>(total), qPrintable(QStringLiteral("%1 of %2 s").arg(in).arg(total)));
}

void TestRules::shiftAndResample()
{
    // Periodic checkpoints and a communication-bound stretch with low SM activity. Moving every timestamp by a
    // constant moves the findings by it and changes nothing else; resampling 1 s → 2 s moves episode boundaries
    // by at most one sample (2 s).
    auto ckpt = [](int64_t s) { return s >= 150 && (s - 150) % 300 < 20; };
    Synthetic run;
    run.seconds = 1800;
    run.sm = [&](int, int64_t s) { return ckpt(s) ? 0.0 : s < 900 ? 0.2 : 0.6; };
    run.util = [&](int, int64_t s) { return ckpt(s) ? 0.0 : 99.0; };
    run.write = [&](int64_t s) { return ckpt(s) ? 1.5e9 : 2e6; };
    run.link = [](int64_t) { return 2e8; }; // gradients to the other nodes over InfiniBand: communication exists
    auto analyze = [&](const Synthetic& r, double gridS) {
        QTemporaryDir dir;
        auto db = writeRun(dir, r);
        RuleParams p = RuleParams::defaults();
        (void)p.set(fmt::format("rules.grid_s={}", gridS));
        std::vector<Finding> all = commBound(*db, p);
        for (auto& f : ckptGaps(*db, p))
            all.push_back(f);
        return all;
    };
    const auto base = analyze(run, 1);
    QCOMPARE(base.size(), size_t(2)); // COMM_BOUND (the first 15 min, checkpoints aside) and CKPT_GAP
    Synthetic shifted = run;
    shifted.offsetNs = 4321 * kSecond + 123'456'789;
    const auto moved = analyze(shifted, 1);
    QCOMPARE(moved.size(), base.size());
    for (size_t k = 0; k < base.size(); ++k) {
        QCOMPARE(moved[k].rule, base[k].rule);
        QCOMPARE(moved[k].severity, base[k].severity);
        QCOMPARE(moved[k].savingS, base[k].savingS);
        QCOMPARE(moved[k].episodes.size(), base[k].episodes.size());
        for (size_t e = 0; e < base[k].episodes.size(); ++e) {
            QCOMPARE(moved[k].episodes[e].startNs - shifted.offsetNs, base[k].episodes[e].startNs);
            QCOMPARE(moved[k].episodes[e].endNs - shifted.offsetNs, base[k].episodes[e].endNs);
        }
    }
    const auto coarse = analyze(run, 2);
    QCOMPARE(coarse.size(), base.size());
    for (size_t k = 0; k < base.size(); ++k) {
        QCOMPARE(coarse[k].rule, base[k].rule);
        QCOMPARE(coarse[k].episodes.size(), base[k].episodes.size());
        for (size_t e = 0; e < base[k].episodes.size(); ++e) {
            QVERIFY(std::abs(coarse[k].episodes[e].startNs - base[k].episodes[e].startNs) <= 2 * kSecond);
            QVERIFY(std::abs(coarse[k].episodes[e].endNs - base[k].episodes[e].endNs) <= 2 * kSecond);
        }
    }
}

QTEST_MAIN(TestRules)
#include "tst_rules.moc"

void TestRules::hostStallNamesTheBlockingFrame()
{
    // 10 min of well-used GPUs (SM activity 0.7, utilization 95 %) whose training thread runs the model. The GPUs
    // idle for 3 s at 100 s, 300 s and 500 s while the thread sits in upload_metrics (in a native sleep: the
    // waiting caller is named), at 200 s while it writes a checkpoint (a checkpoint gap, not a host stall) and at
    // 400 s while its stack changes every sample (busy host work: not one blocked frame).
    Synthetic run;
    run.seconds = 600;
    run.gpus = 1;
    const auto paused = [](int64_t s) { return s % 100 == 0 ? s > 0 && s < 600 : false; };
    const auto inPause = [&](int64_t s) { return paused(s - s % 100) && s % 100 < 3; };
    run.sm = [&](int, int64_t s) { return inPause(s) ? 0.0 : 0.7; };
    run.util = [&](int, int64_t s) { return inPause(s) ? 0.0 : 95.0; };
    run.write = [](int64_t s) { return s >= 200 && s < 203 ? 2e9 : 1e6; };
    run.stack = [](int64_t k) -> Stack {
        const int64_t s = k / 10;
        Stack st = trainStepStack();
        const bool pause = s % 100 < 3 && s >= 100 && s < 600;
        if (pause && s / 100 == 2) {
            st.push_back({"save", "torch/serialization.py"});
        } else if (pause && s / 100 == 4) {
            st.push_back({"prep_" + std::to_string(k % 7), "prep.py"});
        } else if (pause) {
            st.push_back({"upload_metrics", "tracker.py"});
            st.push_back({"clock_nanosleep", ""});
        } else {
            st.push_back({"forward", "torch/nn/modules/linear.py"});
        }
        return st;
    };
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    QVERIFY(db);
    auto analysis = analyzeRun(*db, RuleParams::defaults());
    QVERIFY(analysis.ok());
    std::vector<const Finding*> stalls;
    for (const Finding& f : analysis->findings)
        if (f.rule == "HOST_STALL") stalls.push_back(&f);
    QCOMPARE(stalls.size(), size_t(1));
    const Finding& f = *stalls[0];
    QCOMPARE(f.evidence.value(QStringLiteral("frame")).toString(), QStringLiteral("upload_metrics (tracker.py)"));
    QVERIFY(f.title.find("upload_metrics") != std::string::npos);
    // The three blocks to the sample (10 Hz), not the 1 s grid; periodic every 200 s.
    QCOMPARE(f.episodes.size(), size_t(3));
    const int64_t starts[] = {100, 300, 500};
    for (size_t k = 0; k < 3; ++k) {
        QVERIFY(std::abs(static_cast<double>(f.episodes[k].startNs - (kStart + starts[k] * kSecond))) <= 0.1e9);
        QVERIFY(std::abs(static_cast<double>(f.episodes[k].endNs - (kStart + (starts[k] + 3) * kSecond))) <= 0.1e9);
    }
    QVERIFY(f.evidence.value(QStringLiteral("periodic")).toBool());
    QVERIFY(std::abs(f.evidence.value(QStringLiteral("period_s")).toDouble() - 200) < 0.5);
    QVERIFY(std::abs(f.savingS - 9) < 0.5);
    // The checkpoint is CKPT_GAP's.
    QVERIFY(std::any_of(analysis->findings.begin(), analysis->findings.end(),
                        [](const Finding& g) { return g.rule == "CKPT_GAP"; }));
}

void TestRules::lowSmEfficiencyLaunchBound()
{
    // 10 min of GPUs at 35 % utilization and SM activity 0.2 while the training thread only runs model code (40 %)
    // and waits on the GPU (60 %): launch-bound. The same GPUs while the thread waits in all_reduce are not.
    Synthetic run;
    run.seconds = 600;
    run.gpus = 1;
    run.sm = [](int, int64_t) { return 0.2; };
    run.util = [](int, int64_t) { return 35.0; };
    run.write = [](int64_t) { return 1e6; };
    const auto analyse = [](const Synthetic& r) -> std::optional<Finding> {
        QTemporaryDir dir;
        auto db = writeRun(dir, r);
        if (!db) return std::nullopt;
        auto a = analyzeRun(*db, RuleParams::defaults());
        if (!a) return std::nullopt;
        for (const Finding& f : a->findings)
            if (f.rule == "LOW_SM_EFF") return f;
        return std::nullopt;
    };
    run.stack = [](int64_t k) -> Stack {
        Stack st = trainStepStack();
        if (k % 10 < 4)
            st.push_back({"forward", "torch/nn/modules/linear.py"});
        else
            st.push_back({"synchronize", "torch/cuda/__init__.py"});
        return st;
    };
    const auto launch = analyse(run);
    QVERIFY(launch);
    QCOMPARE(launch->evidence.value(QStringLiteral("sub_cause")).toString(), QStringLiteral("launch_bound"));
    QVERIFY(launch->title.find("launch-bound") != std::string::npos);
    QVERIFY(launch->recommendation.find("CUDA graphs") != std::string::npos);
    QVERIFY(std::abs(launch->evidence.value(QStringLiteral("host_model_code_share")).toDouble() - 0.4) < 0.02);
    run.stack = [](int64_t k) -> Stack {
        Stack st = trainStepStack();
        if (k % 10 < 4)
            st.push_back({"forward", "torch/nn/modules/linear.py"});
        else
            st.push_back({"all_reduce", "torch/distributed/distributed_c10d.py"});
        return st;
    };
    const auto waiting = analyse(run);
    QVERIFY(!waiting ||
            waiting->evidence.value(QStringLiteral("sub_cause")).toString() != QStringLiteral("launch_bound"));
}
