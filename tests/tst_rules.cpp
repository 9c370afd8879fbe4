// Diagnosis rules: episodes on a grid, rule parameters, and CKPT_GAP on generated runs (periodic checkpoint
// stalls found with their period and cost; stalls without writes, and writes without stalls, are not
// checkpoint gaps) and on the real h200-gloo-small run against its ground truth.

#include "analysis/rules/ckpt_gap_rule.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "importers/import_session.h"
#include "tests/test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <random>

using namespace runlens;
using namespace runlens::analysis;

namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'790'000'000'000'000'000;

// One node with `gpus` GPUs and one disk, `seconds` at 1 s: SM activity and utilization per GPU and second,
// disk writes per second.
struct Synthetic
{
    int gpus = 2;
    int64_t seconds = 3600;
    std::function<double(int gpu, int64_t s)> sm;
    std::function<double(int gpu, int64_t s)> util;
    std::function<double(int64_t s)> write;
};

std::unique_ptr<store::RunDatabase> writeRun(const QTemporaryDir& dir, const Synthetic& run)
{
    const std::string path = dir.filePath(QStringLiteral("r.runlens")).toStdString();
    auto db = store::RunDatabase::open(path, store::OpenMode::Create);
    if (!db || !(*db)->begin()) return nullptr;
    store::RunWriter w(**db);
    store::ImportRecord rec;
    rec.path = "synthetic";
    rec.contentHash = "synthetic";
    rec.format = "test";
    if (!w.beginImport(rec)) return nullptr;
    auto node = w.node("node0", "option", "UTC");
    if (!node) return nullptr;
    auto series = [&](int64_t device, const char* metric, const char* unit, const std::function<double(int64_t)>& f) {
        auto sink = w.series(device, metric, unit, metric);
        if (!sink) return false;
        for (int64_t s = 0; s < run.seconds; ++s) {
            (*sink)->append(kStart + s * kSecond, f(s));
            if (!w.flushIfNeeded(**sink)) return false;
        }
        return true;
    };
    for (int g = 0; g < run.gpus; ++g) {
        auto gpu = w.device(*node, "gpu", std::to_string(g));
        if (!gpu || !series(*gpu, "gpu.sm_active", "ratio", [&](int64_t s) { return run.sm(g, s); }) ||
            !series(*gpu, "gpu.util", "%", [&](int64_t s) { return run.util(g, s); }))
            return nullptr;
    }
    auto disk = w.device(*node, "disk", "nvme0n1");
    if (!disk || !series(*disk, "disk.write", "bytes/s", run.write)) return nullptr;
    store::ImportTotals totals;
    totals.contentHash = rec.contentHash;
    if (!w.finishImport(totals, store::Diagnostics()) || !(*db)->commit()) return nullptr;
    return std::move(*db);
}

std::vector<Finding> ckptGaps(store::RunDatabase& db, const RuleParams& p = RuleParams::defaults())
{
    auto m = loadRunMetrics(db, static_cast<int64_t>(p.get("rules.grid_s") * 1e9));
    if (!m) return {};
    return checkpointGapRule(*m, p);
}

} // namespace

class TestRules : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void episodesJoinShortGaps();
    void parameters();
    void checkpointGapsPeriodic();
    void noCheckpointGapWithoutBoth_data();
    void noCheckpointGapWithoutBoth();
    void fixtureCheckpoints();
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

void TestRules::parameters()
{
    RuleParams p = RuleParams::defaults();
    QCOMPARE(p.get("ckpt_gap.overlap"), 0.5);
    QVERIFY(p.set("ckpt_gap.overlap=0.7"));
    QCOMPARE(p.get("ckpt_gap.overlap"), 0.7);
    const Status unknown = p.set("ckpt_gap.overlapp=1");
    QVERIFY(!unknown);
    QVERIFY(unknown.error().message.find("ckpt_gap.overlapp") != std::string::npos);
    QVERIFY(!p.set("ckpt_gap.overlap=lots"));
    QVERIFY(!p.set("ckpt_gap.overlap"));
    for (const RuleParam& rp : p.all())
        QVERIFY2(!rp.doc.empty() && rp.name.find('.') != std::string::npos, rp.name.c_str()); // documented, rule.name
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
    auto db = writeRun(dir, run);
    QVERIFY(db);
    const auto found = ckptGaps(*db);
    QCOMPARE(found.size(), size_t(1));
    const Finding& f = found[0];
    QCOMPARE(f.rule, std::string("CKPT_GAP"));
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
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures is absent");
    const QString base = fixtures + QStringLiteral("/h200-gloo-small/");
    // The metrics only (no stacks): the checkpoints come from GPU stalls and disk writes.
    std::vector<std::string> inputs;
    for (const char* f : {"nvidia-smi-query.csv", "nvidia-smi-dmon.txt", "nvidia-smi-dmon-gpm.txt", "prometheus"})
        inputs.push_back((base + QLatin1String(f)).toStdString());
    importers::ImportOptions options;
    auto plan = importers::planImport(inputs, options);
    QVERIFY_OK(plan);
    QTemporaryDir dir;
    auto db = store::RunDatabase::open(dir.filePath(QStringLiteral("h.runlens")).toStdString(), store::OpenMode::Create);
    QVERIFY_OK(db);
    for (const auto& f : *plan) {
        const auto r = importers::importFile(**db, f, options);
        QVERIFY2(r.outcome == importers::FileOutcome::Imported, f.path.c_str());
    }
    // Ground truth, read by the test only.
    std::vector<std::pair<int64_t, int64_t>> truth;
    QFile t(base + QStringLiteral("truth/events-rank0.jsonl"));
    QVERIFY(t.open(QIODevice::ReadOnly));
    for (const QByteArray& line : t.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value(QStringLiteral("event")).toString() == QLatin1String("checkpoint"))
            truth.emplace_back(static_cast<int64_t>(o.value(QStringLiteral("ts_ns")).toDouble()),
                               static_cast<int64_t>(o.value(QStringLiteral("end_ns")).toDouble()));
    }
    QCOMPARE(truth.size(), size_t(3));
    const auto found = ckptGaps(**db);
    QCOMPARE(found.size(), size_t(1));
    const Finding& f = found[0];
    // Exactly the three checkpoints, each boundary within 2 s; nothing claimed elsewhere.
    QCOMPARE(f.episodes.size(), truth.size());
    for (size_t k = 0; k < truth.size(); ++k) {
        const double startOff = std::abs(static_cast<double>(f.episodes[k].startNs - truth[k].first)) / 1e9;
        const double endOff = std::abs(static_cast<double>(f.episodes[k].endNs - truth[k].second)) / 1e9;
        QVERIFY2(startOff <= 2 && endOff <= 2,
                 qPrintable(QStringLiteral("checkpoint %1: start off by %2 s, end by %3 s").arg(k).arg(startOff).arg(endOff)));
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

QTEST_MAIN(TestRules)
#include "tst_rules.moc"
