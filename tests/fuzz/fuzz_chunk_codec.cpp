// The point chunk codec (analysis/store/chunk_codec.h): decodeChunk on any bytes must return points or an Error,
// never read out of bounds, overflow or allocate without bound. First byte even: the rest is the BLOB as stored;
// odd: the rest is the chunk before compression, wrapped in a zstd frame. A chunk that decodes to points in time
// order with finite values is encoded again and must decode to the same points and tokens.

#include "analysis/store/chunk_codec.h"
#include "tests/fuzz/fuzz_codec_support.h"
#include "tests/fuzz/fuzz_support.h"

#include <bit>
#include <cmath>

using namespace runlens;

namespace {

bool encodable(const store::ChunkPoints& chunk)
{
    constexpr int64_t kLimit = int64_t{1} << 60; // deltas of deltas stay far from overflow
    for (size_t i = 0; i < chunk.points.size(); ++i) {
        const store::Point& p = chunk.points[i];
        if (p.tsNs > kLimit || p.tsNs < -kLimit) return false;
        if (i > 0 && p.tsNs < chunk.points[i - 1].tsNs) return false;
        if (!p.missing && !std::isfinite(p.value)) return false;
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0) return 0;
    const std::string_view rest = fuzz::bytesOf(data + 1, size - 1);
    const std::string blob = (data[0] & 1) ? fuzz::zstdFrame(rest) : std::string(rest);
    auto chunk = store::decodeChunk(blob.data(), blob.size());
    if (!chunk || !encodable(*chunk)) return 0;

    store::ChunkSummary summary;
    const std::string again = store::encodeChunk(chunk->points, chunk->missingTokens, &summary);
    auto back = store::decodeChunk(again.data(), again.size());
    if (!back) fuzz::roundTripBroken("fuzz_chunk_codec", "an encoded chunk does not decode");
    if (back->points.size() != chunk->points.size()) fuzz::roundTripBroken("fuzz_chunk_codec", "point count");
    if (back->missingTokens != chunk->missingTokens) fuzz::roundTripBroken("fuzz_chunk_codec", "missing tokens");
    for (size_t i = 0; i < chunk->points.size(); ++i) {
        const store::Point &a = chunk->points[i], &b = back->points[i];
        if (a.tsNs != b.tsNs || a.missing != b.missing) fuzz::roundTripBroken("fuzz_chunk_codec", "time or missing");
        if (!a.missing && std::bit_cast<uint64_t>(a.value) != std::bit_cast<uint64_t>(b.value) && a.value != b.value)
            fuzz::roundTripBroken("fuzz_chunk_codec", "value");
    }
    if (summary.count != static_cast<int64_t>(chunk->points.size()))
        fuzz::roundTripBroken("fuzz_chunk_codec", "summary count");
    return 0;
}
