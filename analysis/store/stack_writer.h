#pragma once

// Writes timed stack samples of one import: buffered per thread into stack_chunk rows of up to
// kStackChunkSamples (with their per-callsite totals), and summed into the pre-aggregated stack_bucket rows
// (aligned time buckets of 2^34 to 2^44 ns per thread, merged with what earlier imports stored), so
// that a window query reads whole buckets and chunk totals and decodes samples only at the window's edges.

#include "analysis/store/error.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/store/stack_codec.h"

#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace runlens::store {

// Bucket widths as powers of two nanoseconds: ~17 s, ~69 s, ~4.6 min, ~18 min, ~73 min, ~4.9 h.
// The levels are part of the schema: a file holds buckets of exactly these widths (changing them needs a new
// schema version, since a missing bucket row means "no samples there").
inline constexpr std::array<int, 6> kStackBucketLevels = {34, 36, 38, 40, 42, 44};

class StackChunkWriter
{
public:
    explicit StackChunkWriter(sqlite3* db) : m_db(db) {}
    Status add(int64_t importId, int64_t threadId, const StackSample& sample);
    // Writes every buffered sample and the buckets. Call once, at the end of the import.
    Status finish();
    int64_t samples() const { return m_samples; }

private:
    using Totals = std::unordered_map<int64_t, CallsiteTotal>; // by callsite id
    struct ThreadBuffer
    {
        int64_t importId = 0;
        std::vector<StackSample> pending;
        int64_t chunkSeq = 0;
        std::map<int64_t, Totals> buckets; // finest level, by bucket start
    };
    Status prepare();
    Status flush(int64_t threadId, ThreadBuffer& buffer);
    Status writeBuckets(int64_t threadId, int level, const std::map<int64_t, Totals>& buckets);

    sqlite3* m_db;
    bool m_prepared = false;
    Statement m_insChunk, m_selBucket, m_putBucket;
    std::unordered_map<int64_t, ThreadBuffer> m_threads;
    int64_t m_samples = 0;
};

// The stack catalogue as stored, row by row, for whoever loads it (the reader's catalogue, the writer's lookup of
// what an import adds to). visit(id, name, file, line, module) for each frame, in no particular order.
template <typename Visit> Status forEachFrame(sqlite3* db, Visit&& visit)
{
    RUNLENS_ASSIGN_OR_RETURN(auto st, Statement::prepare(db, "SELECT id, name, file, line, module FROM frame"));
    return st.forEachRow(
        [&](const Statement& row) { return visit(row.int64(0), row.text(1), row.text(2), row.int64(3), row.text(4)); });
}

// visit(id, parentId, frameId, depth) for each callsite, in id order (a parent before its children).
template <typename Visit> Status forEachCallsite(sqlite3* db, Visit&& visit)
{
    RUNLENS_ASSIGN_OR_RETURN(auto st,
                             Statement::prepare(db, "SELECT id, parent_id, frame_id, depth FROM callsite ORDER BY id"));
    return st.forEachRow(
        [&](const Statement& row) { return visit(row.int64(0), row.int64(1), row.int64(2), row.int64(3)); });
}

// Sorted totals of an accumulation map.
std::vector<CallsiteTotal> sortedTotals(const std::unordered_map<int64_t, CallsiteTotal>& totals);

} // namespace runlens::store
