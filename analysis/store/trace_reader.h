#pragma once

// Typed reads of the trace events of a run: tracks, the slices of a time window, and how much of a window
// the union of some slices covers. Times are returned with the node's clock offset applied, as RunReader does.

#include "analysis/store/error.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/trace_writer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace runlens::store {

class RunDatabase;

struct TraceTrackInfo
{
    int64_t id = 0;
    int64_t nodeId = 0;
    std::string node;
    int64_t rank = -1;
    std::string kind; // cpu, gpu
    std::string pid;
    std::string tid;
    std::string name;
    std::optional<int64_t> deviceId;
    std::string device; // "gpu:0", or "" for CPU tracks
    int64_t clockOffsetNs = 0;
    int64_t maxDurNs = 0;
};

struct TraceSliceInfo
{
    int64_t trackId = 0;
    TraceCategory category = TraceCategory::Other;
    std::string name;
    int64_t tsNs = 0; // clock offset applied
    int64_t durNs = 0;
    std::optional<int64_t> correlation;
};

// One row of the trace_summary view: the slices of one category on one node and rank (times as stored).
struct TraceSummaryRow
{
    std::string node;
    int64_t rank = -1;
    TraceCategory category = TraceCategory::Other;
    int64_t slices = 0;
    int64_t totalDurNs = 0;
    int64_t firstNs = 0;
    int64_t lastNs = 0; // end of the latest slice
};

// Which slices to read; an empty list or an unset field matches everything.
struct TraceFilter
{
    std::vector<TraceCategory> categories;
    std::optional<int64_t> rank;
    std::optional<int64_t> nodeId;
    std::optional<int64_t> trackId;
};

class TraceReader
{
public:
    explicit TraceReader(RunDatabase& db) : m_db(db) {}

    Expected<std::vector<TraceTrackInfo>> tracks();
    // By node, rank and category.
    Expected<std::vector<TraceSummaryRow>> summary();
    // Slices that overlap the window (ts <= window.toNs and ts + dur >= window.fromNs), ordered by time.
    Expected<std::vector<TraceSliceInfo>> slices(TimeWindow window, const TraceFilter& filter = {});
    // Nanoseconds of the window covered by the union of the matching slices (overlaps counted once).
    Expected<int64_t> coveredNs(TimeWindow window, const TraceFilter& filter = {});

private:
    RunDatabase& m_db;
};

} // namespace runlens::store
