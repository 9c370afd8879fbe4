#pragma once

// The cause evidence of the rules: stack samples counted per phase, per node and evidence slice, in one pass over
// every thread's timed samples (a flame tree per slice would read the same samples once per slice and node).
// Slice k covers the grid slots [k × sliceSlots, (k + 1) × sliceSlots).

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/episodes.h"

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace runlens::analysis {

using PhaseCounts = std::array<int64_t, kPhaseCount>; // samples per phase (index = Phase)

// A slice's samples as shares of its busy (non-idle) samples.
struct SliceShares
{
    int64_t samples = 0; // all, idle included
    int64_t busy = 0;    // non-idle
    PhaseCounts counts{};
    bool hasBusy() const { return busy > 0; }
    double share(Phase p) const
    {
        return busy > 0 && p != Phase::Idle
                   ? static_cast<double>(counts[static_cast<size_t>(p)]) / static_cast<double>(busy)
                   : 0;
    }
};

class PhaseSlices
{
public:
    // Empty evidence: every slice without samples.
    PhaseSlices() = default;
    SliceShares at(const std::string& node, size_t slice) const;
    bool hasNode(const std::string& node) const { return m_byNode.count(node) > 0; }
    size_t sliceSlots() const { return m_sliceSlots; }

private:
    friend class PhaseSliceCounter;
    size_t m_sliceSlots = 1;
    std::map<std::string, std::vector<PhaseCounts>> m_byNode;
};

// Counts samples into PhaseSlices as they are read, so that a pass reading every thread's samples for another
// purpose (the host-stall scan) gives the slices too. Samples outside the grid are not counted.
class PhaseSliceCounter
{
public:
    PhaseSliceCounter(const TimeGrid& grid, size_t sliceSlots, std::shared_ptr<const std::vector<Phase>> phases);
    // The window every thread's samples are to be read over: the grid's.
    store::TimeWindow window() const { return m_window; }
    // A thread with timed samples on node: the node has slices, with samples or not.
    void thread(const std::string& node);
    void add(const std::string& node, const std::vector<store::StackSample>& samples);
    PhaseSlices finish() { return std::move(m_out); }

private:
    TimeGrid m_grid;
    std::shared_ptr<const std::vector<Phase>> m_phases;
    store::TimeWindow m_window;
    size_t m_slices = 0;
    int64_t m_sliceNs = 1;
    PhaseSlices m_out;
};

Expected<PhaseSlices> phaseSlices(FlameSource& stacks, const TimeGrid& grid, size_t sliceSlots,
                                  const std::atomic<bool>* cancel = nullptr);

} // namespace runlens::analysis
