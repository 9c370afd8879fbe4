#include "analysis/store/stack_reader.h"

#include "analysis/store/run_database.h"
#include "analysis/store/saturating.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/store/stack_writer.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <sqlite3.h>
#include <unordered_map>

namespace runlens::store {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t floorTo(int64_t v, int log2)
{
    return (v >> log2) << log2;
}
int64_t ceilTo(int64_t v, int log2)
{
    const int64_t f = floorTo(v, log2);
    return f == v ? v : f + (int64_t{1} << log2);
}

struct Interval
{
    int64_t lo; // inclusive
    int64_t hi; // exclusive
};

Error cancelled()
{
    return makeError(ErrorCode::Cancelled, "cancelled");
}

// A sample or untimed stack whose callsite is not in the catalogue: the file is damaged.
Error unknownCallsite(int64_t id)
{
    return makeError(ErrorCode::Database, fmt::format("corrupt stack data: callsite {} does not exist", id));
}

// Frame and callsite ids index the catalogue's vectors (int32 in the flame tree); ids are the rowids the writer
// takes one after another and it never deletes a row, so the largest id is the number of rows. One far beyond
// that would only make the catalogue allocate for rows that do not exist: twice the rows, plus slack, is the bound.
constexpr int64_t kMaxStackId = std::numeric_limits<int32_t>::max() - 1;
constexpr int64_t kStackIdSlack = 1 << 16;

// An error of the stack data of the run at path (a damaged or crafted file), named by it and, for a chunk, by its
// thread.
Error damaged(const std::string& path, Error e, std::optional<int64_t> threadId = std::nullopt)
{
    if (threadId) e.message = fmt::format("thread {}: {}", *threadId, e.message);
    if (e.where.file.empty()) e.where.file = path;
    return e;
}

// A catalogue row that cannot be true: the file is damaged (or made up), and every id in it indexes memory.
Error badCatalog(std::string what)
{
    return makeError(ErrorCode::Format, fmt::format("corrupt stack catalogue: {}", what));
}

// The number of slots (largest id + 1) for the ids of table, after checking they are positive and dense enough.
Expected<size_t> idSlots(sqlite3* h, const char* table)
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(
                     h, fmt::format("SELECT count(*), coalesce(min(id), 1), coalesce(max(id), 0) FROM {}", table)));
    RUNLENS_TRY(st.step());
    const int64_t rows = st.int64(0), minId = st.int64(1), maxId = st.int64(2);
    if (minId < 1) return badCatalog(fmt::format("{} id {} (ids start at 1)", table, minId));
    if (maxId > kMaxStackId || maxId > 2 * rows + kStackIdSlack)
        return badCatalog(fmt::format("{} id {} with {} rows", table, maxId, rows));
    return static_cast<size_t>(maxId) + 1;
}

Status loadFrames(sqlite3* h, StackCatalog& cat)
{
    RUNLENS_ASSIGN_OR_RETURN(auto slots, idSlots(h, "frame"));
    cat.frames.resize(slots);
    return forEachFrame(h, [&](int64_t id, std::string name, std::string file, int64_t line, std::string module) {
        cat.frames[static_cast<size_t>(id)] = {std::move(name), std::move(file), line, std::move(module)};
    });
}

// Every callsite's parent is 0 (the root) or an earlier callsite (the writer adds a parent before its children),
// its frame exists and its depth is its parent's plus one: the tree has no cycle and no id points outside it.
Status loadCallsites(sqlite3* h, StackCatalog& cat)
{
    RUNLENS_ASSIGN_OR_RETURN(auto slots, idSlots(h, "callsite"));
    cat.parent.assign(slots, 0);
    cat.frame.assign(slots, 0);
    cat.depth.assign(slots, -1);
    return forEachCallsite(h, [&](int64_t id, int64_t parent, int64_t frame, int64_t depth) -> Status {
        if (parent < 0 || parent >= id || (parent > 0 && cat.depth[static_cast<size_t>(parent)] < 0))
            return badCatalog(fmt::format("callsite {} has parent {}, not an earlier callsite", id, parent));
        if (frame < 1 || static_cast<size_t>(frame) >= cat.frames.size())
            return badCatalog(fmt::format("callsite {} has frame {}, which does not exist", id, frame));
        const int64_t want = parent == 0 ? 0 : cat.depth[static_cast<size_t>(parent)] + 1;
        if (depth != want)
            return badCatalog(fmt::format("callsite {} has depth {}, its parent's is {}", id, depth, want - 1));
        const auto i = static_cast<size_t>(id);
        cat.parent[i] = static_cast<int32_t>(parent);
        cat.frame[i] = static_cast<int32_t>(frame);
        cat.depth[i] = static_cast<int32_t>(depth);
        return okStatus();
    });
}

} // namespace

struct StackReader::Statements
{
    Statement bucket, chunk, untimed;
    std::unordered_map<int64_t, int64_t> maxChunkSpan; // by thread id
};

Status StackReader::prepare()
{
    if (m_prepared) return okStatus();
    auto st = std::make_shared<Statements>();
    sqlite3* h = m_db.handle();
    RUNLENS_ASSIGN_OR_RETURN(auto b, Statement::prepare(h, "SELECT summary FROM stack_bucket WHERE thread_id = ? AND "
                                                           "width_log2 = ? AND start_ns >= ? AND start_ns < ?"));
    RUNLENS_ASSIGN_OR_RETURN(auto c, Statement::prepare(h, "SELECT first_ns, last_ns, summary, data FROM stack_chunk "
                                                           "WHERE thread_id = ? AND first_ns >= ? AND first_ns < ?"));
    RUNLENS_ASSIGN_OR_RETURN(
        auto u,
        Statement::prepare(h, "SELECT callsite_id, sample_count, weight FROM stack_sample WHERE thread_id = ?"));
    st->bucket = std::move(b);
    st->chunk = std::move(c);
    st->untimed = std::move(u);
    RUNLENS_ASSIGN_OR_RETURN(
        auto spans,
        Statement::prepare(h, "SELECT thread_id, max(last_ns - first_ns) FROM stack_chunk GROUP BY thread_id"));
    RUNLENS_TRY(spans.forEachRow([&](const Statement& row) { st->maxChunkSpan[row.int64(0)] = row.int64(1); }));
    m_st = std::move(st);
    m_prepared = true;
    return okStatus();
}

Expected<std::vector<StackThreadInfo>> StackReader::threads()
{
    sqlite3* h = m_db.handle();
    RUNLENS_ASSIGN_OR_RETURN(
        auto st,
        Statement::prepare(h, "SELECT t.id, t.node_id, n.name, t.process, t.pid, t.name, t.tid, n.clock_offset_ns "
                              "FROM thread t JOIN node n ON n.id = t.node_id ORDER BY n.name, t.process, t.pid, "
                              "t.tid, t.name"));
    std::vector<StackThreadInfo> out;
    std::unordered_map<int64_t, size_t> index;
    RUNLENS_TRY(st.forEachRow([&](const Statement& row) {
        StackThreadInfo t;
        t.id = row.int64(0);
        t.nodeId = row.int64(1);
        t.node = row.text(2);
        t.process = row.text(3);
        t.pid = row.int64(4);
        t.name = row.text(5);
        t.tid = row.int64(6);
        t.clockOffsetNs = row.int64(7);
        index[t.id] = out.size();
        out.push_back(std::move(t));
    }));
    // The totals of each thread, from the rows of the thread ids the query above listed.
    const auto addTotals = [&](const char* sql, auto add) -> Status {
        RUNLENS_ASSIGN_OR_RETURN(auto totals, Statement::prepare(h, sql));
        return totals.forEachRow([&](const Statement& row) {
            if (auto it = index.find(row.int64(0)); it != index.end()) add(out[it->second], row);
        });
    };
    RUNLENS_TRY(addTotals("SELECT thread_id, sum(samples), sum(weight), min(first_ns), max(last_ns) FROM stack_chunk "
                          "GROUP BY thread_id",
                          [](StackThreadInfo& t, const Statement& row) {
                              t.timedSamples = row.int64(1);
                              t.timedWeight = row.real(2);
                              t.firstNs = saturatingAdd(row.int64(3), t.clockOffsetNs);
                              t.lastNs = saturatingAdd(row.int64(4), t.clockOffsetNs);
                          }));
    RUNLENS_TRY(addTotals("SELECT thread_id, sum(sample_count), sum(weight) FROM stack_sample GROUP BY thread_id",
                          [](StackThreadInfo& t, const Statement& row) {
                              t.untimedSamples = row.int64(1);
                              t.untimedWeight = row.real(2);
                          }));
    return out;
}

Expected<std::shared_ptr<const StackCatalog>> StackReader::catalog()
{
    sqlite3* h = m_db.handle();
    // Reloaded whenever the file changed since: a commit by another connection moves data_version, a change on
    // this one (a later import, a clock offset set) moves its total change count.
    RUNLENS_ASSIGN_OR_RETURN(auto version, Statement::prepare(h, "PRAGMA data_version"));
    RUNLENS_TRY(version.step());
    const std::pair<int64_t, int64_t> signature{version.int64(0), sqlite3_total_changes64(h)};
    if (m_catalog && signature == m_catalogVersion) return m_catalog;

    auto cat = std::make_shared<StackCatalog>();
    if (Status s = loadFrames(h, *cat); !s) return damaged(m_db.path(), s.error());
    if (Status s = loadCallsites(h, *cat); !s) return damaged(m_db.path(), s.error());
    RUNLENS_ASSIGN_OR_RETURN(auto threads, this->threads());
    cat->threads = std::move(threads);
    m_catalog = std::move(cat);
    m_catalogVersion = signature;
    m_prepared = false; // chunk spans may have changed with the data
    return m_catalog;
}

Status StackReader::addThread(const StackThreadInfo& t, TimeWindow window, int64_t callsiteCount,
                              StackWindowTotals& out)
{
    if (!t.firstNs || t.timedSamples == 0) return okStatus();
    // The window in stored time, cut to the thread's own range.
    const int64_t lo = std::max(saturatingSub(window.fromNs, t.clockOffsetNs), *t.firstNs - t.clockOffsetNs);
    const int64_t hiIncl = std::min(saturatingSub(window.toNs, t.clockOffsetNs), *t.lastNs - t.clockOffsetNs);
    if (lo > hiIncl) return okStatus();
    std::vector<Interval> open{{lo, hiIncl + 1}};
    const auto addBlobTotals = [&](const Statement& st, int col) {
        return addCallsiteTotals(st.blob(col), st.blobSize(col), out.self, callsiteCount);
    };
    for (auto level = kStackBucketLevels.rbegin(); level != kStackBucketLevels.rend(); ++level) {
        std::vector<Interval> rest;
        for (const Interval& iv : open) {
            // A bucket counts when every sample it holds is inside the window: its extent cut to the thread's own
            // range must lie within the interval (so at the thread's first and last sample a bucket that sticks
            // out past them still counts).
            const int64_t a =
                iv.lo == lo && lo == *t.firstNs - t.clockOffsetNs ? floorTo(iv.lo, *level) : ceilTo(iv.lo, *level);
            const int64_t b = iv.hi == hiIncl + 1 && hiIncl == *t.lastNs - t.clockOffsetNs ? ceilTo(iv.hi, *level)
                                                                                           : floorTo(iv.hi, *level);
            if (a >= b) {
                rest.push_back(iv);
                continue;
            }
            Statement& q = m_st->bucket;
            q.bind(1, t.id).bind(2, *level).bind(3, a).bind(4, b);
            RUNLENS_TRY(q.forEachRow([&](const Statement& row) -> Status {
                Status added = addBlobTotals(row, 0);
                if (added) ++out.bucketsRead;
                return added;
            }));
            if (iv.lo < a) rest.push_back({iv.lo, a});
            if (b < iv.hi) rest.push_back({b, iv.hi});
        }
        open = std::move(rest);
    }
    const auto span = m_st->maxChunkSpan.find(t.id);
    const int64_t maxSpan = span == m_st->maxChunkSpan.end() ? 0 : span->second;
    for (const Interval& iv : open) {
        Statement& q = m_st->chunk;
        q.bind(1, t.id).bind(2, saturatingSub(iv.lo, maxSpan)).bind(3, iv.hi);
        RUNLENS_TRY(q.forEachRow([&](const Statement& row) -> Status {
            const int64_t first = row.int64(0), last = row.int64(1);
            if (last < iv.lo) return okStatus();
            if (first >= iv.lo && last < iv.hi) return addBlobTotals(row, 2);
            auto samples = decodeStackSamples(row.blob(3), row.blobSize(3));
            if (!samples) return damaged(m_db.path(), samples.error(), t.id);
            ++out.chunksDecoded;
            for (const StackSample& s : *samples) {
                if (s.tsNs < iv.lo || s.tsNs >= iv.hi) continue;
                if (s.callsiteId < 0 || s.callsiteId >= callsiteCount)
                    return damaged(m_db.path(), unknownCallsite(s.callsiteId), t.id);
                out.self.add(s.callsiteId, s.count, s.weight);
            }
            return okStatus();
        }));
    }
    return okStatus();
}

Expected<StackWindowTotals> StackReader::totals(const std::vector<int64_t>& threadIds, TimeWindow window,
                                                bool includeUntimed, const std::atomic<bool>* cancel)
{
    RUNLENS_ASSIGN_OR_RETURN(auto cat, catalog());
    RUNLENS_TRY(prepare());
    StackWindowTotals out;
    const auto callsites = static_cast<int64_t>(cat->callsiteCount());
    out.self.samples.assign(cat->callsiteCount(), 0);
    out.self.weight.assign(cat->callsiteCount(), 0.0);
    for (const StackThreadInfo& t : cat->threads) {
        if (!threadIds.empty() && std::find(threadIds.begin(), threadIds.end(), t.id) == threadIds.end()) continue;
        if (cancel && cancel->load(std::memory_order_relaxed)) return cancelled();
        RUNLENS_TRY(addThread(t, window, callsites, out));
        if (includeUntimed && t.untimedSamples > 0) {
            Statement& q = m_st->untimed;
            q.bind(1, t.id);
            RUNLENS_TRY(q.forEachRow([&](const Statement& row) -> Status {
                const int64_t site = row.int64(0);
                if (site < 0 || site >= callsites) return damaged(m_db.path(), unknownCallsite(site), t.id);
                out.self.add(site, row.int64(1), row.real(2));
                out.untimedSamples += row.int64(1);
                return okStatus();
            }));
        }
    }
    for (size_t i = 0; i < out.self.samples.size(); ++i) {
        out.samples += out.self.samples[i];
        out.weight += out.self.weight[i];
    }
    return out;
}

Expected<std::vector<StackSample>> StackReader::samples(int64_t threadId, TimeWindow window)
{
    RUNLENS_ASSIGN_OR_RETURN(auto cat, catalog());
    RUNLENS_TRY(prepare());
    const auto t = std::find_if(cat->threads.begin(), cat->threads.end(),
                                [&](const StackThreadInfo& x) { return x.id == threadId; });
    if (t == cat->threads.end()) return makeError(ErrorCode::Usage, fmt::format("no thread {}", threadId));
    std::vector<StackSample> out;
    if (!t->firstNs) return out;
    const int64_t lo = saturatingSub(window.fromNs, t->clockOffsetNs);
    const int64_t hi = saturatingSub(window.toNs, t->clockOffsetNs);
    const auto span = m_st->maxChunkSpan.find(threadId);
    const int64_t maxSpan = span == m_st->maxChunkSpan.end() ? 0 : span->second;
    Statement& q = m_st->chunk;
    q.bind(1, threadId).bind(2, saturatingSub(lo, maxSpan)).bind(3, hi == kMax ? kMax : hi + 1);
    RUNLENS_TRY(q.forEachRow([&](const Statement& row) -> Status {
        auto decoded = decodeStackSamples(row.blob(3), row.blobSize(3));
        if (!decoded) return damaged(m_db.path(), decoded.error(), threadId);
        if (const size_t need = out.size() + decoded->size(); need > out.capacity())
            out.reserve(std::max(need, 2 * out.capacity()));
        for (StackSample s : *decoded)
            if (s.tsNs >= lo && s.tsNs <= hi) {
                s.tsNs = saturatingAdd(s.tsNs, t->clockOffsetNs);
                out.push_back(s);
            }
        return okStatus();
    }));
    // Chunks that do not overlap in time come in order: their samples are sorted already (a stable sort of sorted
    // samples leaves them as they are, at the cost of its merge passes).
    const auto earlier = [](const StackSample& a, const StackSample& b) { return a.tsNs < b.tsNs; };
    if (!std::is_sorted(out.begin(), out.end(), earlier)) std::stable_sort(out.begin(), out.end(), earlier);
    return out;
}

} // namespace runlens::store
