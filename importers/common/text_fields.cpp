#include "importers/common/text_fields.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <limits>

namespace runlens::importers {

void splitFields(std::string_view line, char sep, std::vector<std::string_view>& out)
{
    out.clear();
    size_t start = 0;
    for (;;) {
        const size_t p = line.find(sep, start);
        if (p == std::string_view::npos) {
            out.push_back(line.substr(start));
            return;
        }
        out.push_back(line.substr(start, p - start));
        start = p + 1;
    }
}

void splitWhitespace(std::string_view line, std::vector<std::string_view>& out)
{
    out.clear();
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && isSpace(line[i]))
            ++i;
        const size_t start = i;
        while (i < line.size() && !isSpace(line[i]))
            ++i;
        if (i > start) out.push_back(line.substr(start, i - start));
    }
}

bool fixedDigits(std::string_view s, size_t pos, size_t n, int64_t& out)
{
    if (pos + n > s.size()) return false;
    out = 0;
    for (size_t i = pos; i < pos + n; ++i) {
        if (!isDigit(s[i])) return false;
        out = out * 10 + (s[i] - '0');
    }
    return true;
}

std::string clip(std::string_view v)
{
    constexpr size_t kMax = 60;
    if (v.size() <= kMax) return std::string(v);
    return fmt::format("{}... ({} bytes)", v.substr(0, kMax), v.size());
}

std::string quoteLine(std::string_view text)
{
    constexpr size_t kMax = 80;
    if (text.size() <= kMax) return std::string(text);
    size_t n = kMax;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80)
        --n;
    return std::string(text.substr(0, n)) + "...";
}

static bool equalsIgnoreCase(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

// Plain decimals ("105.75", "-3", "0.001") whose digits fit 2^53: mantissa / 10^k is exact in both
// operands, so one IEEE division gives the correctly rounded result (Clinger's fast path). Stops at the
// first character that cannot continue the number; *consumed says where.
static bool parseSimpleDecimalPrefix(std::string_view s, double& out, size_t& consumed)
{
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* p = s.data();
    const char* const end = p + s.size();
    const bool negative = p != end && *p == '-';
    if (negative) ++p;
    uint64_t mantissa = 0;
    const char* digitsStart = p;
    while (p != end && static_cast<unsigned>(*p - '0') < 10)
        mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0');
    size_t digits = static_cast<size_t>(p - digitsStart);
    size_t fraction = 0;
    if (p != end && *p == '.') {
        const char* fractionStart = ++p;
        while (p != end && static_cast<unsigned>(*p - '0') < 10)
            mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0');
        fraction = static_cast<size_t>(p - fractionStart);
        digits += fraction;
    }
    if (digits == 0 || digits > 19 || fraction > 22 || mantissa > (uint64_t{1} << 53)) return false;
    if (p != end && (*p == 'e' || *p == 'E' || *p == '.')) return false; // exponents: the full parser
    const double v = fraction ? static_cast<double>(mantissa) / kPow10[fraction] : static_cast<double>(mantissa);
    out = negative ? -v : v;
    consumed = static_cast<size_t>(p - s.data());
    return true;
}

static bool parseSimpleDecimal(std::string_view s, double& out)
{
    size_t consumed = 0;
    return parseSimpleDecimalPrefix(s, out, consumed) && consumed == s.size();
}

std::optional<double> parseNumber(std::string_view s)
{
    if (s.empty()) return std::nullopt;
    if (double fast; parseSimpleDecimal(s, fast)) return fast;
    const char c0 = s[0];
    const bool plausible = (c0 >= '0' && c0 <= '9') || c0 == '-' || c0 == '+' || c0 == '.' || c0 == 'n' || c0 == 'N' ||
                           c0 == 'i' || c0 == 'I';
    if (!plausible) return std::nullopt; // words such as "P0" or "Enabled" without the slow path
    std::string_view body = s;
    if (body.front() == '+') body.remove_prefix(1);
    double v = 0;
    auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
    const char* end = body.data() + body.size();
    if (p == end && (ec == std::errc() || ec == std::errc::result_out_of_range)) {
        if (ec == std::errc::result_out_of_range) {
            // from_chars leaves v alone here: tell overflow (an infinity) from underflow (zero) by the decimal
            // magnitude of the text, e.g. "1e400" or 400 digits vs "1e-400".
            const bool negative = body.front() == '-';
            std::string_view digits = negative ? body.substr(1) : body;
            const size_t e = digits.find_first_of("eE");
            int64_t exponent = 0;
            if (e != std::string_view::npos) {
                std::string_view ex = digits.substr(e + 1);
                if (!ex.empty() && ex.front() == '+') ex.remove_prefix(1);
                exponent = parseInteger(ex).value_or(ex.size() > 0 && ex.front() == '-' ? -100000 : 100000);
                digits = digits.substr(0, e);
            }
            const size_t dot = digits.find('.');
            const std::string_view intPart = digits.substr(0, dot);
            const size_t firstNonZero = intPart.find_first_not_of('0');
            const int64_t intDigits =
                firstNonZero == std::string_view::npos ? 0 : static_cast<int64_t>(intPart.size() - firstNonZero);
            const bool overflow = intDigits > 0 ? intDigits - 1 + exponent > 0 : exponent > 0;
            v = !overflow  ? 0.0
                : negative ? -std::numeric_limits<double>::infinity()
                           : std::numeric_limits<double>::infinity();
        }
        return v;
    }
    std::string_view w = s;
    bool negative = false;
    if (!w.empty() && (w.front() == '+' || w.front() == '-')) {
        negative = w.front() == '-';
        w.remove_prefix(1);
    }
    if (equalsIgnoreCase(w, "nan")) return std::numeric_limits<double>::quiet_NaN();
    if (equalsIgnoreCase(w, "inf") || equalsIgnoreCase(w, "infinity"))
        return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return std::nullopt;
}

std::optional<int64_t> parseInteger(std::string_view s)
{
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s.remove_prefix(2);
        base = 16;
        uint64_t u = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), u, 16);
        if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
        return static_cast<int64_t>(u);
    }
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

std::optional<NumberWithUnit> parseNumberWithUnit(std::string_view s)
{
    double fast;
    size_t consumed = 0;
    if (parseSimpleDecimalPrefix(s, fast, consumed) && (consumed == s.size() || s[consumed] == ' '))
        return NumberWithUnit{fast, trim(s.substr(consumed))};
    const size_t space = s.find(' ');
    if (space == std::string_view::npos) {
        auto v = parseNumber(s);
        if (!v) return std::nullopt;
        return NumberWithUnit{*v, {}};
    }
    auto v = parseNumber(s.substr(0, space));
    if (!v) return std::nullopt;
    return NumberWithUnit{*v, trim(s.substr(space + 1))};
}

bool isMissingToken(std::string_view s)
{
    if (s.empty() || s == "-" || s == "N/A" || s == "n/a" || s == "NA") return true;
    // nvidia-smi prints every unavailable value in brackets: [N/A], [Not Supported], [Unknown Error],
    // [Requested functionality has been deprecated], [Insufficient Permissions], [GPU is lost], ...
    return s.size() >= 2 && s.front() == '[' && s.back() == ']';
}

} // namespace runlens::importers
