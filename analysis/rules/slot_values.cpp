#include "analysis/rules/slot_values.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace runlens::analysis {

namespace {

constexpr std::array<double, kMaxDecimals + 1> kPow10 = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
// Codes stay exact integers in a double well inside 2^53.
constexpr double kMaxCode = 4e15;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// value = code / 10^d for d ≥ 0 (decimals), code × 10^-d for d < 0 (whole tens, thousands … as clocks in Hz are).
double decode(int64_t code, int d)
{
    const auto c = static_cast<double>(code);
    return d >= 0 ? c / kPow10[static_cast<size_t>(d)] : c * kPow10[static_cast<size_t>(-d)];
}

// Whether x is decode(code, d) for an integer code, to the bit.
bool exactAt(double x, int d, int64_t& code)
{
    const double scaled = d >= 0 ? x * kPow10[static_cast<size_t>(d)] : x / kPow10[static_cast<size_t>(-d)];
    if (!(std::abs(scaled) < kMaxCode)) return false;
    code = std::llround(scaled);
    return std::bit_cast<uint64_t>(decode(code, d)) == std::bit_cast<uint64_t>(x);
}

// The fewest decimals (from `from` on) that give x back exactly, or kNoDecimals.
constexpr int kNoDecimals = kMaxDecimals + 1;
int decimalsOf(double x, int from)
{
    int64_t code = 0;
    for (int d = from; d <= kMaxDecimals; ++d)
        if (exactAt(x, d, code)) return d;
    return kNoDecimals;
}

template <typename T> T codeAt(const std::vector<uint8_t>& codes, size_t j)
{
    T c;
    std::memcpy(&c, codes.data() + j * sizeof(T), sizeof(T));
    return c;
}

template <typename T> void putCode(std::vector<uint8_t>& codes, size_t j, T c)
{
    std::memcpy(codes.data() + j * sizeof(T), &c, sizeof(T));
}

} // namespace

SlotValues::SlotValues(const std::vector<double>& values) : m_size(values.size())
{
    m_blocks.reserve((values.size() + kSlotBlock - 1) / kSlotBlock);
    for (size_t first = 0; first < values.size(); first += kSlotBlock)
        m_blocks.push_back(encode(values.data() + first, std::min(kSlotBlock, values.size() - first)));
}

SlotValues::Block SlotValues::encode(const double* values, size_t n)
{
    Block b;
    auto raw = [&] {
        b.width = 8;
        b.codes.resize(n * sizeof(double));
        std::memcpy(b.codes.data(), values, n * sizeof(double));
        return b;
    };
    int decimals = -kMaxDecimals;
    bool any = false;
    for (size_t j = 0; j < n; ++j) {
        if (std::isnan(values[j])) continue;
        decimals = decimalsOf(values[j], decimals);
        if (decimals == kNoDecimals) return raw();
        any = true;
    }
    if (!any) return b; // every slot NaN: width 0
    b.decimals = static_cast<int8_t>(decimals);
    std::vector<int64_t> codes(n, 0);
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (size_t j = 0; j < n; ++j) {
        if (std::isnan(values[j])) continue;
        if (!exactAt(values[j], decimals, codes[j])) return raw();
        lo = std::min(lo, codes[j]);
        hi = std::max(hi, codes[j]);
    }
    // The all-ones code of each width stands for NaN.
    const auto range = static_cast<uint64_t>(hi - lo);
    b.width = range < 0xFF ? 1 : range < 0xFFFF ? 2 : range < 0xFFFFFFFF ? 4 : 0;
    if (b.width == 0) return raw();
    b.base = lo;
    b.codes.resize(n * b.width);
    for (size_t j = 0; j < n; ++j) {
        const bool nan = std::isnan(values[j]);
        const uint64_t c = nan ? ~uint64_t{0} : static_cast<uint64_t>(codes[j] - lo);
        if (b.width == 1) putCode(b.codes, j, static_cast<uint8_t>(c));
        if (b.width == 2) putCode(b.codes, j, static_cast<uint16_t>(c));
        if (b.width == 4) putCode(b.codes, j, static_cast<uint32_t>(c));
    }
    return b;
}

double SlotValues::operator[](size_t i) const
{
    const Block& b = m_blocks[i >> kSlotBlockShift];
    const size_t j = i & (kSlotBlock - 1);
    switch (b.width) {
    case 0:
        return kNaN;
    case 1: {
        const auto c = codeAt<uint8_t>(b.codes, j);
        return c == 0xFF ? kNaN : decode(b.base + c, b.decimals);
    }
    case 2: {
        const auto c = codeAt<uint16_t>(b.codes, j);
        return c == 0xFFFF ? kNaN : decode(b.base + c, b.decimals);
    }
    case 4: {
        const auto c = codeAt<uint32_t>(b.codes, j);
        return c == 0xFFFFFFFF ? kNaN : decode(b.base + c, b.decimals);
    }
    default:
        return codeAt<double>(b.codes, j);
    }
}

std::vector<double> SlotValues::toVector() const
{
    std::vector<double> out;
    out.reserve(m_size);
    for (size_t i = 0; i < m_size; ++i)
        out.push_back((*this)[i]);
    return out;
}

size_t SlotValues::bytes() const
{
    size_t n = m_blocks.capacity() * sizeof(Block);
    for (const Block& b : m_blocks)
        n += b.codes.capacity();
    return n;
}

} // namespace runlens::analysis
