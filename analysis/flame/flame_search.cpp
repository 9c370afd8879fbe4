#include "analysis/flame/flame_search.h"

#include <QRegularExpression>
#include <QString>
#include <algorithm>
#include <fmt/format.h>
#include <unordered_map>
#include <vector>

namespace runlens::analysis {

namespace {

bool hasUpper(const std::string& s)
{
    return std::any_of(s.begin(), s.end(), [](unsigned char c) { return c >= 'A' && c <= 'Z'; });
}

bool containsFolded(std::string_view hay, const std::string& needleLower)
{
    auto it = std::search(hay.begin(), hay.end(), needleLower.begin(), needleLower.end(), [](char a, char b) {
        return static_cast<char>(std::tolower(static_cast<unsigned char>(a))) == b;
    });
    return it != hay.end();
}

// Functions as small integers: (name, file) interned per tree.
std::vector<int32_t> functionIds(const FlameTree& tree, std::vector<std::pair<std::string, std::string>>* names)
{
    std::unordered_map<std::string, int32_t> ids;
    std::vector<int32_t> out(tree.nodes().size(), -1);
    std::string key;
    for (size_t i = 1; i < out.size(); ++i) {
        const auto n = static_cast<int32_t>(i);
        key.assign(tree.name(n));
        key += '\0';
        key += tree.file(n);
        auto [it, added] = ids.emplace(key, static_cast<int32_t>(ids.size()));
        if (added && names) names->emplace_back(std::string(tree.name(n)), std::string(tree.file(n)));
        out[i] = it->second;
    }
    return out;
}

// Calls visit(i, outermost) for every node but the root in depth-first order; outermost: no ancestor is the
// same function.
template <typename Visit>
void walkOutermost(const FlameTree& tree, const std::vector<int32_t>& fn, size_t functions, Visit visit)
{
    std::vector<int32_t> active(functions, 0);
    std::vector<int32_t> chain;
    const auto count = static_cast<int32_t>(tree.nodes().size());
    for (int32_t i = 1; i < count; ++i) {
        while (!chain.empty() && i >= tree.subtreeEnd(chain.back())) {
            --active[static_cast<size_t>(fn[static_cast<size_t>(chain.back())])];
            chain.pop_back();
        }
        const auto f = static_cast<size_t>(fn[static_cast<size_t>(i)]);
        visit(i, active[f] == 0);
        ++active[f];
        chain.push_back(i);
    }
}

store::FrameInfo frameOf(const FlameTree& tree, int32_t i, bool withLine = true)
{
    store::FrameInfo f;
    f.name = std::string(tree.name(i));
    f.file = std::string(tree.file(i));
    f.line = withLine ? tree.line(i) : 0;
    f.module = std::string(tree.module(i));
    return f;
}

} // namespace

Expected<FlameSearch> searchFlame(const FlameTree& tree, const std::string& pattern, bool regex)
{
    FlameSearch out;
    out.pattern = pattern;
    const size_t n = tree.nodes().size();
    out.matched.assign(n, 0);
    out.relevant.assign(n, 0);
    if (pattern.empty()) return out;
    QRegularExpression re;
    if (regex) {
        re.setPattern(QString::fromStdString(pattern));
        if (!re.isValid())
            return makeError(ErrorCode::Usage,
                             fmt::format("search: {} at position {} of \"{}\"", re.errorString().toStdString(),
                                         re.patternErrorOffset(), pattern));
        re.optimize();
    }
    const bool caseSensitive = hasUpper(pattern);
    std::string lower = pattern;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    auto test = [&](int32_t i) {
        const std::string label = tree.label(i);
        if (regex) // anchors refer to the name ("^forward$"), the file can be matched too
            return re.match(QString::fromUtf8(tree.name(i).data(), static_cast<qsizetype>(tree.name(i).size())))
                       .hasMatch() ||
                   re.match(QString::fromStdString(label)).hasMatch();
        if (caseSensitive) return label.find(pattern) != std::string::npos;
        return containsFolded(label, lower);
    };
    // Each distinct frame is tested once (frames are shared by every call path through them).
    std::vector<int8_t> storeFrames, syntheticFrames; // -1 untested, 0 no, 1 match
    for (size_t i = 1; i < n; ++i) {
        const auto node = static_cast<int32_t>(i);
        const int32_t frame = tree.node(node).frame;
        std::vector<int8_t>& cache = frame >= 0 ? storeFrames : syntheticFrames;
        const auto slot = static_cast<size_t>(frame >= 0 ? frame : -1 - frame);
        if (slot >= cache.size()) cache.resize(std::max(slot + 1, cache.size() * 2), -1);
        if (cache[slot] < 0) cache[slot] = test(node) ? 1 : 0;
        out.matched[i] = static_cast<uint8_t>(cache[slot]);
    }
    // Relevant: every match with its subtree (marked once, for the outermost match) and its ancestors.
    int32_t coveredUntil = 0;
    for (size_t i = 1; i < n; ++i) {
        if (!out.matched[i]) continue;
        const auto node = static_cast<int32_t>(i);
        out.matches.push_back(node);
        if (node < coveredUntil) continue; // inside a marked subtree
        coveredUntil = tree.subtreeEnd(node);
        std::fill(out.relevant.begin() + node, out.relevant.begin() + coveredUntil, uint8_t{1});
        for (int32_t a = tree.node(node).parent; a >= 0 && !out.relevant[static_cast<size_t>(a)];
             a = tree.node(a).parent)
            out.relevant[static_cast<size_t>(a)] = 1;
        out.relevant[0] = 1;
    }
    for (size_t i = 1; i < n;) {
        const auto node = static_cast<int32_t>(i);
        if (out.matched[i]) {
            out.matchedSamples += tree.node(node).samples;
            i = static_cast<size_t>(tree.subtreeEnd(node));
        } else {
            ++i;
        }
    }
    out.share = tree.totalSamples() > 0
                    ? static_cast<double>(out.matchedSamples) / static_cast<double>(tree.totalSamples())
                    : 0.0;
    return out;
}

std::vector<FunctionTotal> functionTotals(const FlameTree& tree)
{
    std::vector<std::pair<std::string, std::string>> names;
    const std::vector<int32_t> fn = functionIds(tree, &names);
    std::vector<FunctionTotal> out(names.size());
    for (size_t k = 0; k < names.size(); ++k) {
        out[k].name = names[k].first;
        out[k].file = names[k].second;
    }
    walkOutermost(tree, fn, names.size(), [&](int32_t i, bool outermost) {
        const FlameTree::Node& nd = tree.node(i);
        FunctionTotal& t = out[static_cast<size_t>(fn[static_cast<size_t>(i)])];
        t.selfSamples += nd.selfSamples;
        t.selfWeight += nd.selfWeight;
        if (outermost) {
            t.samples += nd.samples;
            t.weight += nd.weight;
        }
    });
    std::stable_sort(out.begin(), out.end(), [](const FunctionTotal& a, const FunctionTotal& b) {
        return a.selfSamples != b.selfSamples ? a.selfSamples > b.selfSamples : a.samples > b.samples;
    });
    return out;
}

Sandwich sandwichOf(const FlameTree& tree, int32_t node)
{
    Sandwich out;
    if (node <= 0 || static_cast<size_t>(node) >= tree.nodes().size()) return out;
    std::vector<std::pair<std::string, std::string>> names;
    const std::vector<int32_t> fn = functionIds(tree, &names);
    const int32_t want = fn[static_cast<size_t>(node)];
    out.name = std::string(tree.name(node));
    out.file = std::string(tree.file(node));
    const store::FrameInfo self = frameOf(tree, node, false); // one block for the function, whatever its lines
    std::vector<FlameTree::Stack> callers, callees;
    walkOutermost(tree, fn, names.size(), [&](int32_t o, bool outermost) {
        if (!outermost || fn[static_cast<size_t>(o)] != want) return;
        const FlameTree::Node& on = tree.node(o);
        out.samples += on.samples;
        // Callers: the function, then its parent, grandparent ... up to the root's child.
        FlameTree::Stack up{{self}, on.samples, on.weight, on.phase};
        for (int32_t a = on.parent; a > 0; a = tree.node(a).parent)
            up.frames.push_back(frameOf(tree, a));
        callers.push_back(std::move(up));
        // Callees: every call path below this occurrence with its self samples, from the function down.
        std::vector<store::FrameInfo> path{self};
        std::vector<int32_t> chain{o};
        for (int32_t m = o; m < tree.subtreeEnd(o); ++m) {
            if (m != o) {
                while (chain.back() != tree.node(m).parent) {
                    chain.pop_back();
                    path.pop_back();
                }
                chain.push_back(m);
                path.push_back(frameOf(tree, m));
            }
            const FlameTree::Node& mn = tree.node(m);
            if (mn.selfSamples > 0 || mn.selfWeight > 0)
                callees.push_back({path, mn.selfSamples, mn.selfWeight, mn.phase});
        }
    });
    out.callers = FlameTree::fromStacks(callers);
    out.callees = FlameTree::fromStacks(callees);
    return out;
}

} // namespace runlens::analysis
