#pragma once

// Where each block of a flame graph goes, independent of how it is drawn (screen, PNG, SVG, PDF report):
// rows by depth, horizontal extent as a fraction of the view. With a focus, the focused block spans the
// whole width, its descendants are rescaled to it, and its ancestors stay (full width, marked) above it.
// Blocks narrower than the minimum width are merged per parent into one "other" block, so nothing vanishes.

#include "analysis/flame/flame_tree.h"

#include <cstdint>
#include <vector>

namespace runlens::analysis {

struct FlameRect
{
    int32_t node = -1;     // tree node; -1 for an "other" block (merged narrow children of `parent`)
    int32_t parent = -1;   // for "other" blocks
    int32_t row = 0;       // 0 = the root row
    double x = 0;          // [0, 1)
    double width = 0;      // (0, 1]
    int64_t samples = 0;   // the block's value (sum of the merged blocks for "other")
    int32_t merged = 0;    // how many blocks an "other" block stands for
    bool ancestor = false; // above the focus
};

struct FlameLayout
{
    std::vector<FlameRect> rects; // parents before children
    int32_t rows = 0;
    int32_t focus = 0;
};

// minWidth: the narrowest block drawn, as a fraction of the view (e.g. 1 px / view width).
FlameLayout layoutFlame(const FlameTree& tree, int32_t focus, double minWidth);

// For a figure of bounded height: keeps the `keepAncestors` ancestors nearest the focus (the others' rows are
// dropped and the rest move up) and at most `maxRows` rows. Returns how many ancestor rows were dropped.
int trimLayout(FlameLayout& layout, int keepAncestors, int maxRows);

} // namespace runlens::analysis
