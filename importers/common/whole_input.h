#pragma once

// Inputs parsed as one document (Chrome traces, speedscope profiles, trainer state, Prometheus API answers) are
// read whole into memory first. Their decompressed size is capped: a small .zst or .gz can expand a thousandfold
// or more, and reading it whole would exhaust memory before any parser saw a byte of it.

#include "importers/importer.h"
#include "importers/input/input_stream.h"

#include <cstdint>

namespace runlens::importers {

// The default cap: twice the largest profiler traces met in practice (~2 GiB), while parsing one (about twice its
// size in memory) still fits a workstation.
inline constexpr uint64_t kDefaultMaxDocumentBytes = uint64_t{4} << 30;

// The cap for this import: --option max_input= (bytes, or a number with KiB, MiB, GiB, TiB or KB, MB, GB, TB),
// else the default; never above formatLimit, what the format's parser can take. A bad value is a Usage error.
Expected<uint64_t> maxDocumentBytes(const ImportOptions& options, uint64_t formatLimit);

// Whether `adding` more decoded bytes after `have` stay within maxBytes; else an Error naming the file and the cap.
Status documentFits(const InputStream& in, uint64_t have, uint64_t adding, uint64_t maxBytes);

} // namespace runlens::importers
