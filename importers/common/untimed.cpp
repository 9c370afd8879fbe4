#include "importers/common/untimed.h"

#include "importers/common/text_fields.h"

#include <QDate>
#include <QDateTime>
#include <QTimeZone>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <memory>

namespace runlens::importers {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr double kMaxEpochS = 9.2e9; // the largest start= in epoch seconds whose nanoseconds fit int64 (2261)

} // namespace

namespace untimed {

Expected<Placement> readPlacement(const ImportOptions& options, TimeZoneResolver& tz, int64_t bareUnitNs,
                                  int64_t defaultIntervalNs)
{
    Placement p{std::nullopt, defaultIntervalNs};
    if (auto it = options.extra.find("interval"); it != options.extra.end()) {
        std::string_view v = it->second;
        double scale = static_cast<double>(bareUnitNs);
        if (v.size() > 2 && v.substr(v.size() - 2) == "ms") {
            scale = 1e6;
            v.remove_suffix(2);
        } else if (v.size() > 1 && v.back() == 's') {
            scale = 1e9;
            v.remove_suffix(1);
        }
        auto n = parseNumber(v);
        // Below a nanosecond every row would fall at the same instant.
        if (!n || !std::isfinite(*n) || *n * scale < 1 || *n * scale > 1e15)
            return makeError(ErrorCode::Usage, fmt::format("interval={}: expected a time such as 2s or 500ms "
                                                           "(a bare number counts {})",
                                                           clip(it->second), bareUnitNs == kSecond ? "s" : "ms"));
        p.intervalNs = static_cast<int64_t>(std::llround(*n * scale));
    }
    auto it = options.extra.find("start");
    if (it == options.extra.end()) return p;
    std::string_view v = it->second;
    // Epoch seconds up to 9.2e9 (the year 2261): beyond that the time is not an int64 of nanoseconds.
    if (auto n = parseNumber(v); n && std::isfinite(*n) && *n >= 0 && *n < kMaxEpochS) {
        p.startNs = static_cast<int64_t>(std::llround(*n * 1e9));
        return p;
    }
    std::optional<int64_t> offsetS;
    int64_t h = 0, m = 0;
    const size_t n = v.size();
    if (n > 0 && (v.back() == 'Z' || v.back() == 'z')) {
        offsetS = 0;
        v.remove_suffix(1);
    } else if (n > 6 && (v[n - 6] == '+' || v[n - 6] == '-') && v[n - 3] == ':' && fixedDigits(v, n - 5, 2, h) &&
               fixedDigits(v, n - 2, 2, m)) {
        offsetS = (v[n - 6] == '-' ? -1 : 1) * (h * 3600 + m * 60);
        v.remove_suffix(6);
    }
    auto t = parseLocalDateTime(v);
    if (!t)
        return makeError(ErrorCode::Usage, fmt::format("start={}: expected epoch seconds or an ISO 8601 time such as "
                                                       "2026-11-29T08:42:02 (local, or ending in Z or +hh:mm)",
                                                       clip(it->second)));
    p.startNs = offsetS ? t->localNs - *offsetS * kSecond : tz.toUtcNs(*t);
    return p;
}

std::optional<int64_t> fileModifiedNs(const std::string& path)
{
    std::error_code ec;
    const auto ft = std::filesystem::last_write_time(path, ec);
    if (ec || path.empty()) return std::nullopt;
    const auto sys = std::chrono::file_clock::to_sys(ft);
    return std::chrono::duration_cast<std::chrono::nanoseconds>(sys.time_since_epoch()).count();
}

std::string utcText(int64_t ns)
{
    const int64_t ms = ns >= 0 ? ns / 1'000'000 : -((-ns + 999'999) / 1'000'000);
    const QDateTime t = QDateTime::fromMSecsSinceEpoch(ms, QTimeZone::utc());
    return t.toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzz'Z'")).toStdString();
}

Expected<std::unique_ptr<SecondReading>> openSecondReading(const ImportContext& ctx)
{
    RUNLENS_ASSIGN_OR_RETURN(auto in, InputStream::open(ctx.path, ctx.lines.input().displayName()));
    auto r = std::make_unique<SecondReading>();
    r->input = std::move(in);
    r->lines = std::make_unique<LineReader>(*r->input);
    r->cancelOnly.cancel = ctx.progress ? ctx.progress->cancel : nullptr;
    r->context = std::make_unique<ImportContext>(ImportContext{*r->lines,
                                                               ctx.writer,
                                                               r->scratch,
                                                               ctx.options,
                                                               ctx.nodeId,
                                                               ctx.nodeName,
                                                               &r->cancelOnly,
                                                               0,
                                                               {},
                                                               ctx.path,
                                                               ctx.keptHostLabel,
                                                               {}});
    return r;
}

} // namespace untimed

} // namespace runlens::importers
