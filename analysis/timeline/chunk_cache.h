#pragma once

// Decoded point chunks of the timeline, kept within a memory budget (least recently used out first), so zooming
// and panning inside a region decodes each chunk once. Values are kept as float (7 significant digits, plenty
// for a plot) to hold twice as many chunks. Thread-safe.

#include "analysis/store/error.h"
#include "analysis/store/run_reader.h"
#include "analysis/timeline/timeline_lod.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace runlens::timeline {

struct CachedChunk
{
    std::vector<int64_t> ts;
    std::vector<float> values; // NaN for a missing point
    size_t bytes() const { return ts.capacity() * sizeof(int64_t) + values.capacity() * sizeof(float) + 64; }
};

// The points of a window as spans of cached chunks (kept alive here).
struct WindowPoints
{
    std::vector<std::shared_ptr<const CachedChunk>> chunks;
    std::vector<PointSpan> spans;
    bool inOrder = true; // false when chunks overlap in time (several imports): use points() then
    size_t count() const;
    std::vector<store::Point> points() const; // in time order
};

class ChunkCache
{
public:
    Expected<WindowPoints> window(store::RunReader& reader, int64_t seriesId, store::TimeWindow window);
    explicit ChunkCache(size_t budgetBytes) : m_budget(budgetBytes) {}

    // Every chunk of the series, loaded once.
    Expected<std::shared_ptr<const std::vector<store::ChunkRef>>> refs(store::RunReader& reader, int64_t seriesId);
    size_t bytes() const;
    int64_t decoded() const; // chunks decoded so far (misses)

private:
    using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>; // series, first_ns, import, chunk_seq
    struct Entry
    {
        std::shared_ptr<const CachedChunk> chunk;
        uint64_t used = 0;
    };
    std::shared_ptr<const CachedChunk> find(const Key& key);
    void insert(const Key& key, std::shared_ptr<const CachedChunk> chunk);

    mutable std::mutex m_mutex;
    std::map<Key, Entry> m_entries;
    std::map<int64_t, std::shared_ptr<const std::vector<store::ChunkRef>>> m_refs; // per series, all its chunks
    size_t m_budget;
    size_t m_bytes = 0;
    uint64_t m_clock = 0;
    int64_t m_decoded = 0;
};

} // namespace runlens::timeline
