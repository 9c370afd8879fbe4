#pragma once

// Field-level rules of the Chrome Trace Event format as PyTorch profiler / Kineto writes it (docs/formats.md §13):
// times in microseconds with a nanosecond fraction, the canonical category of an event, and where the
// events lie in the text.

#include "analysis/store/trace_writer.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace runlens::importers::trace {

// A number of microseconds (JSON number text, or a number in a string) as nanoseconds: exact for Kineto's
// "{us}.{ns:03}" form, further fraction digits rounded, exponents through double.
std::optional<int64_t> microsToNs(std::string_view text);

// The canonical category of an event: its input category (case-insensitive: old traces write "Kernel"),
// refined by its name: NCCL/RCCL kernels (or kernels with a "Collective name" argument) are comm_kernel, and
// CPU spans named gloo:..., nccl:..., c10d::..., record_param_comms or categorised collective_comm are
// collective. gpu is set for activity on a device stream (kernels, memcpy, memset, GPU annotations, syncs).
store::TraceCategory canonicalCategory(std::string_view category, std::string_view name, bool collectiveArg, bool& gpu);

// Where the events of a trace lie, found by one fast pass over the text that follows strings and nesting
// only: the event array (a bare array, or the value of the top-level "traceEvents"), the separators between
// its elements about every chunkBytes (to parse it piece by piece with little memory), and where its last
// complete element ends (for an array cut short).
struct EventLayout
{
    static constexpr size_t npos = std::string_view::npos;
    size_t arrayOpen = npos;    // the [ of the event array
    size_t arrayClose = npos;   // its ] (npos: the text ends first)
    size_t lastComplete = npos; // just after its last complete element (or after the [)
    std::vector<size_t> cuts;   // commas between elements, in order
};
EventLayout scanEventLayout(std::string_view text, size_t first, size_t chunkBytes);

} // namespace runlens::importers::trace
