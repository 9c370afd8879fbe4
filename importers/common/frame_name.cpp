#include "importers/common/frame_name.h"

#include "importers/common/text_fields.h"

#include <algorithm>

namespace runlens::importers {

FrameParts splitFrameName(std::string_view f)
{
    FrameParts parts{f, {}, 0};
    if (f.size() < 4 || f.back() != ')') return parts;
    // The parenthesis that opens the last group: a function name may hold parentheses of its own.
    int depth = 0;
    size_t open = std::string_view::npos;
    for (size_t i = f.size(); i-- > 0;) {
        if (f[i] == ')')
            ++depth;
        else if (f[i] == '(' && --depth == 0) {
            open = i;
            break;
        }
    }
    if (open == std::string_view::npos || open < 2 || f[open - 1] != ' ') return parts;
    const std::string_view name = trim(f.substr(0, open - 1));
    const std::string_view inner = f.substr(open + 1, f.size() - open - 2);
    if (name.empty() || inner.empty()) return parts;
    parts.name = name;
    parts.file = inner;
    if (const size_t colon = inner.rfind(':'); colon != std::string_view::npos && colon > 0) {
        const std::string_view digits = inner.substr(colon + 1);
        if (!digits.empty() && std::all_of(digits.begin(), digits.end(), isDigit))
            if (auto line = parseInteger(digits)) {
                parts.file = inner.substr(0, colon);
                parts.line = *line;
            }
    }
    return parts;
}

} // namespace runlens::importers
