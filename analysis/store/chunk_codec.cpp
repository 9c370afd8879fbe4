#include "analysis/store/chunk_codec.h"

#include "analysis/store/byte_codec.h"

#include <QtGlobal>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <unordered_map>
#include <zstd.h>

namespace runlens::store {
namespace {
using namespace codec;

constexpr int kZstdLevel = 3;
constexpr int kMaxDecimalDigits = 6;
constexpr double kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};

// Bounds on what the bytes of a chunk may declare, checked before anything is allocated for it. The writer cuts
// chunks at kChunkPoints (importers flush after every point), so a chunk of many more points was not written by
// it; this cap keeps the generous room and bounds one decode at about 32 MiB of points whatever a blob says.
constexpr uint64_t kMaxDecodedPoints = 256 * static_cast<uint64_t>(kChunkPoints);
// A point at its widest takes about 40 bytes before compression (timestamp and value varints, a missing entry);
// the rest is room for the missing-value tokens. zstd frames can expand ~30000-fold, so the declared size of a
// tiny blob must not be trusted beyond this.
constexpr unsigned long long kMaxRawChunkBytes = 64ull << 20;
// Every point takes at least two bytes before compression: its timestamp varint and either a value (a varint
// byte or 8 raw bytes) or a missing entry (two varints). A count above half the bytes left cannot be true.
constexpr uint64_t kMinBytesPerPoint = 2;

// The smallest k such that every value is exactly round(v * 10^k) / 10^k, or -1.
int decimalScale(const std::vector<Point>& points)
{
    for (int k = 0; k <= kMaxDecimalDigits; ++k) {
        bool fits = true;
        for (const Point& p : points) {
            if (p.missing) continue;
            const double scaled = std::nearbyint(p.value * kPow10[k]);
            if (!(std::fabs(scaled) < 9.0e15) || scaled / kPow10[k] != p.value ||
                (p.value == 0 && std::signbit(p.value))) { // -0.0 would come back as +0.0
                fits = false;
                break;
            }
        }
        if (fits) return k;
    }
    return -1;
}

} // namespace

std::string encodeChunk(const std::vector<Point>& points, const std::vector<std::string>& missingTokens,
                        ChunkSummary* summary)
{
    ByteWriter raw(points.size() * 20 + 64);
    ChunkSummary s;
    s.count = static_cast<int64_t>(points.size());
    raw.varint(1);
    raw.varint(points.size());
    int64_t missing = 0;
    for (const Point& p : points)
        missing += p.missing ? 1 : 0;
    s.missing = missing;
    raw.varint(static_cast<uint64_t>(missing));

    int64_t prevTs = 0;
    int64_t prevDelta = 0;
    for (size_t i = 0; i < points.size(); ++i) {
        const int64_t ts = points[i].tsNs;
        if (i == 0) {
            raw.varint(zigzag(ts));
        } else {
            const auto delta = static_cast<int64_t>(static_cast<uint64_t>(ts) - static_cast<uint64_t>(prevTs));
            raw.varint(
                zigzag(i == 1 ? delta
                              : static_cast<int64_t>(static_cast<uint64_t>(delta) - static_cast<uint64_t>(prevDelta))));
            prevDelta = delta;
        }
        prevTs = ts;
    }
    if (!points.empty()) {
        s.firstNs = points.front().tsNs;
        s.lastNs = points.back().tsNs;
    }

    bool first = true;
    for (const Point& p : points) {
        if (p.missing) continue;
        if (first) {
            s.minValue = s.maxValue = p.value;
            first = false;
        }
        s.minValue = std::min(s.minValue, p.value);
        s.maxValue = std::max(s.maxValue, p.value);
        s.sum += p.value;
    }

    const int k = decimalScale(points);
    if (k >= 0) {
        raw.byte(0);
        raw.varint(static_cast<uint64_t>(k));
        int64_t prev = 0;
        for (const Point& p : points) {
            if (p.missing) continue;
            const auto v = static_cast<int64_t>(std::nearbyint(p.value * kPow10[k]));
            raw.varint(zigzag(v - prev));
            prev = v;
        }
    } else {
        raw.byte(1);
        uint64_t prev = 0;
        for (const Point& p : points) {
            if (p.missing) continue;
            uint64_t bits;
            std::memcpy(&bits, &p.value, sizeof bits);
            const uint64_t x = bits ^ prev;
            prev = bits;
            char le[8];
            for (int b = 0; b < 8; ++b)
                le[b] = static_cast<char>((x >> (8 * b)) & 0xff);
            raw.bytes(le, 8);
        }
    }

    // Missing points and their tokens.
    std::unordered_map<std::string, uint64_t> tokenIds;
    std::vector<const std::string*> tokens;
    size_t lastIndex = 0;
    size_t m = 0;
    static const std::string kEmpty;
    for (size_t i = 0; i < points.size(); ++i) {
        if (!points[i].missing) continue;
        const std::string& token = m < missingTokens.size() ? missingTokens[m] : kEmpty;
        ++m;
        auto [it, inserted] = tokenIds.try_emplace(token, tokens.size());
        if (inserted) tokens.push_back(&it->first);
        raw.varint(i - lastIndex);
        raw.varint(it->second);
        lastIndex = i;
    }
    raw.varint(tokens.size());
    for (const std::string* t : tokens) {
        raw.varint(t->size());
        raw.bytes(t->data(), t->size());
    }

    std::string out(ZSTD_compressBound(raw.size()), '\0');
    const size_t n = ZSTD_compressCCtx(zstdContexts().c, out.data(), out.size(), raw.data(), raw.size(), kZstdLevel);
    // Compression into a buffer of compressBound size cannot fail for valid parameters.
    Q_ASSERT_X(!ZSTD_isError(n), "encodeChunk", "zstd compression failed");
    if (ZSTD_isError(n)) return {};
    out.resize(n);
    if (summary) *summary = s;
    return out;
}

Expected<ChunkPoints> decodeChunk(const void* data, size_t size)
{
    auto corrupt = [](const char* what) {
        return makeError(ErrorCode::Database, fmt::format("corrupt point chunk: {}", what));
    };
    const unsigned long long rawSize = ZSTD_getFrameContentSize(data, size);
    if (rawSize == ZSTD_CONTENTSIZE_ERROR || rawSize == ZSTD_CONTENTSIZE_UNKNOWN || rawSize > kMaxRawChunkBytes)
        return corrupt("bad zstd frame header");
    std::string raw(rawSize, '\0');
    const size_t n = ZSTD_decompressDCtx(zstdContexts().d, raw.data(), raw.size(), data, size);
    if (ZSTD_isError(n))
        return corrupt(fmt::format("its zstd data is damaged or cut short ({})", ZSTD_getErrorName(n)).c_str());
    if (n != rawSize) return corrupt("short zstd frame");

    Cursor c(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
    uint64_t version = 0, count = 0, missing = 0;
    if (!c.varint(version) || version != 1) return corrupt("unknown chunk version");
    if (!c.varint(count) || !c.varint(missing) || missing > count) return corrupt("bad counts");
    if (count > kMaxDecodedPoints || count > c.remaining() / kMinBytesPerPoint)
        return makeError(ErrorCode::Database,
                         fmt::format("corrupt point chunk: {} points declared in {} bytes", count, raw.size()));

    ChunkPoints out;
    out.points.resize(count);
    int64_t prevTs = 0, prevDelta = 0;
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t z;
        if (!c.varint(z)) return corrupt("truncated timestamps");
        if (i == 0) {
            prevTs = unzigzag(z);
        } else {
            // Wrapping arithmetic: corrupt input must give wrong numbers, never undefined behaviour.
            const auto delta = static_cast<int64_t>(static_cast<uint64_t>(i == 1 ? 0 : prevDelta) +
                                                    static_cast<uint64_t>(unzigzag(z)));
            prevTs = static_cast<int64_t>(static_cast<uint64_t>(prevTs) + static_cast<uint64_t>(delta));
            prevDelta = delta;
        }
        out.points[i].tsNs = prevTs;
    }

    uint8_t mode = 0;
    if (!c.bytes(&mode, 1) || mode > 1) return corrupt("bad value mode");
    std::vector<double> values(count - missing);
    if (mode == 0) {
        uint64_t k;
        if (!c.varint(k) || k > kMaxDecimalDigits) return corrupt("bad decimal scale");
        int64_t prev = 0;
        for (double& v : values) {
            uint64_t z;
            if (!c.varint(z)) return corrupt("truncated values");
            prev = static_cast<int64_t>(static_cast<uint64_t>(prev) + static_cast<uint64_t>(unzigzag(z)));
            v = static_cast<double>(prev) / kPow10[k];
        }
    } else {
        uint64_t prev = 0;
        for (double& v : values) {
            uint8_t le[8];
            if (!c.bytes(le, 8)) return corrupt("truncated values");
            uint64_t x = 0;
            for (int b = 0; b < 8; ++b)
                x |= static_cast<uint64_t>(le[b]) << (8 * b);
            prev ^= x;
            std::memcpy(&v, &prev, sizeof v);
        }
    }

    std::vector<uint64_t> tokenOf(missing);
    uint64_t index = 0;
    for (uint64_t m = 0; m < missing; ++m) {
        uint64_t delta, token;
        if (!c.varint(delta) || !c.varint(token)) return corrupt("truncated missing list");
        index += delta;
        if (index >= count || out.points[index].missing) return corrupt("bad missing index");
        out.points[index].missing = true;
        tokenOf[m] = token;
    }
    uint64_t nTokens;
    if (!c.varint(nTokens) || nTokens > missing) return corrupt("bad token table");
    std::vector<std::string> tokens(nTokens);
    for (std::string& t : tokens) {
        uint64_t len;
        if (!c.varint(len) || len > c.remaining()) return corrupt("bad token");
        t.resize(len);
        if (!c.bytes(t.data(), len)) return corrupt("truncated token");
    }
    if (!c.atEnd()) return corrupt("trailing bytes");

    out.missingTokens.reserve(missing);
    size_t vi = 0, mi = 0;
    for (Point& p : out.points) {
        if (p.missing) {
            if (tokenOf[mi] >= nTokens) return corrupt("bad token id");
            out.missingTokens.push_back(tokens[tokenOf[mi++]]);
        } else {
            p.value = values[vi++];
        }
    }
    return out;
}

} // namespace runlens::store
