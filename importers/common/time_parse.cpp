#include "importers/common/time_parse.h"

#include <QDateTime>
#include <algorithm>
#include <fmt/format.h>
#include <vector>

namespace runlens::importers {
namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kNsPerHour = 3600 * kNsPerSecond;
// int64 nanoseconds from 1970 span 1677-09-21 to 2262-04-11: whole years inside that, so a date and a zone
// offset (up to a day) never leave int64. A date outside them is not a timestamp this reader can store.
constexpr int64_t kMinYear = kMinTimestampYear;
constexpr int64_t kMaxYear = kMaxTimestampYear;

bool digits(std::string_view s, size_t pos, size_t n, int64_t& out)
{
    if (pos + n > s.size()) return false;
    out = 0;
    for (size_t i = pos; i < pos + n; ++i) {
        const char c = s[i];
        if (c < '0' || c > '9') return false;
        out = out * 10 + (c - '0');
    }
    return true;
}

std::optional<int> parseOffset(std::string_view s)
{
    if (s.rfind("UTC", 0) == 0 || s.rfind("GMT", 0) == 0) s.remove_prefix(3);
    if (s.empty()) return 0;
    if (s[0] != '+' && s[0] != '-') return std::nullopt;
    const int sign = s[0] == '-' ? -1 : 1;
    s.remove_prefix(1);
    int64_t h = 0, m = 0;
    const bool hhColonMm = s.size() == 5 && s[2] == ':' && digits(s, 0, 2, h) && digits(s, 3, 2, m);
    const bool hhmm = !hhColonMm && s.size() == 4 && digits(s, 0, 2, h) && digits(s, 2, 2, m);
    const bool hh = !hhColonMm && !hhmm && (s.size() == 1 || s.size() == 2) && digits(s, 0, s.size(), h);
    if (!hhColonMm && !hhmm && !hh) return std::nullopt;
    if (h > 14 || m > 59) return std::nullopt;
    return sign * static_cast<int>(h * 3600 + m * 60);
}

} // namespace

int64_t daysFromCivil(int64_t y, unsigned m, unsigned d)
{
    // H. Hinnant's days_from_civil.
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

CivilDate civilFromDays(int64_t days)
{
    // H. Hinnant's civil_from_days.
    days += 719468;
    const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    const auto doe = static_cast<unsigned>(days - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    CivilDate c;
    c.day = doy - (153 * mp + 2) / 5 + 1;
    c.month = mp < 10 ? mp + 3 : mp - 9;
    c.year = static_cast<int64_t>(yoe) + era * 400 + (c.month <= 2);
    return c;
}

bool isCalendarDate(int64_t y, int64_t m, int64_t d)
{
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1) return false;
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d <= kDays[m - 1] + (m == 2 && leap ? 1 : 0);
}

std::optional<LocalTime> parseLocalDateTime(std::string_view s)
{
    // YYYY?MM?DD?HH:MM:SS[.f+]
    int64_t y, mo, d, h, mi, sec;
    if (s.size() < 19) return std::nullopt;
    const char ds = s[4];
    if ((ds != '/' && ds != '-') || s[7] != ds || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':')
        return std::nullopt;
    if (!digits(s, 0, 4, y) || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d) || !digits(s, 11, 2, h) ||
        !digits(s, 14, 2, mi) || !digits(s, 17, 2, sec))
        return std::nullopt;
    if (!isCalendarDate(y, mo, d) || h > 23 || mi > 59 || sec > 60) return std::nullopt;
    if (y < kMinYear || y > kMaxYear) return std::nullopt;
    int64_t frac = 0;
    size_t pos = 19;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
        ++pos;
        int64_t scale = 100'000'000;
        const size_t start = pos;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
            if (scale > 0) frac += (s[pos] - '0') * scale;
            scale /= 10;
            ++pos;
        }
        if (pos == start) return std::nullopt;
    }
    if (pos != s.size()) return std::nullopt;
    const int64_t days = daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
    return LocalTime{((days * 24 + h) * 60 + mi) * 60 * kNsPerSecond + sec * kNsPerSecond + frac};
}

Expected<TimeZoneResolver> TimeZoneResolver::fromSpec(const std::string& spec)
{
    TimeZoneResolver r;
    if (spec.empty()) {
        r.m_zone = QTimeZone::systemTimeZone();
        r.m_id = r.m_zone.id().toStdString();
        if (r.m_id.empty()) r.m_id = "UTC";
        r.m_description = fmt::format("{} (this machine's zone; set another with --tz)", r.m_id);
    } else if (auto offset = parseOffset(spec)) {
        r.m_fixedOffsetS = offset;
        r.m_id = *offset == 0 ? std::string("UTC")
                              : fmt::format("UTC{}{:02}:{:02}", *offset < 0 ? '-' : '+', std::abs(*offset) / 3600,
                                            std::abs(*offset) % 3600 / 60);
        r.m_description = r.m_id;
    } else {
        r.m_zone = QTimeZone(QByteArray::fromStdString(spec));
        if (!r.m_zone.isValid())
            return makeError(ErrorCode::Usage,
                             fmt::format("unknown time zone \"{}\" (use an IANA name such as Europe/Berlin, UTC, or "
                                         "an offset such as +02:00)",
                                         spec));
        r.m_id = spec;
        r.m_description = spec;
    }
    return r;
}

int64_t TimeZoneResolver::toUtcNs(LocalTime t, std::optional<int64_t> notBeforeNs)
{
    if (m_fixedOffsetS) return t.localNs - static_cast<int64_t>(*m_fixedOffsetS) * kNsPerSecond;
    const int64_t hour = t.localNs >= 0 ? t.localNs / kNsPerHour : -((-t.localNs + kNsPerHour - 1) / kNsPerHour);
    auto it = m_hourOffsets.find(hour);
    if (it == m_hourOffsets.end()) {
        // The offsets that give this local hour (checked at its middle; DST changes happen on hour
        // boundaries): one normally, two in the hour repeated when clocks go back, none in the hour
        // skipped when they go forward (then the offset before the change, as QDateTime does).
        const int64_t localS = hour * 3600 + 1800;
        const int64_t days = localS >= 0 ? localS / 86400 : -((-localS + 86399) / 86400);
        const QDate date = QDate(1970, 1, 1).addDays(days);
        const QTime time = QTime(0, 0).addSecs(static_cast<int>(localS - days * 86400));
        const int64_t guessOffsetS = localS - QDateTime(date, time, m_zone).toSecsSinceEpoch();
        HourOffsets h{guessOffsetS * kNsPerSecond, guessOffsetS * kNsPerSecond};
        std::vector<int64_t> valid;
        for (int64_t probe : {-3 * 3600, 3 * 3600}) {
            const auto off = static_cast<int64_t>(
                m_zone.offsetFromUtc(QDateTime::fromSecsSinceEpoch(localS - guessOffsetS + probe, Qt::UTC)));
            if (m_zone.offsetFromUtc(QDateTime::fromSecsSinceEpoch(localS - off, Qt::UTC)) == off &&
                std::find(valid.begin(), valid.end(), off) == valid.end())
                valid.push_back(off);
        }
        if (valid.size() == 2) {
            // Larger offset = earlier UTC instant (the first pass through the repeated hour).
            h.first = std::max(valid[0], valid[1]) * kNsPerSecond;
            h.second = std::min(valid[0], valid[1]) * kNsPerSecond;
        }
        it = m_hourOffsets.emplace(hour, h).first;
    }
    const int64_t first = t.localNs - it->second.first;
    if (it->second.first == it->second.second) return first;
    // An ambiguous local time: the first pass unless that would go back in time.
    return notBeforeNs && first < *notBeforeNs ? t.localNs - it->second.second : first;
}

} // namespace runlens::importers
