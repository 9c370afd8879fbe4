// The analysis of a run as a whole: COMM_BOUND's sub-type from the link load, the analysis kept in the run and read
// back, and findings of several nodes merged into one.

#include "analysis/rules/run_analysis.h"
#include "tests/rules_support.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace runlens;
using namespace runlens::analysis;
using namespace runlens::test::rules;

namespace {

Expected<RunAnalysis> analyze(store::RunDatabase& db, const RuleParams& p = RuleParams::defaults())
{
    return analyzeRun(db, p);
}

// The analysis of a generated run, written to a database of its own.
Expected<RunAnalysis> analyzeGenerated(const Synthetic& run)
{
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    if (!db) return makeError(ErrorCode::Io, "the generated run could not be written");
    return analyze(*db);
}

const Finding* firstOf(const std::vector<Finding>& findings, const std::string& rule)
{
    for (const Finding& f : findings)
        if (f.rule == rule) return &f;
    return nullptr;
}

} // namespace

class TestRunAnalysis : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void commBoundSubTypeFromLinkLoad();
    void analysisKeptInTheRun();
    void nodesWithTheSameFindingMerge();
};

void TestRunAnalysis::commBoundSubTypeFromLinkLoad()
{
    // The illusion for 10 min, the port carrying 6 GB/s of 25 GB/s (load 0.24): latency/sync-bound, and the
    // recommendation is about fewer, larger, earlier collectives. At 23 GB/s (0.92): bandwidth-bound. Without a
    // capacity the sub-type stays open (steady traffic is not a full link) and the confidence drops.
    Synthetic run;
    run.seconds = 600;
    run.sm = [](int, int64_t) { return 0.2; };
    run.util = [](int, int64_t) { return 99.0; };
    run.write = [](int64_t) { return 1e6; };
    // The one COMM_BOUND finding with the port carrying linkBytesPerS (and a little noise) of capacityBytesPerS.
    const auto commBoundAt = [&run](double linkBytesPerS, double capacityBytesPerS, Finding& finding) {
        run.link = [linkBytesPerS](int64_t s) { return linkBytesPerS + (s % 7) * 1e7; };
        run.linkCapacity = capacityBytesPerS;
        QTemporaryDir dir;
        oneFinding(writeRun(dir, run).get(), &commBound, nullptr, finding);
    };
    Finding latency;
    commBoundAt(6e9, 25e9, latency);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(latency.evidence.value(QStringLiteral("sub_type")).toString(), QStringLiteral("latency"));
    QVERIFY(std::abs(latency.evidence.value(QStringLiteral("link_load")).toDouble() - 0.24) < 0.01);
    QCOMPARE(latency.evidence.value(QStringLiteral("link_capacity_source")).toString(), QStringLiteral("ib.capacity"));
    QVERIFY(latency.title.find("latency/sync-bound") != std::string::npos);
    QVERIFY(latency.recommendation.find("far from full") != std::string::npos);

    Finding bandwidth;
    commBoundAt(23e9, 25e9, bandwidth);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(bandwidth.evidence.value(QStringLiteral("sub_type")).toString(), QStringLiteral("bandwidth"));
    QVERIFY(bandwidth.recommendation.find("near their capacity") != std::string::npos);

    Finding estimated;
    commBoundAt(6e9, 0, estimated);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(estimated.evidence.value(QStringLiteral("sub_type")).toString(), QStringLiteral("unknown"));
    QVERIFY(estimated.evidence.value(QStringLiteral("link_capacity_source"))
                .toString()
                .startsWith(QStringLiteral("unknown")));
    QVERIFY(estimated.confidence < latency.confidence);
}

void TestRunAnalysis::analysisKeptInTheRun()
{
    // Periodic checkpoint stalls (as in checkpointGapsPeriodic): the analysis is kept in the run with its
    // parameters, read back equal, and a second analysis replaces the first rather than adding to it.
    QTemporaryDir dir;
    auto db = writeRun(dir, checkpointRun(false, true));
    QVERIFY(db);
    RuleParams p = RuleParams::defaults();
    QVERIFY(p.set("ckpt_gap.overlap=0.6"));
    auto first = analyze(*db, p);
    QVERIFY(first);
    QVERIFY(firstOf(first->findings, "CKPT_GAP"));
    QVERIFY(storeAnalysis(*db, *first, {{"ckpt_gap.overlap", 0.6}}));
    QVERIFY(storeAnalysis(*db, *first, {{"ckpt_gap.overlap", 0.6}})); // replaces
    auto stored = loadStoredAnalysis(*db);
    QVERIFY(stored && *stored);
    const RunAnalysis& back = (*stored)->analysis;
    QCOMPARE(back.findings.size(), first->findings.size());
    for (size_t i = 0; i < back.findings.size(); ++i) {
        QCOMPARE(back.findings[i].rule, first->findings[i].rule);
        QCOMPARE(back.findings[i].episodes.size(), first->findings[i].episodes.size());
        QCOMPARE(back.findings[i].episodes.front().startNs, first->findings[i].episodes.front().startNs);
        QCOMPARE(back.findings[i].title, first->findings[i].title);
        QCOMPARE(back.findings[i].evidence, first->findings[i].evidence);
    }
    QCOMPARE((*stored)->overrides.size(), size_t(1));
    QCOMPARE((*stored)->overrides.at("ckpt_gap.overlap"), 0.6);
    QCOMPARE(back.params.get("ckpt_gap.overlap"), 0.6);
    QCOMPARE(back.budgets.size(), first->budgets.size());
    QCOMPARE(back.steps.size(), first->steps.size());
    for (size_t i = 0; i < back.steps.size(); ++i)
        QCOMPARE(back.steps[i].startsNs, first->steps[i].startsNs);
    // The time budget of the node adds up to its wall time, and the checkpoints are in it.
    QCOMPARE(first->budgets.size(), size_t(1));
    const TimeBudget& b = first->budgets[0];
    QVERIFY(std::abs(b.computeS + b.commWaitS + b.inputS + b.checkpointS + b.hangS + b.idleS + b.startupS - b.wallS) <
            1e-6);
    QVERIFY(b.checkpointS >= 6 * 15 && b.checkpointS <= 6 * 21);
}

void TestRunAnalysis::nodesWithTheSameFindingMerge()
{
    // Two nodes with the same checkpoint stalls: one CKPT_GAP finding whose scope is both nodes, its saving
    // not doubled (they stall at the same time), each node's share in the evidence.
    Synthetic run = checkpointRun(false, true);
    run.nodes = 2;
    auto a = analyzeGenerated(run);
    QVERIFY(a);
    int gaps = 0;
    for (const Finding& f : a->findings)
        gaps += f.rule == "CKPT_GAP" ? 1 : 0;
    QCOMPARE(gaps, 1);
    const Finding* f = firstOf(a->findings, "CKPT_GAP");
    QCOMPARE(f->nodes, (std::vector<std::string>{"node0", "node1"}));
    QCOMPARE(f->evidence.value(QStringLiteral("per_node")).toArray().size(), qsizetype(2));
    QVERIFY(f->title.find("all 2 nodes") != std::string::npos);
    // Each node alone saves as much as the pair: the merged saving is one node's, not the sum.
    run.nodes = 1;
    auto one = analyzeGenerated(run);
    QVERIFY(one);
    QVERIFY(std::abs(firstOf(one->findings, "CKPT_GAP")->savingS - f->savingS) < 1e-6);
    QCOMPARE(a->budgets.size(), size_t(2));
}

QTEST_MAIN(TestRunAnalysis)
#include "tst_run_analysis.moc"
