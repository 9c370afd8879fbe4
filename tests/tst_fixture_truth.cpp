// The diagnosis of the recorded fixture runs (../shared/fixtures) against their ground truth. Each run is imported
// the way `runlens import --tz UTC -o RUN.runlens FOLDER` imports it (every file of the folder: metrics, stacks,
// traces, trainer logs; its truth/ folder left out, so truth is never an input), analysed with the default
// parameters, and what the rules found is compared with truth/*.jsonl (step ends and durations, phase ends,
// checkpoints, async checkpoints, host pauses) and with what each run's README.md says a correct analysis says.
// Every comparison is a named row (fixture/phase/what) of one of the checks below (0: the import; 1-8).
//
// With RUNLENS_TRUTH_TABLE=FILE the binary runs no test: it writes a Markdown table of truth against findings to
// FILE (tests/fixture_table.sh puts it into README.md) and exits 0, or 77 when the fixtures are absent.
//
// A time tolerance of 2 s applies to every match between a truth event and a finding's episode: the rules work on
// a 1 s grid and the metrics are sampled at 1 s.

#include "analysis/rules/finding.h"
#include "analysis/rules/run_analysis.h"
#include "tests/fixture_run.h"
#include "tests/test_support.h"
#include "tests/truth_support.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTest>
#include <QTimeZone>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace runlens;
using namespace runlens::test;

namespace {

// ---------------------------------------------------------------------------------------------------------------
// What the runs' README.md files say a correct analysis finds. Phase names are truth's (`phase` of the steps).
// ---------------------------------------------------------------------------------------------------------------

// The fixture runs, as folders under ../shared/fixtures.
const std::vector<std::string> kFixtures = {"h200-gloo-small",       "h200-gloo-straggler",  "h200-mixed-stalls",
                                            "h200-spin-pair/before", "h200-spin-pair/after", "h200x2-fsdp-hang"};

// Check 3: the primary finding of each phase (nullptr: the README names no single cause; the phase is shown in
// the table but not checked).
struct PhaseExpectation
{
    const char* fixture;
    const char* phase;
    const char* primary;
};
const std::vector<PhaseExpectation> kExpectedPrimary = {
    // h200-gloo-small: "input preparation does heavy CPU work (a numpy sort) on the training thread before every
    // micro-step; the GPU waits"
    {"h200-gloo-small", "inputstall", "INPUT_STALL"},
    // h200-gloo-small: "all-reduce gradients with DistributedDataParallel over the gloo backend through the loopback
    // interface, so the run is strongly communication-bound"; baseline: "gradients all-reduced after every step"
    {"h200-gloo-small", "baseline", "COMM_BOUND"},
    // h200-gloo-small: "gradient accumulation: all-reduce every 4 micro-steps (the tuned configuration)"
    {"h200-gloo-small", "accum", nullptr},
    // h200-gloo-straggler: "in the straggler phase the time is lost to rank 1 being late at the collective (the
    // straggler is rank 1, its late work is `slow_rank_work`), so rank 0's communication wait is a symptom of that,
    // not a network problem"
    {"h200-gloo-straggler", "straggler", "STRAGGLER"},
    // h200-gloo-straggler: "balanced is the fix (step −45 %)"
    {"h200-gloo-straggler", "balanced", nullptr},
    // h200-mixed-stalls: "the tiny phase is under-used GPUs with low SM efficiency because the host launches small
    // kernels"
    {"h200-mixed-stalls", "tiny", "LOW_SM_EFF"},
    // h200-mixed-stalls: big is "SM activity ~0.89" with async checkpoints and host pauses: no single cause
    {"h200-mixed-stalls", "big", nullptr},
    // h200-spin-pair: "Each step is real compute followed by a one-block spin kernel (`torch.cuda._sleep`, called
    // from `emulated_collective_wait`) standing in for a collective that waits on other ranks: nvidia-smi reads
    // ~100 % utilization while GPM SM activity stays low, the seed case's "utilization illusion"" — one process and
    // no communication, so COMM_BOUND would be wrong: the utilization illusion is LOW_SM_EFF
    {"h200-spin-pair/before", "waiting", "LOW_SM_EFF"},
    {"h200-spin-pair/after", "tuned", "LOW_SM_EFF"},
    // h200x2-fsdp-hang: "NCCL kernels wait on the GPU while data crawls through the sockets, so GPU "utilization"
    // reads ~100 % while SM activity stays low: the utilization illusion of a communication-bound run"; zero3:
    // "parameters resharded after forward: all-gathered again in backward (like ZeRO-3)"
    {"h200x2-fsdp-hang", "zero3", "COMM_BOUND"},
    // h200x2-fsdp-hang: "parameters kept after forward: one all-gather fewer per step (the tuned configuration)"
    {"h200x2-fsdp-hang", "tuned", nullptr},
    // h200x2-fsdp-hang: "one entered a reduce-scatter the other never joined: NCCL kernels spin (utilization 100 %,
    // SM activity 0), until the watchdog aborts the job"; "the hang starts at about 09:34:49 (rank 1's NCCL error)
    // and lasts until the abort at 09:35:49" (the phase's times are read from truth/train-stderr.txt)
    {"h200x2-fsdp-hang", "hang", "HANG"},
};

// Check 4. h200-gloo-straggler: "rank 1 does 250 ms of host work (`slow_rank_work`, numpy sorts) before every
// step" — the late rank is read from truth (the rank whose steps have slow_work_s > 0); truth names no frames in
// this run, so the frame is the README's.
constexpr const char* kStragglerFixture = "h200-gloo-straggler";
constexpr const char* kStragglerPhase = "straggler";
constexpr const char* kStragglerFrame = "slow_rank_work";

// Check 5. h200-mixed-stalls: "one training process (no communication at all)"; "no communication-bound finding
// anywhere (there is no communication)".
const std::vector<std::string> kNoCommunication = {"h200-mixed-stalls"};

// Check 6. h200-gloo-small: baseline all-reduces after every step, accum every 4 micro-steps; the difference in
// time per micro-step is the all-reduce's share of a baseline step.
constexpr const char* kShareFixture = "h200-gloo-small";
constexpr const char* kShareCommPhase = "baseline";
constexpr const char* kShareAccumPhase = "accum";
constexpr double kShareTolerance = 0.20; // relative

// Check 7. h200-spin-pair: "the same job before and after a change"; "What a comparison must say: step time −23 %".
constexpr const char* kPairBefore = "h200-spin-pair/before";
constexpr const char* kPairAfter = "h200-spin-pair/after";

constexpr int64_t kToleranceNs = 2'000'000'000;

const std::vector<std::string> kCheckNames = {
    "imported, truth/ left out",
    "truth checkpoints and host pauses found",
    "no stall episode away from a true event",
    "the phase's primary finding",
    "the straggler's rank and frame",
    "no communication finding without communication",
    "all-reduce share in baseline",
    "spin-pair saving against the measured change",
    "critical findings save time",
};

// ---------------------------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------------------------

std::string clock(int64_t ns)
{
    const QDateTime t = QDateTime::fromMSecsSinceEpoch(ns / 1'000'000, QTimeZone::utc());
    return t.toString(QStringLiteral("HH:mm:ss")).toStdString() + fmt::format(".{}", (ns / 100'000'000) % 10);
}
std::string span(int64_t a, int64_t b)
{
    return clock(a) + ".." + clock(b);
}
std::string seconds(double s)
{
    return fmt::format("{:.1f} s", s);
}

struct Episode
{
    const analysis::Finding* finding;
    analysis::FindingEpisode e;
};
std::vector<Episode> episodesOf(const analysis::RunAnalysis& a, const std::string& rule)
{
    std::vector<Episode> out;
    for (const analysis::Finding& f : a.findings)
        if (f.rule == rule)
            for (const analysis::FindingEpisode& e : f.episodes)
                out.push_back({&f, e});
    std::sort(out.begin(), out.end(), [](const Episode& x, const Episode& y) { return x.e.startNs < y.e.startNs; });
    return out;
}
// Both ends within the tolerance.
bool matches(const analysis::FindingEpisode& e, int64_t startNs, int64_t endNs)
{
    return std::abs(e.startNs - startNs) <= kToleranceNs && std::abs(e.endNs - endNs) <= kToleranceNs;
}
// Overlapping the event widened by the tolerance.
bool near(const analysis::FindingEpisode& e, int64_t startNs, int64_t endNs)
{
    return e.startNs <= endNs + kToleranceNs && e.endNs >= startNs - kToleranceNs;
}
std::string nearest(const std::vector<Episode>& eps, const std::string& rule, int64_t startNs, int64_t endNs)
{
    const Episode* best = nullptr;
    int64_t bestD = 0;
    for (const Episode& ep : eps) {
        const int64_t d = std::abs(ep.e.startNs - startNs) + std::abs(ep.e.endNs - endNs);
        if (!best || d < bestD) best = &ep, bestD = d;
    }
    if (!best) return "no " + rule + " episode in the run";
    return fmt::format("nearest {} episode {} (start {:+.1f} s, end {:+.1f} s)", rule,
                       span(best->e.startNs, best->e.endNs), static_cast<double>(best->e.startNs - startNs) / 1e9,
                       static_cast<double>(best->e.endNs - endNs) / 1e9);
}
std::string evidenceText(const analysis::Finding& f)
{
    return QJsonDocument(f.evidence).toJson(QJsonDocument::Compact).toStdString();
}

struct Primary
{
    const analysis::Finding* finding = nullptr;
    double savingS = 0;
    std::string why; // when there is none
};
// Among the findings that stand on their own (not contributing, not a symptom), the one that saves the most in
// [fromNs, toNs); none on a tie or when nothing saves time there.
Primary primaryWithin(const std::vector<analysis::Finding>& findings, int64_t fromNs, int64_t toNs)
{
    Primary best, second;
    for (const analysis::Finding& f : findings) {
        const std::string role = analysis::roleOf(f);
        if (role == "contributing" || role == "symptom") continue;
        const double s = analysis::savingWithin(f, fromNs, toNs);
        if (!best.finding || s > best.savingS) {
            second = best;
            best = {&f, s, {}};
        } else if (!second.finding || s > second.savingS) {
            second = {&f, s, {}};
        }
    }
    if (!best.finding || best.savingS <= 0) return {nullptr, 0, "no finding saves time in the phase"};
    if (second.finding && second.savingS >= best.savingS - 1e-9)
        return {nullptr, best.savingS,
                fmt::format("tie: {} and {} save {} each", best.finding->rule, second.finding->rule,
                            seconds(best.savingS))};
    return best;
}

struct CheckRow
{
    CheckRow(int n, std::string fixtureId, std::string phaseName, std::string whatIsChecked)
        : check(n), fixture(std::move(fixtureId)), phase(std::move(phaseName)), what(std::move(whatIsChecked))
    {
    }
    int check = 0;
    std::string fixture, phase, what;
    bool pass = false;
    bool skip = false; // the fixture is absent
    std::string detail;
    std::string kind; // checkpoint, host_pause, stall_episode, async (for the table's event counts)
    std::string tag() const { return fixture + "/" + phase + "/" + what; }
};

// What the table shows of a phase besides the check rows.
struct PhaseFinding
{
    std::string fixture, phase, expected, found, extra;
};

struct Evaluation
{
    std::vector<FixtureRun> runs;
    std::vector<CheckRow> rows;
    std::vector<PhaseFinding> phases;
    const FixtureRun* run(const std::string& id) const
    {
        for (const FixtureRun& r : runs)
            if (r.id == id) return &r;
        return nullptr;
    }
};

void checkEvents(const FixtureRun& run, std::vector<CheckRow>& rows)
{
    const Truth& t = run.truth;
    const std::vector<Episode> ckpt = episodesOf(run.analysis, "CKPT_GAP");
    const std::vector<Episode> host = episodesOf(run.analysis, "HOST_STALL");

    // 1. Every truth checkpoint and host pause has an episode at both ends (and a host stall names the frame).
    for (const TruthEvent& c : t.checkpoints) {
        CheckRow r{1, run.id, t.phaseAt(c.startNs),
                   fmt::format("checkpoint step {} {} found by CKPT_GAP", c.step, span(c.startNs, c.endNs))};
        r.kind = "checkpoint";
        for (const Episode& ep : ckpt)
            r.pass = r.pass || matches(ep.e, c.startNs, c.endNs);
        r.detail = r.pass ? "matched" : nearest(ckpt, "CKPT_GAP", c.startNs, c.endNs);
        rows.push_back(r);
    }
    for (const TruthEvent& p : t.hostPauses) {
        CheckRow r{
            1, run.id, t.phaseAt(p.startNs),
            fmt::format("host pause step {} {} in {} found by HOST_STALL", p.step, span(p.startNs, p.endNs), p.frame)};
        r.kind = "host_pause";
        bool timed = false;
        for (const Episode& ep : host)
            if (matches(ep.e, p.startNs, p.endNs)) {
                timed = true;
                r.pass = r.pass || evidenceText(*ep.finding).find(p.frame) != std::string::npos;
            }
        r.detail = r.pass  ? "matched, frame named"
                   : timed ? "an episode matches but its finding's evidence does not name " + p.frame
                           : nearest(host, "HOST_STALL", p.startNs, p.endNs);
        rows.push_back(r);
    }

    // 2. Every CKPT_GAP / HOST_STALL episode is near a true checkpoint / host pause; no CKPT_GAP on an async write.
    auto offTruth = [&](const std::vector<Episode>& eps, const std::string& rule, const std::vector<TruthEvent>& truth,
                        const std::string& what) {
        std::set<std::string> tags;
        for (const Episode& ep : eps) {
            CheckRow r{2, run.id, t.phaseAt(ep.e.startNs),
                       fmt::format("{} episode {} near a truth {}", rule, span(ep.e.startNs, ep.e.endNs), what)};
            r.kind = "stall_episode";
            while (!tags.insert(r.what).second)
                r.what += "'";
            for (const TruthEvent& e : truth)
                r.pass = r.pass || near(ep.e, e.startNs, e.endNs);
            r.detail = r.pass ? "near one" : fmt::format("no truth {} within 2 s", what);
            rows.push_back(r);
        }
    };
    offTruth(ckpt, "CKPT_GAP", t.checkpoints, "checkpoint");
    offTruth(host, "HOST_STALL", t.hostPauses, "host pause");
    for (const TruthAsync& a : t.asyncCheckpoints) {
        CheckRow r{2, run.id, t.phaseAt(a.startNs),
                   fmt::format("async checkpoint step {} {} not a CKPT_GAP", a.step, span(a.startNs, a.endNs))};
        r.kind = "async";
        r.pass = true;
        for (const Episode& ep : ckpt) {
            if (ep.e.startNs >= a.endNs || ep.e.endNs <= a.startNs) continue; // not on its write
            bool sync = false;
            for (const TruthEvent& c : t.checkpoints)
                sync = sync || near(ep.e, c.startNs, c.endNs);
            if (!sync) {
                r.pass = false;
                r.detail = "CKPT_GAP episode " + span(ep.e.startNs, ep.e.endNs) + " on its write";
            }
        }
        if (r.pass) r.detail = "no CKPT_GAP episode on it";
        rows.push_back(r);
    }
}

void checkPhases(const FixtureRun& run, Evaluation& ev)
{
    const Truth& t = run.truth;
    for (const TruthPhase& p : t.phases) {
        const Primary primary = primaryWithin(run.analysis.findings, p.startNs, p.endNs);
        PhaseFinding pf{run.id, p.name, "—", {}, {}};
        pf.found = primary.finding ? fmt::format("{} {}", primary.finding->rule, seconds(primary.savingS))
                                   : "none (" + primary.why + ")";
        for (const PhaseExpectation& x : kExpectedPrimary)
            if (run.id == x.fixture && p.name == x.phase && x.primary) {
                pf.expected = x.primary;
                CheckRow r{3, run.id, p.name, fmt::format("primary is {}", x.primary)};
                r.pass = primary.finding && primary.finding->rule == x.primary;
                r.detail =
                    fmt::format("phase {} ({}): primary {}", span(p.startNs, p.endNs), seconds(p.seconds()), pf.found);
                ev.rows.push_back(r);
            }
        ev.phases.push_back(pf);
    }
    for (const PhaseExpectation& x : kExpectedPrimary)
        if (run.id == x.fixture && x.primary && !t.phase(x.phase)) {
            CheckRow r{3, run.id, x.phase, fmt::format("primary is {}", x.primary)};
            r.detail = "the phase is not in truth";
            ev.rows.push_back(r);
        }
}

bool namesRank(const analysis::Finding& f, int rank)
{
    for (const char* key : {"rank", "late_rank"}) {
        const QJsonValue v = f.evidence.value(QLatin1String(key));
        if ((v.isDouble() && v.toInt(-1) == rank) || (v.isString() && v.toString() == QString::number(rank)))
            return true;
    }
    return QString::fromStdString(f.title).contains(QRegularExpression(QStringLiteral("\\brank %1\\b").arg(rank)));
}

void checkStraggler(const FixtureRun& run, std::vector<CheckRow>& rows)
{
    std::set<int> late;
    for (const TruthStep& s : run.truth.steps)
        if (s.phase == kStragglerPhase && s.slowWorkS > 0) late.insert(s.rank);
    CheckRow r{4, run.id, kStragglerPhase, {}};
    if (late.size() != 1) {
        r.what = "STRAGGLER names the late rank";
        r.detail = fmt::format("truth has {} ranks with slow_work_s > 0, expected one", late.size());
        rows.push_back(r);
        return;
    }
    const int rank = *late.begin();
    r.what = fmt::format("STRAGGLER names rank {} and {}", rank, kStragglerFrame);
    std::vector<std::string> seen;
    for (const analysis::Finding& f : run.analysis.findings) {
        if (f.rule != "STRAGGLER") continue;
        const bool byRank = namesRank(f, rank);
        const bool byFrame = evidenceText(f).find(kStragglerFrame) != std::string::npos;
        r.pass = r.pass || (byRank && byFrame);
        seen.push_back(fmt::format("\"{}\": rank {}, frame {}", f.title, byRank ? "named" : "not named",
                                   byFrame ? "named" : "not named"));
    }
    r.detail = seen.empty() ? "no STRAGGLER finding" : fmt::format("{}", fmt::join(seen, "; "));
    rows.push_back(r);
}

void checkNoComm(const FixtureRun& run, std::vector<CheckRow>& rows)
{
    CheckRow r{5, run.id, "(run)", "no COMM_BOUND finding"};
    std::vector<std::string> found;
    for (const analysis::Finding& f : run.analysis.findings)
        if (f.rule == "COMM_BOUND") found.push_back(analysis::rolePrefix(f) + f.title);
    r.pass = found.empty();
    r.detail = r.pass ? "none" : fmt::format("{}", fmt::join(found, "; "));
    rows.push_back(r);
}

void checkShare(const FixtureRun& run, Evaluation& ev)
{
    const TruthPhase* base = run.truth.phase(kShareCommPhase);
    const TruthPhase* accum = run.truth.phase(kShareAccumPhase);
    CheckRow r{6, run.id, kShareCommPhase, "COMM_BOUND saving share within 20 % of the all-reduce share"};
    if (!base || !accum || base->microSteps <= 0 || accum->microSteps <= 0) {
        r.detail = "truth lacks the baseline or accum phase or their micro_steps";
        ev.rows.push_back(r);
        return;
    }
    const double perMicroBase = median(base->stepSeconds) / base->microSteps;
    const double perMicroAccum = median(accum->stepSeconds) / accum->microSteps;
    const double share = 1 - perMicroAccum / perMicroBase;
    double saving = 0;
    for (const analysis::Finding& f : run.analysis.findings)
        if (f.rule == "COMM_BOUND") saving += analysis::savingWithin(f, base->startNs, base->endNs);
    const double found = saving / base->seconds();
    r.pass = std::abs(found - share) <= kShareTolerance * share;
    r.detail = fmt::format("COMM_BOUND saves {} of the {} phase: share {:.3f}; truth: all-reduce share {:.3f} "
                           "(1 - ({:.3f} s / {}) / ({:.3f} s / {}))",
                           seconds(saving), seconds(base->seconds()), found, share, median(accum->stepSeconds),
                           accum->microSteps, median(base->stepSeconds), base->microSteps);
    ev.rows.push_back(r);
    for (PhaseFinding& pf : ev.phases)
        if (pf.fixture == run.id && pf.phase == kShareCommPhase)
            pf.extra = fmt::format("COMM_BOUND share {:.2f} (truth all-reduce {:.2f})", found, share);
}

void checkPair(const FixtureRun& before, const FixtureRun& after, Evaluation& ev)
{
    CheckRow r{7, before.id, before.truth.phases.empty() ? "(run)" : before.truth.phases.front().name,
               "primary saves at least the measured change"};
    std::vector<double> b, a;
    for (const TruthStep& s : before.truth.steps)
        if (s.rank == 0) b.push_back(s.seconds);
    for (const TruthStep& s : after.truth.steps)
        if (s.rank == 0) a.push_back(s.seconds);
    if (before.truth.phases.size() != 1 || b.empty() || a.empty()) {
        r.detail = "truth of before/after is not one phase with steps";
        ev.rows.push_back(r);
        return;
    }
    const TruthPhase& p = before.truth.phases.front();
    const double change = 1 - median(a) / median(b);
    const Primary primary = primaryWithin(before.analysis.findings, p.startNs, p.endNs);
    const double share = primary.savingS / p.seconds();
    r.pass = primary.finding && share >= change;
    r.detail = fmt::format("{} saves {} of the {} phase: {:.3f}; measured change 1 - {:.4f} s / {:.4f} s = {:.3f}",
                           primary.finding ? primary.finding->rule : "no primary", seconds(primary.savingS),
                           seconds(p.seconds()), share, median(a), median(b), change);
    ev.rows.push_back(r);
    for (PhaseFinding& pf : ev.phases)
        if (pf.fixture == before.id && pf.phase == p.name)
            pf.extra = fmt::format("saves {:.2f} of the phase (after/before: −{:.2f})", share, change);
}

void checkCritical(const FixtureRun& run, std::vector<CheckRow>& rows)
{
    CheckRow r{8, run.id, "(run)", "every critical finding saves time"};
    std::vector<std::string> bad;
    for (const analysis::Finding& f : run.analysis.findings)
        if (f.severity == "critical" && f.savingS <= 0)
            bad.push_back(fmt::format("{} ({}) saves {}", f.rule, f.title, seconds(f.savingS)));
    r.pass = bad.empty();
    r.detail = r.pass ? "yes" : fmt::format("{}", fmt::join(bad, "; "));
    rows.push_back(r);
}

Evaluation evaluate(const QString& fixtures)
{
    Evaluation ev;
    for (const std::string& id : kFixtures)
        ev.runs.push_back(importAndAnalyse(fixtures, id));
    for (const FixtureRun& run : ev.runs) {
        CheckRow imported{0, run.id, "(run)", "imported and analysed, truth read"};
        imported.skip = !run.present;
        imported.pass = run.present && run.error.empty() && run.truth.problems.empty();
        imported.detail = !run.present         ? "the fixture is absent"
                          : !run.error.empty() ? run.error
                          : imported.pass      ? run.importSummary
                                               : fmt::format("truth: {}", fmt::join(run.truth.problems, "; "));
        ev.rows.push_back(imported);
        if (!run.present) continue;
        CheckRow leftOut{0, run.id, "(run)", "runlens import of the folder leaves truth/ out"};
        leftOut.pass = run.truthImportable.empty();
        leftOut.detail = leftOut.pass ? "no file of truth/ is recognised as an input"
                                      : fmt::format("recognised as input: {}", fmt::join(run.truthImportable, ", "));
        ev.rows.push_back(leftOut);
        if (!run.error.empty()) continue;
        checkEvents(run, ev.rows);
        checkPhases(run, ev);
        if (run.id == kStragglerFixture) checkStraggler(run, ev.rows);
        if (std::find(kNoCommunication.begin(), kNoCommunication.end(), run.id) != kNoCommunication.end())
            checkNoComm(run, ev.rows);
        if (run.id == kShareFixture) checkShare(run, ev);
        checkCritical(run, ev.rows);
    }
    const FixtureRun* before = ev.run(kPairBefore);
    const FixtureRun* after = ev.run(kPairAfter);
    if (before && after && before->present && after->present && before->error.empty() && after->error.empty())
        checkPair(*before, *after, ev);
    return ev;
}

// ---------------------------------------------------------------------------------------------------------------
// The table (RUNLENS_TRUTH_TABLE)
// ---------------------------------------------------------------------------------------------------------------

std::string truthOfPhase(const Truth& t, const TruthPhase& p)
{
    std::vector<std::string> parts;
    parts.push_back(fmt::format("{} {}", span(p.startNs, p.endNs), seconds(p.seconds())));
    if (!p.stepSeconds.empty())
        parts.push_back(fmt::format("median step {:.4g} s × {}{}", median(p.stepSeconds), p.stepSeconds.size(),
                                    p.microSteps > 0 ? fmt::format(", micro_steps {}", p.microSteps) : ""));
    else
        parts.push_back("no steps");
    auto count = [&](auto const& events, const char* what, auto durationS) {
        int n = 0;
        std::vector<std::string> d;
        for (const auto& e : events)
            if (t.phaseAt(e.startNs) == p.name) {
                ++n;
                d.push_back(durationS(e));
            }
        if (n > 0) parts.push_back(fmt::format("{} {} ({})", n, what, fmt::join(d, ", ")));
    };
    count(t.checkpoints, "checkpoint(s)", [](const TruthEvent& e) { return seconds((e.endNs - e.startNs) / 1e9); });
    count(t.hostPauses, "host pause(s)",
          [](const TruthEvent& e) { return e.frame + " " + seconds((e.endNs - e.startNs) / 1e9); });
    count(t.asyncCheckpoints, "async checkpoint(s)",
          [](const TruthAsync& e) { return "write " + seconds((e.endNs - e.writeStartNs) / 1e9); });
    if (!p.note.empty()) parts.push_back(p.note);
    return fmt::format("{}", fmt::join(parts, "; "));
}

// The run's findings: rule, saving and role when not primary.
std::string findingsOf(const analysis::RunAnalysis& a)
{
    std::vector<std::string> parts;
    for (const analysis::Finding& f : a.findings) {
        const std::string role = analysis::roleOf(f);
        parts.push_back(fmt::format("{} {}{}", f.rule, seconds(f.savingS), role == "primary" ? "" : " (" + role + ")"));
    }
    return parts.empty() ? std::string("no findings") : fmt::format("findings: {}", fmt::join(parts, ", "));
}

std::string cell(std::string s)
{
    for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2)
        s.replace(i, 1, "\\|");
    return s;
}

std::string table(const Evaluation& ev)
{
    std::string out;
    out += "| fixture | phase | truth (rank 0) | expected primary | RunLens: phase primary (saving in phase) | "
           "truth events found | checks |\n|---|---|---|---|---|---|---|\n";
    auto rowsOf = [&](const std::string& fixture, const std::string& phase) {
        std::vector<const CheckRow*> rows;
        for (const CheckRow& r : ev.rows)
            if (r.fixture == fixture && r.phase == phase) rows.push_back(&r);
        return rows;
    };
    auto checks = [](const std::vector<const CheckRow*>& rows) {
        std::map<int, std::string> marks;
        for (const CheckRow* r : rows)
            marks[r->check] += r->skip ? "–" : r->pass ? "✓" : "✗";
        std::vector<std::string> parts;
        for (const auto& [n, m] : marks)
            parts.push_back(fmt::format("{} {}", n, m));
        return parts.empty() ? std::string("—") : fmt::format("{}", fmt::join(parts, " · "));
    };
    auto events = [](const std::vector<const CheckRow*>& rows) {
        int ckpt = 0, ckptOk = 0, pause = 0, pauseOk = 0, off = 0, async = 0, asyncOk = 0;
        for (const CheckRow* r : rows) {
            if (r->kind == "checkpoint") ++ckpt, ckptOk += r->pass;
            if (r->kind == "host_pause") ++pause, pauseOk += r->pass;
            if (r->kind == "stall_episode") off += !r->pass;
            if (r->kind == "async") ++async, asyncOk += r->pass;
        }
        std::vector<std::string> parts;
        if (ckpt) parts.push_back(fmt::format("checkpoints {}/{}", ckptOk, ckpt));
        if (pause) parts.push_back(fmt::format("host pauses {}/{}", pauseOk, pause));
        if (async) parts.push_back(fmt::format("async not a stall {}/{}", asyncOk, async));
        if (off) parts.push_back(fmt::format("{} stall episode(s) off truth", off));
        return parts.empty() ? std::string("—") : fmt::format("{}", fmt::join(parts, ", "));
    };
    for (const FixtureRun& run : ev.runs) {
        for (const TruthPhase& p : run.truth.phases) {
            const PhaseFinding* pf = nullptr;
            for (const PhaseFinding& x : ev.phases)
                if (x.fixture == run.id && x.phase == p.name) pf = &x;
            const auto rows = rowsOf(run.id, p.name);
            std::string found = pf ? pf->found : "—";
            if (pf && !pf->extra.empty()) found += "; " + pf->extra;
            out +=
                fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", run.id, p.name, cell(truthOfPhase(run.truth, p)),
                            pf ? pf->expected : "—", cell(found), events(rows), checks(rows));
        }
        const auto rows = rowsOf(run.id, "(run)");
        if (!rows.empty() || !run.present)
            out += fmt::format("| {} | (run) | {} | — | {} | {} | {} |\n", run.id,
                               run.present ? fmt::format("{} checkpoint(s), {} host pause(s), {} async checkpoint(s)",
                                                         run.truth.checkpoints.size(), run.truth.hostPauses.size(),
                                                         run.truth.asyncCheckpoints.size())
                                           : "absent",
                               run.present ? cell(findingsOf(run.analysis)) : "—", events(rows), checks(rows));
    }

    out += "\n| check | pass | fail |\n|---|---|---|\n";
    for (int n = 0; n < static_cast<int>(kCheckNames.size()); ++n) {
        int pass = 0, fail = 0;
        for (const CheckRow& r : ev.rows)
            if (r.check == n && !r.skip) (r.pass ? pass : fail)++;
        if (pass + fail > 0) out += fmt::format("| {}. {} | {} | {} |\n", n, kCheckNames[n], pass, fail);
    }
    out += "\nNot passing:\n\n";
    int failing = 0;
    for (const CheckRow& r : ev.rows)
        if (!r.pass && !r.skip) {
            ++failing;
            out += fmt::format("- check {}, `{}`: {}\n", r.check, r.tag(), r.detail);
        }
    if (failing == 0) out += "- none\n";
    return out;
}

// Computed once per process: every fixture imported and analysed.
const Evaluation& evaluation()
{
    static const Evaluation ev = evaluate(test::fixturesDir());
    return ev;
}

} // namespace

class TestFixtureTruth : public QObject
{
    Q_OBJECT

private:
    static void rowsOf(int check)
    {
        QTest::addColumn<int>("index");
        const std::vector<CheckRow>& rows = evaluation().rows;
        bool any = false;
        for (size_t i = 0; i < rows.size(); ++i)
            if (rows[i].check == check) {
                QTest::newRow(rows[i].tag().c_str()) << static_cast<int>(i);
                any = true;
            }
        if (!any) QTest::newRow("no rows") << -1;
    }
    static void verify(int index)
    {
        if (index < 0) QSKIP("nothing to check (a fixture this check needs is absent or failed to import)");
        const CheckRow& r = evaluation().rows[static_cast<size_t>(index)];
        if (r.skip) QSKIP(r.detail.c_str());
        qInfo("%s", r.detail.c_str());
        QVERIFY2(r.pass, r.detail.c_str());
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (test::fixturesDir().isEmpty()) QSKIP("../shared/fixtures is absent: nothing to check against real runs");
        QElapsedTimer timer;
        timer.start();
        const Evaluation& ev = evaluation();
        for (const FixtureRun& run : ev.runs)
            if (run.present) qInfo("%s: %s", run.id.c_str(), run.importSummary.c_str());
        qInfo("%zu fixture runs imported and analysed in %.1f s", ev.runs.size(), timer.elapsed() / 1e3);
    }

    // 0. Every fixture imports (no file fails) and its truth reads.
    void importedAndAnalysed_data() { rowsOf(0); }
    void importedAndAnalysed()
    {
        QFETCH(int, index);
        verify(index);
    }
    // 1. Every truth checkpoint (the union over the ranks) has a CKPT_GAP episode, every truth host pause a
    // HOST_STALL episode, both ends within 2 s; the host stall's evidence names truth's frame.
    void eventsFound_data() { rowsOf(1); }
    void eventsFound()
    {
        QFETCH(int, index);
        verify(index);
    }
    // 2. Every CKPT_GAP / HOST_STALL episode is within 2 s of a truth checkpoint / host pause; no CKPT_GAP episode
    // lies on an async checkpoint's write unless it is also near a synchronous one.
    void noStallAwayFromTruth_data() { rowsOf(2); }
    void noStallAwayFromTruth()
    {
        QFETCH(int, index);
        verify(index);
    }
    // 3. The phase's primary finding (largest savingWithin among findings neither contributing nor a symptom) is
    // the one its README names (kExpectedPrimary).
    void phasePrimary_data() { rowsOf(3); }
    void phasePrimary()
    {
        QFETCH(int, index);
        verify(index);
    }
    // 4. h200-gloo-straggler: a STRAGGLER finding names truth's late rank and the frame of its late work.
    void stragglerRankAndFrame_data() { rowsOf(4); }
    void stragglerRankAndFrame()
    {
        QFETCH(int, index);
        verify(index);
    }
    // 5. A run without communication has no COMM_BOUND finding.
    void noCommBoundWithoutCommunication_data() { rowsOf(5); }
    void noCommBoundWithoutCommunication()
    {
        QFETCH(int, index);
        verify(index);
    }
    // 6. h200-gloo-small: COMM_BOUND's saving in baseline over the phase's length is within 20 % of the all-reduce
    // share measured against accum.
    void allReduceShare_data() { rowsOf(6); }
    void allReduceShare()
    {
        QFETCH(int, index);
        verify(index);
    }
    // 7. h200-spin-pair: before's primary finding saves at least the step-time change the after run measured.
    void spinPairSaving_data() { rowsOf(7); }
    void spinPairSaving()
    {
        QFETCH(int, index);
        verify(index);
    }
    // 8. No critical finding saves nothing.
    void criticalFindingsSave_data() { rowsOf(8); }
    void criticalFindingsSave()
    {
        QFETCH(int, index);
        verify(index);
    }
};

int main(int argc, char* argv[])
{
    QCoreApplication app(argc, argv);
    const QString tablePath = qEnvironmentVariable("RUNLENS_TRUTH_TABLE");
    if (!tablePath.isEmpty()) {
        if (test::fixturesDir().isEmpty()) {
            qWarning("../shared/fixtures is absent: no table");
            return 77;
        }
        QFile out(tablePath);
        if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            qWarning("cannot write %s", qPrintable(tablePath));
            return 1;
        }
        out.write(QByteArray::fromStdString(table(evaluation())));
        return 0;
    }
    TestFixtureTruth tc;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&tc, argc, argv);
}

#include "tst_fixture_truth.moc"
