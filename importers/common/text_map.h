#pragma once

// Hash maps keyed by text (or any bytes) that can be searched with a string_view, so a repeated key costs no
// allocation; hashed with XXH3 (several GB/s: whole stack lines are keys).

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <xxhash.h>

namespace runlens::importers {

struct TextHash
{
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return XXH3_64bits(s.data(), s.size()); }
};

template <typename T> using TextMap = std::unordered_map<std::string, T, TextHash, std::equal_to<>>;

} // namespace runlens::importers
