#include "analysis/flame/flame_export.h"

#include <fmt/format.h>

namespace runlens::analysis {

std::string foldedText(const FlameTree& tree, FlameValue value, int32_t focus)
{
    std::string out;
    std::string prefix;
    const std::vector<std::string> above = tree.path(focus);
    for (size_t i = 0; i + 1 < above.size(); ++i)
        prefix += above[i] + ';';
    // Nodes are depth-first: the current path is kept as one string, cut back to the parent's length.
    std::string path = prefix;
    std::vector<size_t> lengthAtDepth(static_cast<size_t>(tree.maxDepth()) + 2, 0);
    const int32_t end = tree.subtreeEnd(focus);
    for (int32_t i = focus; i < end; ++i) {
        if (i == 0) continue;
        const FlameTree::Node& n = tree.node(i);
        const auto d = static_cast<size_t>(n.depth);
        if (i == focus) {
            path.resize(prefix.size());
        } else {
            path.resize(lengthAtDepth[d - 1]);
            if (!path.empty()) path += ';';
        }
        path += tree.label(i);
        lengthAtDepth[d] = path.size();
        const bool has = value == FlameValue::Samples ? n.selfSamples != 0 : n.selfWeight != 0;
        if (!has) continue;
        out += path;
        if (value == FlameValue::Samples)
            out += fmt::format(" {}\n", n.selfSamples);
        else
            out += fmt::format(" {}\n", n.selfWeight);
    }
    return out;
}

} // namespace runlens::analysis
