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

// The nodes of one side merged into one diff node: one, or (lines not matched) the siblings that differ by line.
using Nodes = std::vector<int32_t>;

struct Merger
{
    const FlameTree& a;
    const FlameTree& b;
    std::vector<DiffNode>& out;
    double totalA, totalB;
    bool matchLines;

    Key keyOf(const FlameTree& t, int32_t i) const
    {
        return {t.name(i), t.file(i), matchLines ? t.line(i) : 0, t.module(i)};
    }

    // The node of the most samples (the first of equals): its line is the one shown.
    static int32_t heaviest(const FlameTree& t, const Nodes& ns)
    {
        int32_t best = ns.front();
        for (int32_t i : ns)
            if (t.node(i).samples > t.node(best).samples) best = i;
        return best;
    }

    void add(const Nodes& as, const Nodes& bs, int32_t parent, int32_t depth)
    {
        DiffNode n;
        const FlameTree& src = !as.empty() ? a : b;
        const int32_t si = heaviest(src, !as.empty() ? as : bs);
        n.name = std::string(src.name(si));
        n.file = std::string(src.file(si));
        n.module = std::string(src.module(si));
        n.line = src.line(si);
        if (!bs.empty()) n.lineB = b.line(heaviest(b, bs));
        n.parent = parent;
        n.depth = depth;
        for (int32_t i : as) {
            n.samplesA += a.node(i).samples;
            n.selfA += a.node(i).selfSamples;
        }
        for (int32_t i : bs) {
            n.samplesB += b.node(i).samples;
            n.selfB += b.node(i).selfSamples;
        }
        n.shareA = totalA > 0 ? static_cast<double>(n.samplesA) / totalA : 0;
        n.shareB = totalB > 0 ? static_cast<double>(n.samplesB) / totalB : 0;
        const auto index = static_cast<int32_t>(out.size());
        out.push_back(std::move(n));
        // Children of both sides, matched by frame; ordered by label like the trees themselves.
        std::map<Key, std::pair<Nodes, Nodes>> children;
        for (int32_t i : as)
            for (int32_t c = a.node(i).firstChild; c >= 0; c = a.node(c).nextSibling)
                children[keyOf(a, c)].first.push_back(c);
        for (int32_t i : bs)
            for (int32_t c = b.node(i).firstChild; c >= 0; c = b.node(c).nextSibling)
                children[keyOf(b, c)].second.push_back(c);
        int32_t last = -1;
        for (const auto& [key, pair] : children) {
            const auto child = static_cast<int32_t>(out.size());
            if (last < 0)
                out[static_cast<size_t>(index)].firstChild = child;
            else
                out[static_cast<size_t>(last)].nextSibling = child;
            last = child;
            add(pair.first, pair.second, index, depth + 1);
        }
    }
};

} // namespace

std::shared_ptr<const DiffTree> diffTree(const FlameTree& a, const FlameTree& b, const DiffOptions& options)
{
    auto tree = std::make_shared<DiffTree>();
    tree->m_nodes.reserve(a.nodes().size() + b.nodes().size() / 4);
    Merger m{a, b, tree->m_nodes, static_cast<double>(a.totalSamples()), static_cast<double>(b.totalSamples()),
             options.matchLines};
    m.add({0}, {0}, -1, 0);
    tree->m_nodes[0].name = "all";
    tree->m_nodes[0].file.clear();
    tree->m_nodes[0].module.clear();
    tree->m_nodes[0].line = tree->m_nodes[0].lineB = 0;
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
