#include "analysis/timeline/chunk_cache.h"

#include <algorithm>
#include <cmath>

namespace runlens::timeline {

std::shared_ptr<const CachedChunk> ChunkCache::find(const Key& key)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto it = m_entries.find(key);
    if (it == m_entries.end()) return nullptr;
    it->second.used = ++m_clock;
    return it->second.chunk;
}

void ChunkCache::insert(const Key& key, std::shared_ptr<const CachedChunk> chunk)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_decoded;
    const size_t size = chunk->bytes();
    if (size > m_budget) return;
    auto [it, added] = m_entries.try_emplace(key, Entry{std::move(chunk), ++m_clock});
    if (!added) return;
    m_bytes += size;
    if (m_bytes <= m_budget) return;
    // Over budget: drop the least recently used quarter (one sort for many evictions).
    std::vector<std::pair<uint64_t, Key>> byAge;
    byAge.reserve(m_entries.size());
    for (const auto& [k, e] : m_entries)
        byAge.emplace_back(e.used, k);
    std::sort(byAge.begin(), byAge.end());
    for (const auto& [used, k] : byAge) {
        if (m_bytes <= m_budget * 3 / 4) break;
        const auto e = m_entries.find(k);
        m_bytes -= e->second.chunk->bytes();
        m_entries.erase(e);
    }
}

size_t ChunkCache::bytes() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_bytes;
}

int64_t ChunkCache::decoded() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_decoded;
}

Expected<std::shared_ptr<const std::vector<store::ChunkRef>>> ChunkCache::refs(store::RunReader& reader,
                                                                               int64_t seriesId)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (auto it = m_refs.find(seriesId); it != m_refs.end()) return it->second;
    }
    RUNLENS_ASSIGN_OR_RETURN(auto loaded, reader.chunkRefs(seriesId, {}));
    auto list = std::make_shared<const std::vector<store::ChunkRef>>(std::move(loaded));
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_refs.emplace(seriesId, std::move(list)).first->second;
}

size_t WindowPoints::count() const
{
    size_t n = 0;
    for (const PointSpan& span : spans)
        n += span.count;
    return n;
}

std::vector<store::Point> WindowPoints::points() const
{
    std::vector<store::Point> out;
    out.reserve(count());
    for (const PointSpan& span : spans)
        for (size_t k = 0; k < span.count; ++k)
            out.push_back({span.ts[k], static_cast<double>(span.values[k]), std::isnan(span.values[k])});
    if (!inOrder)
        std::stable_sort(out.begin(), out.end(),
                         [](const store::Point& a, const store::Point& b) { return a.tsNs < b.tsNs; });
    return out;
}

Expected<WindowPoints> ChunkCache::window(store::RunReader& reader, int64_t seriesId, store::TimeWindow window)
{
    RUNLENS_ASSIGN_OR_RETURN(auto all, refs(reader, seriesId));
    WindowPoints out;
    int64_t lastTs = 0;
    for (const store::ChunkRef& ref : *all) {
        if (ref.firstNs > window.toNs || ref.lastNs < window.fromNs) continue;
        const Key key{seriesId, ref.firstNs, ref.importId, ref.chunkSeq};
        auto chunk = find(key);
        if (!chunk) {
            RUNLENS_ASSIGN_OR_RETURN(auto pts, reader.readChunk(seriesId, ref));
            auto c = std::make_shared<CachedChunk>();
            c->ts.reserve(pts.size());
            c->values.reserve(pts.size());
            for (const store::Point& p : pts) {
                c->ts.push_back(p.tsNs);
                c->values.push_back(p.missing ? std::nanf("") : static_cast<float>(p.value));
            }
            chunk = c;
            insert(key, std::move(c));
        }
        const auto lo = std::lower_bound(chunk->ts.begin(), chunk->ts.end(), window.fromNs);
        const auto hi = std::upper_bound(lo, chunk->ts.end(), window.toNs);
        if (lo == hi) continue;
        if (!out.spans.empty() && *lo < lastTs) out.inOrder = false;
        lastTs = *(hi - 1);
        const auto offset = static_cast<size_t>(lo - chunk->ts.begin());
        out.spans.push_back({&*lo, chunk->values.data() + offset, static_cast<size_t>(hi - lo)});
        out.chunks.push_back(std::move(chunk));
    }
    return out;
}

} // namespace runlens::timeline
