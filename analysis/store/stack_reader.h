#pragma once

// Reads stack samples back: the frame and callsite catalogue, the threads with their sample counts and time
// ranges, and per-callsite totals of any window and thread set. A window is summed from the largest
// pre-aggregated buckets that fit inside it, then from whole chunks' totals, and only the chunks cut by its
// edges are decoded, so the cost follows the number of distinct callsites rather than the number of samples.
// Times are as shown: each node's clock offset applied.

#include "analysis/store/error.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/stack_codec.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace runlens::store {

class RunDatabase;

struct FrameInfo
{
    std::string name;
    std::string file;
    int64_t line = 0;
    std::string module;
};

struct StackThreadInfo
{
    int64_t id = 0;
    int64_t nodeId = 0;
    std::string node;
    std::string process;
    int64_t pid = 0;
    std::string name;
    int64_t tid = 0;
    int64_t clockOffsetNs = 0;
    int64_t timedSamples = 0;
    double timedWeight = 0;
    int64_t untimedSamples = 0;
    double untimedWeight = 0;
    std::optional<int64_t> firstNs; // of the timed samples, offset applied
    std::optional<int64_t> lastNs;
};

// Immutable once loaded; shared between threads as shared_ptr<const StackCatalog>.
struct StackCatalog
{
    // Indexed by callsite id; index 0 is the root (parent 0, frame 0).
    std::vector<int32_t> parent;
    std::vector<int32_t> frame;
    std::vector<int32_t> depth;
    std::vector<FrameInfo> frames; // indexed by frame id; index 0 unused
    std::vector<StackThreadInfo> threads;
    size_t callsiteCount() const { return parent.size(); }
};

struct StackWindowTotals
{
    CallsiteSums self; // per callsite id: the samples whose leaf is that callsite
    int64_t samples = 0;
    double weight = 0;
    int64_t untimedSamples = 0; // of those, from untimed stacks
    int64_t chunksDecoded = 0;  // for diagnostics and benchmarks
    int64_t bucketsRead = 0;
};

class StackReader
{
public:
    explicit StackReader(RunDatabase& db) : m_db(db) {}

    Expected<std::shared_ptr<const StackCatalog>> catalog();
    Expected<std::vector<StackThreadInfo>> threads();

    // Totals of the samples of threadIds (all threads when empty) with window.fromNs <= ts <= window.toNs.
    // Untimed stacks have no time: they count only when includeUntimed is set.
    Expected<StackWindowTotals> totals(const std::vector<int64_t>& threadIds, TimeWindow window, bool includeUntimed,
                                       const std::atomic<bool>* cancel = nullptr);

    // The timed samples of one thread in the window, in time order (times with the offset applied).
    Expected<std::vector<StackSample>> samples(int64_t threadId, TimeWindow window);

private:
    Status addThread(const StackThreadInfo& t, TimeWindow window, int64_t callsiteCount, StackWindowTotals& out);
    Status prepare();

    RunDatabase& m_db;
    std::shared_ptr<const StackCatalog> m_catalog;
    std::pair<int64_t, int64_t> m_catalogVersion{-1, -1}; // data_version and total changes when loaded
    bool m_prepared = false;
    struct Statements;
    std::shared_ptr<Statements> m_st;
};

} // namespace runlens::store
