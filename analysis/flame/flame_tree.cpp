#include "analysis/flame/flame_tree.h"

#include <QRegularExpression>
#include <QString>
#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace runlens::analysis {

bool FlameQuery::windowBounded() const
{
    return window.fromNs != std::numeric_limits<int64_t>::min() || window.toNs != std::numeric_limits<int64_t>::max();
}

std::vector<std::string> splitFramePath(std::string_view text)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t semi = text.find(';', start);
        if (semi == std::string_view::npos) semi = text.size();
        std::string_view part = text.substr(start, semi - start);
        while (!part.empty() && part.front() == ' ')
            part.remove_prefix(1);
        while (!part.empty() && part.back() == ' ')
            part.remove_suffix(1);
        if (!part.empty()) out.emplace_back(part);
        start = semi + 1;
    }
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// FlameTree accessors

namespace {
const store::FrameInfo kNoFrame{};
}

std::string_view FlameTree::name(int32_t i) const
{
    const int32_t f = node(i).frame;
    if (f < 0) return m_synthetic[static_cast<size_t>(-1 - f)].name;
    if (i == 0) return "all";
    return static_cast<size_t>(f) < m_catalog->frames.size() ? m_catalog->frames[static_cast<size_t>(f)].name
                                                             : kNoFrame.name;
}
std::string_view FlameTree::file(int32_t i) const
{
    const int32_t f = node(i).frame;
    if (f < 0) return m_synthetic[static_cast<size_t>(-1 - f)].file;
    if (i == 0) return {};
    return m_catalog->frames[static_cast<size_t>(f)].file;
}
int64_t FlameTree::line(int32_t i) const
{
    const int32_t f = node(i).frame;
    if (f < 0) return m_synthetic[static_cast<size_t>(-1 - f)].line;
    if (i == 0) return 0;
    return m_catalog->frames[static_cast<size_t>(f)].line;
}
std::string_view FlameTree::module(int32_t i) const
{
    const int32_t f = node(i).frame;
    if (f < 0) return m_synthetic[static_cast<size_t>(-1 - f)].module;
    if (i == 0) return {};
    return m_catalog->frames[static_cast<size_t>(f)].module;
}

std::string FlameTree::label(int32_t i) const
{
    const std::string_view n = name(i), f = file(i);
    if (f.empty()) return std::string(n);
    const int64_t l = line(i);
    return l > 0 ? fmt::format("{} ({}:{})", n, f, l) : fmt::format("{} ({})", n, f);
}

std::vector<std::string> FlameTree::path(int32_t i) const
{
    std::vector<std::string> out;
    for (int32_t n = i; n > 0; n = node(n).parent)
        out.push_back(label(n));
    std::reverse(out.begin(), out.end());
    return out;
}

std::vector<int32_t> FlameTree::children(int32_t i) const
{
    std::vector<int32_t> out;
    for (int32_t c = node(i).firstChild; c >= 0; c = node(c).nextSibling)
        out.push_back(c);
    return out;
}

int32_t FlameTree::find(const std::vector<std::string>& path) const
{
    int32_t at = 0;
    for (const std::string& want : path) {
        int32_t found = -1;
        for (int32_t c = node(at).firstChild; c >= 0 && found < 0; c = node(c).nextSibling)
            if (label(c) == want) found = c;
        // A bare name matches when it is unambiguous among the children.
        for (int32_t c = node(at).firstChild; c >= 0 && found < 0; c = node(c).nextSibling)
            if (name(c) == want) found = c;
        if (found < 0) return -1;
        at = found;
    }
    return at;
}

// ---------------------------------------------------------------------------------------------------------------
// Building

std::shared_ptr<const FlameTree> FlameTree::fromStacks(const std::vector<Stack>& stacks, std::string rootName)
{
    // A trie of labels, then emitted depth first with siblings in label order (as store-built trees are).
    struct Trie
    {
        int32_t frame = 0; // index into synthetic
        int64_t samples = 0, self = 0;
        double weight = 0, selfWeight = 0;
        Phase phase = Phase::Other;
        std::map<std::string, size_t> children; // label -> trie index
    };
    auto tree = std::make_shared<FlameTree>();
    std::vector<Trie> trie(1);
    store::FrameInfo root;
    root.name = std::move(rootName);
    tree->m_synthetic.push_back(root);
    std::map<std::tuple<std::string, std::string, int64_t, std::string>, int32_t>
        frameIndex; // one frame per function line
    for (const Stack& st : stacks) {
        size_t at = 0;
        trie[0].samples += st.samples;
        trie[0].weight += st.weight;
        for (const store::FrameInfo& f : st.frames) {
            const std::string key = f.line > 0       ? fmt::format("{} ({}:{})", f.name, f.file, f.line)
                                    : f.file.empty() ? f.name
                                                     : fmt::format("{} ({})", f.name, f.file);
            auto it = trie[at].children.find(key);
            if (it == trie[at].children.end()) {
                auto [fi, added] = frameIndex.emplace(std::make_tuple(f.name, f.file, f.line, f.module),
                                                      static_cast<int32_t>(tree->m_synthetic.size()));
                if (added) tree->m_synthetic.push_back(f);
                Trie t;
                t.frame = fi->second;
                t.phase = st.phase;
                trie.push_back(std::move(t));
                it = trie[at].children.emplace(key, trie.size() - 1).first;
            }
            at = it->second;
            trie[at].samples += st.samples;
            trie[at].weight += st.weight;
        }
        trie[at].self += st.samples;
        trie[at].selfWeight += st.weight;
        if (!st.frames.empty() && st.samples > 0) trie[at].phase = st.phase;
    }
    std::vector<std::pair<size_t, int32_t>> todo{{0, -1}}; // trie index, parent node
    while (!todo.empty()) {
        const auto [t, parent] = todo.back();
        todo.pop_back();
        const Trie& tr = trie[t];
        Node n;
        n.frame = -1 - tr.frame;
        n.parent = parent;
        n.depth = parent < 0 ? 0 : tree->m_nodes[static_cast<size_t>(parent)].depth + 1;
        n.samples = tr.samples;
        n.selfSamples = tr.self;
        n.weight = tr.weight;
        n.selfWeight = tr.selfWeight;
        n.phase = tr.phase;
        const auto index = static_cast<int32_t>(tree->m_nodes.size());
        tree->m_nodes.push_back(n);
        for (auto it = tr.children.rbegin(); it != tr.children.rend(); ++it)
            todo.push_back({it->second, index});
    }
    // Links and subtree ends, as the store builder makes them.
    const auto count = static_cast<int32_t>(tree->m_nodes.size());
    tree->m_subtreeEnd.assign(static_cast<size_t>(count), count);
    std::vector<int32_t> lastChild(static_cast<size_t>(count), -1);
    std::vector<int32_t> open;
    for (int32_t i = 1; i < count; ++i) {
        Node& nd = tree->m_nodes[static_cast<size_t>(i)];
        Node& p = tree->m_nodes[static_cast<size_t>(nd.parent)];
        if (lastChild[static_cast<size_t>(nd.parent)] < 0)
            p.firstChild = i;
        else
            tree->m_nodes[static_cast<size_t>(lastChild[static_cast<size_t>(nd.parent)])].nextSibling = i;
        lastChild[static_cast<size_t>(nd.parent)] = i;
        tree->m_maxDepth = std::max(tree->m_maxDepth, nd.depth);
        while (!open.empty() && open.back() != nd.parent) {
            tree->m_subtreeEnd[static_cast<size_t>(open.back())] = i;
            open.pop_back();
        }
        open.push_back(i);
    }
    return tree;
}

// The catalogue in depth-first order (siblings in label order), computed once per catalogue: a tree is then
// built by sequential passes over these arrays instead of chasing parents by callsite id.
struct FlameOrder
{
    std::vector<int32_t> callsite;  // position -> callsite id
    std::vector<int32_t> parentPos; // position -> the parent's position, -1 under the root
    std::vector<int32_t> posOf;     // callsite id -> position, -1 for the root and unused ids
};

class FlameTreeBuilder
{
public:
    // Adds each group of per-callsite self totals under its synthetic levels (none: under the root).
    static void build(FlameTree& tree, const store::StackCatalog& cat, const std::vector<Phase>* phases,
                      const FlameOrder& order,
                      const std::vector<std::pair<std::vector<std::string>, const store::CallsiteSums*>>& groups)
    {
        std::map<std::pair<int32_t, std::string>, int32_t> synthetic; // (parent node, label) -> node
        const size_t k = order.callsite.size();
        tree.m_nodes.clear();
        tree.m_nodes.push_back({});
        struct Sum
        {
            int64_t samples = 0;
            double weight = 0;
        };
        std::vector<Sum> total, own;
        std::vector<int32_t> nodeAt; // position -> tree node of this group
        for (size_t g = 0; g < groups.size(); ++g) {
            const store::CallsiteSums& self = *groups[g].second;
            int32_t under = 0;
            for (const std::string& level : groups[g].first) {
                auto known = synthetic.find({under, level});
                if (known != synthetic.end()) {
                    under = known->second;
                    continue;
                }
                store::FrameInfo f;
                f.name = level;
                tree.m_synthetic.push_back(std::move(f));
                FlameTree::Node t;
                t.frame = -static_cast<int32_t>(tree.m_synthetic.size());
                t.parent = under;
                t.depth = tree.m_nodes[static_cast<size_t>(under)].depth + 1;
                const auto index = static_cast<int32_t>(tree.m_nodes.size());
                tree.m_nodes.push_back(t);
                synthetic.emplace(std::make_pair(under, level), index);
                under = index;
            }
            // Self totals by position (samples sit on few call paths: only those are written).
            total.assign(k, Sum{});
            own.assign(k, Sum{});
            const size_t m = std::min(self.samples.size(), order.posOf.size());
            for (size_t c = 1; c < m; ++c) {
                if (self.samples[c] == 0 && self.weight[c] == 0) continue;
                const int32_t p = order.posOf[c];
                if (p < 0) continue;
                own[static_cast<size_t>(p)] = {self.samples[c], self.weight[c]};
                total[static_cast<size_t>(p)] = own[static_cast<size_t>(p)];
            }
            // Totals upwards: a parent comes before its children, so one backward pass.
            Sum root{m > 0 ? self.samples[0] : 0, m > 0 ? self.weight[0] : 0.0};
            const Sum rootSelf = root;
            for (size_t p = k; p-- > 0;) {
                const int32_t up = order.parentPos[p];
                Sum& dst = up >= 0 ? total[static_cast<size_t>(up)] : root;
                dst.samples += total[p].samples;
                dst.weight += total[p].weight;
            }
            for (int32_t a = under; a >= 0; a = tree.m_nodes[static_cast<size_t>(a)].parent) {
                tree.m_nodes[static_cast<size_t>(a)].samples += root.samples;
                tree.m_nodes[static_cast<size_t>(a)].weight += root.weight;
            }
            tree.m_nodes[static_cast<size_t>(under)].selfSamples += rootSelf.samples;
            tree.m_nodes[static_cast<size_t>(under)].selfWeight += rootSelf.weight;
            // Nodes: the call paths with samples, in order (a path with samples has a parent with samples).
            nodeAt.assign(k, -1);
            size_t withSamples = 0;
            for (size_t p = 0; p < k; ++p)
                withSamples += total[p].samples != 0 || total[p].weight != 0 ? 1 : 0;
            tree.m_nodes.reserve(tree.m_nodes.size() + withSamples);
            for (size_t p = 0; p < k; ++p) {
                if (total[p].samples == 0 && total[p].weight == 0) continue;
                const auto c = static_cast<size_t>(order.callsite[p]);
                const int32_t up = order.parentPos[p];
                FlameTree::Node node;
                node.frame = cat.frame[c];
                node.parent = up >= 0 ? nodeAt[static_cast<size_t>(up)] : under;
                node.depth = tree.m_nodes[static_cast<size_t>(node.parent)].depth + 1;
                node.samples = total[p].samples;
                node.weight = total[p].weight;
                node.selfSamples = own[p].samples;
                node.selfWeight = own[p].weight;
                node.phase = phases && c < phases->size() ? (*phases)[c] : Phase::Other;
                nodeAt[p] = static_cast<int32_t>(tree.m_nodes.size());
                tree.m_nodes.push_back(node);
            }
        }
        // Links, subtree ends and depth; nodes are in depth-first order with siblings in label order.
        const auto count = static_cast<int32_t>(tree.m_nodes.size());
        tree.m_subtreeEnd.assign(static_cast<size_t>(count), count);
        std::vector<int32_t> lastChild(static_cast<size_t>(count), -1);
        std::vector<int32_t> open; // ancestors of the current node
        tree.m_maxDepth = 0;
        for (int32_t i = 1; i < count; ++i) {
            FlameTree::Node& nd = tree.m_nodes[static_cast<size_t>(i)];
            FlameTree::Node& p = tree.m_nodes[static_cast<size_t>(nd.parent)];
            if (lastChild[static_cast<size_t>(nd.parent)] < 0)
                p.firstChild = i;
            else
                tree.m_nodes[static_cast<size_t>(lastChild[static_cast<size_t>(nd.parent)])].nextSibling = i;
            lastChild[static_cast<size_t>(nd.parent)] = i;
            tree.m_maxDepth = std::max(tree.m_maxDepth, nd.depth);
            while (!open.empty() && open.back() != nd.parent) {
                tree.m_subtreeEnd[static_cast<size_t>(open.back())] = i;
                open.pop_back();
            }
            open.push_back(i);
        }
        // Phase of the synthetic nodes and of the root: the strongest below them is not meaningful; keep Other.
    }
};

// ---------------------------------------------------------------------------------------------------------------
// FlameSource

FlameSource::FlameSource(store::RunDatabase& db, std::shared_ptr<const PhaseClassifier> classifier)
    : m_reader(db), m_classifier(std::move(classifier))
{
}

Expected<std::shared_ptr<const std::vector<Phase>>> FlameSource::callsitePhases()
{
    RUNLENS_ASSIGN_OR_RETURN(auto cat, m_reader.catalog());
    if (m_phases && m_phaseCatalog == cat) return m_phases;
    const store::StackCatalog& c = *cat;
    auto phases = std::make_shared<std::vector<Phase>>(c.callsiteCount(), Phase::Other);
    if (m_classifier) {
        std::vector<Phase> framePhase(c.frames.size(), Phase::Other);
        for (size_t f = 1; f < c.frames.size(); ++f)
            framePhase[f] = m_classifier->classify({c.frames[f].name, c.frames[f].file, c.frames[f].module});
        for (size_t s = 1; s < c.callsiteCount(); ++s) {
            const auto p = static_cast<size_t>(c.parent[s]);
            const Phase own = framePhase[static_cast<size_t>(c.frame[s])];
            (*phases)[s] = p < s ? strongerPhase((*phases)[p], own) : own;
        }
    }
    m_phaseCatalog = cat;
    m_phases = phases;
    return m_phases;
}

Expected<std::vector<store::StackThreadInfo>> FlameSource::threads(const FlameQuery& q)
{
    RUNLENS_ASSIGN_OR_RETURN(auto cat, m_reader.catalog());
    std::optional<QRegularExpression> re;
    if (!q.threadPattern.empty()) {
        re.emplace(QString::fromStdString(q.threadPattern));
        if (!re->isValid())
            return makeError(ErrorCode::Usage, fmt::format("--thread: invalid regular expression \"{}\": {}",
                                                           q.threadPattern, re->errorString().toStdString()));
    }
    std::vector<store::StackThreadInfo> out;
    for (const store::StackThreadInfo& t : cat->threads) {
        if (!q.nodes.empty() && std::find(q.nodes.begin(), q.nodes.end(), t.node) == q.nodes.end()) continue;
        if (re) {
            const QString name = QString::fromStdString(t.name);
            const QString full = QString::fromStdString(t.process) + QLatin1Char('/') + name;
            if (!re->match(name).hasMatch() && !re->match(full).hasMatch()) continue;
        }
        out.push_back(t);
    }
    return out;
}

Expected<std::shared_ptr<const FlameTree>> FlameSource::tree(const FlameQuery& q, const std::atomic<bool>* cancel)
{
    RUNLENS_ASSIGN_OR_RETURN(auto cat, m_reader.catalog());
    if (!q.phases.empty() && !m_classifier) return makeError(ErrorCode::Usage, "a phase filter needs phase packs");
    auto selected = threads(q);
    if (!selected) return selected.error();
    RUNLENS_ASSIGN_OR_RETURN(auto phases, callsitePhases());
    // Auto: untimed stacks only when nothing selected has times (a capture kept both as a folded file and as a
    // timed profile would otherwise count twice) and no window is asked for.
    bool anyTimed = false;
    for (const store::StackThreadInfo& t : *selected)
        anyTimed |= t.timedSamples > 0;
    const bool untimed =
        q.untimed == UntimedStacks::Include || (q.untimed == UntimedStacks::Auto && !q.windowBounded() && !anyTimed);

    auto tree = std::make_shared<FlameTree>();
    tree->m_catalog = cat;
    tree->m_query = q;
    tree->m_threadCount = static_cast<int>(selected->size());
    std::vector<std::pair<std::vector<std::string>, store::StackWindowTotals>> groups;
    if (selected->empty()) {
        groups.emplace_back(std::vector<std::string>(), store::StackWindowTotals{});
    } else if (q.perThread) {
        for (const store::StackThreadInfo& t : *selected) {
            RUNLENS_ASSIGN_OR_RETURN(auto totals, m_reader.totals({t.id}, q.window, untimed, cancel));
            // py-spy's root frames: `process PID:"cmdline"`, then `thread (TID): name` or `thread (name)`.
            std::vector<std::string> levels;
            if (!t.process.empty() || t.pid != 0) levels.push_back(fmt::format("process {}:\"{}\"", t.pid, t.process));
            if (t.tid != 0)
                levels.push_back(t.name.empty() ? fmt::format("thread ({})", t.tid)
                                                : fmt::format("thread ({}): {}", t.tid, t.name));
            else
                levels.push_back(fmt::format("thread ({})", t.name));
            if (totals.samples != 0 || totals.weight != 0) groups.emplace_back(std::move(levels), std::move(totals));
        }
    } else {
        std::vector<int64_t> ids;
        for (const store::StackThreadInfo& t : *selected)
            ids.push_back(t.id);
        RUNLENS_ASSIGN_OR_RETURN(auto totals, m_reader.totals(ids, q.window, untimed, cancel));
        groups.emplace_back(std::vector<std::string>(), std::move(totals));
    }
    if (!q.phases.empty()) {
        for (auto& [label, totals] : groups)
            for (size_t c = 0; c < totals.self.samples.size(); ++c) {
                const Phase p = c < phases->size() ? (*phases)[c] : Phase::Other;
                if (std::find(q.phases.begin(), q.phases.end(), p) == q.phases.end()) {
                    totals.self.samples[c] = 0;
                    totals.self.weight[c] = 0;
                }
            }
    }
    std::vector<std::pair<std::vector<std::string>, const store::CallsiteSums*>> refs;
    for (const auto& [label, totals] : groups) {
        refs.emplace_back(label, &totals.self);
        tree->m_untimedSamples += totals.untimedSamples;
    }
    if (m_orderCatalog != cat) {
        // Once per catalogue: every call path in depth-first order with siblings in label order, so a tree is
        // built by one filtered pass instead of sorting children for every window.
        const store::StackCatalog& c = *cat;
        const auto& frames = c.frames;
        std::vector<int32_t> byLabel(frames.size());
        std::iota(byLabel.begin(), byLabel.end(), 0);
        std::sort(byLabel.begin(), byLabel.end(), [&](int32_t a, int32_t b) {
            const store::FrameInfo& x = frames[static_cast<size_t>(a)];
            const store::FrameInfo& y = frames[static_cast<size_t>(b)];
            return std::tie(x.name, x.file, x.line, x.module) < std::tie(y.name, y.file, y.line, y.module);
        });
        std::vector<int32_t> rank(frames.size(), 0);
        for (size_t i = 0; i < byLabel.size(); ++i)
            rank[static_cast<size_t>(byLabel[i])] = static_cast<int32_t>(i);
        const size_t n = c.callsiteCount();
        std::vector<int32_t> start(n + 1, 0);
        for (size_t s = 1; s < n; ++s)
            if (c.depth[s] >= 0) ++start[static_cast<size_t>(c.parent[s]) + 1];
        std::partial_sum(start.begin(), start.end(), start.begin());
        std::vector<int32_t> children(static_cast<size_t>(start[n])), fill(start.begin(), start.end() - 1);
        for (size_t s = 1; s < n; ++s)
            if (c.depth[s] >= 0)
                children[static_cast<size_t>(fill[static_cast<size_t>(c.parent[s])]++)] = static_cast<int32_t>(s);
        const auto rankOf = [&](int32_t s) { return rank[static_cast<size_t>(c.frame[static_cast<size_t>(s)])]; };
        auto order = std::make_shared<FlameOrder>();
        order->callsite.reserve(children.size());
        order->posOf.assign(n, -1);
        std::vector<int32_t> todo;
        const auto push = [&](size_t s) {
            auto b = children.begin() + start[s], e = children.begin() + start[s + 1];
            std::sort(b, e, [&](int32_t x, int32_t y) { return rankOf(x) > rankOf(y); }); // reversed: a stack
            todo.insert(todo.end(), b, e);
        };
        push(0);
        while (!todo.empty()) {
            const int32_t s = todo.back();
            todo.pop_back();
            order->posOf[static_cast<size_t>(s)] = static_cast<int32_t>(order->callsite.size());
            order->callsite.push_back(s);
            push(static_cast<size_t>(s));
        }
        order->parentPos.resize(order->callsite.size());
        for (size_t p = 0; p < order->callsite.size(); ++p)
            order->parentPos[p] = order->posOf[static_cast<size_t>(c.parent[static_cast<size_t>(order->callsite[p])])];
        m_order = std::move(order);
        m_orderCatalog = cat;
    }
    FlameTreeBuilder::build(*tree, *cat, phases.get(), *m_order, refs);
    return std::shared_ptr<const FlameTree>(std::move(tree));
}

// ---------------------------------------------------------------------------------------------------------------
// Phase shares

void addOutermostFrames(const FlameTree& tree, Phase phase, std::map<std::string, int64_t>& into)
{
    for (int32_t i = 1; i < static_cast<int32_t>(tree.nodes().size());) {
        if (tree.node(i).phase == phase) {
            into[std::string(tree.label(i))] += tree.node(i).samples;
            i = tree.subtreeEnd(i);
        } else {
            ++i;
        }
    }
}

std::array<int64_t, kPhaseCount> phaseSamples(const FlameTree& tree, int32_t under)
{
    std::array<int64_t, kPhaseCount> self{};
    const int32_t end = tree.subtreeEnd(under);
    for (int32_t i = under; i < end; ++i)
        self[static_cast<size_t>(tree.node(i).phase)] += tree.node(i).selfSamples;
    return self;
}

double PhaseShares::share(Phase p) const
{
    for (const PhaseShare& s : phases)
        if (s.phase == p) return s.share;
    return 0;
}

Expected<PhaseShares> phaseShares(FlameSource& source, const FlameQuery& query, const std::atomic<bool>* cancel)
{
    FlameQuery q = query;
    q.phases.clear();
    q.perThread = false;
    RUNLENS_ASSIGN_OR_RETURN(auto tree, source.tree(q, cancel));
    PhaseShares out;
    out.phases.resize(kPhaseCount);
    for (int i = 0; i < kPhaseCount; ++i)
        out.phases[static_cast<size_t>(i)].phase = static_cast<Phase>(kPhaseCount - 1 - i);
    for (const FlameTree::Node& n : tree->nodes()) {
        if (n.selfSamples == 0 && n.selfWeight == 0) continue;
        PhaseShare& s = out.phases[static_cast<size_t>(kPhaseCount - 1 - static_cast<int>(n.phase))];
        s.samples += n.selfSamples;
        s.weight += n.selfWeight;
        out.samples += n.selfSamples;
    }
    for (PhaseShare& s : out.phases)
        s.share = out.samples > 0 ? static_cast<double>(s.samples) / static_cast<double>(out.samples) : 0;
    return out;
}

} // namespace runlens::analysis
