#include "analysis/store/diagnostics.h"

#include <fmt/format.h>

namespace runlens::store {
namespace {

// The length of the UTF-8 sequence at s[i], or 0 when it is not one (overlong forms, surrogates and code points
// past U+10FFFF included).
size_t utf8Length(std::string_view s, size_t i)
{
    const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b = at(i);
    size_t n = 0;
    unsigned lo = 0x80, hi = 0xbf; // the range of the second byte
    if (b >= 0xc2 && b <= 0xdf) {
        n = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
        n = 3;
        if (b == 0xe0) lo = 0xa0;
        if (b == 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
        n = 4;
        if (b == 0xf0) lo = 0x90;
        if (b == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
    for (size_t k = 2; k < n; ++k)
        if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
    return n;
}

} // namespace

std::string printableText(std::string_view text)
{
    const auto plain = [](char c) { return (c >= 0x20 && c < 0x7f) || c == '\t'; };
    size_t i = 0;
    while (i < text.size() && plain(text[i]))
        ++i;
    if (i == text.size()) return std::string(text);
    std::string out(text.substr(0, i));
    while (i < text.size()) {
        const auto b = static_cast<unsigned char>(text[i]);
        if (plain(text[i])) {
            out += text[i++];
        } else if (const size_t n = b >= 0x80 ? utf8Length(text, i) : 0; n > 0) {
            out.append(text.substr(i, n));
            i += n;
        } else {
            out += fmt::format("\\x{:02x}", b);
            ++i;
        }
    }
    return out;
}

} // namespace runlens::store
