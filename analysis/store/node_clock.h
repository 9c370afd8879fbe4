#pragma once

// Writes a node's clock offset (node.clock_offset_ns), its uncertainty and how it was found. The readers add the
// offset to every time of the node when they read (series, stack samples, trace slices); the data stay as imported.

#include "analysis/store/error.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace runlens::store {

class RunDatabase;

// How an offset was found (node.clock_offset_source).
inline constexpr std::string_view kClockSourceUser = "user";       // given on the command line or in the GUI
inline constexpr std::string_view kClockSourceTraces = "traces";   // ends of the same collectives on every rank
inline constexpr std::string_view kClockSourceMetrics = "metrics"; // GPU activity cross-correlated between nodes

// Sets the offset of the node named `node`; an error when there is no such node. One statement, so it is atomic.
Status setNodeClockOffset(RunDatabase& db, std::string_view node, int64_t offsetNs,
                          std::optional<int64_t> uncertaintyNs, std::string_view source);

} // namespace runlens::store
