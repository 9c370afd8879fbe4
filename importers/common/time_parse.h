#pragma once

// Wall-clock parsing for importers: naive local timestamps ("2026/07/14 08:12:53.353") are placed on UTC
// through the node's time zone, with the UTC offset cached per local hour so conversion stays cheap.

#include "analysis/store/error.h"

#include <QTimeZone>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace runlens::importers {

// The years a timestamp in nanoseconds since 1970 can hold (int64: 1677-09-21 to 2262-04-11), whole years only.
// A date outside them is unreadable, not an overflow.
inline constexpr int64_t kMinTimestampYear = 1678;
inline constexpr int64_t kMaxTimestampYear = 2261;

// Days since 1970-01-01 of a proleptic Gregorian date (no range checks beyond the obvious).
int64_t daysFromCivil(int64_t y, unsigned m, unsigned d);
// The inverse: the proleptic Gregorian date of a day count since 1970-01-01 (negative before it).
struct CivilDate
{
    int64_t year = 1970;
    unsigned month = 1; // 1-12
    unsigned day = 1;   // 1-31
};
CivilDate civilFromDays(int64_t days);
// Whether the date exists: a month 1-12 and a day within it (February 29 in leap years only). daysFromCivil would
// take 2026-02-30 for March 2.
bool isCalendarDate(int64_t y, int64_t m, int64_t d);

// A local date and time, nanoseconds after local midnight of 1970-01-01 (as if the zone were UTC).
struct LocalTime
{
    int64_t localNs = 0;
};

// "YYYY/MM/DD HH:MM:SS[.fff]" or "YYYY-MM-DD[ T]HH:MM:SS[.fff]" (1-9 fraction digits).
std::optional<LocalTime> parseLocalDateTime(std::string_view s);

class TimeZoneResolver
{
public:
    // spec: "" (this machine's zone), "UTC", "UTC+02:00" / "+02:00" / "-0530", or an IANA id ("Europe/Berlin").
    static Expected<TimeZoneResolver> fromSpec(const std::string& spec);

    // The UTC time of a local time in this zone. In the hour repeated when clocks go back, the first
    // pass is chosen unless it is earlier than notBeforeNs (the previous timestamp of the same log).
    int64_t toUtcNs(LocalTime t, std::optional<int64_t> notBeforeNs = std::nullopt);
    // How the zone is described in import summaries, e.g. "Europe/Berlin (this machine's zone)".
    const std::string& description() const { return m_description; }
    // The value stored as the node's time zone.
    const std::string& id() const { return m_id; }

private:
    QTimeZone m_zone;
    std::string m_id;
    std::string m_description;
    std::optional<int> m_fixedOffsetS;
    struct HourOffsets
    {
        int64_t first;  // offset (local - UTC) in ns of the first pass through this local hour
        int64_t second; // of the second pass; equal to first unless the hour is repeated
    };
    std::unordered_map<int64_t, HourOffsets> m_hourOffsets; // by local hour
};

} // namespace runlens::importers
