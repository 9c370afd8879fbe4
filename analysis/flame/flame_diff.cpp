#include "analysis/flame/flame_diff.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>

namespace runlens::analysis {

std::string DiffTree::label(int32_t i) const
{
    const DiffNode& n = node(i);
    if (n.file.empty()) return n.name;
    return n.line > 0 ? fmt::format("{} ({}:{})", n.name, n.file, n.line) : fmt::format("{} ({})", n.name, n.file);
}

int32_t DiffTree::find(const std::vector<std::string>& path) const
{
    int32_t at = 0;
    for (const std::string& want : path) {
        int32_t found = -1;
        for (int32_t c = node(at).firstChild; c >= 0 && found < 0; c = node(c).nextSibling)
            if (label(c) == want || node(c).name == want) found = c;
        if (found < 0) return -1;
        at = found;
    }
    return at;
}

namespace {

using Key = std::tuple<std::string_view, std::string_view, int64_t, std::string_view>;

Key keyOf(const FlameTree& t, int32_t i)
{
    return {t.name(i), t.file(i), t.line(i), t.module(i)};
}

struct Merger
{
    const FlameTree& a;
    const FlameTree& b;
    std::vector<DiffNode>& out;
    double totalA, totalB;

    void add(int32_t ia, int32_t ib, int32_t parent, int32_t depth)
    {
        DiffNode n;
        const FlameTree& src = ia >= 0 ? a : b;
        const int32_t si = ia >= 0 ? ia : ib;
        n.name = std::string(src.name(si));
        n.file = std::string(src.file(si));
        n.module = std::string(src.module(si));
        n.line = src.line(si);
        n.parent = parent;
        n.depth = depth;
        if (ia >= 0) {
            n.samplesA = a.node(ia).samples;
            n.selfA = a.node(ia).selfSamples;
        }
        if (ib >= 0) {
            n.samplesB = b.node(ib).samples;
            n.selfB = b.node(ib).selfSamples;
        }
        n.shareA = totalA > 0 ? static_cast<double>(n.samplesA) / totalA : 0;
        n.shareB = totalB > 0 ? static_cast<double>(n.samplesB) / totalB : 0;
        const auto index = static_cast<int32_t>(out.size());
        out.push_back(std::move(n));
        // Children of both sides, matched by frame; ordered by label like the trees themselves.
        std::map<Key, std::pair<int32_t, int32_t>> children;
        if (ia >= 0)
            for (int32_t c = a.node(ia).firstChild; c >= 0; c = a.node(c).nextSibling)
                children[keyOf(a, c)].first = c + 1;
        if (ib >= 0)
            for (int32_t c = b.node(ib).firstChild; c >= 0; c = b.node(c).nextSibling)
                children[keyOf(b, c)].second = c + 1;
        int32_t last = -1;
        for (const auto& [key, pair] : children) {
            const auto child = static_cast<int32_t>(out.size());
            if (last < 0)
                out[static_cast<size_t>(index)].firstChild = child;
            else
                out[static_cast<size_t>(last)].nextSibling = child;
            last = child;
            add(pair.first - 1, pair.second - 1, index, depth + 1);
        }
    }
};

} // namespace

std::shared_ptr<const DiffTree> diffTree(const FlameTree& a, const FlameTree& b)
{
    auto tree = std::make_shared<DiffTree>();
    tree->m_nodes.reserve(a.nodes().size() + b.nodes().size() / 4);
    Merger m{a, b, tree->m_nodes, static_cast<double>(a.totalSamples()), static_cast<double>(b.totalSamples())};
    m.add(0, 0, -1, 0);
    tree->m_nodes[0].name = "all";
    return tree;
}

std::shared_ptr<const FlameTree> diffAsFlameTree(const DiffTree& diff)
{
    auto tree = std::make_shared<FlameTree>();
    const auto& nodes = diff.nodes();
    tree->m_nodes.resize(nodes.size());
    tree->m_subtreeEnd.assign(nodes.size(), static_cast<int32_t>(nodes.size()));
    auto scaled = [](double share) { return static_cast<int64_t>(std::llround(share * static_cast<double>(kDiffScale))); };
    for (size_t i = 0; i < nodes.size(); ++i) {
        const DiffNode& d = nodes[i];
        store::FrameInfo f;
        f.name = d.name;
        f.file = d.file;
        f.line = d.line;
        f.module = d.module;
        tree->m_synthetic.push_back(std::move(f));
        FlameTree::Node& n = tree->m_nodes[i];
        n.frame = -static_cast<int32_t>(i) - 1;
        n.parent = d.parent;
        n.firstChild = d.firstChild;
        n.nextSibling = d.nextSibling;
        n.depth = d.depth;
        n.samples = scaled((d.shareA + d.shareB) / 2);
        const double selfA = diff.totalA() > 0 ? static_cast<double>(d.selfA) / static_cast<double>(diff.totalA()) : 0;
        const double selfB = diff.totalB() > 0 ? static_cast<double>(d.selfB) / static_cast<double>(diff.totalB()) : 0;
        n.selfSamples = scaled((selfA + selfB) / 2);
        n.weight = static_cast<double>(n.samples);
        n.selfWeight = static_cast<double>(n.selfSamples);
        tree->m_maxDepth = std::max(tree->m_maxDepth, d.depth);
    }
    // Subtree ends: depth-first order, so a subtree ends where the next node not below it starts.
    std::vector<int32_t> open;
    for (int32_t i = 0; i < static_cast<int32_t>(nodes.size()); ++i) {
        while (!open.empty() && open.back() != nodes[static_cast<size_t>(i)].parent) {
            tree->m_subtreeEnd[static_cast<size_t>(open.back())] = i;
            open.pop_back();
        }
        open.push_back(i);
    }
    return tree;
}

} // namespace runlens::analysis
