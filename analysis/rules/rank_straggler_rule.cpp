#include "analysis/rules/straggler_rule.h"
#include "analysis/rules/straggler_support.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

// Ranks (docs/design.md §5, STRAGGLER).

namespace runlens::analysis {

using namespace straggler;

namespace {

// The reference node needs at least this many step starts (two intervals) for its steps to be the windows.
constexpr size_t kMinReferenceStarts = 3;
// A window's logged step time is the first point logged from this long before its end on (a line written at the
// step's end may be stamped a moment before the step start detected after it).
constexpr int64_t kLogSlackNs = 1'000'000;
// A trainer that logs every N steps: its logged step time stands for the window's when it is clearly shorter than it.
constexpr double kLoggedStepShare = 0.9;
// A rank is present in a window when sampled to within this many of its sampling intervals of the window's end.
constexpr double kPresenceIntervals = 2;
// A joined window with less than this share of the samples needed (the last one, or one before a gap in the steps)
// is too noisy to compare: it is left out.
constexpr double kMinWindowShare = 0.5;
// Extra work that is at least this share checkpoint work makes the window a checkpoint's (CKPT_GAP's).
constexpr double kCheckpointExcessShare = 0.5;
// The jitter scale of the work shares is at least this (a share): identical ranks do not divide by zero.
constexpr double kMinScaleShare = 1e-6;
// ... and in a window at least this many samples' share of it (a work share counted from samples is known to a
// sample or so: a thread sampled at a fixed rate over a periodic step may count one sample more than its peers in
// every window by the phase it is sampled at, and when most shares are equal their spread says nothing of that).
constexpr double kResolutionSamples = 1;
// Confidence: traces and stacks agree; stacks alone; traces alone (a few profiled steps).
constexpr double kConfidenceBoth = 0.9, kConfidenceStacks = 0.75, kConfidenceTraces = 0.7;

// The steps the ranks are compared in: the most confident node's (checkpoint-long and restart-short ones left out),
// each with its step time (the trainer's logged step time where it logs one per interval of several steps); or the
// run's evidence slices when there are no steps.
std::vector<Window> rankWindows(const RunMetrics& m, const std::vector<StepTimes>& steps, const StragglerParams& q,
                                std::string* source)
{
    std::vector<Window> out;
    const StepTimes* ref = nullptr;
    for (const StepTimes& s : steps)
        if (s.startsNs.size() >= kMinReferenceStarts && (!ref || s.confidence > ref->confidence)) ref = &s;
    if (ref) {
        std::vector<double> durations;
        for (size_t k = 0; k + 1 < ref->startsNs.size(); ++k)
            durations.push_back(static_cast<double>(ref->startsNs[k + 1] - ref->startsNs[k]) / 1e9);
        const std::vector<store::Point>* logged = nullptr;
        for (const NodeMetrics& n : m.nodes)
            if (n.node == ref->node && !n.stepTimes.empty()) logged = &n.stepTimes;
        // Long steps stay: the ranks are compared within each, and extra work that is a checkpoint is told apart.
        for (size_t k = 0; k + 1 < ref->startsNs.size(); ++k) {
            const double d = durations[k];
            if (!(d > 0)) continue;
            Window w{ref->startsNs[k], ref->startsNs[k + 1], d};
            // A trainer that logs every N steps: its logged step time (the point that closes the interval).
            if (logged) {
                const auto at = std::lower_bound(logged->begin(), logged->end(), w.toNs - kLogSlackNs,
                                                 [](const store::Point& pt, int64_t ts) { return pt.tsNs < ts; });
                if (at != logged->end() && at->tsNs <= w.toNs + (w.toNs - w.fromNs) && at->value > 0 &&
                    at->value < kLoggedStepShare * d)
                    w.stepS = at->value;
            }
            out.push_back(w);
        }
        *source = ref->source;
        if (!out.empty()) return out;
    }
    *source = "evidence_slices";
    const TimeGrid& g = m.grid;
    const size_t per = g.slotsPerSlice(q.common.evidenceS);
    for (size_t a = 0; a < g.size; a += per)
        out.push_back({g.slotStart(a), g.slotStart(std::min(g.size, a + per)), kNaN});
    return out;
}

std::string unitName(const RankUnit& u)
{
    if (u.rank >= 0) return fmt::format("rank {}", u.rank);
    if (u.pid > 0) return fmt::format("pid {}", u.pid);
    return fmt::format("{} thread {}", u.node, u.thread);
}

struct RankStraggler
{
    size_t unit = 0;
    std::vector<size_t> late; // evaluated windows
    size_t judged = 0;
    double share = 0, peerShare = 0;
    std::vector<double> lateness; // share of the window, per late window
};

// (node, pid) -> rank, from the traces' CPU tracks.
std::map<std::pair<std::string, int64_t>, int64_t> ranksOfPids(const std::vector<store::TraceTrackInfo>& tracks)
{
    std::map<std::pair<std::string, int64_t>, int64_t> rankOfPid;
    for (const store::TraceTrackInfo& t : tracks) {
        bool ok = false;
        const int64_t pid = QString::fromStdString(t.pid).toLongLong(&ok);
        if (t.rank >= 0 && t.kind == "cpu" && ok && pid > 0) rankOfPid[{t.node, pid}] = t.rank;
    }
    return rankOfPid;
}

// The windows the ranks are compared in: steps joined until each holds straggler.window_samples samples of the
// sparsest-sampled rank; only where two ranks sample.
std::vector<Window> joinWindows(const std::vector<Window>& windows, const std::vector<RankUnit>& units, bool haveSteps,
                                const StragglerParams& q)
{
    std::vector<Window> groups;
    double interval = 0;
    for (const RankUnit& u : units)
        interval = std::max(interval, u.nominalS);
    const double need = q.windowSamples * interval;
    for (size_t k = 0; k < windows.size();) {
        Window g = windows[k];
        std::vector<double> stepS{windows[k].stepS};
        size_t j = k + 1;
        while (g.seconds() < need && j < windows.size() && windows[j].fromNs == g.toNs) {
            g.toNs = windows[j].toNs;
            stepS.push_back(windows[j].stepS);
            ++j;
        }
        g.stepS = haveSteps ? medianOf(stepS) : kNaN;
        k = j;
        size_t sampled = 0;
        for (const RankUnit& u : units)
            sampled += u.firstNs <= g.fromNs &&
                               u.lastNs >= g.toNs - static_cast<int64_t>(u.nominalS * kPresenceIntervals * 1e9)
                           ? 1
                           : 0;
        if (sampled >= 2 && g.seconds() >= kMinWindowShare * need) groups.push_back(g);
    }
    return groups;
}

// Per evaluated window, each member's lateness: its work share minus its peers' median (the part of the window they
// wait for it); *checkpointWindow marks the windows whose extra work is a checkpoint write (CKPT_GAP's);
// *sampleShare the share of the window one sample of its most sparsely sampled member stands for.
void cohortExcess(const std::vector<size_t>& members, const std::vector<RankUnit>& units,
                  const std::vector<Window>& groups, const Reads& r, std::vector<std::vector<double>>& excess,
                  std::vector<uint8_t>* checkpointWindow, std::vector<double>* sampleShare)
{
    const size_t ne = r.evaluated.size();
    for (size_t k = 0; k < ne; ++k) {
        const Window& w = groups[r.evaluated[k]];
        std::vector<double> work(members.size(), kNaN), ckpt(members.size(), kNaN);
        for (size_t i = 0; i < members.size(); ++i) {
            const RankUnit& u = units[members[i]];
            const Cell& cell = r.cells[k * units.size() + members[i]];
            // Present: sampled over the window (a waiting thread may have few samples when idle ones are dropped).
            if (cell.samples == 0 || u.firstNs > w.fromNs ||
                u.lastNs < w.toNs - static_cast<int64_t>(kPresenceIntervals * 1e9 * u.intervalS))
                continue;
            work[i] = std::min(1.0, static_cast<double>(cell.work) * u.intervalS / w.seconds());
            (*sampleShare)[k] = std::max((*sampleShare)[k], u.intervalS / w.seconds());
            ckpt[i] = std::min(1.0, static_cast<double>(cell.checkpoint) * u.intervalS / w.seconds());
        }
        const PeersMedians workPeers(work), ckptPeers(ckpt);
        for (size_t i = 0; i < members.size(); ++i) {
            if (!std::isfinite(work[i])) continue;
            const double peers = workPeers.without(work[i]);
            if (!std::isfinite(peers)) continue;
            excess[members[i]][k] = work[i] - peers;
            if (excess[members[i]][k] > 0 &&
                ckpt[i] - ckptPeers.without(ckpt[i]) >= kCheckpointExcessShare * excess[members[i]][k])
                (*checkpointWindow)[k] = 1;
        }
    }
}

// The cohort's stragglers: late in a window as a unit is late in a step (robust z on the shares, straggler.min_lag),
// in at least straggler.min_steps judged windows, straggler.intermittent of them, dominant over the median peer.
std::vector<RankStraggler> cohortStragglers(const std::vector<size_t>& members, const std::vector<RankUnit>& units,
                                            const std::vector<std::vector<double>>& excess,
                                            const std::vector<uint8_t>& checkpointWindow,
                                            const std::vector<double>& sampleShare, const StragglerParams& q)
{
    const size_t ne = checkpointWindow.size();
    std::vector<double> aboutOwn, absolute;
    for (size_t u : members) {
        const double own = medianOf(excess[u]);
        for (size_t k = 0; k < ne; ++k)
            if (std::isfinite(excess[u][k]) && !checkpointWindow[k]) {
                aboutOwn.push_back(std::abs(excess[u][k] - own));
                absolute.push_back(std::abs(excess[u][k]));
            }
    }
    if (absolute.empty()) return {};
    const double sigma =
        std::max({std::min(kMadToSigma * medianOf(aboutOwn), kQuartileToSigma * quantile(absolute, 0.25)), q.scaleFloor,
                  kMinScaleShare});
    std::vector<RankStraggler> late(members.size());
    for (size_t i = 0; i < members.size(); ++i) {
        late[i].unit = members[i];
        for (size_t k = 0; k < ne; ++k) {
            const double e = excess[members[i]][k];
            if (!std::isfinite(e) || checkpointWindow[k]) continue;
            ++late[i].judged;
            if (e >= q.minLag && e / std::max(sigma, kResolutionSamples * sampleShare[k]) >= q.z) {
                late[i].late.push_back(k);
                late[i].lateness.push_back(e);
            }
        }
        late[i].share =
            late[i].judged ? static_cast<double>(late[i].late.size()) / static_cast<double>(late[i].judged) : 0;
    }
    size_t allLate = 0, allJudged = 0;
    for (const RankStraggler& r : late) {
        allLate += r.late.size();
        allJudged += r.judged;
    }
    std::vector<RankStraggler> found;
    for (size_t i = 0; i < members.size(); ++i) {
        RankStraggler& r = late[i];
        if (static_cast<double>(r.judged) < q.minSteps || r.share < q.intermittent) continue;
        const size_t judged = r.judged;
        if (!lateBeyondChance(r.late.size(), judged, allLate - r.late.size(), allJudged - judged, members.size(),
                              q.significance))
            continue;
        std::vector<double> others;
        for (size_t j = 0; j < members.size(); ++j)
            if (j != i) others.push_back(late[j].share);
        r.peerShare = medianOf(others);
        if (r.share < q.dominance * r.peerShare) continue;
        if (!units[r.unit].waits && units[r.unit].rank < 0) continue;
        found.push_back(r);
    }
    return found;
}

// What the stragglers are judged on and named with.
struct Judged
{
    std::vector<Window> groups;
    Reads reads;
    RankFrames frames;
    std::map<std::string, std::vector<size_t>> cohorts; // the units that take part in the collectives, by cohort
    std::map<int64_t, RankTrace> traced;
    std::string stepSource;
    bool haveSteps = false;
    double wall = 0;
};

// A rank the traces show late: at straggler.intermittent of its profiled steps and dominant over its peers; null
// otherwise.
const RankTrace* traceStraggler(const std::map<int64_t, RankTrace>& traced, int64_t rank, const StragglerParams& q)
{
    const auto t = traced.find(rank);
    if (rank < 0 || t == traced.end() || t->second.lateSteps <= 0) return nullptr;
    const RankTrace& r = t->second;
    const double share = r.lateSteps / std::max(r.steps, 1.0);
    std::vector<double> others;
    for (const auto& [k, o] : traced)
        if (k != rank) others.push_back(o.lateSteps / std::max(o.steps, 1.0));
    if (share < q.intermittent || share < q.dominance * medianOf(others)) return nullptr;
    return &r;
}

// Impact, severity, title and recommendation of a rank straggler.
void finish(Finding& f, const Judged& j, const std::string& who, const std::string& frame, double perStep, double stepS,
            double share, const std::string& source, const StragglerParams& q)
{
    f.rule = "STRAGGLER";
    f.impact = j.wall > 0 ? std::min(1.0, f.savingS / j.wall) : 0;
    f.severity = q.severity.of(f.impact);
    const std::string late =
        std::isfinite(perStep) && std::isfinite(stepS) && stepS > 0
            ? fmt::format("{:.2f} s late ({:.0f} % of a {:.2f} s step)", perStep, 100 * perStep / stepS, stepS)
            : fmt::format("late for {:.0f} % of the time",
                          100 * f.evidence.value(QStringLiteral("lateness_share")).toDouble());
    f.title = fmt::format("Straggler: {} reaches the collectives {} in {:.0f} % of the {}{} while the others wait ({})",
                          who, late, 100 * share, j.haveSteps || source == "traces" ? "steps" : "windows",
                          frame.empty() ? std::string() : fmt::format(", busy in {}", frame), source);
    f.recommendation = fmt::format(
        "Every rank waits for {} at the collectives{}. Take that work off the step's critical path: move it to a "
        "background thread or a DataLoader worker, spread it over the ranks, or do it less often; check the rank's "
        "own data (uneven shards or sequence lengths: pack or bucket by length) and its host (CPU binding, other "
        "processes on its cores).",
        who, frame.empty() ? std::string() : fmt::format(" while it runs {}", frame));
}

// Episodes of a stack straggler: its late windows (each speaking for the unread ones up to the next read), touching
// ones joined, each saving the others' wait in it (lateness × window); with the lateness per step and the step times.
struct LateSpans
{
    std::vector<Window> windows;
    std::vector<double> perStep, stepTimes;
    double saving = 0, stepsAffected = 0;
};

LateSpans lateSpans(const RankStraggler& r, const Judged& j, Finding& f)
{
    LateSpans out;
    for (size_t i = 0; i < r.late.size(); ++i) {
        const size_t k = r.late[i];
        const Window& w = j.groups[j.reads.evaluated[k]];
        const Window span{w.fromNs, j.reads.spanTo[k], w.stepS};
        const double seconds = r.lateness[i] * span.seconds();
        if (!f.episodes.empty() && f.episodes.back().endNs >= span.fromNs) {
            f.episodes.back().endNs = span.toNs;
            f.episodes.back().savingS += seconds;
        } else {
            f.episodes.push_back({span.fromNs, span.toNs, seconds});
        }
        out.saving += seconds;
        out.windows.push_back(w);
        if (std::isfinite(w.stepS)) {
            out.perStep.push_back(r.lateness[i] * w.stepS);
            out.stepTimes.push_back(w.stepS);
            out.stepsAffected += span.seconds() / w.stepS;
        }
    }
    return out;
}

Expected<Finding> stackFinding(FlameSource& stacks, const std::vector<RankUnit>& units, const RankStraggler& r,
                               const Judged& j, const StragglerParams& q)
{
    const RankUnit& u = units[r.unit];
    const std::string who = unitName(u);
    const std::string named = u.rank >= 0 && u.pid > 0 ? fmt::format("{} (pid {})", who, u.pid) : who;
    Finding f;
    f.nodes = {u.node};
    const LateSpans late = lateSpans(r, j, f);
    f.savingS = late.saving;
    const double latePerStep = medianOf(late.perStep), stepS = medianOf(late.stepTimes);
    const RankTrace* t = traceStraggler(j.traced, u.rank, q);
    QJsonArray top;
    std::string frame;
    RUNLENS_TRY(topFrames(stacks, j.frames, units, r.unit, late.windows, q, &top, &frame));
    QJsonArray peers;
    for (size_t v : j.cohorts.at(u.cohort))
        if (v != r.unit) peers.append(QString::fromStdString(unitName(units[v])));
    QJsonArray waitFrames;
    for (int32_t key : j.frames.collectiveKeys)
        waitFrames.append(QString::fromStdString(j.frames.keyNames[static_cast<size_t>(key)]));
    const std::string source = t ? "traces+stacks" : "stacks";
    f.evidence =
        QJsonObject{{QStringLiteral("unit"), QString::fromStdString(who)},
                    {QStringLiteral("unit_kind"), QStringLiteral("rank")},
                    {QStringLiteral("late_rank"), static_cast<qint64>(u.rank)},
                    {QStringLiteral("late_process"), QString::fromStdString(u.process.empty() ? u.thread : u.process)},
                    {QStringLiteral("pid"), static_cast<qint64>(u.pid)},
                    {QStringLiteral("thread"), QString::fromStdString(u.thread)},
                    {QStringLiteral("peers"), peers},
                    {QStringLiteral("top_frames"), top},
                    {QStringLiteral("wait_frames"), waitFrames},
                    {QStringLiteral("lateness_share"), medianOf(r.lateness)},
                    {QStringLiteral("type"),
                     r.share >= q.persistent ? QStringLiteral("persistent") : QStringLiteral("intermittent")},
                    {QStringLiteral("share_of_steps"), r.share},
                    {QStringLiteral("peers_median_share"), r.peerShare},
                    {QStringLiteral("windows_judged"), static_cast<qint64>(r.judged)},
                    {QStringLiteral("late_windows"), static_cast<qint64>(r.late.size())},
                    {QStringLiteral("windows_read"), static_cast<qint64>(j.reads.evaluated.size())},
                    {QStringLiteral("windows"), static_cast<qint64>(j.groups.size())},
                    {QStringLiteral("step_source"), QString::fromStdString(j.stepSource)},
                    {QStringLiteral("source"), QString::fromStdString(source)},
                    {QStringLiteral("total_lag_s"), late.saving}};
    if (j.haveSteps) {
        f.evidence.insert(QStringLiteral("lateness_per_step_s"), latePerStep);
        f.evidence.insert(QStringLiteral("median_step_s"), stepS);
        f.evidence.insert(QStringLiteral("steps"), static_cast<qint64>(std::llround(late.stepsAffected)));
    }
    if (t) {
        f.evidence.insert(QStringLiteral("trace_lateness_per_step_s"), medianOf(t->latePerStepS));
        f.evidence.insert(QStringLiteral("trace_steps"), t->steps);
        f.evidence.insert(QStringLiteral("trace_late_steps"), t->lateSteps);
    }
    f.confidence = t ? kConfidenceBoth : kConfidenceStacks;
    finish(f, j, named, frame, latePerStep, stepS, r.share, source, q);
    return f;
}

// A rank late at the profiled collectives the stacks did not show (or there are none): its late steps as episodes,
// each saving the lateness of its steps; its frames when its process was sampled.
Expected<Finding> traceFinding(FlameSource& stacks, const std::vector<RankUnit>& units, int64_t rank,
                               const RankTrace& r, const Judged& j, const StragglerParams& q)
{
    const std::string who = fmt::format("rank {}", rank);
    Finding f;
    f.nodes = {r.node};
    std::vector<Window> spans = r.lateSpans;
    std::sort(spans.begin(), spans.end(), [](const Window& a, const Window& b) { return a.fromNs < b.fromNs; });
    std::vector<double> stepTimes;
    for (const Window& w : spans) {
        if (!f.episodes.empty() && f.episodes.back().endNs >= w.fromNs)
            f.episodes.back().endNs = std::max(f.episodes.back().endNs, w.toNs);
        else
            f.episodes.push_back({w.fromNs, w.toNs, 0});
        stepTimes.push_back(w.stepS);
    }
    const double perStep = medianOf(r.latePerStepS), stepS = medianOf(stepTimes);
    for (FindingEpisode& e : f.episodes) {
        double n = 0;
        for (const Window& w : spans)
            if (w.fromNs >= e.startNs && w.fromNs < e.endNs) n += 1;
        e.savingS = r.lateS * n / static_cast<double>(spans.size());
    }
    f.savingS = r.lateS;
    QJsonArray top;
    std::string frame;
    int64_t pid = 0;
    std::string process;
    for (size_t u = 0; u < units.size(); ++u)
        if (units[u].rank == rank && units[u].node == r.node) {
            pid = units[u].pid;
            process = units[u].process.empty() ? units[u].thread : units[u].process;
            RUNLENS_TRY(topFrames(stacks, j.frames, units, u, spans, q, &top, &frame));
            break;
        }
    if (pid == 0) pid = QString::fromStdString(r.pid).toLongLong();
    QJsonArray peers;
    for (const auto& [k, o] : j.traced)
        if (k != rank) peers.append(QString::fromStdString(fmt::format("rank {}", k)));
    f.evidence = QJsonObject{{QStringLiteral("unit"), QString::fromStdString(who)},
                             {QStringLiteral("unit_kind"), QStringLiteral("rank")},
                             {QStringLiteral("late_rank"), static_cast<qint64>(rank)},
                             {QStringLiteral("late_process"), QString::fromStdString(process)},
                             {QStringLiteral("pid"), static_cast<qint64>(pid)},
                             {QStringLiteral("peers"), peers},
                             {QStringLiteral("top_frames"), top},
                             {QStringLiteral("lateness_per_step_s"), perStep},
                             {QStringLiteral("median_step_s"), stepS},
                             {QStringLiteral("steps"), r.lateSteps},
                             {QStringLiteral("trace_steps"), r.steps},
                             {QStringLiteral("trace_late_steps"), r.lateSteps},
                             {QStringLiteral("share_of_steps"), r.lateSteps / r.steps},
                             {QStringLiteral("lateness_share"), stepS > 0 ? perStep / stepS : kNaN},
                             {QStringLiteral("source"), QStringLiteral("traces")},
                             {QStringLiteral("total_lag_s"), r.lateS}};
    f.confidence = kConfidenceTraces;
    finish(f, j, who, frame, perStep, stepS, r.lateSteps / r.steps, "traces", q);
    f.title = fmt::format(
        "Straggler: {} reaches the collectives {:.2f} s late ({:.0f} % of a {:.2f} s step) in {:.0f} of {:.0f} "
        "profiled steps{} while the others wait (traces)",
        who, perStep, 100 * perStep / stepS, stepS, r.lateSteps, r.steps,
        frame.empty() ? std::string() : fmt::format(", busy in {}", frame));
    return f;
}

} // namespace

Expected<std::vector<Finding>> rankStragglerRule(const RunMetrics& m, const std::vector<StepTimes>& steps,
                                                 FlameSource& stacks, store::TraceReader* traces,
                                                 const RuleParams& params, const std::atomic<bool>* cancel)
{
    const StragglerParams q = StragglerParams::from(params);
    Judged j;
    j.wall = m.grid.seconds();
    const std::vector<Window> windows = rankWindows(m, steps, q, &j.stepSource);
    j.haveSteps = j.stepSource != "evidence_slices";
    // The traces: ranks, their pids, and how late each was at the profiled collectives.
    std::vector<store::TraceTrackInfo> tracks;
    if (traces) {
        RUNLENS_ASSIGN_OR_RETURN(auto t, traces->tracks());
        tracks = std::move(t);
        RUNLENS_ASSIGN_OR_RETURN(auto l, traceLateness(*traces, tracks, windows, q));
        j.traced = std::move(l);
    }
    RUNLENS_ASSIGN_OR_RETURN(auto units, rankUnits(stacks, ranksOfPids(tracks)));
    if (!units.empty()) {
        // What counts as waiting: communication, GPU-wait and idle frames, and the frames the collectives run under.
        RUNLENS_ASSIGN_OR_RETURN(auto classified, rankFrames(stacks, units, j.traced, q));
        j.frames = std::move(classified);
        j.groups = joinWindows(windows, units, j.haveSteps, q);
    }
    RUNLENS_ASSIGN_OR_RETURN(auto reads, readCells(stacks, units, j.groups, j.frames, q, cancel));
    j.reads = std::move(reads);
    // Per cohort: each rank's work share against its peers', window by window.
    for (size_t u = 0; u < units.size(); ++u)
        if (units[u].waits || units[u].rank >= 0) j.cohorts[units[u].cohort].push_back(u);
    std::vector<std::vector<double>> excess(units.size(), std::vector<double>(j.reads.evaluated.size(), kNaN));
    std::vector<RankStraggler> found;
    for (const auto& [cohort, members] : j.cohorts) {
        if (members.size() < 2) continue;
        std::vector<uint8_t> checkpointWindow(j.reads.evaluated.size(), 0);
        std::vector<double> sampleShare(j.reads.evaluated.size(), 0.0);
        cohortExcess(members, units, j.groups, j.reads, excess, &checkpointWindow, &sampleShare);
        for (RankStraggler& r : cohortStragglers(members, units, excess, checkpointWindow, sampleShare, q))
            found.push_back(std::move(r));
    }
    std::vector<Finding> out;
    std::set<int64_t> reported;
    for (const RankStraggler& r : found) {
        RUNLENS_ASSIGN_OR_RETURN(auto f, stackFinding(stacks, units, r, j, q));
        if (units[r.unit].rank >= 0) reported.insert(units[r.unit].rank);
        out.push_back(std::move(f));
    }
    // From the traces alone: a rank late at the profiled collectives the stacks did not show (or there are none).
    for (const auto& [rank, r] : j.traced) {
        if (reported.count(rank) || !traceStraggler(j.traced, rank, q) || r.steps < q.traceMinSteps ||
            r.lateSteps < q.traceShare * r.steps)
            continue;
        RUNLENS_ASSIGN_OR_RETURN(auto f, traceFinding(stacks, units, rank, r, j, q));
        out.push_back(std::move(f));
    }
    return out;
}

bool isRankStraggler(const Finding& f)
{
    return f.rule == "STRAGGLER" && f.evidence.value(QStringLiteral("unit_kind")).toString() == QLatin1String("rank");
}

} // namespace runlens::analysis
