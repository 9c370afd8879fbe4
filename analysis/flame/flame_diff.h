#pragma once

// Differential flame trees: two trees (two windows, two node sets, two runs) merged by call path, each side
// normalised by its own total so that a window twice as long does not look like growth everywhere. Frames are
// matched by what they are (name, file, module and, unless told otherwise, line), never by store ids, so the two
// trees may come from different run files.

#include "analysis/flame/flame_tree.h"

#include <memory>
#include <string>
#include <vector>

namespace runlens::analysis {

struct DiffNode
{
    std::string name, file, module;
    int64_t line = 0;  // A's line (B's when only in B); with lines not matched, the heaviest merged frame's
    int64_t lineB = 0; // B's line (0 when not in B): differs from line only when lines were not matched
    int32_t parent = -1, firstChild = -1, nextSibling = -1, depth = 0;
    int64_t samplesA = 0, samplesB = 0; // totals (node and below)
    int64_t selfA = 0, selfB = 0;
    double shareA = 0, shareB = 0;                   // samples / the side's total samples
    double delta() const { return shareB - shareA; } // > 0: grew from A to B
    bool onlyInA() const { return samplesA > 0 && samplesB == 0; }
    bool onlyInB() const { return samplesB > 0 && samplesA == 0; }
};

struct DiffOptions
{
    // Match frames on their line too. Off for two runs of different code versions: a function whose lines moved
    // is still the same function (frames of one parent that differ only by line are then merged, per side).
    bool matchLines = true;
};

class DiffTree
{
public:
    const std::vector<DiffNode>& nodes() const { return m_nodes; }
    const DiffNode& node(int32_t i) const { return m_nodes[static_cast<size_t>(i)]; }
    int64_t totalA() const { return m_nodes.front().samplesA; }
    int64_t totalB() const { return m_nodes.front().samplesB; }
    std::string label(int32_t i) const;
    int32_t find(const std::vector<std::string>& path) const;

private:
    friend std::shared_ptr<const DiffTree> diffTree(const FlameTree& a, const FlameTree& b, const DiffOptions& options);
    std::vector<DiffNode> m_nodes; // depth-first; node 0 is the root
};

std::shared_ptr<const DiffTree> diffTree(const FlameTree& a, const FlameTree& b, const DiffOptions& options);
inline std::shared_ptr<const DiffTree> diffTree(const FlameTree& a, const FlameTree& b)
{
    return diffTree(a, b, DiffOptions{});
}

// The diff as a flame tree for layout and drawing: the same nodes in the same order (node i of one is node i of
// the other), each sized by the mean of its two normalised shares, so a frame of either side is visible and
// children never outgrow their parent. Samples are shares scaled to kDiffScale; phases are Other.
inline constexpr int64_t kDiffScale = 1'000'000'000;
std::shared_ptr<const FlameTree> diffAsFlameTree(const DiffTree& diff);

} // namespace runlens::analysis
