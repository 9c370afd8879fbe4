#pragma once

// int64 nanosecond arithmetic that saturates instead of overflowing (unbounded windows are INT64_MIN..MAX,
// and clock offsets are added to them), and checked forms that say when a result does not fit.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

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

// a + b, or nothing when it is outside int64 (a time plus an offset read from a file).
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// a - b, or nothing when it is outside int64.
inline std::optional<int64_t> checkedSub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// a * b, or nothing when it is outside int64.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// v rounded to the nearest int64 (halves away from zero, as llround), or nothing when v is not finite or the result
// is outside int64: converting such a double is undefined behaviour. -2^63 and 2^63 are exact doubles.
inline std::optional<int64_t> roundToInt64(double v)
{
    const double r = std::round(v);
    if (!(r >= -0x1p63 && r < 0x1p63)) return std::nullopt; // also false for NaN
    return static_cast<int64_t>(r);
}

} // namespace runlens::store
