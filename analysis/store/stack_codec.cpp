#include "analysis/store/stack_codec.h"

#include "analysis/store/byte_codec.h"

#include <bit>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <zstd.h>

namespace runlens::store {
namespace {
using namespace codec;

constexpr int kZstdLevel = 1;
constexpr uint64_t kVersion = 1;
// Bounds on what a chunk's bytes may declare, checked before anything is allocated for them. The writer cuts
// chunks at kStackChunkSamples; this cap leaves ample room and bounds one decode at 32 MiB of samples.
constexpr uint64_t kMaxDecodedSamples = 256 * static_cast<uint64_t>(kStackChunkSamples);
// A sample at its widest takes 38 bytes before compression (three varints and a weight): twice that cap's worth.
// zstd frames can expand ~30000-fold, so the declared size of a tiny blob must not be trusted beyond this.
constexpr unsigned long long kMaxRawChunkBytes = 64ull << 20;
// Every sample takes at least three bytes: its time delta, callsite and count varints.
constexpr uint64_t kMinBytesPerSample = 3;
// Every per-callsite total takes at least ten bytes: its id delta and sample varints and the 8-byte weight.
constexpr uint64_t kMinBytesPerTotal = 10;

void writeDouble(ByteWriter& w, double v)
{
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    char le[8];
    for (int b = 0; b < 8; ++b)
        le[b] = static_cast<char>((bits >> (8 * b)) & 0xff);
    w.bytes(le, 8);
}

bool readDouble(Cursor& c, double& v)
{
    uint8_t le[8];
    if (!c.bytes(le, 8)) return false;
    uint64_t bits = 0;
    for (int b = 0; b < 8; ++b)
        bits |= static_cast<uint64_t>(le[b]) << (8 * b);
    std::memcpy(&v, &bits, sizeof v);
    return true;
}

Error corrupt(std::string_view what)
{
    return makeError(ErrorCode::Database, fmt::format("corrupt stack chunk: {}", what));
}

} // namespace

std::string encodeStackSamples(const std::vector<StackSample>& samples)
{
    ByteWriter raw(samples.size() * 8 + 16);
    raw.varint(kVersion);
    raw.varint(samples.size());
    int64_t prevTs = 0;
    double prevWeight = 0;
    bool first = true;
    for (const StackSample& s : samples) {
        raw.varint(zigzag(static_cast<int64_t>(static_cast<uint64_t>(s.tsNs) - static_cast<uint64_t>(prevTs))));
        raw.varint(static_cast<uint64_t>(s.callsiteId));
        const bool same = !first && std::bit_cast<uint64_t>(s.weight) == std::bit_cast<uint64_t>(prevWeight);
        raw.varint((static_cast<uint64_t>(s.count) << 1) | (same ? 1u : 0u));
        if (!same) writeDouble(raw, s.weight);
        prevTs = s.tsNs;
        prevWeight = s.weight;
        first = false;
    }
    std::string out(ZSTD_compressBound(raw.size()), '\0');
    const size_t n = ZSTD_compressCCtx(zstdContexts().c, out.data(), out.size(), raw.data(), raw.size(), kZstdLevel);
    if (ZSTD_isError(n)) return {}; // only on allocation failure; an empty blob then fails to decode loudly
    out.resize(n);
    return out;
}

Expected<std::vector<StackSample>> decodeStackSamples(const void* data, size_t size)
{
    const unsigned long long rawSize = ZSTD_getFrameContentSize(data, size);
    if (rawSize == ZSTD_CONTENTSIZE_ERROR || rawSize == ZSTD_CONTENTSIZE_UNKNOWN || rawSize > kMaxRawChunkBytes)
        return corrupt("bad zstd frame");
    std::string raw(static_cast<size_t>(rawSize), '\0');
    const size_t n = ZSTD_decompressDCtx(zstdContexts().d, raw.data(), raw.size(), data, size);
    if (ZSTD_isError(n))
        return corrupt(fmt::format("its zstd data is damaged or cut short ({})", ZSTD_getErrorName(n)).c_str());
    if (n != raw.size()) return corrupt("short frame");
    Cursor c(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
    uint64_t version = 0, count = 0;
    if (!c.varint(version) || version != kVersion) return corrupt("unknown version");
    if (!c.varint(count)) return corrupt("bad count");
    if (count > kMaxDecodedSamples || count > c.remaining() / kMinBytesPerSample)
        return corrupt(fmt::format("{} samples declared in {} bytes", count, raw.size()));
    std::vector<StackSample> out(static_cast<size_t>(count));
    int64_t ts = 0;
    double weight = 0;
    for (StackSample& s : out) {
        uint64_t delta = 0, site = 0, flags = 0;
        if (!c.varint(delta) || !c.varint(site) || !c.varint(flags)) return corrupt("truncated sample");
        if (site > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return corrupt(fmt::format("callsite id {} out of range", site));
        ts = static_cast<int64_t>(static_cast<uint64_t>(ts) + static_cast<uint64_t>(unzigzag(delta)));
        if (!(flags & 1) && !readDouble(c, weight)) return corrupt("truncated weight");
        s = {ts, static_cast<int64_t>(site), static_cast<int64_t>(flags >> 1), weight};
    }
    if (!c.atEnd()) return corrupt("trailing bytes");
    return out;
}

std::string encodeCallsiteTotals(const std::vector<CallsiteTotal>& totals)
{
    ByteWriter w(totals.size() * 14 + 16);
    w.varint(kVersion);
    w.varint(totals.size());
    int64_t prev = 0;
    for (const CallsiteTotal& t : totals) {
        w.varint(static_cast<uint64_t>(t.callsiteId - prev));
        w.varint(static_cast<uint64_t>(t.samples));
        writeDouble(w, t.weight);
        prev = t.callsiteId;
    }
    return std::string(w.data(), w.size());
}

namespace {
template <typename F> Status forEachTotal(const void* data, size_t size, int64_t idLimit, F&& f)
{
    Cursor c(static_cast<const uint8_t*>(data), size);
    uint64_t version = 0, count = 0;
    if (!c.varint(version) || version != kVersion) return corrupt("unknown summary version");
    if (!c.varint(count) || count > c.remaining() / kMinBytesPerTotal) return corrupt("bad summary count");
    int64_t id = 0;
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t delta = 0, samples = 0;
        double weight = 0;
        if (!c.varint(delta) || !c.varint(samples) || !readDouble(c, weight)) return corrupt("truncated summary");
        // Ascending, each id once, and below idLimit (0 <= id < idLimit, so the subtraction cannot overflow).
        if ((i > 0 && delta == 0) || delta >= static_cast<uint64_t>(idLimit - id))
            return corrupt("summary callsite id out of range");
        id += static_cast<int64_t>(delta);
        f(id, static_cast<int64_t>(samples), weight);
    }
    if (!c.atEnd()) return corrupt("trailing summary bytes");
    return okStatus();
}
} // namespace

Status addCallsiteTotals(const void* data, size_t size, CallsiteSums& sums, int64_t callsiteCount)
{
    return forEachTotal(data, size, callsiteCount, [&](int64_t id, int64_t n, double w) { sums.add(id, n, w); });
}

Expected<std::vector<CallsiteTotal>> decodeCallsiteTotals(const void* data, size_t size)
{
    std::vector<CallsiteTotal> out;
    const auto add = [&](int64_t id, int64_t n, double w) { out.push_back({id, n, w}); };
    RUNLENS_TRY(forEachTotal(data, size, std::numeric_limits<int64_t>::max(), add));
    return out;
}

} // namespace runlens::store
