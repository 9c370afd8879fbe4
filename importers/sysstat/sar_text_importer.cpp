#include "importers/sysstat/sar_text_importer.h"

#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/diagnostic_kinds.h"
#include "importers/sysstat/sadf_importer.h"

#include <fmt/format.h>
#include <set>

namespace runlens::importers {
namespace {

constexpr int kCheckpointRows = 8192;
constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kNsPerDay = 86400 * kNsPerSecond;

// "HH:MM:SS" → seconds after midnight.
std::optional<int> timeOfDay(std::string_view s)
{
    int64_t h = 0, m = 0, sec = 0;
    if (s.size() != 8 || s[2] != ':' || s[5] != ':' || !fixedDigits(s, 0, 2, h) || !fixedDigits(s, 3, 2, m) ||
        !fixedDigits(s, 6, 2, sec) || h > 23 || m > 59 || sec > 60)
        return std::nullopt;
    return static_cast<int>(h * 3600 + m * 60 + sec);
}

// The banner's date: MM/DD/YY, MM/DD/YYYY, YYYY-MM-DD or DD.MM.YYYY → days since 1970-01-01.
std::optional<int64_t> bannerDate(std::string_view s)
{
    // Only dates that exist, in the years a nanosecond timestamp holds (the rows' times are added to it).
    const auto date = [](int64_t y, int64_t m, int64_t d) -> std::optional<int64_t> {
        if (!isCalendarDate(y, m, d) || y < kMinTimestampYear || y > kMaxTimestampYear) return std::nullopt;
        return daysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
    };
    int64_t a = 0, b = 0, c = 0;
    if (s.size() == 10 && s[4] == '-' && s[7] == '-' && fixedDigits(s, 0, 4, a) && fixedDigits(s, 5, 2, b) &&
        fixedDigits(s, 8, 2, c))
        return date(a, b, c); // ISO
    if (s.size() == 10 && s[2] == '.' && s[5] == '.' && fixedDigits(s, 0, 2, a) && fixedDigits(s, 3, 2, b) &&
        fixedDigits(s, 6, 4, c))
        return date(c, b, a); // German
    if ((s.size() == 8 || s.size() == 10) && s[2] == '/' && s[5] == '/' && fixedDigits(s, 0, 2, a) &&
        fixedDigits(s, 3, 2, b) && fixedDigits(s, 6, s.size() - 6, c))
        return date(s.size() == 8 ? 2000 + c : c, a, b); // US, C locale
    return std::nullopt;
}

struct Banner
{
    std::string host;
    std::string dateText;
};

// "Linux 5.15.0-91-generic (gpu-node-3) \t01/15/26 \t_x86_64_\t(64 CPU)".
std::optional<Banner> parseBanner(std::string_view line)
{
    line = trim(line);
    if (line.rfind("Linux ", 0) != 0) return std::nullopt;
    const size_t open = line.find(" (");
    const size_t close = open == std::string_view::npos ? open : line.find(')', open);
    if (close == std::string_view::npos) return std::nullopt;
    std::vector<std::string_view> rest;
    splitWhitespace(line.substr(close + 1), rest);
    if (rest.empty()) return std::nullopt;
    return Banner{std::string(line.substr(open + 2, close - open - 2)), std::string(rest[0])};
}

class SarParser
{
public:
    SarParser(ImportContext& ctx, TimeZoneResolver tz) : m_ctx(ctx), m_tz(std::move(tz)), m_router(ctx) {}
    Status run();

private:
    Status banner(const Banner& b);
    Status line(std::string_view text, bool afterBlank);
    std::optional<int64_t> timestamp(int seconds);

    ImportContext& m_ctx;
    TimeZoneResolver m_tz;
    SysstatRouter m_router;
    std::vector<std::string_view> m_words;
    int64_t m_nodeId = -1;
    std::optional<int64_t> m_day; // days since 1970 of the current banner
    int64_t m_dayOffset = 0;
    int m_lastSeconds = -1;
    int m_section = -1; // of the current block; -1 before its header
    bool m_average = false;
    bool m_twelveHour = false;
    int64_t m_restarts = 0;
    std::set<int64_t> m_zoneNodes;
};

Status SarParser::banner(const Banner& b)
{
    RUNLENS_ASSIGN_OR_RETURN(auto node, m_ctx.nodeFor(b.host));
    m_nodeId = node;
    m_day = bannerDate(b.dateText);
    m_dayOffset = 0;
    m_lastSeconds = -1;
    if (!m_day)
        m_ctx.report(
            diag::kBadTimestamp, 0,
            fmt::format("cannot read the banner's date \"{}\"; rows up to the next banner dropped", clip(b.dateText)));
    else if (b.dateText.find('/') != std::string::npos)
        m_ctx.notes.push_back(fmt::format("banner date {} read as month/day/year (C and en_US locales)", b.dateText));
    if (m_zoneNodes.insert(m_nodeId).second)
        if (Status s = m_ctx.writer.setNodeTimeZone(m_nodeId, m_tz.id()); !s) return s;
    return okStatus();
}

std::optional<int64_t> SarParser::timestamp(int seconds)
{
    if (!m_day) return std::nullopt;
    // Past midnight the time of day starts again: a step back of more than 3 hours (more than a DST change).
    if (m_lastSeconds >= 0 && seconds + 3 * 3600 < m_lastSeconds) ++m_dayOffset;
    m_lastSeconds = seconds;
    const LocalTime local{(*m_day + m_dayOffset) * kNsPerDay + seconds * kNsPerSecond};
    return m_tz.toUtcNs(local, m_section >= 0 ? m_router.lastTs(m_section) : std::nullopt);
}

Status SarParser::line(std::string_view text, bool afterBlank)
{
    if (auto b = parseBanner(text)) return banner(*b);
    splitWhitespace(text, m_words);
    if (m_words.empty()) return okStatus();
    if (m_words[0] == "Average:" || m_words[0] == "Summary:") {
        m_average = true;
        return okStatus();
    }
    if (afterBlank || m_average) {
        m_section = -1;
        m_average = false;
    }
    auto seconds = timeOfDay(m_words[0]);
    if (!seconds) {
        m_ctx.report(diag::kInvalidLine, 0,
                     fmt::format("not a sar line (no HH:MM:SS time): \"{}\"; dropped", clip(text)));
        return okStatus();
    }
    size_t first = 1;
    if (m_words.size() > 1 && (m_words[1] == "AM" || m_words[1] == "PM")) {
        if (*seconds >= 13 * 3600 || *seconds < 3600) {
            m_ctx.report(diag::kBadTimestamp, 1,
                         fmt::format("\"{} {}\" is not a 12-hour time; line dropped", m_words[0], m_words[1]));
            return okStatus();
        }
        *seconds = *seconds % (12 * 3600) + (m_words[1] == "PM" ? 12 * 3600 : 0);
        if (!m_twelveHour) m_ctx.notes.push_back("12-hour times (AM/PM) read as 24-hour times");
        m_twelveHour = true;
        first = 2;
    }
    if (text.find("LINUX RESTART") != std::string_view::npos) {
        m_ctx.report(diag::kRestartRecord, 0, fmt::format("restart record: the host rebooted ({})", clip(trim(text))));
        ++m_restarts;
        m_section = -1;
        return okStatus();
    }
    std::span<const std::string_view> rest(m_words.data() + first, m_words.size() - first);
    if (m_nodeId < 0) {
        m_ctx.report(diag::kInvalidLine, 0, "a line before the \"Linux ... (host) date\" banner; dropped");
        return okStatus();
    }
    if (m_section < 0) { // the first line of a block is its header
        m_section = m_router.section(rest, static_cast<int64_t>(first + 1));
        timestamp(*seconds);
        return okStatus();
    }
    ++m_ctx.rowsRead;
    auto ts = timestamp(*seconds);
    if (!ts) return okStatus();
    return m_router.row(m_section, m_nodeId, *ts, rest, static_cast<int64_t>(first + 1));
}

Status SarParser::run()
{
    Line ln;
    bool afterBlank = true, any = false;
    int64_t sinceCheckpoint = 0;
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(const bool more, m_ctx.nextLine(ln));
        if (!more) break;
        const std::string_view text = trim(ln.text);
        if (text.empty()) {
            afterBlank = true;
            continue;
        }
        any = true;
        RUNLENS_TRY(line(text, afterBlank));
        afterBlank = false;
        RUNLENS_TRY(m_ctx.checkpointEvery(sinceCheckpoint, kCheckpointRows));
    }
    if (!any) return makeError(ErrorCode::Format, "empty file: no sar banner", m_ctx.lines.location());
    if (m_nodeId < 0)
        return makeError(ErrorCode::Format, "not sar text: no \"Linux <kernel> (<host>) <date>\" banner line",
                         m_ctx.lines.location());
    m_ctx.notes.push_back(fmt::format("naive local times read in time zone {}", m_tz.description()));
    if (m_restarts > 0)
        m_ctx.notes.push_back(fmt::format("{} LINUX RESTART line{}: the host rebooted during the capture", m_restarts,
                                          m_restarts == 1 ? "" : "s"));
    m_router.finish();
    return okStatus();
}

// The banner among the first complete lines of the head (sar output may follow a line a wrapper script wrote),
// and how many non-blank lines came before it.
std::optional<Banner> findBanner(std::string_view head, int* before)
{
    *before = 0;
    for (int n = 0; n < 5 && !head.empty(); ++n) {
        const size_t nl = head.find('\n');
        if (nl == std::string_view::npos) break;
        const std::string_view line = trim(head.substr(0, nl));
        head.remove_prefix(nl + 1);
        if (auto b = parseBanner(line)) return b;
        *before += !line.empty();
    }
    return std::nullopt;
}

} // namespace

int SarTextImporter::sniff(const SniffInput& input) const
{
    int before = 0;
    auto b = findBanner(input.head, &before);
    if (!b) return 0;
    return (bannerDate(b->dateText) ? 95 : 60) - 10 * before;
}

std::optional<std::string> SarTextImporter::hostLabel(const SniffInput& input) const
{
    int before = 0;
    auto b = findBanner(input.head, &before);
    if (!b || b->host.empty()) return std::nullopt;
    return b->host;
}

Status SarTextImporter::run(ImportContext& context) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(context.options.timeZone));
    SarParser parser(context, std::move(tz));
    return parser.run();
}

} // namespace runlens::importers
