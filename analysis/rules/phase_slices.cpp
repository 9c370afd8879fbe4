#include "analysis/rules/phase_slices.h"

namespace runlens::analysis {

SliceShares PhaseSlices::at(const std::string& node, size_t slice) const
{
    SliceShares out;
    const auto it = m_byNode.find(node);
    if (it == m_byNode.end() || slice >= it->second.size()) return out;
    out.counts = it->second[slice];
    for (size_t p = 0; p < out.counts.size(); ++p) {
        out.samples += out.counts[p];
        if (static_cast<Phase>(p) != Phase::Idle) out.busy += out.counts[p];
    }
    return out;
}

Expected<PhaseSlices> phaseSlices(FlameSource& stacks, const TimeGrid& grid, size_t sliceSlots,
                                  const std::atomic<bool>* cancel)
{
    PhaseSlices out;
    out.m_sliceSlots = std::max<size_t>(sliceSlots, 1);
    if (grid.size == 0) return out;
    const size_t slices = (grid.size + out.m_sliceSlots - 1) / out.m_sliceSlots;
    RUNLENS_ASSIGN_OR_RETURN(auto threads, stacks.threads(FlameQuery{}));
    RUNLENS_ASSIGN_OR_RETURN(auto phases, stacks.callsitePhases());
    const store::TimeWindow window{grid.startNs, grid.slotStart(grid.size) - 1};
    const int64_t sliceNs = grid.stepNs * static_cast<int64_t>(out.m_sliceSlots);
    for (const store::StackThreadInfo& t : threads) {
        if (t.timedSamples == 0) continue;
        if (cancel && cancel->load()) return makeError(ErrorCode::Cancelled, "cancelled");
        RUNLENS_ASSIGN_OR_RETURN(auto samples, stacks.samples(t.id, window));
        auto& counts = out.m_byNode[t.node];
        if (counts.empty()) counts.assign(slices, PhaseCounts{});
        for (const store::StackSample& s : samples) {
            const auto slice = static_cast<size_t>((s.tsNs - grid.startNs) / sliceNs);
            const auto cs = static_cast<size_t>(s.callsiteId);
            if (slice >= slices || cs >= phases.get()->size()) continue;
            counts[slice][static_cast<size_t>((*phases)[cs])] += s.count;
        }
    }
    return out;
}

} // namespace runlens::analysis
