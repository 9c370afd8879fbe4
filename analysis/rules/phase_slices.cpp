#include "analysis/rules/phase_slices.h"

#include <algorithm>

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

PhaseSliceCounter::PhaseSliceCounter(const TimeGrid& grid, size_t sliceSlots,
                                     std::shared_ptr<const std::vector<Phase>> phases)
    : m_grid(grid), m_phases(std::move(phases))
{
    m_out.m_sliceSlots = std::max<size_t>(sliceSlots, 1);
    m_slices = (grid.size + m_out.m_sliceSlots - 1) / m_out.m_sliceSlots;
    m_window = store::TimeWindow{grid.startNs, grid.slotStart(grid.size) - 1};
    m_sliceNs = grid.stepNs * static_cast<int64_t>(m_out.m_sliceSlots);
}

void PhaseSliceCounter::thread(const std::string& node)
{
    if (m_grid.size == 0) return;
    auto& counts = m_out.m_byNode[node];
    if (counts.empty()) counts.assign(m_slices, PhaseCounts{});
}

void PhaseSliceCounter::add(const std::string& node, const std::vector<store::StackSample>& samples)
{
    if (m_grid.size == 0) return;
    thread(node);
    auto& counts = m_out.m_byNode[node];
    const std::vector<Phase>& phases = *m_phases;
    // Samples come in time order: the slice is found by a division only when a sample leaves the last one.
    size_t slice = 0;
    int64_t sliceFrom = 0, sliceTo = 0; // [from, to) of `slice`; empty before the first sample
    for (const store::StackSample& s : samples) {
        if (s.tsNs < m_window.fromNs || s.tsNs > m_window.toNs) continue;
        if (s.tsNs < sliceFrom || s.tsNs >= sliceTo) {
            slice = static_cast<size_t>((s.tsNs - m_grid.startNs) / m_sliceNs);
            sliceFrom = m_grid.startNs + static_cast<int64_t>(slice) * m_sliceNs;
            sliceTo = sliceFrom + m_sliceNs;
        }
        const auto cs = static_cast<size_t>(s.callsiteId);
        if (slice >= m_slices || cs >= phases.size()) continue;
        counts[slice][static_cast<size_t>(phases[cs])] += s.count;
    }
}

Expected<PhaseSlices> phaseSlices(FlameSource& stacks, const TimeGrid& grid, size_t sliceSlots,
                                  const std::atomic<bool>* cancel)
{
    RUNLENS_ASSIGN_OR_RETURN(auto threads, stacks.threads(FlameQuery{}));
    RUNLENS_ASSIGN_OR_RETURN(auto phases, stacks.callsitePhases());
    PhaseSliceCounter counter(grid, sliceSlots, phases);
    for (const store::StackThreadInfo& t : threads) {
        if (t.timedSamples == 0 || grid.size == 0) continue;
        if (cancel && cancel->load()) return makeError(ErrorCode::Cancelled, "cancelled");
        RUNLENS_ASSIGN_OR_RETURN(auto samples, stacks.samples(t.id, counter.window()));
        counter.add(t.node, samples);
    }
    return counter.finish();
}

} // namespace runlens::analysis
