#include "importers/nvsmi/nvsmi_dmon_importer.h"

#include "importers/common/metric_map.h"
#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/common/untimed.h"
#include "importers/diagnostic_kinds.h"

#include <QDate>
#include <QDateTime>
#include <QTimeZone>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

namespace runlens::importers {

namespace {

constexpr int kCheckpointRows = 16384;
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kDay = 86400 * kSecond;
constexpr int64_t kMaxGpuIndex = 4096;

// "20261129" (dmon -o D) or "2026-11-29" (the date= option) → days since 1970-01-01.
std::optional<int64_t> parseDate(std::string_view s)
{
    int64_t y, m, d;
    const size_t dash = s.size() == 10 && s[4] == '-' && s[7] == '-' ? 1 : 0;
    if (s.size() != 8 + 2 * dash || !fixedDigits(s, 0, 4, y) || !fixedDigits(s, 4 + dash, 2, m) ||
        !fixedDigits(s, 6 + 2 * dash, 2, d) || !isCalendarDate(y, m, d) || y < kMinTimestampYear ||
        y > kMaxTimestampYear)
        return std::nullopt;
    return daysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
}

// "08:42:02" → nanoseconds after midnight.
std::optional<int64_t> parseTimeOfDay(std::string_view s)
{
    int64_t h, m, sec;
    if (s.size() != 8 || s[2] != ':' || s[5] != ':' || !fixedDigits(s, 0, 2, h) || !fixedDigits(s, 3, 2, m) ||
        !fixedDigits(s, 6, 2, sec) || h > 23 || m > 59 || sec > 60)
        return std::nullopt;
    return ((h * 60 + m) * 60 + sec) * kSecond;
}

enum class TimeMode
{
    DateTime, // -o DT
    TimeOnly, // -o T: the date comes from date= or the file's modification time
    None,     // default: rows numbered by interval
};

struct Column
{
    std::string name;   // as in the header: "sm", "smutil"; empty metric for gpu, Date, Time
    std::string metric; // canonical, or dmon.<name>
    std::string unit;   // of the series
    std::optional<SourceMetric> mapping;
    double factor = 1.0;
};

// One reading of the file (untimed::Reading): the Count pass counts intervals and midnights.
class Parser : public untimed::Reading
{
public:
    Parser(ImportContext& ctx, TimeZoneResolver& tz, Pass pass) : Reading(ctx, pass), m_tz(tz) {}
    Status run();

    std::optional<int64_t> startNs, firstDay; // of the first interval (None), of the first row (TimeOnly)
    int64_t intervalNs = kSecond;
    bool estimated = false;
    std::optional<TimeMode> firstMode; // Count pass results
    int64_t intervals = 0, midnights = 0;
    std::optional<int64_t> lastTimeOfDay;

private:
    Status header(const std::vector<std::string_view>& names);
    void units(const std::vector<std::string_view>& units);
    Status row(std::string_view line);
    std::optional<int64_t> rowTime(int64_t gpu);
    Status value(size_t slot, size_t col, std::string_view v, int64_t ts);

    TimeZoneResolver& m_tz;
    bool m_stop = false, m_expectUnits = false, m_readUnits = false;
    std::vector<std::string> m_headerNames;
    std::vector<Column> m_columns;
    int m_gpuCol = -1, m_dateCol = -1, m_timeCol = -1;
    TimeMode m_mode = TimeMode::None;
    int64_t m_repeatedHeaders = 0;
    std::optional<Error> m_fatal; // a database error met where a Status cannot be returned
    std::vector<std::string_view> m_fields;
    std::vector<int> m_slotOfGpu;                         // GPU index → slot, -1 = not seen
    std::vector<int64_t> m_deviceIds, m_lastTs;           // by slot
    std::vector<std::vector<store::SeriesSink*>> m_sinks; // [slot][column]
    std::optional<int64_t> m_prevTs, m_prevTimeOfDay;
    int64_t m_interval = -1, m_dayOffset = 0;
    std::vector<bool> m_seenInInterval; // by GPU index
    bool m_zoneNoted = false, m_startNoted = false, m_estimateReported = false;
};

Status Parser::header(const std::vector<std::string_view>& names)
{
    m_expectUnits = true;
    m_readUnits = !std::equal(names.begin(), names.end(), m_headerNames.begin(), m_headerNames.end());
    if (!m_readUnits) {
        ++m_repeatedHeaders; // dmon prints its header again every few intervals
        return okStatus();
    }
    if (!m_headerNames.empty()) report(diag::kRepeatedHeader, 0, "header with other columns; columns re-read");
    m_headerNames.assign(names.begin(), names.end());
    m_columns.clear();
    m_gpuCol = m_dateCol = m_timeCol = -1;
    for (size_t i = 0; i < names.size(); ++i) {
        Column c;
        c.name = std::string(names[i]);
        int* role = c.name == "gpu"    ? &m_gpuCol
                    : c.name == "Date" ? &m_dateCol
                    : c.name == "Time" ? &m_timeCol
                                       : nullptr;
        if (role) {
            *role = static_cast<int>(i);
            m_columns.push_back(std::move(c));
            continue;
        }
        c.mapping = dmonMetric(c.name);
        c.metric = c.mapping ? std::string(c.mapping->metric) : "dmon." + c.name;
        if (c.mapping) {
            c.unit = std::string(c.mapping->unit);
            c.factor = unitFactor(c.mapping->sourceUnit, c.mapping->unit).value_or(1.0);
        } else {
            report(diag::kUnmappedColumn, static_cast<int64_t>(i + 1),
                   fmt::format("column \"{}\" has no canonical metric; kept as {}", clip(c.name), clip(c.metric)));
        }
        // Two columns with one canonical name (rxpci and GPM pcirx): the second keeps its raw name.
        for (const Column& other : m_columns) {
            if (!c.mapping || other.metric != c.metric) continue;
            c.metric = "dmon." + c.name;
            note(fmt::format("{} is stored as {} ({} already gives {})", c.name, c.metric, other.name, other.metric));
        }
        m_columns.push_back(std::move(c));
    }
    if (m_gpuCol < 0) return makeError(ErrorCode::Format, "dmon header without a gpu column", m_ctx.lines.location(1));
    m_mode = m_timeCol < 0 ? TimeMode::None : m_dateCol < 0 ? TimeMode::TimeOnly : TimeMode::DateTime;
    if (m_dateCol >= 0 && m_timeCol < 0)
        note("a Date column without Time: rows placed by interval (start=, interval=)");
    m_sinks.assign(m_sinks.size(), std::vector<store::SeriesSink*>(m_columns.size(), nullptr));
    if (!firstMode) {
        firstMode = m_mode;
        // Counting is only needed to estimate a time that neither the file nor the options give.
        m_stop = m_pass == Pass::Count && (m_mode == TimeMode::DateTime || (m_mode == TimeMode::None && startNs) ||
                                           (m_mode == TimeMode::TimeOnly && firstDay));
    }
    return okStatus();
}

// The unit row ("# Idx W C %", "#YYYYMMDD HH:MM:SS Idx ..."): a unit that converts to the canonical one overrides
// the table. dmon prints "MB" for frame-buffer memory that is MiB, so the table's MiB is kept for those.
void Parser::units(const std::vector<std::string_view>& units)
{
    if (units.size() != m_columns.size()) {
        note(fmt::format("line {}: unit row with {} fields for {} columns; units from the table",
                         m_ctx.lines.location().line, units.size(), m_columns.size()));
        return;
    }
    for (size_t i = 0; i < units.size(); ++i) {
        Column& c = m_columns[i];
        if (c.metric.empty()) continue;
        if (!c.mapping) {
            c.unit = std::string(units[i]);
        } else if (!(units[i] == "MB" && c.mapping->sourceUnit == "MiB")) {
            if (auto f = unitFactor(units[i], c.mapping->unit)) c.factor = *f;
        }
    }
}

std::optional<int64_t> Parser::rowTime(int64_t gpu)
{
    if (m_mode == TimeMode::None) {
        const auto index = static_cast<size_t>(gpu);
        if (m_seenInInterval.size() <= index) m_seenInInterval.resize(index + 1);
        if (m_interval < 0 || m_seenInInterval[index]) {
            ++m_interval; // a GPU repeats: the next interval
            std::fill(m_seenInInterval.begin(), m_seenInInterval.end(), false);
        }
        m_seenInInterval[index] = true;
        intervals = m_interval + 1;
        if (!startNs) {
            report(diag::kBadTimestamp, 0, "a row without Date/Time after rows with them; set start=; row dropped");
            return std::nullopt;
        }
        if (!m_startNoted && !estimated)
            note(fmt::format("no time in the file: rows placed from {} every {} s (start=, interval=)",
                             untimed::utcText(*startNs), static_cast<double>(intervalNs) / 1e9));
        m_startNoted = true;
        return *startNs + m_interval * intervalNs;
    }
    const std::string_view t = m_fields[static_cast<size_t>(m_timeCol)];
    auto tod = parseTimeOfDay(t);
    if (!tod) {
        report(diag::kBadTimestamp, m_timeCol + 1, fmt::format("cannot read time \"{}\"; row dropped", clip(t)));
        return std::nullopt;
    }
    int64_t day;
    if (m_mode == TimeMode::DateTime) {
        const std::string_view d = m_fields[static_cast<size_t>(m_dateCol)];
        auto days = parseDate(d);
        if (!days) {
            report(diag::kBadTimestamp, m_dateCol + 1, fmt::format("cannot read date \"{}\"; row dropped", clip(d)));
            return std::nullopt;
        }
        day = *days;
    } else {
        if (m_prevTimeOfDay && *tod < *m_prevTimeOfDay - kDay / 2) ++m_dayOffset; // midnight
        m_prevTimeOfDay = tod;
        midnights = m_dayOffset;
        lastTimeOfDay = tod;
        if (!firstDay) {
            report(diag::kBadTimestamp, 0, "a row without Date after rows with one; set date=; row dropped");
            return std::nullopt;
        }
        day = *firstDay + m_dayOffset;
    }
    if (m_pass == Pass::Count) return 0;
    if (!m_zoneNoted) {
        m_zoneNoted = true;
        if (Status st = m_ctx.writer.setNodeTimeZone(m_ctx.nodeId, m_tz.id()); !st) m_fatal = st.error();
        note(fmt::format("naive local times read in time zone {}", m_tz.description()));
    }
    return m_tz.toUtcNs(LocalTime{day * kDay + *tod}, m_prevTs);
}

Status Parser::value(size_t slot, size_t col, std::string_view v, int64_t ts)
{
    const Column& c = m_columns[col];
    store::SeriesSink*& sink = m_sinks[slot][col];
    if (!sink) {
        RUNLENS_ASSIGN_OR_RETURN(auto s, m_ctx.writer.series(m_deviceIds[slot], c.metric, c.unit, c.name));
        sink = s;
    }
    const auto column = static_cast<int64_t>(col + 1);
    auto n = parseNumber(v);
    if (!n) {
        if (!isMissingToken(v))
            report(diag::kBadNumber, column,
                   fmt::format("expected a number for \"{}\", got \"{}\"; stored as missing", c.name, clip(v)));
        sink->appendMissing(ts, v);
    } else if (!std::isfinite(*n)) {
        report(diag::kNanValue, column, fmt::format("\"{}\" for \"{}\" stored as missing", clip(v), c.name));
        sink->appendMissing(ts, v);
    } else if (implausibleValue(c.unit, *n * c.factor)) {
        report(diag::kImplausibleValue, column,
               fmt::format("{} for \"{}\" is outside its range; stored as missing", clip(v), c.name));
        sink->appendMissing(ts, v);
    } else {
        sink->append(ts, *n * c.factor);
    }
    return m_ctx.writer.flushIfNeeded(*sink);
}

Status Parser::row(std::string_view line)
{
    splitWhitespace(line, m_fields);
    if (m_fields.size() != m_columns.size()) {
        report(diag::kWrongFieldCount, 0,
               fmt::format("{} fields where the header has {}; row dropped", m_fields.size(), m_columns.size()));
        return okStatus();
    }
    const std::string_view key = m_fields[static_cast<size_t>(m_gpuCol)];
    auto gpu = parseInteger(key);
    if (!gpu || *gpu < 0 || *gpu >= kMaxGpuIndex) {
        report(diag::kInvalidLine, m_gpuCol + 1,
               fmt::format("GPU index \"{}\" is not a number; row dropped", clip(key)));
        return okStatus();
    }
    auto ts = rowTime(*gpu);
    if (m_fatal) return *m_fatal;
    if (!ts || m_pass == Pass::Count) return okStatus();
    if (estimated && !m_estimateReported)
        report(diag::kEstimatedTime, 0, "timestamps estimated from the file's modification time (see the notes)");
    m_estimateReported = true;
    const auto index = static_cast<size_t>(*gpu);
    if (m_slotOfGpu.size() <= index) m_slotOfGpu.resize(index + 1, -1);
    if (m_slotOfGpu[index] < 0) {
        RUNLENS_ASSIGN_OR_RETURN(auto id, m_ctx.writer.device(m_ctx.nodeId, "gpu", std::to_string(*gpu)));
        m_slotOfGpu[index] = static_cast<int>(m_deviceIds.size());
        m_deviceIds.push_back(id);
        m_sinks.emplace_back(m_columns.size(), nullptr);
        m_lastTs.push_back(std::numeric_limits<int64_t>::min());
    }
    const auto slot = static_cast<size_t>(m_slotOfGpu[index]);
    if (*ts < m_lastTs[slot]) {
        report(diag::kBackwardsTime, m_timeCol + 1,
               fmt::format("time earlier than the previous row of GPU {}; row dropped", *gpu));
        return okStatus();
    }
    m_lastTs[slot] = *ts;
    m_prevTs = ts;
    for (size_t i = 0; i < m_columns.size(); ++i)
        if (!m_columns[i].metric.empty())
            if (Status s = value(slot, i, m_fields[i], *ts); !s) return s;
    return okStatus();
}

Status Parser::run()
{
    Line line;
    int64_t sinceCheckpoint = 0;
    std::vector<std::string_view> tokens;
    while (!m_stop) {
        // A line too long to read is a row lost once the header is known.
        RUNLENS_ASSIGN_OR_RETURN(const bool more,
                                 m_ctx.nextLine(line, !m_headerNames.empty() && m_pass == Pass::Import));
        if (!more) break;
        const std::string_view text = trim(line.text);
        if (text.empty()) continue;
        if (text.front() == '#') {
            splitWhitespace(text.substr(1), tokens);
            if (std::find(tokens.begin(), tokens.end(), "gpu") != tokens.end()) {
                RUNLENS_TRY(header(tokens));
            } else if (m_expectUnits) {
                if (m_readUnits) units(tokens);
                m_expectUnits = false;
            } else {
                report(diag::kCommentLine, 0, fmt::format("comment \"{}\" skipped", clip(text)));
            }
            continue;
        }
        m_expectUnits = false;
        if (m_headerNames.empty()) {
            if (m_pass == Pass::Count) return okStatus(); // the Import pass reports it
            return makeError(ErrorCode::Format,
                             fmt::format("expected the dmon header (\"# gpu pwr ...\" or \"#Date Time gpu ...\"), "
                                         "got \"{}\"",
                                         clip(text)),
                             m_ctx.lines.location(1));
        }
        if (m_pass == Pass::Import) ++m_ctx.rowsRead;
        RUNLENS_TRY(row(text));
        RUNLENS_TRY(m_ctx.checkpointEvery(sinceCheckpoint, kCheckpointRows));
    }
    if (m_pass == Pass::Count) return okStatus();
    if (m_headerNames.empty())
        return makeError(ErrorCode::Format, "empty file: no dmon header line", m_ctx.lines.location());
    note(fmt::format("{} GPU{}", m_deviceIds.size(), m_deviceIds.size() == 1 ? "" : "s"));
    if (m_repeatedHeaders > 0) note(fmt::format("header repeated {} times", m_repeatedHeaders));
    return okStatus();
}

// Fills the Import pass's start, interval and date from the options, or estimates them from the file's
// modification time after a Count pass.
Status placeInTime(ImportContext& ctx, TimeZoneResolver& tz, Parser& importer)
{
    RUNLENS_ASSIGN_OR_RETURN(auto placement, untimed::readPlacement(ctx.options, tz, kSecond, kSecond));
    importer.startNs = placement.startNs;
    importer.intervalNs = placement.intervalNs;
    if (auto it = ctx.options.extra.find("date"); it != ctx.options.extra.end()) {
        importer.firstDay = parseDate(it->second);
        if (!importer.firstDay)
            return makeError(ErrorCode::Usage, fmt::format("date={}: expected YYYY-MM-DD", clip(it->second)));
    }
    if ((importer.startNs && importer.firstDay) || ctx.path.empty()) return okStatus();
    auto second = untimed::openSecondReading(ctx);
    if (!second) return second.error();
    Parser counter(*(*second)->context, tz, Parser::Pass::Count);
    counter.startNs = importer.startNs;
    counter.firstDay = importer.firstDay;
    RUNLENS_TRY(counter.run());
    const bool needStart = counter.firstMode == TimeMode::None && !importer.startNs;
    const bool needDate = counter.firstMode == TimeMode::TimeOnly && !importer.firstDay;
    if (!needStart && !needDate) return okStatus();
    const auto mtime = untimed::fileModifiedNs(ctx.path);
    if (!mtime)
        return makeError(ErrorCode::Usage, needStart ? "no time in the file: set start= (and interval=)"
                                                     : "no date in the file: set date=YYYY-MM-DD");
    const int64_t mtimeS = *mtime / kSecond * kSecond; // dmon has second resolution
    importer.estimated = true;
    if (needStart) {
        importer.startNs = mtimeS - std::max<int64_t>(counter.intervals - 1, 0) * importer.intervalNs;
        ctx.notes.push_back(fmt::format("no time in the file: {} intervals of {} s placed so that the last is at the "
                                        "file's modification time {} (an estimate; set start=)",
                                        counter.intervals, static_cast<double>(importer.intervalNs) / 1e9,
                                        untimed::utcText(mtimeS)));
        return okStatus();
    }
    // The last row's date is the modification date, or the day before when its time of day is later.
    const int64_t local = mtimeS + (mtimeS - tz.toUtcNs(LocalTime{mtimeS}));
    const int64_t mday = local >= 0 ? local / kDay : -((-local + kDay - 1) / kDay);
    const bool lastRowBefore = counter.lastTimeOfDay && *counter.lastTimeOfDay > local - mday * kDay;
    importer.firstDay = (lastRowBefore ? mday - 1 : mday) - counter.midnights;
    ctx.notes.push_back(fmt::format("no date in the file (-o T): first row dated {} from the file's modification "
                                    "time (an estimate; set date=)",
                                    QDate(1970, 1, 1).addDays(*importer.firstDay).toString(Qt::ISODate).toStdString()));
    return okStatus();
}

} // namespace

int NvsmiDmonImporter::sniff(const SniffInput& input) const
{
    std::string_view head = input.head;
    std::vector<std::string_view> lines, tokens;
    while (!head.empty() && lines.size() < 2) {
        const size_t nl = head.find('\n');
        const std::string_view line = trim(head.substr(0, nl));
        if (!line.empty()) lines.push_back(line);
        if (nl == std::string_view::npos) break;
        head.remove_prefix(nl + 1);
    }
    if (lines.empty() || lines[0].front() != '#') return 0;
    splitWhitespace(lines[0].substr(1), tokens);
    bool gpu = false;
    int known = 0;
    for (std::string_view t : tokens) {
        if (t == "gpu") gpu = true;
        if (t == "Date" || t == "Time" || dmonMetric(t)) ++known;
    }
    if (!gpu || known == 0) return 0;
    const bool unitRow = lines.size() > 1 && lines[1].front() == '#' && lines[1].find("Idx") != std::string_view::npos;
    return unitRow ? 98 : 75;
}

Status NvsmiDmonImporter::run(ImportContext& context) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(context.options.timeZone));
    Parser parser(context, tz, Parser::Pass::Import);
    RUNLENS_TRY(placeInTime(context, tz, parser));
    return parser.run();
}

} // namespace runlens::importers
