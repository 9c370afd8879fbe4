#pragma once

// Writes one import into a run database: nodes, devices, series points (buffered into compressed
// chunks), stack samples, the import record and its diagnostics. The caller owns the transaction
// (RunDatabase::begin/commit/rollback), so a failed import leaves the file unchanged.

#include "analysis/store/chunk_codec.h"
#include "analysis/store/diagnostics.h"
#include "analysis/store/error.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/store/stack_writer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace runlens::store {

class RunDatabase;

struct ImportRecord
{
    std::string path;
    int64_t sizeBytes = 0;
    std::string contentHash;
    std::string format;
    int importerVersion = 1;
    std::string optionsJson = "{}";
    std::optional<int64_t> nodeId;
    int64_t startedNs = 0;
};

struct ImportTotals
{
    std::string contentHash; // the content hash, known once the whole file was read
    double durationMs = 0;
    int64_t rowsRead = 0;
    int64_t points = 0;
    int64_t samples = 0;
    std::string summary;
    // How a source without wall-clock times was placed (see import.anchor in schema.sql); empty for timed sources.
    std::string anchor;
    std::optional<int64_t> anchorStartNs, anchorUncertaintyNs;
    std::string anchorMethod;
};

// Points of one series, buffered and flushed to point_chunk rows of kChunkPoints.
class SeriesSink
{
public:
    void append(int64_t tsNs, double value)
    {
        m_points.push_back({tsNs, value, false});
        if (m_points.size() >= static_cast<size_t>(kChunkPoints)) m_flushNeeded = true;
    }
    void appendMissing(int64_t tsNs, std::string_view rawToken)
    {
        m_points.push_back({tsNs, 0.0, true});
        m_tokens.emplace_back(rawToken);
        if (m_points.size() >= static_cast<size_t>(kChunkPoints)) m_flushNeeded = true;
    }
    // Last timestamp appended to this sink in this import, if any.
    std::optional<int64_t> lastTs() const
    {
        if (!m_points.empty()) return m_points.back().tsNs;
        return m_lastFlushedTs;
    }
    int64_t seriesId() const { return m_seriesId; }
    bool flushNeeded() const { return m_flushNeeded; }

private:
    friend class RunWriter;
    int64_t m_seriesId = 0;
    std::vector<Point> m_points;
    std::vector<std::string> m_tokens;
    std::optional<int64_t> m_lastFlushedTs;
    bool m_flushNeeded = false;
    ChunkSummary m_total;
    bool m_hasValue = false;
    int64_t m_pointsWritten = 0;
    int64_t m_chunksInserted = 0;
    bool m_checkStored = false; // the series had points before this import
    bool m_storedLoaded = false;
    std::vector<int64_t> m_stored; // their timestamps, sorted
};

class RunWriter
{
public:
    explicit RunWriter(RunDatabase& db);
    ~RunWriter();

    // Returns the import id whose content hash equals contentHash, if any.
    Expected<std::optional<int64_t>> findImportByHash(std::string_view contentHash);
    Expected<bool> hasImportOfSize(int64_t sizeBytes);

    Expected<int64_t> beginImport(const ImportRecord& record);
    // Writes every buffered point (then duplicatesDropped() is final). finishImport() does it too.
    Status flushAll();
    // Flushes every series, stores totals and diagnostics. Call before RunDatabase::commit().
    Status finishImport(const ImportTotals& totals, const Diagnostics& diagnostics);
    int64_t importId() const { return m_importId; }
    RunDatabase& database() { return m_db; } // for writers of other tables in the same import (TraceWriter)

    Expected<int64_t> node(std::string_view name, std::string_view nameSource, std::string_view timeZone);
    // Records the zone naive local times of this node were read in, unless the node already has one.
    Status setNodeTimeZone(int64_t nodeId, std::string_view timeZone);
    Expected<int64_t> device(int64_t nodeId, std::string_view kind, std::string_view name);
    Status setDeviceAttribute(int64_t deviceId, std::string_view key, std::string_view value);

    // The series of this import's format (one per device, metric, labels and source format); points at times
    // the series already holds from an earlier import are dropped (counted in duplicatesDropped()).
    // The sink stays valid until finishImport(). Call flushIfNeeded() now and then (cheap).
    Expected<SeriesSink*> series(int64_t deviceId, std::string_view metric, std::string_view unit,
                                 std::string_view rawName, std::string_view labels = {});
    Status flushIfNeeded(SeriesSink& sink) { return sink.m_flushNeeded ? flush(sink) : okStatus(); }
    int64_t pointsWritten() const;
    // Points not stored because the series already had a point at that time from an earlier import.
    int64_t duplicatesDropped() const { return m_duplicatesDropped; }

    // A value of a source that could not be placed in time, kept at its time relative to the source's zero.
    Status unanchoredPoint(std::string_view metric, std::string_view unit, std::string_view rawName, int64_t relNs,
                           std::optional<double> value);
    // Removes an import that stored nothing on the timeline (an unanchored source) so that it can be imported
    // again; an import with points or samples is refused.
    Status removeUnplacedImport(int64_t importId);

    Expected<int64_t> frame(std::string_view name, std::string_view file, int64_t line, std::string_view module);
    Expected<int64_t> callsite(int64_t parentId, int64_t frameId);
    Expected<int64_t> thread(int64_t nodeId, std::string_view process, int64_t pid, std::string_view name, int64_t tid);
    // A timed sample (tsNs set) goes into the thread's stack chunks and buckets; an untimed one is one
    // stack_sample row (an aggregated stack of a source without times).
    Status stackSample(int64_t threadId, int64_t callsiteId, std::optional<int64_t> tsNs, int64_t sampleCount,
                       double weight);
    int64_t samplesWritten() const { return m_samplesWritten + (m_stacks ? m_stacks->samples() : 0); }

private:
    // Chunks are encoded and compressed on a worker thread while the importer goes on parsing; the
    // rows are inserted on the writer's own thread (one SQLite connection, one thread). Both in run_writer.cpp.
    struct EncodedChunk;
    class Encoder;

    Status prepare();
    Status loadStacks();
    Status flush(SeriesSink& sink);
    Status dropStoredTimestamps(SeriesSink& sink);
    Status insertChunk(EncodedChunk& chunk);
    Status drainEncoded(bool wait);
    void stopEncoder();

    std::unique_ptr<Encoder> m_encoder; // started by the first flush
    int64_t m_inFlight = 0;

    RunDatabase& m_db;
    bool m_prepared = false;
    int64_t m_importId = 0;
    std::string m_format; // of the current import: series are kept apart per source format
    int64_t m_duplicatesDropped = 0;
    Statement m_insChunk, m_insSample, m_insFrame, m_insCallsite, m_insSeries;
    Statement m_insUnanchored; // prepared on first use
    // By device, metric, labels and format: a writer reused for imports of several formats keeps them apart.
    std::map<std::tuple<int64_t, std::string, std::string, std::string>, std::unique_ptr<SeriesSink>> m_series;
    std::map<std::string, int64_t, std::less<>> m_nodes;
    std::map<std::tuple<int64_t, std::string, std::string>, int64_t> m_devices;
    std::map<std::tuple<std::string, std::string, int64_t, std::string>, int64_t> m_frames;
    std::unordered_map<uint64_t, int64_t> m_callsites; // key: parent << 32 | frame (ids < 2^32)
    std::unordered_map<int64_t, int> m_callsiteDepth;
    std::map<std::tuple<int64_t, std::string, int64_t, std::string, int64_t>, int64_t> m_threads;
    int64_t m_samplesWritten = 0;
    bool m_stacksLoaded = false;
    std::unique_ptr<StackChunkWriter> m_stacks;
};

} // namespace runlens::store
