#pragma once

// int64 nanosecond arithmetic that saturates instead of overflowing (unbounded windows are INT64_MIN..MAX,
// and clock offsets are added to them).

#include <cstdint>
#include <limits>

namespace runlens::store {

inline int64_t saturatingAdd(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    return r;
}

inline int64_t saturatingSub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b > 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    return r;
}

} // namespace runlens::store
