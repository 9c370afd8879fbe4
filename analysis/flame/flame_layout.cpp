#include "analysis/flame/flame_layout.h"

#include <algorithm>

namespace runlens::analysis {

FlameLayout layoutFlame(const FlameTree& tree, int32_t focus, double minWidth)
{
    FlameLayout out;
    if (focus < 0 || static_cast<size_t>(focus) >= tree.nodes().size()) focus = 0;
    out.focus = focus;
    // Ancestors of the focus: full width, one row each.
    std::vector<int32_t> chain;
    for (int32_t a = tree.node(focus).parent; a >= 0; a = tree.node(a).parent)
        chain.push_back(a);
    std::reverse(chain.begin(), chain.end());
    int32_t row = 0;
    for (int32_t a : chain) {
        FlameRect r;
        r.node = a;
        r.row = row++;
        r.width = 1;
        r.samples = tree.node(a).samples;
        r.ancestor = true;
        out.rects.push_back(r);
    }
    const double total = static_cast<double>(std::max<int64_t>(tree.node(focus).samples, 1));
    struct Item
    {
        int32_t node;
        double x;
        int32_t row;
    };
    std::vector<Item> todo{{focus, 0.0, row}};
    out.rows = row + 1;
    while (!todo.empty()) {
        const Item it = todo.back();
        todo.pop_back();
        const FlameTree::Node& n = tree.node(it.node);
        FlameRect r;
        r.node = it.node;
        r.row = it.row;
        r.x = it.x;
        r.width = static_cast<double>(n.samples) / total;
        r.samples = n.samples;
        out.rects.push_back(r);
        out.rows = std::max(out.rows, it.row + 1);
        double x = it.x;
        FlameRect other;
        for (int32_t c = n.firstChild; c >= 0; c = tree.node(c).nextSibling) {
            const double w = static_cast<double>(tree.node(c).samples) / total;
            if (w <= 0) continue;
            if (w < minWidth) {
                if (other.merged == 0) {
                    other.parent = it.node;
                    other.row = it.row + 1;
                    other.x = x;
                }
                other.width += w;
                other.samples += tree.node(c).samples;
                ++other.merged;
            } else {
                if (other.merged > 0) { // a run of narrow blocks ends: keep it where it was
                    out.rows = std::max(out.rows, other.row + 1);
                    out.rects.push_back(other);
                    other = FlameRect{};
                }
                todo.push_back({c, x, it.row + 1});
            }
            x += w;
        }
        if (other.merged > 0) {
            out.rows = std::max(out.rows, other.row + 1); // "other" blocks have a row too
            out.rects.push_back(other);
        }
    }
    return out;
}

int trimLayout(FlameLayout& layout, int keepAncestors, int maxRows)
{
    int ancestors = 0;
    for (const FlameRect& r : layout.rects)
        if (r.ancestor) ancestors = std::max(ancestors, r.row + 1);
    const int drop = std::max(0, ancestors - std::max(0, keepAncestors));
    std::vector<FlameRect> kept;
    kept.reserve(layout.rects.size());
    for (FlameRect r : layout.rects) {
        if (r.ancestor && r.row < drop) continue;
        r.row -= drop;
        if (r.row >= maxRows) continue;
        kept.push_back(r);
    }
    layout.rects = std::move(kept);
    layout.rows = std::min(layout.rows - drop, std::max(1, maxRows));
    return drop;
}

} // namespace runlens::analysis
