#pragma once

// Reading a Chrome Trace Event document (PyTorch profiler / Kineto, docs/formats.md §13) into plain values:
// the slices with their canonical category and their times as written (not yet placed on the wall clock),
// the tracks they lie on, and the metadata that places and labels them. Recoverable problems are reported
// as counted diagnostics; a document that is not readable JSON is an Error.

#include "analysis/store/error.h"
#include "analysis/store/trace_writer.h"
#include "importers/importer.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace runlens::importers::trace {

struct Track
{
    bool gpu = false; // GPU activity: pid = device index, tid = stream
    std::string pid;  // as written ("461", "0", "Spans")
    std::string tid;
    std::string name;              // thread_name metadata, else process_name, else ""
    std::optional<int64_t> device; // GPU index (args.device, else a numeric pid)
};

struct Slice
{
    int64_t tsNs = 0; // the trace's own clock: ts µs as ns, before placement
    int64_t durNs = 0;
    std::optional<int64_t> correlation;
    uint32_t track = 0;
    uint32_t name = 0;
    store::TraceCategory category = store::TraceCategory::Other;
};

struct DeviceProperties
{
    int64_t id = 0;
    std::string name;
    std::optional<int64_t> totalMemoryBytes;
    std::optional<int64_t> smCount;
    std::optional<int64_t> computeMajor, computeMinor;
};

struct ParsedTrace
{
    std::vector<Slice> slices; // complete events, matched B/E pairs, instants (duration 0)
    std::vector<Track> tracks;
    std::vector<std::string> names;
    std::optional<int64_t> baseTimeNs; // baseTimeNanoseconds: ts counts from it
    std::optional<int64_t> rank, worldSize;
    bool distributedInfo = false; // the key was there (its rank may still be unreadable)
    std::string backend;
    std::vector<DeviceProperties> devices;
    bool bareArray = false;
    bool unclosedArray = false; // a bare array without its closing ] (the format allows it)

    int64_t events = 0;                             // elements of the event array
    int64_t complete = 0;                           // X
    int64_t durationPairs = 0;                      // matched B/E
    int64_t instants = 0;                           // i/I
    int64_t counters = 0;                           // C, not imported
    int64_t flows = 0;                              // s/t/f, counted only
    int64_t metadata = 0;                           // M
    std::map<std::string, int64_t> otherCategories; // input categories stored as "other", with their counts
};

// Parses the whole document in text (the top level first, then the event array in chunks of a few MB, each a
// small JSON document: a large trace costs little more memory than its text).
Status parseChromeTrace(std::string_view text, ImportContext& ctx, ParsedTrace& out);

} // namespace runlens::importers::trace
