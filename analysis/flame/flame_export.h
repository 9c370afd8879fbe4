#pragma once

// Flame trees as folded text ("frame;frame;leaf VALUE", root first, one line per call path with its self
// value), the format flamegraph.pl, speedscope and py-spy read. Frames are written the way py-spy writes them
// ("name (file:line)"), so an imported folded file comes back with the same stacks and totals.

#include "analysis/flame/flame_tree.h"

#include <cstdio>
#include <string>

namespace runlens::analysis {

enum class FlameValue
{
    Samples, // sample counts
    Weight,  // the source's weights (seconds for timed profilers, counts for folded files, perf periods)
};

// The subtree of `focus` (its ancestors kept in each line), or the whole tree for focus 0.
std::string foldedText(const FlameTree& tree, FlameValue value, int32_t focus = 0);

} // namespace runlens::analysis
