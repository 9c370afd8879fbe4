#pragma once

// Inputs parsed as one document (Chrome traces, speedscope profiles, trainer state, Prometheus API answers) are
// read whole into memory first. Their decompressed size is capped: a small .zst or .gz can expand a thousandfold
// or more, and reading it whole would exhaust memory before any parser saw a byte of it.

#include "importers/importer.h"
#include "importers/input/input_stream.h"

#include <cstdint>
#include <string>

namespace runlens::importers {

// The default cap: twice the largest profiler traces met in practice (~2 GiB), while parsing one (about twice its
// size in memory) still fits a workstation.
inline constexpr uint64_t kDefaultMaxDocumentBytes = uint64_t{4} << 30;

// Past this much decoded text, an input that expands more than kBombRatio-fold is refused unless max_input= was
// given: real traces, profiles and logs compress 10 to 30-fold (zstd -19 and gzip -9 on the fixtures), a run of
// blanks or zeros a thousandfold (gzip) or without bound (zstd), so a few KB could claim gigabytes of memory under
// the default cap. Below the floor nothing is refused, whatever its ratio.
inline constexpr uint64_t kBombFloorBytes = uint64_t{32} << 20;
inline constexpr uint64_t kBombRatio = 500;

struct DocumentLimit
{
    uint64_t maxBytes = kDefaultMaxDocumentBytes;
    bool given = false; // max_input= was set: the user vouches for the file, no ratio check
};

// The cap for this import: --option max_input= (bytes, or a number with KiB, MiB, GiB, TiB or KB, MB, GB, TB),
// else the default; never above formatLimit, what the format's parser can take. A bad value is a Usage error.
Expected<DocumentLimit> maxDocumentBytes(const ImportOptions& options, uint64_t formatLimit);

// Whether `adding` more decoded bytes after `have` stay within the limit (the cap, and the ratio of a compressed
// input); else an Error naming the file and why.
Status documentFits(const InputStream& in, uint64_t have, uint64_t adding, const DocumentLimit& limit);

// Appends the rest of the input to out, block by block, each checked with documentFits before it is added (what out
// holds already counts): an Error as soon as the document would pass the limit.
Status appendWholeInput(InputStream& in, const DocumentLimit& limit, std::string& out);

} // namespace runlens::importers
