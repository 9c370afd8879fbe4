#pragma once

// Small text helpers shared by the importers: trimming, splitting, locale-free number parsing, and the
// spellings of "no value" that monitoring tools print.

#include <optional>
#include <string_view>
#include <vector>

namespace runlens::importers {

inline bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

inline std::string_view trim(std::string_view s)
{
    while (!s.empty() && isSpace(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && isSpace(s.back()))
        s.remove_suffix(1);
    return s;
}

// Splits on sep without any quoting rules; out is cleared first.
void splitFields(std::string_view line, char sep, std::vector<std::string_view>& out);

// A whole-string number: optional sign, digits, fraction, exponent; "nan"/"inf" are reported through
// the return value being a non-finite double. Leading/trailing spaces are not allowed (trim first).
std::optional<double> parseNumber(std::string_view s);

// Like parseNumber for an integer (decimal, or hex with 0x).
std::optional<int64_t> parseInteger(std::string_view s);

// The value-and-unit form "105.75 W", "100 %", "19818 MiB": the number and the unit after it.
struct NumberWithUnit
{
    double value = 0;
    std::string_view unit;
};
std::optional<NumberWithUnit> parseNumberWithUnit(std::string_view s);

// "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "-", "" ... : a value that is absent, not malformed.
bool isMissingToken(std::string_view s);

} // namespace runlens::importers
