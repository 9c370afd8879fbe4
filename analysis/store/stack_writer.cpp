#include "analysis/store/stack_writer.h"

#include <algorithm>

namespace runlens::store {

std::vector<CallsiteTotal> sortedTotals(const std::unordered_map<int64_t, CallsiteTotal>& totals)
{
    std::vector<CallsiteTotal> out;
    out.reserve(totals.size());
    for (const auto& [id, t] : totals)
        out.push_back(t);
    std::sort(out.begin(), out.end(),
              [](const CallsiteTotal& a, const CallsiteTotal& b) { return a.callsiteId < b.callsiteId; });
    return out;
}

Status StackChunkWriter::prepare()
{
    if (m_prepared) return okStatus();
    RUNLENS_ASSIGN_OR_RETURN(
        auto ins,
        Statement::prepare(m_db, "INSERT INTO stack_chunk(thread_id, first_ns, last_ns, import_id, chunk_seq, "
                                 "samples, weight, summary, data) VALUES (?,?,?,?,?,?,?,?,?)"));
    RUNLENS_ASSIGN_OR_RETURN(
        auto sel,
        Statement::prepare(m_db,
                           "SELECT summary FROM stack_bucket WHERE thread_id = ? AND width_log2 = ? AND start_ns = ?"));
    RUNLENS_ASSIGN_OR_RETURN(
        auto put, Statement::prepare(m_db, "INSERT OR REPLACE INTO stack_bucket(thread_id, width_log2, start_ns, "
                                           "samples, weight, summary) VALUES (?,?,?,?,?,?)"));
    m_insChunk = std::move(ins);
    m_selBucket = std::move(sel);
    m_putBucket = std::move(put);
    m_prepared = true;
    return okStatus();
}

Status StackChunkWriter::add(int64_t importId, int64_t threadId, const StackSample& sample)
{
    ThreadBuffer& b = m_threads[threadId];
    b.importId = importId;
    b.pending.push_back(sample);
    CallsiteTotal& t = b.buckets[(sample.tsNs >> kStackBucketLevels[0]) << kStackBucketLevels[0]][sample.callsiteId];
    t.callsiteId = sample.callsiteId;
    t.samples += sample.count;
    t.weight += sample.weight;
    m_samples += sample.count;
    if (b.pending.size() >= static_cast<size_t>(kStackChunkSamples)) return flush(threadId, b);
    return okStatus();
}

Status StackChunkWriter::flush(int64_t threadId, ThreadBuffer& b)
{
    if (b.pending.empty()) return okStatus();
    RUNLENS_TRY(prepare());
    const auto earlier = [](const StackSample& x, const StackSample& y) { return x.tsNs < y.tsNs; };
    if (!std::is_sorted(b.pending.begin(), b.pending.end(), earlier)) // samples mostly come in time order
        std::stable_sort(b.pending.begin(), b.pending.end(), earlier);
    Totals totals;
    int64_t samples = 0;
    double weight = 0;
    for (const StackSample& s : b.pending) {
        CallsiteTotal& t = totals[s.callsiteId];
        t.callsiteId = s.callsiteId;
        t.samples += s.count;
        t.weight += s.weight;
        samples += s.count;
        weight += s.weight;
    }
    const std::string summary = encodeCallsiteTotals(sortedTotals(totals));
    const std::string data = encodeStackSamples(b.pending);
    m_insChunk.bind(1, threadId).bind(2, b.pending.front().tsNs).bind(3, b.pending.back().tsNs).bind(4, b.importId);
    m_insChunk.bind(5, b.chunkSeq++).bind(6, samples).bind(7, weight);
    m_insChunk.bindBlob(8, summary.data(), summary.size()).bindBlob(9, data.data(), data.size());
    b.pending.clear();
    return m_insChunk.exec();
}

Status StackChunkWriter::writeBuckets(int64_t threadId, int level, const std::map<int64_t, Totals>& buckets)
{
    for (const auto& [start, fresh] : buckets) {
        Totals merged = fresh;
        m_selBucket.bind(1, threadId).bind(2, level).bind(3, start);
        RUNLENS_ASSIGN_OR_RETURN(auto row, m_selBucket.step());
        if (row) {
            auto old = decodeCallsiteTotals(m_selBucket.blob(0), m_selBucket.blobSize(0));
            if (!old) {
                m_selBucket.reset();
                return old.error();
            }
            for (const CallsiteTotal& t : *old) {
                CallsiteTotal& m = merged[t.callsiteId];
                m.callsiteId = t.callsiteId;
                m.samples += t.samples;
                m.weight += t.weight;
            }
        }
        m_selBucket.reset();
        int64_t samples = 0;
        double weight = 0;
        for (const auto& [id, t] : merged) {
            samples += t.samples;
            weight += t.weight;
        }
        const std::string summary = encodeCallsiteTotals(sortedTotals(merged));
        m_putBucket.bind(1, threadId).bind(2, level).bind(3, start).bind(4, samples).bind(5, weight);
        m_putBucket.bindBlob(6, summary.data(), summary.size());
        RUNLENS_TRY(m_putBucket.exec());
    }
    return okStatus();
}

Status StackChunkWriter::finish()
{
    if (m_threads.empty()) return okStatus();
    RUNLENS_TRY(prepare());
    for (auto& [threadId, b] : m_threads) {
        RUNLENS_TRY(flush(threadId, b));
        std::map<int64_t, Totals> level = std::move(b.buckets);
        for (size_t i = 0; i < kStackBucketLevels.size(); ++i) {
            RUNLENS_TRY(writeBuckets(threadId, kStackBucketLevels[i], level));
            if (i + 1 == kStackBucketLevels.size()) break;
            const int next = kStackBucketLevels[i + 1];
            std::map<int64_t, Totals> coarser;
            for (const auto& [start, totals] : level) {
                Totals& c = coarser[(start >> next) << next];
                for (const auto& [id, t] : totals) {
                    CallsiteTotal& m = c[id];
                    m.callsiteId = id;
                    m.samples += t.samples;
                    m.weight += t.weight;
                }
            }
            level = std::move(coarser);
        }
    }
    m_threads.clear();
    return okStatus();
}

} // namespace runlens::store
