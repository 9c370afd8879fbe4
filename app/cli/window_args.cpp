#include "app/cli/window_args.h"

#include "analysis/store/import_queries.h"
#include "analysis/store/run_database.h"
#include "importers/common/time_parse.h"

#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace runlens::app {
namespace {

Error usage(std::string_view text, std::string_view why)
{
    return makeError(ErrorCode::Usage, fmt::format("bad time \"{}\": {} (expected an ISO 8601 time, epoch seconds "
                                                   "or an offset from the run start such as +90s)",
                                                   text, why));
}

std::optional<double> number(std::string_view s, size_t& used)
{
    size_t i = 0;
    bool digits = false;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) {
        digits |= s[i] != '.';
        ++i;
    }
    if (!digits) return std::nullopt;
    try {
        used = i;
        return std::stod(std::string(s.substr(0, i)));
    } catch (...) {
        return std::nullopt;
    }
}

// "1h30m", "90s", "1.5min", "250ms" → ns.
std::optional<int64_t> duration(std::string_view s)
{
    if (s.empty()) return std::nullopt;
    double total = 0;
    while (!s.empty()) {
        size_t used = 0;
        auto v = number(s, used);
        if (!v) return std::nullopt;
        s.remove_prefix(used);
        size_t u = 0;
        while (u < s.size() && ((s[u] >= 'a' && s[u] <= 'z') || s[u] == 'u'))
            ++u;
        const std::string_view unit = s.substr(0, u);
        s.remove_prefix(u);
        double scale;
        if (unit == "ns")
            scale = 1;
        else if (unit == "us")
            scale = 1e3;
        else if (unit == "ms")
            scale = 1e6;
        else if (unit == "s" || unit.empty())
            scale = 1e9;
        else if (unit == "m" || unit == "min")
            scale = 60e9;
        else if (unit == "h")
            scale = 3600e9;
        else
            return std::nullopt;
        total += *v * scale;
    }
    if (!(std::fabs(total) < 9.2e18)) return std::nullopt;
    return std::llround(total);
}

} // namespace

Expected<int64_t> parseTimeArgument(std::string_view text, std::optional<int64_t> runStartNs)
{
    while (!text.empty() && text.front() == ' ')
        text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ')
        text.remove_suffix(1);
    if (text.empty()) return usage(text, "empty");
    if (text.front() == '+') {
        auto d = duration(text.substr(1));
        if (!d) return usage(text, "not a duration");
        if (!runStartNs) return usage(text, "the run has no data to count an offset from");
        return *runStartNs + *d;
    }
    if (text.find('-', 1) != std::string_view::npos || text.find(':') != std::string_view::npos) {
        // ISO 8601: a local date-time, then Z or ±hh:mm / ±hhmm.
        std::string_view body = text;
        int64_t offsetNs = 0;
        if (body.back() == 'Z' || body.back() == 'z') {
            body.remove_suffix(1);
        } else if (const size_t t = body.find_first_of("T "); t != std::string_view::npos) {
            const size_t sign = body.find_last_of("+-");
            if (sign != std::string_view::npos && sign > t) {
                std::string_view zone = body.substr(sign + 1);
                const auto digits = [](std::string_view d, int& v) {
                    v = 0;
                    for (const char c : d) {
                        if (c < '0' || c > '9') return false;
                        v = v * 10 + (c - '0');
                    }
                    return !d.empty();
                };
                int hh = 0, mm = 0;
                bool ok = false;
                if (zone.size() == 5 && zone[2] == ':')
                    ok = digits(zone.substr(0, 2), hh) && digits(zone.substr(3, 2), mm);
                else if (zone.size() == 4)
                    ok = digits(zone.substr(0, 2), hh) && digits(zone.substr(2, 2), mm);
                else if (zone.size() == 2)
                    ok = digits(zone, hh);
                if (!ok || hh > 23 || mm > 59) return usage(text, "bad UTC offset");
                offsetNs = (int64_t{hh} * 3600 + int64_t{mm} * 60) * 1'000'000'000 * (body[sign] == '-' ? -1 : 1);
                body = body.substr(0, sign);
            }
        }
        auto local = importers::parseLocalDateTime(body);
        if (!local) return usage(text, "not a date and time");
        return local->localNs - offsetNs;
    }
    size_t used = 0;
    auto seconds = number(text, used);
    if (!seconds || used != text.size()) return usage(text, "not a number");
    if (!(*seconds < 9.2e9)) return usage(text, "out of range");
    return std::llround(*seconds * 1e9);
}

Expected<store::TimeWindow> parseWindow(const std::string& from, const std::string& to,
                                        std::optional<int64_t> runStartNs)
{
    store::TimeWindow w;
    if (!from.empty()) {
        auto t = parseTimeArgument(from, runStartNs);
        if (!t) return makeError(ErrorCode::Usage, "--from: " + t.error().message);
        w.fromNs = *t;
    }
    if (!to.empty()) {
        auto t = parseTimeArgument(to, runStartNs);
        if (!t) return makeError(ErrorCode::Usage, "--to: " + t.error().message);
        w.toNs = *t;
    }
    if (w.fromNs > w.toNs) return makeError(ErrorCode::Usage, "--from is after --to");
    return w;
}

std::optional<int64_t> runStartNs(store::RunDatabase& db)
{
    auto start = store::runStartNs(db);
    return start ? *start : std::nullopt; // a run that cannot be read has no start to count offsets from
}

namespace {

// A time of day alone ("08:42:53", "08:42:53.5"): on the UTC day of the run's start.
std::optional<int64_t> timeOfDay(const std::string& text, std::optional<int64_t> start)
{
    int h = 0, m = 0;
    double s = 0;
    char c1 = 0, c2 = 0;
    int used = 0;
    if (text.find_first_of("-TZ+ ") != std::string::npos || !start) return std::nullopt;
    // %2d reads at most two digits: nothing to overflow. NOLINTNEXTLINE(bugprone-unchecked-string-to-number-conversion)
    if (std::sscanf(text.c_str(), "%2d%c%2d%c%lf%n", &h, &c1, &m, &c2, &s, &used) != 5 || c1 != ':' || c2 != ':' ||
        used != static_cast<int>(text.size()) || h > 23 || m > 59 || s < 0 || s >= 61)
        return std::nullopt;
    constexpr int64_t kDay = 86'400'000'000'000;
    const int64_t day = *start / kDay * kDay;
    int64_t t = day + (int64_t{h} * 3600 + int64_t{m} * 60) * 1'000'000'000 + std::llround(s * 1e9);
    if (t < *start - kDay / 2) t += kDay; // a run that started before midnight
    return t;
}

} // namespace

// "FROM..TO" (either side may be empty), each side as window_args reads a time, or a time of day.
Expected<store::TimeWindow> parseWindowRange(const std::string& option, const std::string& text,
                                             std::optional<int64_t> start)
{
    const size_t dots = text.find("..");
    if (dots == std::string::npos)
        return makeError(ErrorCode::Usage, fmt::format("--{}: \"{}\" is not FROM..TO", option, text));
    store::TimeWindow w;
    const auto side = [&](const std::string& t, int64_t& into) -> Status {
        if (t.empty()) return okStatus();
        if (auto tod = timeOfDay(t, start)) {
            into = *tod;
            return okStatus();
        }
        auto v = parseTimeArgument(t, start);
        if (!v) return makeError(ErrorCode::Usage, fmt::format("--{}: {}", option, v.error().message));
        into = *v;
        return okStatus();
    };
    RUNLENS_TRY(side(text.substr(0, dots), w.fromNs));
    RUNLENS_TRY(side(text.substr(dots + 2), w.toNs));
    if (w.fromNs >= w.toNs)
        return makeError(ErrorCode::Usage, fmt::format("--{}: the window \"{}\" is empty", option, text));
    return w;
}

} // namespace runlens::app
