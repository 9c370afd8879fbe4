#pragma once

// Flame trees: the stack samples of a time window, node set and thread set (and optionally phases),
// aggregated by call path into an immutable tree with total and self values per node. Built from the
// store's per-callsite window totals (pre-aggregated buckets), so the cost follows the number of distinct
// call paths, not the number of samples. Usable off the GUI thread: one FlameSource per thread, each with its
// own database connection; the trees it returns are shared_ptr<const FlameTree> and may cross threads.

#include "analysis/phase/phase_classifier.h"
#include "analysis/store/error.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/stack_reader.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace runlens::analysis {

enum class UntimedStacks
{
    Auto,    // included only when no window is given and nothing selected has timed samples (untimed stacks
             // cannot be placed in a window, and are often the same capture as a timed profile)
    Include, // always
    Exclude, // never
};

struct FlameQuery
{
    store::TimeWindow window;       // inclusive bounds, as shown (node clock offsets applied)
    std::vector<std::string> nodes; // node names; empty = every node
    std::string threadPattern;      // regex on the thread name or "process/thread"; empty = every thread
    std::vector<Phase> phases;      // keep only samples whose stack is in one of these phases; empty = all
    UntimedStacks untimed = UntimedStacks::Auto;
    bool perThread = false; // a root-side level per thread ("thread (tid): name"), like py-spy --threads
    bool windowBounded() const;
};

struct FlameOrder;
class DiffTree;
class FlameTree;
std::shared_ptr<const FlameTree> diffAsFlameTree(const DiffTree& diff);

class FlameTree
{
public:
    struct Node
    {
        int32_t frame = 0;       // store frame id; < 0: a synthetic frame of this tree (see label())
        int32_t parent = -1;     // -1 for the root
        int32_t firstChild = -1; // children are in label order
        int32_t nextSibling = -1;
        int32_t depth = 0;       // 0 for the root
        int64_t samples = 0;     // total: this node and everything below it
        int64_t selfSamples = 0; // samples whose leaf is this node
        double weight = 0;
        double selfWeight = 0;
        Phase phase = Phase::Other; // of the call path down to this node
    };

    // Node 0 is the root ("all"); nodes are in depth-first order, so a subtree is a contiguous range.
    const std::vector<Node>& nodes() const { return m_nodes; }
    const Node& node(int32_t i) const { return m_nodes[static_cast<size_t>(i)]; }
    int64_t totalSamples() const { return m_nodes.front().samples; }
    double totalWeight() const { return m_nodes.front().weight; }
    int32_t maxDepth() const { return m_maxDepth; }
    // Where the subtree of i ends: nodes [i, subtreeEnd(i)) are i and its descendants.
    int32_t subtreeEnd(int32_t i) const { return m_subtreeEnd[static_cast<size_t>(i)]; }

    std::string_view name(int32_t i) const;
    std::string_view file(int32_t i) const;
    int64_t line(int32_t i) const;
    std::string_view module(int32_t i) const;
    // "name (file:line)" as py-spy writes a frame, "name (file)" without a line, or the bare name.
    std::string label(int32_t i) const;
    // The labels from the root's child down to i.
    std::vector<std::string> path(int32_t i) const;
    // The node at a path of labels from the root (each element a label or a bare name), or -1.
    int32_t find(const std::vector<std::string>& path) const;
    std::vector<int32_t> children(int32_t i) const;

    // A tree from whole stacks (frames root → leaf, each with its sample count and weight; phase per stack, of the
    // leaf's call path): sandwich views and tests build trees that do not come from a store.
    struct Stack
    {
        std::vector<store::FrameInfo> frames;
        int64_t samples = 0;
        double weight = 0;
        Phase phase = Phase::Other;
    };
    static std::shared_ptr<const FlameTree> fromStacks(const std::vector<Stack>& stacks, std::string rootName = "all");

    // What the tree was built from.
    const FlameQuery& query() const { return m_query; }
    int64_t untimedSamples() const { return m_untimedSamples; }
    int threadCount() const { return m_threadCount; }

private:
    friend class FlameTreeBuilder;
    friend std::shared_ptr<const FlameTree> diffAsFlameTree(const DiffTree& diff);
    friend class FlameSource;
    std::vector<Node> m_nodes;
    std::vector<int32_t> m_subtreeEnd;
    std::shared_ptr<const store::StackCatalog> m_catalog;
    std::vector<store::FrameInfo> m_synthetic; // frame -1 - k
    FlameQuery m_query;
    int32_t m_maxDepth = 0;
    int64_t m_untimedSamples = 0;
    int m_threadCount = 0;
};

// Splits a py-spy style "a;b (f.py:3);c" focus or path argument into its labels.
std::vector<std::string> splitFramePath(std::string_view text);

class FlameSource
{
public:
    // classifier may be null: every node is then phase Other and phase filters are refused.
    FlameSource(store::RunDatabase& db, std::shared_ptr<const PhaseClassifier> classifier);

    Expected<std::shared_ptr<const FlameTree>> tree(const FlameQuery& query, const std::atomic<bool>* cancel = nullptr);
    // Threads the query selects (node and thread filters only).
    Expected<std::vector<store::StackThreadInfo>> threads(const FlameQuery& query);
    Expected<std::shared_ptr<const store::StackCatalog>> catalog() { return m_reader.catalog(); }
    // One thread's timed samples in the window, in time order.
    Expected<std::vector<store::StackSample>> samples(int64_t threadId, store::TimeWindow window)
    {
        return m_reader.samples(threadId, window);
    }
    // The phase of every callsite (index = callsite id) under the classifier.
    Expected<std::shared_ptr<const std::vector<Phase>>> callsitePhases();

private:
    store::StackReader m_reader;
    std::shared_ptr<const PhaseClassifier> m_classifier;
    std::shared_ptr<const store::StackCatalog> m_phaseCatalog;
    std::shared_ptr<const std::vector<Phase>> m_phases;
    std::shared_ptr<const store::StackCatalog> m_orderCatalog;
    std::shared_ptr<const FlameOrder> m_order; // the catalogue in depth-first order
};

// Self samples per phase (index = Phase) of the subtree under a node (the whole tree for 0).
std::array<int64_t, kPhaseCount> phaseSamples(const FlameTree& tree, int32_t under = 0);
// The outermost frames of a phase on every path (a comm frame under a comm frame counts once), by label, with the
// samples under them added into `into` (one function reached along several paths sums).
void addOutermostFrames(const FlameTree& tree, Phase phase, std::map<std::string, int64_t>& into);

// Per-phase totals of a window (the rules use these as evidence).
struct PhaseShare
{
    Phase phase = Phase::Other;
    int64_t samples = 0;
    double weight = 0;
    double share = 0; // of all samples in the selection
};
struct PhaseShares
{
    std::vector<PhaseShare> phases; // every phase, strongest first
    int64_t samples = 0;
    double share(Phase p) const;
};
Expected<PhaseShares> phaseShares(FlameSource& source, const FlameQuery& query,
                                  const std::atomic<bool>* cancel = nullptr);

} // namespace runlens::analysis
