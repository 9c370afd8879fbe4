// The rules' parameters: overriding one by name, every declared parameter read by some rule, and an unknown name
// stopping the program instead of judging a run on a made-up value.

#include "analysis/rules/ckpt_gap_rule.h"
#include "analysis/rules/comm_bound_rule.h"
#include "analysis/rules/hang_rule.h"
#include "analysis/rules/host_stall_rule.h"
#include "analysis/rules/input_stall_rule.h"
#include "analysis/rules/low_sm_eff_rule.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/step_detection.h"
#include "analysis/rules/straggler_rule.h"
#include "analysis/rules/throttle_rule.h"
#include "tests/test_support.h"

#include <QTest>
#include <set>
#include <string>

#ifdef Q_OS_UNIX
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#endif

using namespace runlens;
using namespace runlens::analysis;

class TestRuleParams : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parameters();
    void everyParameterIsRead();
    void unknownParameterAborts();
};

void TestRuleParams::parameters()
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
    QCOMPARE(RuleParams::defaults().get("ckpt_gap.burst_min_bytes"), 100e6);
    // The structs carry the values the rules run with: overrides, and counts as integers.
    QCOMPARE(CkptGapParams::from(p).overlap, 0.7);
    QCOMPARE(CkptGapParams::from(p).common.episodeGapSamples, 2);
    QCOMPARE(StragglerParams::from(p).maxReads, 4000);
    QVERIFY(p.set("rules.episode_gap_samples=3"));
    QCOMPARE(HangParams::from(p).common.episodeGapSamples, 3);
    QCOMPARE(ThrottleParams::from(RuleParams::defaults()).clockRatio, 0.85);
}

void TestRuleParams::everyParameterIsRead()
{
    // Every parameter in resources/rules/defaults.params is read by some rule's parameter struct, and every name a
    // struct reads is declared there (get() aborts on any other, naming it): a typo, or a parameter no rule uses any
    // more, fails here. A new rule's struct belongs in this list.
    RuleParams p = RuleParams::defaults();
    p.recordReads();
    (void)CommonParams::from(p);
    (void)CkptGapParams::from(p);
    (void)CommBoundParams::from(p);
    (void)HangParams::from(p);
    (void)HostStallParams::from(p);
    (void)InputStallParams::from(p);
    (void)LowSmParams::from(p);
    (void)StepParams::from(p);
    (void)StragglerParams::from(p);
    (void)ThrottleParams::from(p);
    const std::set<std::string> read = p.readNames();
    std::set<std::string> declared;
    for (const RuleParam& rp : p.all()) {
        declared.insert(rp.name);
        QVERIFY2(read.count(rp.name),
                 (rp.name + " is declared in defaults.params but no rule's struct reads it").c_str());
    }
    for (const std::string& name : read)
        QVERIFY2(declared.count(name), (name + " is read but not declared in defaults.params").c_str());
    QCOMPARE(declared.size(), p.all().size()); // each declared once
    // A copy records into the same set; a fresh object records nothing.
    const RuleParams copy = p;
    (void)copy.get("rules.grid_s");
    QCOMPARE(p.readNames().size(), read.size());
    QVERIFY(RuleParams::defaults().readNames().empty());
}

void TestRuleParams::unknownParameterAborts()
{
#ifdef Q_OS_UNIX
    // A name not in defaults.params stops the program with the name on stderr, in every build type (a rule that read
    // a made-up 0 would judge the run on it). The child only looks the name up: nothing to allocate after fork.
    const RuleParams p = RuleParams::defaults();
    const std::string name = "no.such.param";
    int err[2];
    QVERIFY(pipe(err) == 0);
    const pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0) {
        dup2(err[1], STDERR_FILENO);
        (void)p.get(name);
        _exit(0);
    }
    close(err[1]);
    std::string message;
    char buffer[512];
    for (ssize_t n; (n = read(err[0], buffer, sizeof buffer)) > 0;)
        message.append(buffer, static_cast<size_t>(n));
    close(err[0]);
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
    QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, message.c_str());
    QVERIFY2(message.find(name) != std::string::npos, message.c_str());
#else
    QSKIP("fork() is POSIX");
#endif
}

QTEST_GUILESS_MAIN(TestRuleParams)
#include "tst_rule_params.moc"
