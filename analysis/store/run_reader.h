#pragma once

// Typed reads of a run database: nodes, devices, series and their points or min/max envelopes for a
// time window, stack sample totals, imports. Times are returned with the node's clock offset applied.

#include "analysis/store/chunk_codec.h"
#include "analysis/store/error.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace runlens::store {

class RunDatabase;

struct NodeInfo
{
    int64_t id = 0;
    std::string name;
    std::string timeZone;
    int64_t clockOffsetNs = 0;
    std::string nameSource;
    std::optional<int64_t> clockOffsetUncertaintyNs; // set with an estimated or given offset
    std::string clockOffsetSource;                   // '' (none), user, traces, metrics
};

struct DeviceInfo
{
    int64_t id = 0;
    int64_t nodeId = 0;
    std::string kind;
    std::string name;
    std::vector<std::pair<std::string, std::string>> attributes; // e.g. ("name", "NVIDIA H200"), by key
};

struct SeriesInfo
{
    int64_t id = 0;
    int64_t deviceId = 0;
    int64_t nodeId = 0;
    std::string metric;
    std::string unit;
    std::string rawName;
    std::string labels;
    std::string source; // the format that recorded it
    int64_t points = 0;
    int64_t missingPoints = 0;
    std::optional<int64_t> firstNs;
    std::optional<int64_t> lastNs;
    std::optional<double> minValue;
    std::optional<double> maxValue;
    double sum = 0;
};

// One bucket of a level-of-detail read: the extremes and mean of the present values in [startNs, endNs).
struct EnvelopeBucket
{
    int64_t startNs = 0;
    int64_t endNs = 0;
    int64_t count = 0; // present values
    double minValue = 0;
    double maxValue = 0;
    double sum = 0;
};

// One stored chunk of a series' points, for readers that cache decoded chunks (times with the offset applied).
struct ChunkRef
{
    int64_t firstNs = 0;
    int64_t lastNs = 0;
    int64_t importId = 0;
    int64_t chunkSeq = 0;
    int64_t count = 0; // points, missing ones included
    int64_t missing = 0;
};

struct ThreadStacks
{
    std::string node;
    std::string process;
    int64_t pid = 0;
    std::string thread;
    int64_t tid = 0;
    int64_t samples = 0;
    double totalWeight = 0;
    int64_t untimedRows = 0;
};

struct ImportInfo
{
    int64_t id = 0;
    std::string path;
    std::string format;
    std::string node;
    int64_t rows = 0;
    int64_t points = 0;
    int64_t samples = 0;
    int64_t diagnostics = 0;
    int64_t dataLoss = 0;
    double durationMs = 0;
    std::string summary;
    std::string contentHash;
    std::string anchor; // how a source without wall-clock times was placed: '', option, aligned, unanchored
    std::optional<int64_t> anchorStartNs, anchorUncertaintyNs;
    std::string anchorMethod;
};

struct DiagnosticInfo
{
    std::string kind;
    SourceLocation where;
    std::string message;
};

struct TimeWindow
{
    int64_t fromNs = std::numeric_limits<int64_t>::min();
    int64_t toNs = std::numeric_limits<int64_t>::max(); // inclusive
};

class RunReader
{
public:
    explicit RunReader(RunDatabase& db) : m_db(db) {}

    Expected<std::vector<NodeInfo>> nodes();
    Expected<std::vector<DeviceInfo>> devices();
    Expected<std::vector<SeriesInfo>> series();
    Expected<std::optional<SeriesInfo>> findSeries(std::string_view node, std::string_view deviceKind,
                                                   std::string_view deviceName, std::string_view metric);

    Expected<std::vector<ThreadStacks>> stackThreads();
    Expected<std::vector<ImportInfo>> imports();
    // Diagnostic counts per kind for one import, and the first `limit` stored occurrences.
    Expected<std::vector<std::pair<std::string, int64_t>>> diagnosticCounts(int64_t importId);
    Expected<std::vector<DiagnosticInfo>> diagnostics(int64_t importId, int limit);

    // Every point (missing ones included, flagged) with window.fromNs <= ts <= window.toNs, in time order.
    Expected<std::vector<Point>> readPoints(int64_t seriesId, TimeWindow window);
    // buckets equal-width buckets over the window; a chunk that lies inside one bucket is summarised from its
    // stored min/max/sum without being decoded, so a full-range read of a long series stays cheap.
    Expected<std::vector<EnvelopeBucket>> readEnvelope(int64_t seriesId, TimeWindow window, int buckets);
    // The chunks with points in the window, in first-time order, without decoding them; readChunk decodes one.
    Expected<std::vector<ChunkRef>> chunkRefs(int64_t seriesId, TimeWindow window);
    Expected<std::vector<Point>> readChunk(int64_t seriesId, const ChunkRef& chunk);

private:
    Expected<int64_t> clockOffset(int64_t seriesId);
    RunDatabase& m_db;
    std::unordered_map<int64_t, int64_t> m_offsets;
    struct Statements; // prepared once, for the reads repeated per chunk
    std::shared_ptr<Statements> m_st;
};

} // namespace runlens::store
