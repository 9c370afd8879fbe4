#include "analysis/rules/host_stall_rule.h"

#include "analysis/rules/ckpt_gap_rule.h"
#include "analysis/rules/steady_state.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <map>

namespace runlens::analysis {

namespace {

// A thread's samples are read an hour at a time: memory stays bounded by its blocks, not its samples.
constexpr int64_t kReadWindowNs = 3600LL * 1'000'000'000;
// The sampling period is the median of the thread's first intervals (enough to ignore the gaps of a paused sampler).
constexpr size_t kPeriodIntervals = 1000;
// A block on one stack is seen to the sample; whether it is the GPUs' cause rests on their idling at the same time.
constexpr double kConfidence = 0.8;

// A grid slot counts for a block when at least half of it lies inside the block; a block is left to a checkpoint gap
// or hang when at least half of it lies inside their episodes (in ns: exact).
bool atLeastHalf(int64_t part, int64_t whole)
{
    return 2 * part >= whole;
}

bool blockingPhase(Phase p)
{
    return p == Phase::Other || p == Phase::Idle;
}

bool trainingPhase(Phase p)
{
    return p == Phase::Compute || p == Phase::GpuWait || p == Phase::Comm;
}

// The frame that blocks: the leaf, or when the leaf is a wait (an idle frame: time.sleep's native frames, a lock),
// the innermost frame above the waits, which says who waits.
int32_t blockingFrame(const store::StackCatalog& cat, const std::vector<Phase>& phases, int64_t callsite)
{
    auto c = static_cast<size_t>(callsite);
    if (c >= phases.size() || c >= cat.frame.size()) return 0;
    if (phases[c] != Phase::Idle) return cat.frame[c];
    // Up to the outermost call on the path that is a wait: its caller is who waits.
    while (cat.parent[c] != 0 && phases[static_cast<size_t>(cat.parent[c])] == Phase::Idle)
        c = static_cast<size_t>(cat.parent[c]);
    return cat.parent[c] != 0 ? cat.frame[static_cast<size_t>(cat.parent[c])] : cat.frame[c];
}

std::string frameLabel(const store::StackCatalog& cat, int32_t frame)
{
    if (frame <= 0 || static_cast<size_t>(frame) >= cat.frames.size()) return "?";
    const store::FrameInfo& f = cat.frames[static_cast<size_t>(frame)];
    if (f.file.empty()) return f.name;
    return f.line > 0 ? fmt::format("{} ({}:{})", f.name, f.file, f.line) : fmt::format("{} ({})", f.name, f.file);
}

// seen, when given, is shown every window's samples as they are read.
Expected<ThreadScan> scanThread(FlameSource& stacks, const store::StackThreadInfo& t, const std::vector<Phase>& phases,
                                const HostStallParams& q, const std::atomic<bool>* cancel,
                                const std::function<void(const std::vector<store::StackSample>&)>& seen)
{
    ThreadScan out;
    out.thread = t;
    if (!t.firstNs || !t.lastNs) return out;
    const auto minNs = static_cast<int64_t>(q.minS * 1e9);
    const auto maxGapNs = static_cast<int64_t>(q.maxGapS * 1e9);
    const int64_t windowNs = kReadWindowNs;
    int64_t training = 0, total = 0;
    std::vector<int64_t> deltas; // the first inter-sample intervals: the thread's sampling period
    bool open = false;
    StackBlock run;
    int64_t lastTs = 0;
    int64_t cachedPeriod = -1; // once the deltas are all read
    const auto period = [&]() -> int64_t {
        if (cachedPeriod >= 0) return cachedPeriod;
        if (deltas.empty()) return 0;
        std::vector<int64_t> d = deltas;
        std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
        if (deltas.size() >= kPeriodIntervals) cachedPeriod = d[d.size() / 2];
        return d[d.size() / 2];
    };
    const auto close = [&]() {
        // The period is only wanted for runs that may be long enough (most runs are one sample).
        if (open && lastTs + maxGapNs - run.startNs >= minNs) {
            const int64_t periodNs = period();
            if (lastTs + periodNs - run.startNs < minNs) {
                open = false;
                return;
            }
            run.endNs = lastTs + periodNs;
            out.blocks.push_back(run);
        }
        open = false;
    };
    for (int64_t from = *t.firstNs; from <= *t.lastNs; from += windowNs) {
        if (cancel && cancel->load()) return makeError(ErrorCode::Cancelled, "analysis cancelled");
        RUNLENS_ASSIGN_OR_RETURN(auto samples, stacks.samples(t.id, {from, std::min(*t.lastNs, from + windowNs - 1)}));
        if (seen) seen(samples);
        for (const store::StackSample& s : samples) {
            const auto c = static_cast<size_t>(s.callsiteId);
            const Phase ph = c < phases.size() ? phases[c] : Phase::Other;
            total += s.count;
            if (trainingPhase(ph)) training += s.count;
            if (total > 1 && deltas.size() < kPeriodIntervals && s.tsNs > lastTs) deltas.push_back(s.tsNs - lastTs);
            if (open && (s.callsiteId != run.callsite || s.tsNs - lastTs > maxGapNs)) close();
            if (!open && blockingPhase(ph)) {
                open = true;
                run = {s.tsNs, s.tsNs, s.callsiteId};
            }
            lastTs = s.tsNs;
        }
    }
    close();
    out.periodNs = period();
    out.training = total > 0 && static_cast<double>(training) >= q.trainingShare * static_cast<double>(total);
    return out;
}

struct Block
{
    int64_t startNs = 0, endNs = 0;
    int64_t callsite = 0;
    std::string thread;
};

// The node's idle slots: every GPU stalls (gpuStalls) or runs at most stall.util_max.
std::vector<uint8_t> idleSlots(const std::vector<const GpuMetrics*>& gpus, const TimeGrid& grid, const CommonParams& c)
{
    std::vector<uint8_t> idle(grid.size, 1);
    for (const GpuMetrics* g : gpus) {
        const std::vector<uint8_t> stalls = gpuStalls(*g, c);
        for (size_t i = 0; i < grid.size; ++i) {
            const bool lowUtil = i < g->util.size() && std::isfinite(g->util[i]) && g->util[i] <= c.stallUtilMax;
            if (!(lowUtil || (i < stalls.size() && stalls[i]))) idle[i] = 0;
        }
    }
    return idle;
}

// The node's training threads' blocks from its steady state on that stall its GPUs (they idle in at least
// host_stall.gpu_idle_share of the slots the block covers) and that a checkpoint gap or hang does not explain.
std::vector<Block> stallingBlocks(const RunMetrics& m, const std::string& node, const std::vector<ThreadScan>& threads,
                                  const std::vector<uint8_t>& idle, const std::vector<Finding>& others,
                                  const HostStallParams& q)
{
    const TimeGrid& grid = m.grid;
    // Time a checkpoint gap or a hang already explains.
    std::vector<FindingEpisode> explained;
    for (const Finding& f : others)
        if ((f.rule == "CKPT_GAP" || f.rule == "HANG") &&
            std::find(f.nodes.begin(), f.nodes.end(), node) != f.nodes.end())
            explained.insert(explained.end(), f.episodes.begin(), f.episodes.end());
    // Start-up before the node's GPUs first work is not judged (loading the model blocks too).
    const int64_t steadyNs = grid.slotStart(steadyStartSlot(m, node, q.common));
    std::vector<Block> blocks;
    for (const ThreadScan& scan : threads) {
        if (scan.thread.node != node || !scan.training) continue;
        for (const StackBlock& sb : scan.blocks) {
            const Block b{sb.startNs, sb.endNs, sb.callsite, scan.thread.name};
            if (b.startNs < steadyNs) continue;
            // The GPUs idle in most of the slots the block covers (slots at least half inside it).
            size_t inside = 0, idleCount = 0;
            const auto [first, end] = grid.slotsOverlapping(b.startNs, b.endNs);
            for (size_t i = first; i < end; ++i) {
                const int64_t overlap =
                    std::min(b.endNs, grid.slotStart(i) + grid.stepNs) - std::max(b.startNs, grid.slotStart(i));
                if (!atLeastHalf(overlap, grid.stepNs)) continue;
                ++inside;
                idleCount += idle[i];
            }
            if (inside == 0 || static_cast<double>(idleCount) < q.gpuIdleShare * static_cast<double>(inside)) continue;
            int64_t explainedNs = 0;
            for (const FindingEpisode& e : explained)
                explainedNs += std::max<int64_t>(0, std::min(e.endNs, b.endNs) - std::max(e.startNs, b.startNs));
            if (atLeastHalf(explainedNs, b.endNs - b.startNs)) continue;
            blocks.push_back(b);
        }
    }
    return blocks;
}

// One finding for the node's blocks in one frame: ranks that block together are one event.
Finding frameFinding(const std::string& node, const std::vector<const GpuMetrics*>& gpus,
                     const store::StackCatalog& cat, int32_t frame, std::vector<Block>& list, const HostStallParams& q,
                     double wall)
{
    std::sort(list.begin(), list.end(), [](const Block& a, const Block& b) { return a.startNs < b.startNs; });
    std::vector<Block> events;
    std::vector<std::string> threadNames;
    for (const Block& b : list) {
        if (std::find(threadNames.begin(), threadNames.end(), b.thread) == threadNames.end())
            threadNames.push_back(b.thread);
        if (!events.empty() && b.startNs <= events.back().endNs)
            events.back().endNs = std::max(events.back().endNs, b.endNs);
        else
            events.push_back(b);
    }
    Finding f;
    f.rule = "HOST_STALL";
    f.nodes = {node};
    for (const GpuMetrics* g : gpus)
        f.gpus.push_back(fmt::format("{}:gpu{}", g->node, g->gpu));
    double stallS = 0;
    QJsonArray jsonEvents;
    for (const Block& e : events) {
        const double s = static_cast<double>(e.endNs - e.startNs) / 1e9;
        stallS += s;
        f.episodes.push_back({e.startNs, e.endNs, s});
        jsonEvents.append(QJsonObject{{QStringLiteral("start_ns"), static_cast<qint64>(e.startNs)},
                                      {QStringLiteral("end_ns"), static_cast<qint64>(e.endNs)},
                                      {QStringLiteral("stall_s"), s}});
    }
    const auto [period, cv] = periodOf(f.episodes);
    const bool periodic = q.periodic.holds(events.size(), cv);
    const std::string label = frameLabel(cat, frame);
    const std::string name = frame > 0 && static_cast<size_t>(frame) < cat.frames.size()
                                 ? cat.frames[static_cast<size_t>(frame)].name
                                 : label;
    const double mean = stallS / static_cast<double>(events.size());
    f.impact = wall > 0 ? stallS / wall : 0;
    f.savingS = stallS;
    f.severity = q.severity.of(f.impact);
    f.confidence = kConfidence;
    f.title =
        periodic ? fmt::format("The training thread on {} blocks in {} every {:.0f} s for {:.1f} s while the GPUs idle",
                               node, name, period, mean)
        : events.size() == 1
            ? fmt::format("The training thread on {} blocks in {} once, for {:.1f} s, while the GPUs idle", node, name,
                          mean)
            : fmt::format("The training thread on {} blocks in {} {} times, {:.1f} s each ({:.0f} s apart), while the "
                          "GPUs idle",
                          node, name, events.size(), mean, period);
    QJsonArray jsonThreads;
    for (const std::string& t : threadNames)
        jsonThreads.append(QString::fromStdString(t));
    f.evidence = QJsonObject{{QStringLiteral("frame"), QString::fromStdString(label)},
                             {QStringLiteral("threads"), jsonThreads},
                             {QStringLiteral("events"), jsonEvents},
                             {QStringLiteral("periodic"), periodic},
                             {QStringLiteral("period_s"), period},
                             {QStringLiteral("interval_cv"), cv},
                             {QStringLiteral("mean_stall_s"), mean},
                             {QStringLiteral("total_stall_s"), stallS}};
    f.recommendation = fmt::format(
        "Take {} off the training thread: run it in a background thread or process (a non-blocking client, a "
        "queue the training loop only appends to), or do it less often; the GPUs wait while it blocks.",
        name);
    return f;
}

} // namespace

HostStallParams HostStallParams::from(const RuleParams& p)
{
    HostStallParams q;
    q.common = CommonParams::from(p);
    q.minS = p.get("host_stall.min_s");
    q.maxGapS = p.get("host_stall.max_gap_s");
    q.trainingShare = p.get("host_stall.training_share");
    q.gpuIdleShare = p.get("host_stall.gpu_idle_share");
    q.periodic = PeriodicCuts::from(p, "host_stall");
    q.severity = SeverityCuts::from(p, "host_stall");
    return q;
}

Expected<std::vector<ThreadScan>> scanThreads(FlameSource& stacks, const RuleParams& p, const std::atomic<bool>* cancel,
                                              PhaseSliceCounter* slices)
{
    const HostStallParams q = HostStallParams::from(p);
    std::vector<ThreadScan> out;
    RUNLENS_ASSIGN_OR_RETURN(auto threads, stacks.threads({}));
    RUNLENS_ASSIGN_OR_RETURN(auto phases, stacks.callsitePhases());
    for (const store::StackThreadInfo& t : threads) {
        if (t.timedSamples == 0) continue;
        std::function<void(const std::vector<store::StackSample>&)> seen;
        if (slices) { // a thread with timed samples has their range: the scan reads them all
            slices->thread(t.node);
            seen = [&](const std::vector<store::StackSample>& samples) { slices->add(t.node, samples); };
        }
        RUNLENS_ASSIGN_OR_RETURN(auto scan, scanThread(stacks, t, *phases, q, cancel, seen));
        out.push_back(std::move(scan));
    }
    return out;
}

Expected<std::vector<Finding>> hostStallRule(const RunMetrics& m, FlameSource& stacks,
                                             const std::vector<ThreadScan>& threads, const RuleParams& params,
                                             const std::vector<Finding>& others)
{
    const HostStallParams q = HostStallParams::from(params);
    std::vector<Finding> out;
    if (threads.empty()) return out;
    RUNLENS_ASSIGN_OR_RETURN(auto phasesOr, stacks.callsitePhases());
    const std::vector<Phase>& phases = *phasesOr;
    RUNLENS_ASSIGN_OR_RETURN(auto catalog, stacks.catalog());
    const store::StackCatalog& cat = *catalog;
    for (const NodeMetrics& node : m.nodes) {
        std::vector<const GpuMetrics*> gpus;
        for (const GpuMetrics& g : m.gpus)
            if (g.node == node.node) gpus.push_back(&g);
        if (gpus.empty()) continue;
        const std::vector<uint8_t> idle = idleSlots(gpus, m.grid, q.common);
        // One finding per blocking frame.
        std::map<int32_t, std::vector<Block>> byFrame;
        for (const Block& b : stallingBlocks(m, node.node, threads, idle, others, q))
            byFrame[blockingFrame(cat, phases, b.callsite)].push_back(b);
        for (auto& [frame, list] : byFrame)
            out.push_back(frameFinding(node.node, gpus, cat, frame, list, q, m.grid.seconds()));
    }
    return out;
}

} // namespace runlens::analysis
