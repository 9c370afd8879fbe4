#include "analysis/rules/comm_stacks.h"

#include "analysis/flame/flame_search.h"

#include <QJsonObject>
#include <algorithm>
#include <map>
#include <string_view>

namespace runlens::analysis::comm {

namespace {

// A frame of the call into the autograd engine: the training thread waits there while the engine runs the backward
// pass (and, with DDP or FSDP, the gradient collectives it launches) in native code its Python stack cannot show.
bool isBackwardFrame(const store::FrameInfo& f)
{
    const auto endsWith = [](const std::string& s, std::string_view suffix) {
        return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (f.name == "_engine_run_backward") return endsWith(f.file, "torch/autograd/graph.py");
    if (f.name == "backward") return endsWith(f.file, "torch/autograd/__init__.py");
    return f.name == "THPEngine_run_backward";
}

} // namespace

// Per callsite, whether the stack is inside backward with the phase packs calling it gpu_wait (a communication frame
// below the backward frame makes it communication already).
Expected<std::vector<uint8_t>> backwardWaitCallsites(FlameSource& stacks)
{
    RUNLENS_ASSIGN_OR_RETURN(auto catalog, stacks.catalog());
    RUNLENS_ASSIGN_OR_RETURN(auto phases, stacks.callsitePhases());
    const store::StackCatalog& c = *catalog;
    // 0 unknown, 1 no, 2 yes; a callsite is inside backward when it or an ancestor is a backward frame.
    std::vector<uint8_t> inBackward(c.callsiteCount(), 0);
    if (!inBackward.empty()) inBackward[0] = 1;
    for (size_t cs = 1; cs < c.callsiteCount(); ++cs) {
        std::vector<size_t> path;
        size_t at = cs;
        while (inBackward[at] == 0) {
            path.push_back(at);
            const auto parent = static_cast<size_t>(c.parent[at]);
            if (parent == at || parent >= c.callsiteCount()) break;
            at = parent;
        }
        uint8_t state = inBackward[at] == 0 ? 1 : inBackward[at];
        for (auto it = path.rbegin(); it != path.rend(); ++it) {
            const auto frame = static_cast<size_t>(c.frame[*it]);
            if (state == 1 && frame < c.frames.size() && isBackwardFrame(c.frames[frame])) state = 2;
            inBackward[*it] = state;
        }
    }
    std::vector<uint8_t> out(c.callsiteCount(), 0);
    for (size_t cs = 0; cs < out.size() && cs < phases->size(); ++cs)
        out[cs] = inBackward[cs] == 2 && (*phases)[cs] == Phase::GpuWait ? 1 : 0;
    return out;
}

// Per evidence slice, the node's stack samples at the callsites marked in `waits`, over the runs of slices
// [first, end) given.
Expected<std::vector<int64_t>> backwardWaitSamples(FlameSource& stacks, const std::vector<uint8_t>& waits,
                                                   const std::vector<store::StackThreadInfo>& threads,
                                                   const std::string& node, const TimeGrid& grid, size_t sliceSlots,
                                                   size_t slices, const std::vector<std::pair<size_t, size_t>>& runs)
{
    std::vector<int64_t> out(slices, 0);
    const int64_t sliceNs = grid.stepNs * static_cast<int64_t>(sliceSlots);
    for (const store::StackThreadInfo& t : threads) {
        if (t.node != node || t.timedSamples == 0) continue;
        for (const auto& [first, end] : runs) {
            const store::TimeWindow window{grid.slotStart(first * sliceSlots),
                                           grid.slotStart(std::min(grid.size, end * sliceSlots)) - 1};
            RUNLENS_ASSIGN_OR_RETURN(auto samples, stacks.samples(t.id, window));
            for (const store::StackSample& s : samples) {
                const auto cs = static_cast<size_t>(s.callsiteId);
                if (cs >= waits.size() || !waits[cs]) continue;
                const auto slice = static_cast<size_t>((s.tsNs - grid.startNs) / sliceNs);
                if (slice < slices) out[slice] += s.count;
            }
        }
    }
    return out;
}

// One function reached along several call paths counts once per outermost occurrence, summed.
Expected<QJsonArray> topCommFrames(FlameSource& stacks, const std::vector<FindingEpisode>& episodes,
                                   const std::string& node, size_t count)
{
    FlameQuery fq;
    fq.window = {episodes.front().startNs, episodes.back().endNs - 1};
    fq.nodes = {node};
    fq.untimed = UntimedStacks::Exclude;
    RUNLENS_ASSIGN_OR_RETURN(auto tree, stacks.tree(fq));
    const auto byPhase = phaseSamples(*tree);
    const double busy =
        static_cast<double>(std::max<int64_t>(tree->totalSamples() - byPhase[static_cast<size_t>(Phase::Idle)], 1));
    std::map<std::string, int64_t> commFrames; // label -> samples under its outermost comm occurrences
    addOutermostFrames(*tree, Phase::Comm, commFrames);
    return topAmounts(commFrames, count, QStringLiteral("frame"), QStringLiteral("share"), busy);
}

} // namespace runlens::analysis::comm
