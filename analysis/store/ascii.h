#pragma once

// Locale-free ASCII case folding: names read from files (column headers, metric and GPU names) compared without
// regard to case, the same on every machine whatever its locale.

#include <string>
#include <string_view>

namespace runlens {

inline std::string asciiLower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

} // namespace runlens
