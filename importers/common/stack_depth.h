#pragma once

// Call stacks deeper than a limit. A stack of hundreds of thousands of frames (runaway recursion, or a crafted
// file) would store as many frames and call sites and draw as many flame-graph rows, seconds of import for one
// sample. Such a stack keeps its innermost frames (where the time was spent, as perf and other stack walkers do
// when they cut a deep stack) under one root frame, kCutFrameName, that stands for the outer frames not kept.

#include "importers/importer.h"

#include <cstddef>
#include <optional>
#include <string_view>

namespace runlens::importers {

// Deeper than any stack a profiler records by default (perf 127 frames, async-profiler 2048, Python's recursion
// limit 1000), yet a cut stack still imports in milliseconds.
inline constexpr size_t kDefaultMaxStackDepth = 4096;
inline constexpr std::string_view kCutFrameName = "[outer frames not kept]";

// The depth limit of this import: --option max_stack_depth=N (at least 2), else the default. A bad value is a
// Usage error.
Expected<size_t> maxStackDepth(const ImportOptions& options);

// How many of a stack's `depth` frames are kept (the innermost ones) under the cut frame; 0 when it fits.
inline size_t keptFrames(size_t depth, size_t limit)
{
    return depth > limit ? limit - 1 : 0;
}

// The call site of the cut frame at the root, where a cut stack's kept frames hang.
Expected<int64_t> cutRootCallsite(store::RunWriter& writer);

// Reports a cut stack (stack_too_deep, data loss: the outer frames' names), at `where` when given, else at the
// reader's current line.
void reportCutStack(ImportContext& ctx, size_t depth, size_t limit, std::optional<SourceLocation> where = std::nullopt);

} // namespace runlens::importers
