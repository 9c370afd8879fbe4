#pragma once

// Encoding of one chunk of a series' points (the point_chunk.data BLOB).
//
// Before compression the chunk is a byte string of LEB128 varints:
//   version(=1) count missing
//   timestamps: zigzag(ts0), zigzag(ts1 - ts0), then zigzag delta-of-delta for each further point
//   value mode: 0 = decimal: varint k, then zigzag deltas of round(v * 10^k) (lossless: checked on encode)
//               1 = raw: the XOR of each value's IEEE-754 bits with the previous one, 8 bytes little-endian
//   missing points: for each, varint index delta and varint token id; then the token table
//                   (varint n, then varint length + UTF-8 bytes for each token, e.g. "[N/A]")
// The whole string is compressed with zstd. Present values are encoded in order, missing ones only
// by index, so decoding gives back exactly the points and raw tokens that were appended.

#include "analysis/store/error.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace runlens::store {

inline constexpr int kChunkPoints = 4096;

struct Point
{
    int64_t tsNs = 0;
    double value = std::numeric_limits<double>::quiet_NaN(); // NaN when missing
    bool missing = false;
};

struct ChunkSummary
{
    int64_t firstNs = 0;
    int64_t lastNs = 0;
    int64_t count = 0;
    int64_t missing = 0;
    double minValue = 0; // over present values; meaningless when count == missing
    double maxValue = 0;
    double sum = 0;
};

// Points of one chunk in the order appended; tokens[i] is the raw token of missing point i (empty for present).
struct ChunkPoints
{
    std::vector<Point> points;
    std::vector<std::string> missingTokens; // one per missing point, in order
};

// Encodes points (already in time order) with their raw missing tokens. Never fails for valid input.
std::string encodeChunk(const std::vector<Point>& points, const std::vector<std::string>& missingTokens,
                        ChunkSummary* summary);

// Decodes a chunk; corrupt data is an Error (never undefined behaviour).
Expected<ChunkPoints> decodeChunk(const void* data, size_t size);

} // namespace runlens::store
