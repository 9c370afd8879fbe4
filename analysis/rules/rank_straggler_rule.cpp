#include "analysis/rules/straggler_rule.h"
#include "analysis/rules/straggler_support.h"

#include <QJsonArray>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <optional>
#include <set>

// Ranks (docs/design.md §5, STRAGGLER).

namespace runlens::analysis {

using namespace straggler;

namespace {

// The number after a tag ("rank 3", "pid=618") in a thread or process name.
std::optional<int64_t> taggedNumber(const std::string& text, const char* tag)
{
    const QRegularExpression re(QStringLiteral("(?:^|[^A-Za-z])%1[\\s_:=#-]*(\\d+)").arg(QLatin1String(tag)),
                                QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(QString::fromStdString(text));
    if (!m.hasMatch()) return std::nullopt;
    bool ok = false;
    const qint64 v = m.captured(1).toLongLong(&ok);
    return ok ? std::optional<int64_t>(v) : std::nullopt;
}

// What a thread is across processes: its name without rank, pid and numbers ("MainThread", "pt_autograd_").
std::string threadRole(const std::string& name)
{
    QString s = QString::fromStdString(name);
    s.remove(QRegularExpression(QStringLiteral("(?:rank|pid|tid)[\\s_:=#-]*\\d+"),
                                QRegularExpression::CaseInsensitiveOption));
    s.remove(QRegularExpression(QStringLiteral("\\d+")));
    return s.simplified().toStdString();
}

// The steps the ranks are compared in: the most confident node's (checkpoint-long and restart-short ones left out),
// each with its step time (the trainer's logged step time where it logs one per interval of several steps); or the
// run's evidence slices when there are no steps.
std::vector<Window> rankWindows(const RunMetrics& m, const std::vector<StepTimes>& steps, const RuleParams& p,
                                std::string* source)
{
    std::vector<Window> out;
    const StepTimes* ref = nullptr;
    for (const StepTimes& s : steps)
        if (s.startsNs.size() >= 3 && (!ref || s.confidence > ref->confidence)) ref = &s;
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
                const auto at = std::lower_bound(logged->begin(), logged->end(), w.toNs - 1'000'000,
                                                 [](const store::Point& pt, int64_t ts) { return pt.tsNs < ts; });
                if (at != logged->end() && at->tsNs <= w.toNs + (w.toNs - w.fromNs) && at->value > 0 &&
                    at->value < 0.9 * d)
                    w.stepS = at->value;
            }
            out.push_back(w);
        }
        *source = ref->source;
        if (!out.empty()) return out;
    }
    *source = "evidence_slices";
    const TimeGrid& g = m.grid;
    const size_t per = g.slotsPerSlice(p.get("rules.evidence_s"));
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

// The timed samples of a unit's thread in [from, to), bucketed by window (windows sorted, disjoint); the gaps between
// consecutive samples go into the unit's gaps.
template <typename F>
Status readWindows(FlameSource& stacks, RankUnit& u, const std::vector<const Window*>& ws, F&& each)
{
    if (ws.empty()) return okStatus();
    RUNLENS_ASSIGN_OR_RETURN(auto samples, stacks.samples(u.threadId, {ws.front()->fromNs, ws.back()->toNs - 1}));
    int64_t prev = std::numeric_limits<int64_t>::min();
    size_t w = 0;
    for (const store::StackSample& s : samples) {
        if (prev != std::numeric_limits<int64_t>::min() && s.tsNs > prev && u.gaps.size() < 20000)
            u.gaps.push_back(static_cast<double>(s.tsNs - prev) / 1e9);
        prev = s.tsNs;
        while (w < ws.size() && ws[w]->toNs <= s.tsNs)
            ++w;
        if (w == ws.size()) break;
        if (s.tsNs >= ws[w]->fromNs) each(w, s);
    }
    return okStatus();
}

// Per window and unit: samples of its training thread, those in work (outside the waits) and in checkpoint work.
struct Cell
{
    int64_t samples = 0, work = 0, checkpoint = 0;
};

struct RankStraggler
{
    size_t unit = 0;
    std::vector<size_t> late; // evaluated windows
    size_t judged = 0;
    double share = 0, peerShare = 0;
    std::vector<double> lateness; // share of the window, per late window
};

} // namespace

Expected<std::vector<Finding>> rankStragglerRule(const RunMetrics& m, const std::vector<StepTimes>& steps,
                                                 FlameSource& stacks, store::TraceReader* traces, const RuleParams& p,
                                                 const std::atomic<bool>* cancel)
{
    std::vector<Finding> out;
    std::string stepSource;
    const std::vector<Window> windows = rankWindows(m, steps, p, &stepSource);
    const bool haveSteps = stepSource != "evidence_slices";

    // The traces: ranks, their pids, and how late each was at the profiled collectives.
    std::vector<store::TraceTrackInfo> tracks;
    std::map<int64_t, RankTrace> traced;
    if (traces) {
        RUNLENS_ASSIGN_OR_RETURN(auto t, traces->tracks());
        tracks = std::move(t);
        RUNLENS_ASSIGN_OR_RETURN(auto l, traceLateness(*traces, tracks, windows, p));
        traced = std::move(l);
    }
    std::map<std::pair<std::string, int64_t>, int64_t> rankOfPid; // (node, pid) -> rank
    for (const store::TraceTrackInfo& t : tracks) {
        bool ok = false;
        const int64_t pid = QString::fromStdString(t.pid).toLongLong(&ok);
        if (t.rank >= 0 && t.kind == "cpu" && ok && pid > 0) rankOfPid[{t.node, pid}] = t.rank;
    }

    // The ranks of the stacks: one training thread per process.
    auto threads = stacks.threads({});
    if (!threads) return threads.error();
    std::map<std::string, RankUnit> byProcess;
    for (const store::StackThreadInfo& t : *threads) {
        if (t.timedSamples < 2 || !t.firstNs || !t.lastNs || *t.lastNs <= *t.firstNs) continue;
        RankUnit u;
        u.node = t.node;
        u.process = t.process;
        u.thread = t.name;
        u.threadId = t.id;
        u.timedSamples = t.timedSamples;
        u.firstNs = *t.firstNs;
        u.lastNs = *t.lastNs;
        u.nominalS = static_cast<double>(u.lastNs - u.firstNs) / 1e9 / static_cast<double>(t.timedSamples - 1);
        u.pid = t.pid > 0 ? t.pid : taggedNumber(t.name, "pid").value_or(taggedNumber(t.process, "pid").value_or(0));
        u.rank = taggedNumber(t.name, "rank").value_or(taggedNumber(t.process, "rank").value_or(-1));
        // A main thread's tid is its process's pid.
        if (u.pid == 0 && t.tid > 0 && rankOfPid.count({t.node, t.tid})) u.pid = t.tid;
        if (u.rank < 0 && u.pid > 0 && rankOfPid.count({t.node, u.pid})) u.rank = rankOfPid[{t.node, u.pid}];
        // Processes with a pid are compared whatever their busiest thread is called; threads without one by role.
        u.cohort = u.pid > 0 ? std::string() : threadRole(t.name);
        const std::string key =
            u.pid > 0 ? fmt::format("{}/{}", t.node, u.pid) : fmt::format("{}/thread {}", t.node, t.id);
        auto [it, added] = byProcess.emplace(key, u);
        if (!added && u.timedSamples > it->second.timedSamples) it->second = u;
    }
    std::vector<RankUnit> units;
    {
        std::map<std::string, size_t> cohortSize;
        for (const auto& [key, u] : byProcess)
            ++cohortSize[u.cohort];
        for (auto& [key, u] : byProcess)
            if (cohortSize[u.cohort] >= 2) units.push_back(std::move(u));
    }

    // What counts as waiting: communication, GPU-wait and idle frames, and the frames the collectives run under.
    RankFrames frames;
    std::vector<Cell> cells;       // [evaluated window][unit]
    std::vector<size_t> evaluated; // indexes into windows
    std::vector<int64_t> spanTo;   // the end of the span each evaluated window speaks for
    if (!units.empty()) {
        RUNLENS_ASSIGN_OR_RETURN(auto classified, rankFrames(stacks, units, traced, p));
        frames = std::move(classified);
    }

    // The windows: steps joined until each holds straggler.window_samples samples; only where two ranks sample.
    std::vector<Window> groups;
    if (!units.empty()) {
        double interval = 0;
        for (const RankUnit& u : units)
            interval = std::max(interval, u.nominalS);
        const double need = p.get("straggler.window_samples") * interval;
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
                sampled += u.firstNs <= g.fromNs && u.lastNs >= g.toNs - static_cast<int64_t>(u.nominalS * 2e9) ? 1 : 0;
            if (sampled >= 2 && g.seconds() >= 0.5 * need) groups.push_back(g);
        }
    }
    // At most straggler.max_reads thread windows and straggler.max_samples samples, spread evenly.
    if (!groups.empty()) {
        double seconds = 0, interval = std::numeric_limits<double>::max();
        for (const Window& g : groups)
            seconds += g.seconds();
        for (const RankUnit& u : units)
            interval = std::min(interval, u.nominalS);
        const double perWindow =
            seconds / static_cast<double>(groups.size()) / interval * static_cast<double>(units.size());
        const double budget = std::max(std::min(p.get("straggler.max_reads") / static_cast<double>(units.size()),
                                                p.get("straggler.max_samples") / perWindow),
                                       2 * p.get("straggler.min_steps"));
        const size_t take = std::min(groups.size(), static_cast<size_t>(std::max(1.0, budget)));
        for (size_t k = 0; k < take; ++k)
            evaluated.push_back(k * groups.size() / take);
        for (size_t k = 0; k < evaluated.size(); ++k)
            spanTo.push_back(k + 1 < evaluated.size() && evaluated[k + 1] > evaluated[k] + 1
                                 ? groups[evaluated[k + 1] - 1].toNs
                                 : groups[evaluated[k]].toNs);
        cells.assign(evaluated.size() * units.size(), Cell{});
        for (size_t u = 0; u < units.size(); ++u) {
            if (cancel && cancel->load()) return makeError(ErrorCode::Cancelled, "analysis cancelled");
            // Contiguous evaluated windows are read together (up to 64 at a time).
            for (size_t k = 0; k < evaluated.size();) {
                std::vector<const Window*> run{&groups[evaluated[k]]};
                size_t j = k + 1;
                while (j < evaluated.size() && run.size() < 64 && groups[evaluated[j]].fromNs == run.back()->toNs)
                    run.push_back(&groups[evaluated[j++]]);
                const size_t base = k;
                Status s = readWindows(stacks, units[u], run, [&](size_t w, const store::StackSample& smp) {
                    Cell& cell = cells[(base + w) * units.size() + u];
                    cell.samples += smp.count;
                    const auto cs = static_cast<size_t>(smp.callsiteId);
                    const Kind kind = cs < frames.kinds.size() ? frames.kinds[cs] : Kind::Work;
                    if (kind != Kind::Wait)
                        cell.work += smp.count;
                    else if (cs != 0)
                        units[u].waits = true;
                    if (kind == Kind::Checkpoint) cell.checkpoint += smp.count;
                });
                if (!s) return s.error();
                k = j;
            }
            RankUnit& unit = units[u];
            unit.intervalS = unit.gaps.empty() ? unit.nominalS : medianOf(unit.gaps);
            unit.gaps = {};
        }
    }

    // Per cohort: each rank's work share against its peers', window by window.
    std::vector<RankStraggler> found;
    std::map<std::string, std::vector<size_t>> cohorts;
    for (size_t u = 0; u < units.size(); ++u)
        if (units[u].waits || units[u].rank >= 0) cohorts[units[u].cohort].push_back(u);
    const size_t ne = evaluated.size();
    std::vector<std::vector<double>> excess(units.size(), std::vector<double>(ne, kNaN));
    for (const auto& [cohort, members] : cohorts) {
        if (members.size() < 2) continue;
        std::vector<uint8_t> checkpointWindow(ne, 0);
        for (size_t k = 0; k < ne; ++k) {
            const Window& w = groups[evaluated[k]];
            std::vector<double> work(members.size(), kNaN), ckpt(members.size(), kNaN);
            for (size_t i = 0; i < members.size(); ++i) {
                const RankUnit& u = units[members[i]];
                const Cell& cell = cells[k * units.size() + members[i]];
                // Present: sampled over the window (a waiting thread may have few samples when idle ones are dropped).
                if (cell.samples == 0 || u.firstNs > w.fromNs ||
                    u.lastNs < w.toNs - static_cast<int64_t>(2e9 * u.intervalS))
                    continue;
                work[i] = std::min(1.0, static_cast<double>(cell.work) * u.intervalS / w.seconds());
                ckpt[i] = std::min(1.0, static_cast<double>(cell.checkpoint) * u.intervalS / w.seconds());
            }
            for (size_t i = 0; i < members.size(); ++i) {
                if (!std::isfinite(work[i])) continue;
                const double peers = peersMedian(work, i);
                if (!std::isfinite(peers)) continue;
                excess[members[i]][k] = work[i] - peers;
                // Extra work that is a checkpoint write is CKPT_GAP's.
                if (excess[members[i]][k] > 0 && ckpt[i] - peersMedian(ckpt, i) >= 0.5 * excess[members[i]][k])
                    checkpointWindow[k] = 1;
            }
        }
        // The jitter scale, as for the units above (shares of the window).
        std::vector<double> aboutOwn, absolute;
        for (size_t u : members) {
            const double own = medianOf(excess[u]);
            for (size_t k = 0; k < ne; ++k)
                if (std::isfinite(excess[u][k]) && !checkpointWindow[k]) {
                    aboutOwn.push_back(std::abs(excess[u][k] - own));
                    absolute.push_back(std::abs(excess[u][k]));
                }
        }
        if (absolute.empty()) continue;
        const double sigma =
            std::max({std::min(kMadToSigma * medianOf(aboutOwn), kQuartileToSigma * quantile(absolute, 0.25)),
                      p.get("straggler.scale_floor"), 1e-6});
        std::vector<RankStraggler> late(members.size());
        for (size_t i = 0; i < members.size(); ++i) {
            late[i].unit = members[i];
            for (size_t k = 0; k < ne; ++k) {
                const double e = excess[members[i]][k];
                if (!std::isfinite(e) || checkpointWindow[k]) continue;
                ++late[i].judged;
                if (e >= p.get("straggler.min_lag") && e / sigma >= p.get("straggler.z")) {
                    late[i].late.push_back(k);
                    late[i].lateness.push_back(e);
                }
            }
            late[i].share =
                late[i].judged ? static_cast<double>(late[i].late.size()) / static_cast<double>(late[i].judged) : 0;
        }
        for (size_t i = 0; i < members.size(); ++i) {
            RankStraggler& r = late[i];
            if (static_cast<double>(r.judged) < p.get("straggler.min_steps") ||
                r.share < p.get("straggler.intermittent"))
                continue;
            std::vector<double> others;
            for (size_t j = 0; j < members.size(); ++j)
                if (j != i) others.push_back(late[j].share);
            r.peerShare = medianOf(others);
            if (r.share < p.get("straggler.dominance") * r.peerShare) continue;
            if (!units[r.unit].waits && units[r.unit].rank < 0) continue;
            found.push_back(r);
        }
    }

    QJsonArray waitFrames;
    for (int32_t key : frames.collectiveKeys)
        waitFrames.append(QString::fromStdString(frames.keyNames[static_cast<size_t>(key)]));
    const double wall = m.grid.seconds();
    const auto traceStraggler = [&](int64_t rank) -> const RankTrace* {
        const auto t = traced.find(rank);
        if (rank < 0 || t == traced.end() || t->second.lateSteps <= 0) return nullptr;
        const RankTrace& r = t->second;
        const double share = r.lateSteps / std::max(r.steps, 1.0);
        std::vector<double> others;
        for (const auto& [k, o] : traced)
            if (k != rank) others.push_back(o.lateSteps / std::max(o.steps, 1.0));
        if (share < p.get("straggler.intermittent") || share < p.get("straggler.dominance") * medianOf(others))
            return nullptr;
        return &r;
    };
    std::set<int64_t> reported;
    const auto finish = [&](Finding& f, const std::string& who, const std::string& frame, double perStep, double stepS,
                            double share, const std::string& source) {
        f.rule = "STRAGGLER";
        f.impact = wall > 0 ? std::min(1.0, f.savingS / wall) : 0;
        f.severity = f.impact >= p.get("straggler.critical") ? "critical"
                     : f.impact >= p.get("straggler.warn")   ? "warn"
                                                             : "info";
        const std::string late =
            std::isfinite(perStep) && std::isfinite(stepS) && stepS > 0
                ? fmt::format("{:.2f} s late ({:.0f} % of a {:.2f} s step)", perStep, 100 * perStep / stepS, stepS)
                : fmt::format("late for {:.0f} % of the time",
                              100 * f.evidence.value(QStringLiteral("lateness_share")).toDouble());
        f.title =
            fmt::format("Straggler: {} reaches the collectives {} in {:.0f} % of the {}{} while the others wait ({})",
                        who, late, 100 * share, haveSteps || source == "traces" ? "steps" : "windows",
                        frame.empty() ? std::string() : fmt::format(", busy in {}", frame), source);
        f.recommendation = fmt::format(
            "Every rank waits for {} at the collectives{}. Take that work off the step's critical path: move it to a "
            "background thread or a DataLoader worker, spread it over the ranks, or do it less often; check the rank's "
            "own data (uneven shards or sequence lengths: pack or bucket by length) and its host (CPU binding, other "
            "processes on its cores).",
            who, frame.empty() ? std::string() : fmt::format(" while it runs {}", frame));
    };

    for (const RankStraggler& r : found) {
        const RankUnit& u = units[r.unit];
        const std::string who = unitName(u);
        const std::string named = u.rank >= 0 && u.pid > 0 ? fmt::format("{} (pid {})", who, u.pid) : who;
        Finding f;
        f.nodes = {u.node};
        // Episodes: the late windows (each speaking for the unread ones up to the next read), touching ones joined.
        std::vector<Window> lateWindows;
        std::vector<double> perStep, stepTimes;
        double saving = 0, stepsAffected = 0;
        for (size_t i = 0; i < r.late.size(); ++i) {
            const size_t k = r.late[i];
            const Window& w = groups[evaluated[k]];
            const Window span{w.fromNs, spanTo[k], w.stepS};
            const double seconds = r.lateness[i] * span.seconds();
            if (!f.episodes.empty() && f.episodes.back().endNs >= span.fromNs) {
                f.episodes.back().endNs = span.toNs;
                f.episodes.back().savingS += seconds;
            } else {
                f.episodes.push_back({span.fromNs, span.toNs, seconds});
            }
            saving += seconds;
            lateWindows.push_back(w);
            if (std::isfinite(w.stepS)) {
                perStep.push_back(r.lateness[i] * w.stepS);
                stepTimes.push_back(w.stepS);
                stepsAffected += span.seconds() / w.stepS;
            }
        }
        f.savingS = saving;
        const double latePerStep = medianOf(perStep), stepS = medianOf(stepTimes);
        const RankTrace* t = traceStraggler(u.rank);
        QJsonArray top;
        std::string frame;
        RUNLENS_TRY(topFrames(stacks, frames, units, r.unit, lateWindows, p, &top, &frame));
        QJsonArray peers;
        for (size_t v : cohorts[u.cohort])
            if (v != r.unit) peers.append(QString::fromStdString(unitName(units[v])));
        const std::string source = t ? "traces+stacks" : "stacks";
        f.evidence = QJsonObject{
            {QStringLiteral("unit"), QString::fromStdString(who)},
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
             r.share >= p.get("straggler.persistent") ? QStringLiteral("persistent") : QStringLiteral("intermittent")},
            {QStringLiteral("share_of_steps"), r.share},
            {QStringLiteral("peers_median_share"), r.peerShare},
            {QStringLiteral("windows_judged"), static_cast<qint64>(r.judged)},
            {QStringLiteral("late_windows"), static_cast<qint64>(r.late.size())},
            {QStringLiteral("windows_read"), static_cast<qint64>(ne)},
            {QStringLiteral("windows"), static_cast<qint64>(groups.size())},
            {QStringLiteral("step_source"), QString::fromStdString(stepSource)},
            {QStringLiteral("source"), QString::fromStdString(source)},
            {QStringLiteral("total_lag_s"), saving}};
        if (haveSteps) {
            f.evidence.insert(QStringLiteral("lateness_per_step_s"), latePerStep);
            f.evidence.insert(QStringLiteral("median_step_s"), stepS);
            f.evidence.insert(QStringLiteral("steps"), static_cast<qint64>(std::llround(stepsAffected)));
        }
        if (t) {
            f.evidence.insert(QStringLiteral("trace_lateness_per_step_s"), medianOf(t->latePerStepS));
            f.evidence.insert(QStringLiteral("trace_steps"), t->steps);
            f.evidence.insert(QStringLiteral("trace_late_steps"), t->lateSteps);
        }
        f.confidence = t ? 0.9 : 0.75;
        finish(f, named, frame, latePerStep, stepS, r.share, source);
        if (u.rank >= 0) reported.insert(u.rank);
        out.push_back(std::move(f));
    }
    // From the traces alone: a rank late at the profiled collectives the stacks did not show (or there are none).
    for (const auto& [rank, r] : traced) {
        if (reported.count(rank) || !traceStraggler(rank) || r.steps < p.get("straggler.trace_min_steps") ||
            r.lateSteps < p.get("straggler.trace_share") * r.steps)
            continue;
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
        // Each episode saves the lateness of its steps.
        const double perStep = medianOf(r.latePerStepS), stepS = medianOf(stepTimes);
        for (FindingEpisode& e : f.episodes) {
            double n = 0;
            for (const Window& w : spans)
                if (w.fromNs >= e.startNs && w.fromNs < e.endNs) n += 1;
            e.savingS = r.lateS * n / static_cast<double>(spans.size());
        }
        f.savingS = r.lateS;
        // The frames, when its process was sampled.
        QJsonArray top;
        std::string frame;
        int64_t pid = 0;
        std::string process;
        for (size_t u = 0; u < units.size(); ++u)
            if (units[u].rank == rank && units[u].node == r.node) {
                pid = units[u].pid;
                process = units[u].process.empty() ? units[u].thread : units[u].process;
                RUNLENS_TRY(topFrames(stacks, frames, units, u, spans, p, &top, &frame));
                break;
            }
        if (pid == 0) pid = QString::fromStdString(r.pid).toLongLong();
        QJsonArray peers;
        for (const auto& [k, o] : traced)
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
        f.confidence = 0.7;
        finish(f, who, frame, perStep, stepS, r.lateSteps / r.steps, "traces");
        f.title = fmt::format(
            "Straggler: {} reaches the collectives {:.2f} s late ({:.0f} % of a {:.2f} s step) in {:.0f} of {:.0f} "
            "profiled steps{} while the others wait (traces)",
            who, perStep, 100 * perStep / stepS, stepS, r.lateSteps, r.steps,
            frame.empty() ? std::string() : fmt::format(", busy in {}", frame));
        out.push_back(std::move(f));
    }
    return out;
}

bool isRankStraggler(const Finding& f)
{
    return f.rule == "STRAGGLER" && f.evidence.value(QStringLiteral("unit_kind")).toString() == QLatin1String("rank");
}

} // namespace runlens::analysis
