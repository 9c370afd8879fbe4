#pragma once

// Small text helpers shared by the importers: trimming, splitting, locale-free number parsing, and the
// spellings of "no value" that monitoring tools print.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::importers {

inline bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

inline bool isDigit(char c)
{
    return c >= '0' && c <= '9';
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

// Fields separated by runs of blanks (whitespace-aligned tables); out is cleared first.
void splitWhitespace(std::string_view line, std::vector<std::string_view>& out);

// The n decimal digits at pos as a number ("20261129": the month is the 2 digits at 4); false when s is shorter or
// any of them is not a digit. For fixed-width dates and times.
bool fixedDigits(std::string_view s, size_t pos, size_t n, int64_t& out);

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

// A value quoted in a message, cut so a huge bad value cannot make a huge diagnostic: up to 60 bytes as they are,
// else the first 60 followed by "... (N bytes)".
std::string clip(std::string_view v);

// The beginning of a line quoted in a message (a stack line, which may run to megabytes): up to 80 bytes as they
// are, else cut at a UTF-8 character boundary at or before byte 80 and followed by "...".
std::string quoteLine(std::string_view text);

// "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "-", "" ... : a value that is absent, not malformed.
bool isMissingToken(std::string_view s);

} // namespace runlens::importers
