#include "importers/common/whole_input.h"

#include "importers/common/text_fields.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <string_view>
#include <utility>

namespace runlens::importers {
namespace {

// "4 GiB", "1.5 MiB", "512 bytes": how a cap is named in messages.
std::string bytesText(uint64_t n)
{
    constexpr std::pair<uint64_t, const char*> kUnits[] = {
        {uint64_t{1} << 40, "TiB"}, {uint64_t{1} << 30, "GiB"}, {uint64_t{1} << 20, "MiB"}, {uint64_t{1} << 10, "KiB"}};
    for (const auto& [size, name] : kUnits)
        if (n >= size) return fmt::format("{:.3g} {}", static_cast<double>(n) / static_cast<double>(size), name);
    return fmt::format("{} bytes", n);
}

} // namespace

Expected<DocumentLimit> maxDocumentBytes(const ImportOptions& options, uint64_t formatLimit)
{
    auto it = options.extra.find("max_input");
    if (it == options.extra.end()) return DocumentLimit{std::min(kDefaultMaxDocumentBytes, formatLimit), false};
    std::string_view v = trim(it->second);
    double scale = 1;
    constexpr std::pair<const char*, double> kSuffixes[] = {
        {"TiB", 0x1p40}, {"GiB", 0x1p30}, {"MiB", 0x1p20}, {"KiB", 0x1p10}, {"TB", 1e12},
        {"GB", 1e9},     {"MB", 1e6},     {"KB", 1e3},     {"kB", 1e3},     {"B", 1}};
    for (const auto& [suffix, factor] : kSuffixes) {
        const std::string_view s(suffix);
        if (v.size() > s.size() && v.ends_with(s)) {
            scale = factor;
            v = trim(v.substr(0, v.size() - s.size()));
            break;
        }
    }
    const auto n = parseNumber(v);
    // 2^64 is exactly representable: anything below it converts to uint64 without overflow.
    if (!n || !std::isfinite(*n) || *n * scale < 1 || *n * scale >= 0x1p64)
        return makeError(ErrorCode::Usage, fmt::format("max_input={}: expected a size such as 512MiB, 8GiB or a "
                                                       "number of bytes",
                                                       clip(it->second)));
    const auto bytes = static_cast<uint64_t>(*n * scale);
    if (bytes > formatLimit)
        return makeError(ErrorCode::Usage, fmt::format("max_input={}: this format can read at most {}",
                                                       clip(it->second), bytesText(formatLimit)));
    return DocumentLimit{bytes, true};
}

Status documentFits(const InputStream& in, uint64_t have, uint64_t adding, const DocumentLimit& limit)
{
    const uint64_t maxBytes = limit.maxBytes;
    if (adding <= maxBytes && have <= maxBytes - adding) {
        const uint64_t decoded = have + adding, raw = std::max<uint64_t>(in.rawBytesRead(), 1);
        if (limit.given || in.compression() == Compression::None || decoded <= kBombFloorBytes ||
            decoded / raw <= kBombRatio)
            return okStatus();
        return makeError(ErrorCode::Unsupported,
                         fmt::format("{} of {} data decoded to {} so far ({}-fold): far beyond what real data "
                                     "compresses, a decompression bomb? Not imported (--option max_input= reads it "
                                     "anyway, up to that size)",
                                     bytesText(raw), compressionName(in.compression()), bytesText(decoded),
                                     decoded / raw),
                         {in.displayName()});
    }
    const std::string raw =
        in.compression() == Compression::None
            ? std::string()
            : fmt::format(" after {} of {} data", bytesText(in.rawBytesRead()), compressionName(in.compression()));
    return makeError(ErrorCode::Unsupported,
                     fmt::format("the decoded input is larger than {}{}, the most read whole into memory: not imported "
                                 "(--option max_input= raises the cap)",
                                 bytesText(maxBytes), raw),
                     {in.displayName()});
}

Status appendWholeInput(InputStream& in, const DocumentLimit& limit, std::string& out)
{
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(auto block, in.nextBlock());
        if (block.empty()) return okStatus();
        RUNLENS_TRY(documentFits(in, out.size(), block.size(), limit));
        out.append(block);
    }
}

} // namespace runlens::importers
