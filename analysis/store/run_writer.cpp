#include "analysis/store/run_writer.h"

#include "analysis/store/bounded_queue.h"
#include "analysis/store/run_database.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <sqlite3.h>
#include <thread>

namespace runlens::store {
namespace {

// The key of a callsite in the writer's lookup: parent << 32 | frame (ids < 2^32).
uint64_t callsiteKey(int64_t parentId, int64_t frameId)
{
    return (static_cast<uint64_t>(parentId) << 32) | static_cast<uint64_t>(frameId);
}

} // namespace

struct RunWriter::EncodedChunk
{
    SeriesSink* sink = nullptr;
    std::string blob;
    ChunkSummary summary;
};

// The worker that encodes and compresses chunks, with its queues. Destroying it stops it: both queues are closed
// (the worker may wait to hand over a result nobody will take) and the thread joined.
class RunWriter::Encoder
{
public:
    struct Job
    {
        SeriesSink* sink = nullptr;
        std::vector<Point> points;
        std::vector<std::string> tokens;
    };
    static constexpr size_t kQueued = 64;

    Encoder()
        : jobs(kQueued), encoded(kQueued * 4), m_thread([this] {
              while (auto job = jobs.pop()) {
                  EncodedChunk c{job->sink, {}, {}};
                  c.blob = encodeChunk(job->points, job->tokens, &c.summary);
                  if (!encoded.push(std::move(c))) return;
              }
              encoded.close();
          })
    {
    }
    ~Encoder()
    {
        jobs.close();
        encoded.close();
        m_thread.join();
    }
    Encoder(const Encoder&) = delete;
    Encoder& operator=(const Encoder&) = delete;

    BoundedQueue<Job> jobs;
    BoundedQueue<EncodedChunk> encoded;

private:
    std::thread m_thread; // last: it starts once the queues exist
};

RunWriter::RunWriter(RunDatabase& db) : m_db(db) {}
RunWriter::~RunWriter()
{
    stopEncoder();
}

void RunWriter::stopEncoder()
{
    m_encoder.reset();
}

Status RunWriter::prepare()
{
    if (m_prepared) return okStatus();
    sqlite3* h = m_db.handle();
    struct
    {
        Statement* stmt;
        const char* sql;
    } const all[] = {
        {&m_insChunk, "INSERT INTO point_chunk(series_id, first_ns, last_ns, import_id, count, missing, min_value, "
                      "max_value, sum_value, data, chunk_seq) VALUES (?,?,?,?,?,?,?,?,?,?,?)"},
        {&m_insSample, "INSERT INTO stack_sample(thread_id, callsite_id, ts_ns, sample_count, weight, import_id) "
                       "VALUES (?,?,?,?,?,?)"},
        {&m_insFrame, "INSERT INTO frame(name, file, line, module) VALUES (?,?,?,?)"},
        {&m_insCallsite, "INSERT INTO callsite(parent_id, frame_id, depth) VALUES (?,?,?)"},
        {&m_insSeries, "INSERT INTO series(device_id, metric, unit, raw_name, labels, source) VALUES (?,?,?,?,?,?) "
                       "ON CONFLICT(device_id, metric, labels, source) DO UPDATE SET metric = metric "
                       "RETURNING id, unit, points"},
    };
    for (const auto& s : all) {
        RUNLENS_ASSIGN_OR_RETURN(auto st, Statement::prepare(h, s.sql));
        *s.stmt = std::move(st);
    }
    m_prepared = true;
    return okStatus();
}

Expected<std::optional<int64_t>> RunWriter::findImportByHash(std::string_view contentHash)
{
    RUNLENS_ASSIGN_OR_RETURN(auto st,
                             Statement::prepare(m_db.handle(), "SELECT id FROM import WHERE content_hash = ?"));
    st.bind(1, contentHash);
    RUNLENS_ASSIGN_OR_RETURN(auto row, st.step());
    if (!row) return std::optional<int64_t>();
    return std::optional<int64_t>(st.int64(0));
}

Expected<bool> RunWriter::hasImportOfSize(int64_t sizeBytes)
{
    RUNLENS_ASSIGN_OR_RETURN(auto st,
                             Statement::prepare(m_db.handle(), "SELECT 1 FROM import WHERE size_bytes = ? LIMIT 1"));
    st.bind(1, sizeBytes);
    return st.step();
}

Expected<int64_t> RunWriter::beginImport(const ImportRecord& r)
{
    m_format = r.format;
    RUNLENS_TRY(prepare());
    RUNLENS_ASSIGN_OR_RETURN(
        auto st,
        Statement::prepare(m_db.handle(),
                           "INSERT INTO import(path, size_bytes, content_hash, format, importer_version, "
                           "options, node_id, started_ns, duration_ms, rows_read, points, samples, diagnostics, "
                           "data_loss) VALUES (?,?,?,?,?,?,?,?,0,0,0,0,0,0)"));
    st.bind(1, std::string_view(r.path)).bind(2, r.sizeBytes).bind(3, std::string_view(r.contentHash));
    st.bind(4, std::string_view(r.format)).bind(5, r.importerVersion).bind(6, std::string_view(r.optionsJson));
    if (r.nodeId) st.bind(7, *r.nodeId);
    st.bind(8, r.startedNs);
    RUNLENS_TRY(st.exec());
    m_importId = sqlite3_last_insert_rowid(m_db.handle());
    return m_importId;
}

Expected<int64_t> RunWriter::node(std::string_view name, std::string_view nameSource, std::string_view timeZone)
{
    if (auto it = m_nodes.find(name); it != m_nodes.end()) return it->second;
    sqlite3* h = m_db.handle();
    RUNLENS_ASSIGN_OR_RETURN(auto sel, Statement::prepare(h, "SELECT id FROM node WHERE name = ?"));
    sel.bind(1, name);
    RUNLENS_ASSIGN_OR_RETURN(auto row, sel.step());
    int64_t id = 0;
    if (row) {
        id = sel.int64(0);
        if (!timeZone.empty()) {
            RUNLENS_ASSIGN_OR_RETURN(
                auto upd, Statement::prepare(h, "UPDATE node SET time_zone = ? WHERE id = ? AND time_zone = ''"));
            upd.bind(1, timeZone).bind(2, id);
            RUNLENS_TRY(upd.exec());
        }
    } else {
        RUNLENS_ASSIGN_OR_RETURN(
            auto ins, Statement::prepare(h, "INSERT INTO node(name, name_source, time_zone) VALUES (?,?,?)"));
        ins.bind(1, name).bind(2, nameSource).bind(3, timeZone);
        RUNLENS_TRY(ins.exec());
        id = sqlite3_last_insert_rowid(h);
    }
    m_nodes.emplace(std::string(name), id);
    return id;
}

Status RunWriter::setNodeTimeZone(int64_t nodeId, std::string_view timeZone)
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto upd, Statement::prepare(m_db.handle(), "UPDATE node SET time_zone = ? WHERE id = ? AND time_zone = ''"));
    upd.bind(1, timeZone).bind(2, nodeId);
    return upd.exec();
}

Expected<int64_t> RunWriter::device(int64_t nodeId, std::string_view kind, std::string_view name)
{
    auto key = std::make_tuple(nodeId, std::string(kind), std::string(name));
    if (auto it = m_devices.find(key); it != m_devices.end()) return it->second;
    sqlite3* h = m_db.handle();
    RUNLENS_ASSIGN_OR_RETURN(
        auto ins, Statement::prepare(h, "INSERT INTO device(node_id, kind, name) VALUES (?,?,?) "
                                        "ON CONFLICT(node_id, kind, name) DO UPDATE SET kind = kind RETURNING id"));
    ins.bind(1, nodeId).bind(2, kind).bind(3, name);
    auto row = ins.step();
    if (!row) return row.error();
    const int64_t id = ins.int64(0);
    ins.reset();
    m_devices.emplace(std::move(key), id);
    return id;
}

Status RunWriter::setDeviceAttribute(int64_t deviceId, std::string_view key, std::string_view value)
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(m_db.handle(),
                                    "INSERT OR REPLACE INTO device_attribute(device_id, key, value) VALUES (?,?,?)"));
    st.bind(1, deviceId).bind(2, key).bind(3, value);
    return st.exec();
}

Expected<SeriesSink*> RunWriter::series(int64_t deviceId, std::string_view metric, std::string_view unit,
                                        std::string_view rawName, std::string_view labels)
{
    auto key = std::make_tuple(deviceId, std::string(metric), std::string(labels), m_format);
    if (auto it = m_series.find(key); it != m_series.end()) return it->second.get();
    RUNLENS_TRY(prepare());
    Statement& ins = m_insSeries;
    ins.bind(1, deviceId).bind(2, metric).bind(3, unit).bind(4, rawName).bind(5, labels);
    ins.bind(6, std::string_view(m_format));
    int64_t id = 0;
    std::string existingUnit;
    bool hadPoints = false;
    RUNLENS_TRY(ins.forEachRow([&](const Statement& row) { // one row; the statement is reset for the next series
        id = row.int64(0);
        existingUnit = row.text(1);
        hadPoints = row.int64(2) > 0;
    }));
    if (existingUnit != unit)
        return makeError(ErrorCode::Format,
                         fmt::format("series {} is stored in {}, this input gives {}", metric, existingUnit, unit));
    auto sink = std::make_unique<SeriesSink>();
    sink->m_seriesId = id;
    sink->m_checkStored = hadPoints;
    SeriesSink* p = sink.get();
    m_series.emplace(std::move(key), std::move(sink));
    return p;
}

Status RunWriter::dropStoredTimestamps(SeriesSink& sink)
{
    if (!sink.m_storedLoaded) {
        // The series already had points from earlier imports (say, the same samples in two overlapping log
        // files): load their timestamps once, so this import adds only what is new.
        RUNLENS_ASSIGN_OR_RETURN(auto st,
                                 Statement::prepare(m_db.handle(), "SELECT data FROM point_chunk WHERE series_id = ?"));
        st.bind(1, sink.m_seriesId);
        RUNLENS_TRY(st.forEachRow([&](const Statement& row) -> Status {
            RUNLENS_ASSIGN_OR_RETURN(auto chunk, decodeChunk(row.blob(0), row.blobSize(0)));
            for (const Point& p : chunk.points)
                sink.m_stored.push_back(p.tsNs);
            return okStatus();
        }));
        std::sort(sink.m_stored.begin(), sink.m_stored.end());
        sink.m_storedLoaded = true;
    }
    size_t out = 0, token = 0, tokenOut = 0;
    for (size_t i = 0; i < sink.m_points.size(); ++i) {
        const Point& p = sink.m_points[i];
        const bool known = std::binary_search(sink.m_stored.begin(), sink.m_stored.end(), p.tsNs);
        if (p.missing) {
            if (!known) sink.m_tokens[tokenOut++] = std::move(sink.m_tokens[token]);
            ++token;
        }
        if (known) {
            ++m_duplicatesDropped;
            continue;
        }
        sink.m_points[out++] = p;
    }
    sink.m_points.resize(out);
    sink.m_tokens.resize(tokenOut);
    return okStatus();
}

Status RunWriter::flush(SeriesSink& sink)
{
    sink.m_flushNeeded = false;
    if (sink.m_checkStored && !sink.m_points.empty())
        if (Status s = dropStoredTimestamps(sink); !s) return s;
    if (sink.m_points.empty()) return okStatus();
    if (!m_encoder) m_encoder = std::make_unique<Encoder>();
    sink.m_lastFlushedTs = sink.m_points.back().tsNs;
    sink.m_pointsWritten += static_cast<int64_t>(sink.m_points.size());
    Encoder::Job job{&sink, std::move(sink.m_points), std::move(sink.m_tokens)};
    sink.m_points = {};
    // A series that filled a chunk goes on filling: its next chunk's room at once. One flushed before it was full
    // (by flushAll) grows as it needs.
    if (job.points.size() >= static_cast<size_t>(kChunkPoints)) sink.m_points.reserve(kChunkPoints);
    sink.m_tokens = {};
    // Insert what is ready first so the result queue never fills while we wait for job room.
    RUNLENS_TRY(drainEncoded(false));
    ++m_inFlight;
    m_encoder->jobs.push(std::move(job));
    return drainEncoded(false);
}

Status RunWriter::drainEncoded(bool wait)
{
    while (m_inFlight > 0) {
        std::optional<EncodedChunk> c = wait ? m_encoder->encoded.pop() : m_encoder->encoded.tryPop();
        if (!c) {
            if (wait) return makeError(ErrorCode::Database, "chunk encoder stopped");
            return okStatus();
        }
        --m_inFlight;
        RUNLENS_TRY(insertChunk(*c));
    }
    return okStatus();
}

Status RunWriter::insertChunk(EncodedChunk& c)
{
    const ChunkSummary& s = c.summary;
    if (c.blob.empty()) return makeError(ErrorCode::Database, "cannot compress a point chunk");
    m_insChunk.bind(1, c.sink->m_seriesId).bind(2, s.firstNs).bind(3, s.lastNs).bind(4, m_importId);
    m_insChunk.bind(5, s.count).bind(6, s.missing);
    if (s.count > s.missing) m_insChunk.bind(7, s.minValue).bind(8, s.maxValue);
    m_insChunk.bind(9, s.sum).bindBlob(10, c.blob.data(), c.blob.size()).bind(11, c.sink->m_chunksInserted++);
    RUNLENS_TRY(m_insChunk.exec());

    SeriesSink& sink = *c.sink;
    ChunkSummary& t = sink.m_total;
    if (s.count > s.missing) {
        if (!sink.m_hasValue) {
            t.minValue = s.minValue;
            t.maxValue = s.maxValue;
            sink.m_hasValue = true;
        }
        t.minValue = std::min(t.minValue, s.minValue);
        t.maxValue = std::max(t.maxValue, s.maxValue);
    }
    if (t.count == 0) {
        t.firstNs = s.firstNs;
        t.lastNs = s.lastNs;
    }
    t.firstNs = std::min(t.firstNs, s.firstNs);
    t.lastNs = std::max(t.lastNs, s.lastNs);
    t.count += s.count;
    t.missing += s.missing;
    t.sum += s.sum;
    return okStatus();
}

int64_t RunWriter::pointsWritten() const
{
    int64_t n = 0;
    for (const auto& [key, sink] : m_series)
        n += sink->m_pointsWritten + static_cast<int64_t>(sink->m_points.size());
    return n;
}

Status RunWriter::loadStacks()
{
    // The frames and call paths already in the file, once: new ones then need no lookup query each.
    if (m_stacksLoaded) return okStatus();
    sqlite3* h = m_db.handle();
    RUNLENS_TRY(forEachFrame(h, [&](int64_t id, std::string name, std::string file, int64_t line, std::string module) {
        m_frames.emplace(std::make_tuple(std::move(name), std::move(file), line, std::move(module)), id);
    }));
    RUNLENS_TRY(forEachCallsite(h, [&](int64_t id, int64_t parent, int64_t frame, int64_t depth) {
        m_callsites.emplace(callsiteKey(parent, frame), id);
        m_callsiteDepth.emplace(id, static_cast<int>(depth));
    }));
    m_stacksLoaded = true;
    return okStatus();
}

Expected<int64_t> RunWriter::frame(std::string_view name, std::string_view file, int64_t line, std::string_view module)
{
    RUNLENS_TRY(loadStacks());
    auto key = std::make_tuple(std::string(name), std::string(file), line, std::string(module));
    if (auto it = m_frames.find(key); it != m_frames.end()) return it->second;
    RUNLENS_TRY(prepare());
    m_insFrame.bind(1, name).bind(2, file).bind(3, line).bind(4, module);
    RUNLENS_TRY(m_insFrame.exec());
    const int64_t id = sqlite3_last_insert_rowid(m_db.handle());
    m_frames.emplace(std::move(key), id);
    return id;
}

Expected<int64_t> RunWriter::callsite(int64_t parentId, int64_t frameId)
{
    const uint64_t key = callsiteKey(parentId, frameId);
    if (auto it = m_callsites.find(key); it != m_callsites.end()) return it->second;
    RUNLENS_TRY(loadStacks());
    if (auto it = m_callsites.find(key); it != m_callsites.end()) return it->second;
    RUNLENS_TRY(prepare());
    int depth = 0;
    if (parentId != 0) {
        auto it = m_callsiteDepth.find(parentId);
        if (it == m_callsiteDepth.end()) return makeError(ErrorCode::Database, fmt::format("no callsite {}", parentId));
        depth = it->second + 1;
    }
    m_insCallsite.bind(1, parentId).bind(2, frameId).bind(3, depth);
    RUNLENS_TRY(m_insCallsite.exec());
    const int64_t id = sqlite3_last_insert_rowid(m_db.handle());
    m_callsites.emplace(key, id);
    m_callsiteDepth.emplace(id, depth);
    return id;
}

Expected<int64_t> RunWriter::thread(int64_t nodeId, std::string_view process, int64_t pid, std::string_view name,
                                    int64_t tid)
{
    auto key = std::make_tuple(nodeId, std::string(process), pid, std::string(name), tid);
    if (auto it = m_threads.find(key); it != m_threads.end()) return it->second;
    RUNLENS_ASSIGN_OR_RETURN(
        auto ins,
        Statement::prepare(m_db.handle(),
                           "INSERT INTO thread(node_id, process, pid, name, tid) VALUES (?,?,?,?,?) "
                           "ON CONFLICT(node_id, process, pid, name, tid) DO UPDATE SET pid = pid RETURNING id"));
    ins.bind(1, nodeId).bind(2, process).bind(3, pid).bind(4, name).bind(5, tid);
    auto row = ins.step();
    if (!row) return row.error();
    const int64_t id = ins.int64(0);
    ins.reset();
    m_threads.emplace(std::move(key), id);
    return id;
}

Status RunWriter::stackSample(int64_t threadId, int64_t callsiteId, std::optional<int64_t> tsNs, int64_t sampleCount,
                              double weight)
{
    RUNLENS_TRY(prepare());
    if (tsNs) {
        if (!m_stacks) m_stacks = std::make_unique<StackChunkWriter>(m_db.handle());
        return m_stacks->add(m_importId, threadId, StackSample{*tsNs, callsiteId, sampleCount, weight});
    }
    m_insSample.bind(1, threadId).bind(2, callsiteId).bindNull(3);
    m_insSample.bind(4, sampleCount).bind(5, weight).bind(6, m_importId);
    RUNLENS_TRY(m_insSample.exec());
    m_samplesWritten += sampleCount;
    return okStatus();
}

Status RunWriter::flushAll()
{
    for (auto& [key, sink] : m_series)
        if (Status s = flush(*sink); !s) return s;
    return drainEncoded(true);
}

Status RunWriter::finishImport(const ImportTotals& totals, const Diagnostics& diagnostics)
{
    sqlite3* h = m_db.handle();
    auto upd =
        Statement::prepare(h, "UPDATE series SET points = points + ?, missing_points = missing_points + ?, "
                              "first_ns = min(coalesce(first_ns, ?), ?), last_ns = max(coalesce(last_ns, ?), ?), "
                              "min_value = CASE WHEN ? THEN min(coalesce(min_value, ?), ?) ELSE min_value END, "
                              "max_value = CASE WHEN ? THEN max(coalesce(max_value, ?), ?) ELSE max_value END, "
                              "sum_value = sum_value + ? WHERE id = ?");
    if (!upd) return upd.error();
    RUNLENS_TRY(flushAll());
    stopEncoder();
    if (m_stacks)
        if (Status s = m_stacks->finish(); !s) return s;
    for (auto& [key, sink] : m_series) {
        const ChunkSummary& t = sink->m_total;
        if (t.count == 0) continue;
        const int64_t hv = sink->m_hasValue ? 1 : 0;
        upd->bind(1, t.count).bind(2, t.missing).bind(3, t.firstNs).bind(4, t.firstNs).bind(5, t.lastNs);
        upd->bind(6, t.lastNs).bind(7, hv).bind(8, t.minValue).bind(9, t.minValue).bind(10, hv);
        upd->bind(11, t.maxValue).bind(12, t.maxValue).bind(13, t.sum).bind(14, sink->m_seriesId);
        RUNLENS_TRY(upd->exec());
    }
    // Series created by this import but never given a point are not kept.
    RUNLENS_TRY(execSql(h, "DELETE FROM series WHERE points = 0 AND NOT EXISTS "
                           "(SELECT 1 FROM point_chunk c WHERE c.series_id = series.id)"));

    auto cnt =
        Statement::prepare(h, "INSERT INTO diagnostic_count(import_id, kind, data_loss, count) VALUES (?,?,?,?)");
    if (!cnt) return cnt.error();
    for (const auto& [kind, c] : diagnostics.counts()) {
        cnt->bind(1, m_importId).bind(2, std::string_view(kind)).bind(3, c.dataLoss ? 1 : 0).bind(4, c.count);
        RUNLENS_TRY(cnt->exec());
    }
    RUNLENS_ASSIGN_OR_RETURN(
        auto ent, Statement::prepare(
                      h, "INSERT INTO diagnostic(import_id, kind, file, line, column, message) VALUES (?,?,?,?,?,?)"));
    for (const DiagnosticEntry& e : diagnostics.entries()) {
        ent.bind(1, m_importId).bind(2, std::string_view(e.kind)).bind(3, std::string_view(e.where.file));
        ent.bind(4, e.where.line).bind(5, e.where.column).bind(6, std::string_view(e.message));
        RUNLENS_TRY(ent.exec());
    }
    RUNLENS_ASSIGN_OR_RETURN(
        auto imp,
        Statement::prepare(h, "UPDATE import SET duration_ms = ?, rows_read = ?, points = ?, samples = ?, "
                              "diagnostics = ?, data_loss = ?, summary = ?, content_hash = ?, anchor = ?, "
                              "anchor_start_ns = ?, anchor_uncertainty_ns = ?, anchor_method = ? WHERE id = ?"));
    imp.bind(1, totals.durationMs).bind(2, totals.rowsRead).bind(3, totals.points).bind(4, totals.samples);
    imp.bind(5, diagnostics.total()).bind(6, diagnostics.dataLoss()).bind(7, std::string_view(totals.summary));
    imp.bind(8, std::string_view(totals.contentHash)).bind(9, std::string_view(totals.anchor));
    if (totals.anchorStartNs) imp.bind(10, *totals.anchorStartNs);
    if (totals.anchorUncertaintyNs) imp.bind(11, *totals.anchorUncertaintyNs);
    imp.bind(12, std::string_view(totals.anchorMethod)).bind(13, m_importId);
    return imp.exec();
}

Status RunWriter::unanchoredPoint(std::string_view metric, std::string_view unit, std::string_view rawName,
                                  int64_t relNs, std::optional<double> value)
{
    if (!m_insUnanchored.get()) {
        RUNLENS_ASSIGN_OR_RETURN(auto st,
                                 Statement::prepare(m_db.handle(),
                                                    "INSERT INTO unanchored_point(import_id, metric, unit, raw_name, "
                                                    "rel_ns, value) VALUES (?,?,?,?,?,?)"));
        m_insUnanchored = std::move(st);
    }
    Statement& st = m_insUnanchored;
    st.bind(1, m_importId).bind(2, metric).bind(3, unit).bind(4, rawName).bind(5, relNs);
    if (value && std::isfinite(*value)) st.bind(6, *value);
    return st.exec();
}

Status RunWriter::removeUnplacedImport(int64_t importId)
{
    sqlite3* h = m_db.handle();
    RUNLENS_ASSIGN_OR_RETURN(auto placed, Statement::prepare(h, "SELECT points + samples FROM import WHERE id = ?"));
    placed.bind(1, importId);
    RUNLENS_ASSIGN_OR_RETURN(auto row, placed.step());
    if (!row || placed.int64(0) != 0)
        return makeError(ErrorCode::Usage,
                         fmt::format("import {} has data on the timeline: it cannot be replaced", importId));
    placed.reset();
    for (const char* table : {"unanchored_point", "diagnostic", "diagnostic_count"}) {
        RUNLENS_ASSIGN_OR_RETURN(
            auto del, Statement::prepare(h, fmt::format("DELETE FROM {} WHERE import_id = ?", table).c_str()));
        del.bind(1, importId);
        RUNLENS_TRY(del.exec());
    }
    RUNLENS_ASSIGN_OR_RETURN(auto del, Statement::prepare(h, "DELETE FROM import WHERE id = ?"));
    del.bind(1, importId);
    return del.exec();
}

} // namespace runlens::store
