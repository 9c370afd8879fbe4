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

    // A pair of node sets waiting to become one diff node under parent.
    struct Pending
    {
        Nodes as, bs;
        int32_t parent;
        int32_t depth;
    };

    // The diff of the subtrees under as and bs, depth first with children in label order. Iterative (an explicit
    // stack, not recursion): a stack of 200,000 frames would overflow the thread's stack otherwise.
    void addTree(const Nodes& as, const Nodes& bs)
    {
        std::vector<int32_t> lastChild; // per diff node, its last child so far
        std::vector<Pending> todo;
        todo.push_back({as, bs, -1, 0});
        while (!todo.empty()) {
            Pending p = std::move(todo.back());
            todo.pop_back();
            const auto index = static_cast<int32_t>(out.size());
            if (p.parent >= 0) {
                int32_t& last = lastChild[static_cast<size_t>(p.parent)];
                if (last < 0)
                    out[static_cast<size_t>(p.parent)].firstChild = index;
                else
                    out[static_cast<size_t>(last)].nextSibling = index;
                last = index;
            }
            out.push_back(merged(p.as, p.bs, p.parent, p.depth));
            lastChild.push_back(-1);
            // Children of both sides, matched by frame; ordered by label like the trees themselves, so pushed in
            // reverse to come off the stack in order.
            std::map<Key, std::pair<Nodes, Nodes>> children;
            for (int32_t i : p.as)
                for (int32_t c = a.node(i).firstChild; c >= 0; c = a.node(c).nextSibling)
                    children[keyOf(a, c)].first.push_back(c);
            for (int32_t i : p.bs)
                for (int32_t c = b.node(i).firstChild; c >= 0; c = b.node(c).nextSibling)
                    children[keyOf(b, c)].second.push_back(c);
            for (auto it = children.rbegin(); it != children.rend(); ++it)
                todo.push_back({std::move(it->second.first), std::move(it->second.second), index, p.depth + 1});
        }
    }

    // One diff node of the nodes as (of a) and bs (of b), without links.
    DiffNode merged(const Nodes& as, const Nodes& bs, int32_t parent, int32_t depth) const
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
        return n;
    }
};

} // namespace

std::shared_ptr<const DiffTree> diffTree(const FlameTree& a, const FlameTree& b, const DiffOptions& options)
{
    auto tree = std::make_shared<DiffTree>();
    tree->m_nodes.reserve(a.nodes().size() + b.nodes().size() / 4);
    Merger m{a,
             b,
             tree->m_nodes,
             static_cast<double>(a.totalSamples()),
             static_cast<double>(b.totalSamples()),
             options.matchLines};
    m.addTree({0}, {0});
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
    auto scaled = [](double share) {
        return static_cast<int64_t>(std::llround(share * static_cast<double>(kDiffScale)));
    };
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
