#include "analysis/store/run_reader.h"

#include "analysis/store/run_database.h"
#include "analysis/store/saturating.h"
#include "analysis/store/sqlite_util.h"

#include <algorithm>
#include <fmt/format.h>

namespace runlens::store {
namespace {

// A chunk that cannot be decoded, named by the run and the series it belongs to: a damaged or crafted file.
Error damaged(const RunDatabase& db, int64_t seriesId, const Error& e)
{
    return makeError(e.code, fmt::format("series {}: {}", seriesId, e.message), {db.path()});
}

} // namespace

Expected<std::vector<NodeInfo>> RunReader::nodes()
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st,
        Statement::prepare(m_db.handle(),
                           "SELECT id, name, time_zone, clock_offset_ns, name_source, clock_offset_uncertainty_ns, "
                           "clock_offset_source FROM node ORDER BY name"));
    return st.collect<NodeInfo>([](const Statement& row) {
        NodeInfo n{row.int64(0), row.text(1), row.text(2), row.int64(3), row.text(4), std::nullopt, row.text(6)};
        if (!row.isNull(5)) n.clockOffsetUncertaintyNs = row.int64(5);
        return n;
    });
}

Expected<std::vector<DeviceInfo>> RunReader::devices()
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(m_db.handle(), "SELECT id, node_id, kind, name FROM device ORDER BY node_id, kind, "
                                                   "length(name), name"));
    std::vector<DeviceInfo> out;
    std::unordered_map<int64_t, size_t> index;
    RUNLENS_TRY(st.forEachRow([&](const Statement& row) {
        index[row.int64(0)] = out.size();
        out.push_back({row.int64(0), row.int64(1), row.text(2), row.text(3), {}});
    }));
    RUNLENS_ASSIGN_OR_RETURN(
        auto attrs,
        Statement::prepare(m_db.handle(), "SELECT device_id, key, value FROM device_attribute ORDER BY key"));
    RUNLENS_TRY(attrs.forEachRow([&](const Statement& row) {
        if (auto it = index.find(row.int64(0)); it != index.end())
            out[it->second].attributes.emplace_back(row.text(1), row.text(2));
    }));
    return out;
}

static constexpr const char* kSeriesColumns =
    "SELECT s.id, s.device_id, d.node_id, s.metric, s.unit, s.raw_name, s.labels, s.points, s.missing_points, "
    "s.first_ns, s.last_ns, s.min_value, s.max_value, s.sum_value, n.clock_offset_ns, s.source "
    "FROM series s JOIN device d ON d.id = s.device_id JOIN node n ON n.id = d.node_id ";

static SeriesInfo seriesFromRow(const Statement& st)
{
    SeriesInfo s;
    s.id = st.int64(0);
    s.deviceId = st.int64(1);
    s.nodeId = st.int64(2);
    s.metric = st.text(3);
    s.unit = st.text(4);
    s.rawName = st.text(5);
    s.labels = st.text(6);
    s.points = st.int64(7);
    s.missingPoints = st.int64(8);
    const int64_t offset = st.int64(14);
    if (!st.isNull(9)) s.firstNs = saturatingAdd(st.int64(9), offset);
    if (!st.isNull(10)) s.lastNs = saturatingAdd(st.int64(10), offset);
    if (!st.isNull(11)) s.minValue = st.real(11);
    if (!st.isNull(12)) s.maxValue = st.real(12);
    s.sum = st.real(13);
    s.source = st.text(15);
    return s;
}

Expected<std::vector<SeriesInfo>> RunReader::series()
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(m_db.handle(), std::string(kSeriesColumns) +
                                                       "ORDER BY n.name, d.kind, length(d.name), d.name, s.metric"));
    return st.collect<SeriesInfo>([&](const Statement& row) {
        m_offsets[row.int64(0)] = row.int64(14);
        return seriesFromRow(row);
    });
}

Expected<std::optional<SeriesInfo>> RunReader::findSeries(std::string_view node, std::string_view deviceKind,
                                                          std::string_view deviceName, std::string_view metric)
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st,
        Statement::prepare(m_db.handle(), std::string(kSeriesColumns) +
                                              "WHERE n.name = ? AND d.kind = ? AND d.name = ? AND s.metric = ? "
                                              "ORDER BY s.labels = '' DESC, s.points DESC, s.id LIMIT 1"));
    st.bind(1, node).bind(2, deviceKind).bind(3, deviceName).bind(4, metric);
    RUNLENS_ASSIGN_OR_RETURN(auto row, st.step());
    if (!row) return std::optional<SeriesInfo>();
    m_offsets[st.int64(0)] = st.int64(14);
    return std::optional<SeriesInfo>(seriesFromRow(st));
}

Expected<std::vector<ThreadStacks>> RunReader::stackThreads()
{
    RUNLENS_ASSIGN_OR_RETURN(auto st,
                             Statement::prepare(m_db.handle(),
                                                "SELECT node, process, pid, thread, tid, samples, total_weight, "
                                                "untimed_rows FROM stack_summary ORDER BY node, process, pid, thread"));
    return st.collect<ThreadStacks>([](const Statement& row) {
        return ThreadStacks{row.text(0),  row.text(1),  row.int64(2), row.text(3),
                            row.int64(4), row.int64(5), row.real(6),  row.int64(7)};
    });
}

Expected<std::vector<ImportInfo>> RunReader::imports()
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(
                     m_db.handle(),
                     "SELECT i.id, i.path, i.format, coalesce(n.name, ''), i.rows_read, i.points, i.samples, "
                     "i.diagnostics, i.data_loss, i.duration_ms, i.summary, i.content_hash, i.anchor, "
                     "i.anchor_start_ns, i.anchor_uncertainty_ns, i.anchor_method FROM import i LEFT JOIN node n ON "
                     "n.id = i.node_id ORDER BY i.id"));
    return st.collect<ImportInfo>([](const Statement& row) {
        ImportInfo i{row.int64(0), row.text(1),  row.text(2),  row.text(3), row.int64(4), row.int64(5),
                     row.int64(6), row.int64(7), row.int64(8), row.real(9), row.text(10), row.text(11),
                     row.text(12), std::nullopt, std::nullopt, row.text(15)};
        if (!row.isNull(13)) i.anchorStartNs = row.int64(13);
        if (!row.isNull(14)) i.anchorUncertaintyNs = row.int64(14);
        return i;
    });
}

Expected<std::vector<std::pair<std::string, int64_t>>> RunReader::diagnosticCounts(int64_t importId)
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st,
        Statement::prepare(m_db.handle(),
                           "SELECT kind, count FROM diagnostic_count WHERE import_id = ? ORDER BY count DESC"));
    st.bind(1, importId);
    return st.collect<std::pair<std::string, int64_t>>(
        [](const Statement& row) { return std::pair(row.text(0), row.int64(1)); });
}

Expected<std::vector<DiagnosticInfo>> RunReader::diagnostics(int64_t importId, int limit)
{
    RUNLENS_ASSIGN_OR_RETURN(auto st, Statement::prepare(m_db.handle(),
                                                         "SELECT kind, file, line, column, message FROM diagnostic "
                                                         "WHERE import_id = ? ORDER BY id LIMIT ?"));
    st.bind(1, importId).bind(2, limit);
    return st.collect<DiagnosticInfo>([](const Statement& row) {
        return DiagnosticInfo{row.text(0), {row.text(1), row.int64(2), row.int64(3), -1}, row.text(4)};
    });
}

Expected<int64_t> RunReader::clockOffset(int64_t seriesId)
{
    if (auto it = m_offsets.find(seriesId); it != m_offsets.end()) return it->second;
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(m_db.handle(), "SELECT n.clock_offset_ns FROM series s JOIN device d ON d.id = "
                                                   "s.device_id JOIN node n ON n.id = d.node_id WHERE s.id = ?"));
    st.bind(1, seriesId);
    RUNLENS_ASSIGN_OR_RETURN(auto row, st.step());
    const int64_t offset = row ? st.int64(0) : 0;
    m_offsets[seriesId] = offset;
    return offset;
}

Expected<std::vector<Point>> RunReader::readPoints(int64_t seriesId, TimeWindow window)
{
    RUNLENS_ASSIGN_OR_RETURN(auto offset, clockOffset(seriesId));
    const int64_t from = saturatingSub(window.fromNs, offset);
    const int64_t to = saturatingSub(window.toNs, offset);
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(m_db.handle(), "SELECT data FROM point_chunk WHERE series_id = ? AND first_ns <= ? "
                                                   "AND last_ns >= ? ORDER BY first_ns"));
    st.bind(1, seriesId).bind(2, to).bind(3, from);
    std::vector<Point> out;
    bool sorted = true;
    RUNLENS_TRY(st.forEachRow([&](const Statement& row) -> Status {
        auto chunk = decodeChunk(row.blob(0), row.blobSize(0));
        if (!chunk) return damaged(m_db, seriesId, chunk.error());
        const auto& pts = chunk->points;
        auto lo = std::lower_bound(pts.begin(), pts.end(), from, [](const Point& p, int64_t t) { return p.tsNs < t; });
        auto hi = std::upper_bound(lo, pts.end(), to, [](int64_t t, const Point& p) { return t < p.tsNs; });
        if (lo != hi && !out.empty() && lo->tsNs < out.back().tsNs) sorted = false;
        out.insert(out.end(), lo, hi);
        return okStatus();
    }));
    if (!sorted)
        std::stable_sort(out.begin(), out.end(), [](const Point& a, const Point& b) { return a.tsNs < b.tsNs; });
    if (offset != 0)
        for (Point& p : out)
            p.tsNs = saturatingAdd(p.tsNs, offset);
    return out;
}

Expected<std::vector<EnvelopeBucket>> RunReader::readEnvelope(int64_t seriesId, TimeWindow window, int buckets)
{
    if (buckets <= 0) return makeError(ErrorCode::Usage, "envelope needs at least one bucket");
    if (window.toNs < window.fromNs) return makeError(ErrorCode::Usage, "empty time window");
    RUNLENS_ASSIGN_OR_RETURN(auto offset, clockOffset(seriesId));
    const int64_t from = saturatingSub(window.fromNs, offset);
    const int64_t to = saturatingSub(window.toNs, offset);
    // Integer arithmetic: nanosecond epoch times are beyond double precision (256 ns steps in 2026).
    __extension__ using Wide = __int128;
    const Wide span = static_cast<Wide>(to) - static_cast<Wide>(from) + 1;
    auto boundary = [&](int i) { return static_cast<int64_t>(static_cast<Wide>(from) + span * i / buckets); };

    std::vector<EnvelopeBucket> out(static_cast<size_t>(buckets));
    for (int i = 0; i < buckets; ++i) {
        out[i].startNs = saturatingAdd(boundary(i), offset);
        out[i].endNs = saturatingAdd(boundary(i + 1), offset);
    }
    // The bucket i with boundary(i) <= ts < boundary(i + 1).
    auto bucketOf = [&](int64_t ts) {
        const Wide rel = static_cast<Wide>(ts) - static_cast<Wide>(from);
        int i = static_cast<int>(std::clamp<Wide>(rel * buckets / span, 0, buckets - 1));
        while (i > 0 && ts < boundary(i))
            --i;
        while (i + 1 < buckets && ts >= boundary(i + 1))
            ++i;
        return i;
    };
    auto add = [](EnvelopeBucket& b, int64_t n, double mn, double mx, double sum) {
        if (n <= 0) return;
        if (b.count == 0) {
            b.minValue = mn;
            b.maxValue = mx;
        } else {
            b.minValue = std::min(b.minValue, mn);
            b.maxValue = std::max(b.maxValue, mx);
        }
        b.count += n;
        b.sum += sum;
    };

    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(m_db.handle(),
                                    "SELECT first_ns, last_ns, count - missing, min_value, max_value, sum_value, data "
                                    "FROM point_chunk WHERE series_id = ? AND first_ns <= ? AND last_ns >= ?"));
    st.bind(1, seriesId).bind(2, to).bind(3, from);
    RUNLENS_TRY(st.forEachRow([&](const Statement& row) -> Status {
        const int64_t first = row.int64(0), last = row.int64(1), present = row.int64(2);
        if (present == 0) return okStatus();
        if (first >= from && last <= to && bucketOf(first) == bucketOf(last)) {
            add(out[bucketOf(first)], present, row.real(3), row.real(4), row.real(5));
            return okStatus();
        }
        auto chunk = decodeChunk(row.blob(6), row.blobSize(6));
        if (!chunk) return damaged(m_db, seriesId, chunk.error());
        for (const Point& p : chunk->points) {
            if (p.missing || p.tsNs < from || p.tsNs > to) continue;
            add(out[bucketOf(p.tsNs)], 1, p.value, p.value, p.value);
        }
        return okStatus();
    }));
    return out;
}

Expected<std::vector<ChunkRef>> RunReader::chunkRefs(int64_t seriesId, TimeWindow window)
{
    RUNLENS_ASSIGN_OR_RETURN(auto offset, clockOffset(seriesId));
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(m_db.handle(), "SELECT first_ns, last_ns, import_id, chunk_seq, count, missing "
                                                   "FROM point_chunk WHERE series_id = ? AND first_ns <= ? "
                                                   "AND last_ns >= ? ORDER BY first_ns, import_id, chunk_seq"));
    st.bind(1, seriesId).bind(2, saturatingSub(window.toNs, offset)).bind(3, saturatingSub(window.fromNs, offset));
    return st.collect<ChunkRef>([&](const Statement& row) {
        return ChunkRef{saturatingAdd(row.int64(0), offset),
                        saturatingAdd(row.int64(1), offset),
                        row.int64(2),
                        row.int64(3),
                        row.int64(4),
                        row.int64(5)};
    });
}

struct RunReader::Statements
{
    Statement readChunk;
};

Expected<std::vector<Point>> RunReader::readChunk(int64_t seriesId, const ChunkRef& chunk)
{
    RUNLENS_ASSIGN_OR_RETURN(auto offset, clockOffset(seriesId));
    if (!m_st) {
        RUNLENS_ASSIGN_OR_RETURN(auto st, Statement::prepare(m_db.handle(),
                                                             "SELECT data FROM point_chunk WHERE series_id = ? AND "
                                                             "first_ns = ? AND import_id = ? AND chunk_seq = ?"));
        m_st = std::make_shared<Statements>();
        m_st->readChunk = std::move(st);
    }
    Statement& st = m_st->readChunk;
    st.reset();
    st.bind(1, seriesId).bind(2, saturatingSub(chunk.firstNs, offset)).bind(3, chunk.importId).bind(4, chunk.chunkSeq);
    RUNLENS_ASSIGN_OR_RETURN(auto row, st.step());
    if (!row) return makeError(ErrorCode::Database, "point chunk not found");
    auto decoded = decodeChunk(st.blob(0), st.blobSize(0));
    st.reset(); // releases the read
    if (!decoded) return damaged(m_db, seriesId, decoded.error());
    if (offset != 0)
        for (Point& p : decoded->points)
            p.tsNs = saturatingAdd(p.tsNs, offset);
    return std::move(decoded->points);
}

} // namespace runlens::store
