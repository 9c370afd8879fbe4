#include "importers/generic/wide_csv_importer.h"

#include "analysis/store/ascii.h"
#include "analysis/store/saturating.h"
#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/common/untimed.h"
#include "importers/diagnostic_kinds.h"
#include "importers/input/csv_fields.h"
#include "importers/input/table_header.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>
#include <utility>

namespace runlens::importers {
namespace {

constexpr int kCheckpointRows = 16384;
constexpr int kMaxPendingLines = 8;
constexpr int64_t kSecond = 1'000'000'000;
constexpr const char* kTimeNames = "timestamp, time, ts, datetime, date, epoch, or a name starting with elapsed, "
                                   "time_ or seconds";

bool isTimeName(const std::string& n)
{
    return n == "timestamp" || n == "time" || n == "ts" || n == "datetime" || n == "date" || n == "epoch" ||
           n.starts_with("elapsed") || n.starts_with("time_") || n.starts_with("seconds");
}

int timeColumn(const std::vector<std::string_view>& names)
{
    for (size_t i = 0; i < names.size(); ++i)
        if (isTimeName(asciiLower(names[i]))) return static_cast<int>(i);
    return -1;
}

// A naive local date-time, or a date alone (midnight).
std::optional<LocalTime> localTime(std::string_view v)
{
    if (v.size() == 10) return parseLocalDateTime(std::string(v) + " 00:00:00");
    return parseLocalDateTime(v);
}

// ISO 8601 ending in Z, ±hh:mm or ±hhmm: UTC nanoseconds.
std::optional<int64_t> zonedTime(std::string_view v)
{
    int64_t offsetS = 0;
    if (v.size() > 19 && (v.back() == 'Z' || v.back() == 'z')) {
        v.remove_suffix(1);
    } else {
        const size_t sign = v.find_last_of("+-");
        if (sign == std::string_view::npos || sign < 19) return std::nullopt; // after YYYY-MM-DDTHH:MM:SS
        std::string hhmm;
        for (char c : v.substr(sign + 1))
            if (c != ':') hhmm += c;
        const auto o = hhmm.size() == 4 && hhmm.find_first_not_of("0123456789") == std::string::npos
                           ? parseInteger(hhmm)
                           : std::nullopt;
        if (!o) return std::nullopt;
        offsetS = (v[sign] == '-' ? -1 : 1) * (*o / 100 * 3600 + *o % 100 * 60);
        v = v.substr(0, sign);
    }
    auto t = parseLocalDateTime(v);
    if (!t) return std::nullopt;
    return t->localNs - offsetS * kSecond;
}

struct Column
{
    std::string raw;
    std::string name;                  // of the series, csv.<name>: raw, unless empty or a repeat of another column's
    bool skipped = false;              // the time column, or a text column
    store::SeriesSink* sink = nullptr; // once the first value showed a number
    std::vector<std::pair<int64_t, std::string>> early; // missing cells before the first value decides the kind
};

class Parser
{
public:
    Parser(ImportContext& ctx, TimeZoneResolver tz) : m_ctx(ctx), m_tz(std::move(tz)) {}
    Status run();

private:
    Status parseHeader(std::string_view line);
    Status row(std::string_view line);
    Status openSink(Column& c);
    Status decideTimeForm(std::string_view v);
    Expected<int64_t> estimateStart();
    std::optional<int64_t> timestamp(std::string_view v);
    Status value(Column& c, std::string_view v, int64_t ts, int64_t column);
    bool looksLikeRow(std::string_view line)
    {
        if (oddQuotes(line)) return false;
        m_csv.split(line, m_fields);
        return m_fields.size() == m_columns.size();
    }
    void report(const store::DiagnosticKind& kind, int64_t line, int64_t column, const std::string& message)
    {
        SourceLocation where = m_ctx.lines.location(column);
        if (line > 0) where.line = line;
        m_ctx.diagnostics.report(kind, std::move(where), message);
    }

    ImportContext& m_ctx;
    TimeZoneResolver m_tz;
    std::string m_header;
    std::vector<Column> m_columns;
    std::vector<std::string_view> m_fields;
    CsvSplitter m_csv{',', CsvSplitter::Spaces::Trim};
    int m_tsColumn = -1;
    bool m_elapsedColumn = false;
    enum class TimeForm
    {
        Unknown,
        Local,
        Zoned,
        Number // epoch or elapsed: m_baseNs + value * m_scale
    } m_form = TimeForm::Unknown;
    double m_scale = 1e9; // ns per unit of an epoch or elapsed number
    int64_t m_baseNs = 0; // the start of elapsed times
    std::optional<int64_t> m_prevTs;
    std::optional<int64_t> m_hostDevice;
    int m_numericColumns = 0;
};

Status Parser::parseHeader(std::string_view line)
{
    m_header = std::string(line);
    m_csv.split(line, m_fields);
    m_tsColumn = timeColumn(m_fields);
    if (m_tsColumn < 0)
        return makeError(ErrorCode::Format,
                         fmt::format("no time column in the header; wide CSV accepts {}", kTimeNames),
                         m_ctx.lines.location(1));
    for (std::string_view f : m_fields)
        m_columns.emplace_back().raw = std::string(f);
    m_columns[static_cast<size_t>(m_tsColumn)].skipped = true;
    // Two columns of one name would interleave in one series; a column without a name would be "csv.".
    std::set<std::string> used;
    for (Column& c : m_columns)
        used.insert(c.raw);
    std::set<std::string> seen;
    for (size_t i = 0; i < m_columns.size(); ++i) {
        Column& c = m_columns[i];
        c.name = c.raw;
        if (!c.raw.empty() && seen.insert(c.raw).second) continue;
        std::string name = c.raw.empty() ? fmt::format("column{}", i + 1) : fmt::format("{}_{}", c.raw, i + 1);
        while (used.count(name))
            name += '_';
        used.insert(name);
        c.name = name;
        if (static_cast<int>(i) == m_tsColumn) continue;
        report(diag::kRenamedColumn, 0, static_cast<int64_t>(i + 1),
               c.raw.empty()
                   ? fmt::format("column {} has no name: kept as csv.{}", i + 1, name)
                   : fmt::format("column {} repeats the name \"{}\": kept as csv.{}", i + 1, clip(c.raw), name));
    }
    m_elapsedColumn = asciiLower(m_fields[static_cast<size_t>(m_tsColumn)]).starts_with("elapsed");
    return okStatus();
}

Expected<int64_t> Parser::estimateStart()
{
    // The last elapsed value, from a second reading of complete rows only.
    RUNLENS_ASSIGN_OR_RETURN(auto second, untimed::openSecondReading(m_ctx));
    Line line;
    std::optional<double> last;
    std::vector<std::string_view> fields;
    CsvSplitter csv(',', CsvSplitter::Spaces::Trim);
    bool header = true;
    std::string pending; // rows broken by a quoted line break are joined as in the import itself
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(auto more, second->lines->next(line));
        if (!more) break;
        if (line.tooLong) continue;
        std::string_view text = line.text;
        if (!pending.empty()) {
            pending += '\n';
            pending += text;
            if (oddQuotes(pending)) continue;
            text = pending;
        } else if (trim(text).empty()) {
            continue;
        } else if (oddQuotes(text)) {
            pending = std::string(text);
            continue;
        }
        if (!std::exchange(header, false)) {
            csv.split(text, fields);
            if (fields.size() == m_columns.size())
                if (auto n = parseNumber(fields[static_cast<size_t>(m_tsColumn)]); n && std::isfinite(*n)) last = n;
        }
        pending.clear();
    }
    const auto mtime = untimed::fileModifiedNs(m_ctx.path);
    if (!mtime || !last)
        return makeError(ErrorCode::Format,
                         !mtime ? "elapsed times need the start= option (the file's modification time cannot be read)"
                                : "elapsed times need the start= option (no readable elapsed value to place the end)",
                         m_ctx.lines.location());
    const auto lastNs = store::roundToInt64(*last * 1e9);
    const auto startNs = lastNs ? store::checkedSub(*mtime, *lastNs) : std::nullopt;
    if (!startNs)
        return makeError(ErrorCode::Format,
                         fmt::format("the last elapsed value ({} s) cannot be placed before the file's modification "
                                     "time: give start=",
                                     *last),
                         m_ctx.lines.location());
    const int64_t start = *startNs;
    m_ctx.notes.push_back(fmt::format("start estimated as the file's modification time ({}) minus the last elapsed "
                                      "value ({} s): {}; give start= for exact times",
                                      untimed::utcText(*mtime), *last, untimed::utcText(start)));
    m_ctx.report(diag::kEstimatedTime, m_tsColumn + 1,
                 "no start time: times estimated from the file's modification time (see the notes)");
    return start;
}

Status Parser::decideTimeForm(std::string_view v)
{
    const std::string& name = m_columns[static_cast<size_t>(m_tsColumn)].raw;
    if (zonedTime(v)) {
        m_form = TimeForm::Zoned;
        m_ctx.notes.push_back(fmt::format("{}: ISO 8601 times with a UTC offset", name));
    } else if (localTime(v)) {
        m_form = TimeForm::Local;
        RUNLENS_TRY(m_ctx.writer.setNodeTimeZone(m_ctx.nodeId, m_tz.id()));
        m_ctx.notes.push_back(fmt::format("{}: naive local times read in time zone {}", name, m_tz.description()));
    } else if (auto n = parseNumber(v); n && std::isfinite(*n)) {
        m_form = TimeForm::Number;
        if (m_elapsedColumn || std::fabs(*n) < 1e8) {
            auto placement = untimed::readPlacement(m_ctx.options, m_tz, kSecond, 0);
            if (!placement) return placement.error();
            if (placement->startNs) {
                m_baseNs = *placement->startNs;
                m_ctx.notes.push_back(fmt::format("{}: seconds after start={} ({})", name,
                                                  m_ctx.options.extra.at("start"), untimed::utcText(m_baseNs)));
            } else {
                RUNLENS_ASSIGN_OR_RETURN(auto start, estimateStart());
                m_baseNs = start;
            }
        } else {
            const double a = std::fabs(*n);
            const int unit = a < 1e11 ? 0 : a < 1e14 ? 1 : a < 1e17 ? 2 : 3;
            m_scale = std::array{1e9, 1e6, 1e3, 1.0}[unit];
            m_ctx.notes.push_back(
                fmt::format("{}: Unix epoch {} (UTC)", name,
                            std::array{"seconds", "milliseconds", "microseconds", "nanoseconds"}[unit]));
        }
    }
    return okStatus();
}

std::optional<int64_t> Parser::timestamp(std::string_view v)
{
    switch (m_form) {
    case TimeForm::Local:
        if (auto t = localTime(v)) return m_tz.toUtcNs(*t, m_prevTs);
        break;
    case TimeForm::Zoned:
        return zonedTime(v);
    case TimeForm::Number: {
        const auto scaleNs = static_cast<int64_t>(m_scale);
        // Out of int64 once scaled or added to the start: not a time that can be stored (the caller says so).
        const int64_t wholeLimit = std::numeric_limits<int64_t>::max() / 2 / scaleNs; // (llabs(INT64_MIN) overflows)
        if (auto i = parseInteger(v); i && *i >= -wholeLimit && *i <= wholeLimit)
            return store::checkedAdd(m_baseNs, *i * scaleNs); // whole numbers exactly, without a detour through double
        if (auto n = parseNumber(v); n && std::isfinite(*n) && std::fabs(*n * m_scale) < 4e18)
            return store::checkedAdd(m_baseNs, static_cast<int64_t>(std::llround(*n * m_scale)));
        break;
    }
    case TimeForm::Unknown:
        break;
    }
    return std::nullopt;
}

// The column's series, with the missing values seen before its first number.
Status Parser::openSink(Column& c)
{
    if (!m_hostDevice) {
        RUNLENS_ASSIGN_OR_RETURN(auto d, m_ctx.writer.device(m_ctx.nodeId, "host", ""));
        m_hostDevice = d;
    }
    RUNLENS_ASSIGN_OR_RETURN(auto s, m_ctx.writer.series(*m_hostDevice, "csv." + c.name, "", c.raw));
    c.sink = s;
    ++m_numericColumns;
    for (const auto& [t, token] : c.early)
        c.sink->appendMissing(t, token);
    c.early.clear();
    return m_ctx.writer.flushIfNeeded(*c.sink);
}

Status Parser::value(Column& c, std::string_view v, int64_t ts, int64_t column)
{
    if (c.skipped) return okStatus();
    // A cell broken by a line break ("26.11\n0") is ambiguous: missing, with its text as the token (the row's
    // quoted_newline diagnostic says so); the other cells of the row are kept.
    const bool missing = isMissingToken(v) || v.find('\n') != std::string_view::npos;
    if (!c.sink) {
        if (missing) {
            c.early.emplace_back(ts, std::string(v));
            return okStatus();
        }
        if (!parseNumber(v)) {
            c.skipped = true;
            c.early.clear();
            report(diag::kUnmappedColumn, 0, column,
                   fmt::format("column \"{}\" is not numeric (first value \"{}\"); not imported", c.raw, clip(v)));
            return okStatus();
        }
        RUNLENS_TRY(openSink(c));
    }
    if (missing) {
        c.sink->appendMissing(ts, v);
    } else if (auto n = parseNumber(v); !n) {
        report(diag::kBadNumber, 0, column,
               fmt::format("expected a number for \"{}\", got \"{}\"; stored as missing", c.raw, clip(v)));
        c.sink->appendMissing(ts, v);
    } else if (!std::isfinite(*n)) {
        report(diag::kNanValue, 0, column, fmt::format("\"{}\" for \"{}\" stored as missing", clip(v), c.raw));
        c.sink->appendMissing(ts, v);
    } else {
        c.sink->append(ts, *n);
    }
    return m_ctx.writer.flushIfNeeded(*c.sink);
}

Status Parser::row(std::string_view line)
{
    m_csv.split(line, m_fields);
    if (m_fields.size() != m_columns.size()) {
        report(diag::kWrongFieldCount, 0, 0,
               fmt::format("{} fields where the header has {}; row dropped", m_fields.size(), m_columns.size()));
        return okStatus();
    }
    const std::string_view tv = m_fields[static_cast<size_t>(m_tsColumn)];
    if (m_form == TimeForm::Unknown)
        if (Status s = decideTimeForm(tv); !s) return s;
    const auto ts = timestamp(tv);
    if (!ts) {
        const bool number = m_form == TimeForm::Number && parseNumber(tv).has_value();
        report(diag::kBadTimestamp, 0, m_tsColumn + 1,
               number ? fmt::format("time {} is out of range (a time must fall in the years 1678 to 2261); row dropped",
                                    clip(tv))
                      : fmt::format("cannot read time \"{}\"; row dropped", clip(tv)));
        return okStatus();
    }
    if (m_prevTs && *ts < *m_prevTs) {
        report(diag::kBackwardsTime, 0, m_tsColumn + 1,
               fmt::format("time {} is earlier than the previous row; row dropped", clip(tv)));
        return okStatus();
    }
    m_prevTs = ts;
    for (size_t i = 0; i < m_columns.size(); ++i)
        if (Status s = value(m_columns[i], m_fields[i], *ts, static_cast<int64_t>(i + 1)); !s) return s;
    return okStatus();
}

Status Parser::run()
{
    Line line;
    bool haveHeader = false;
    std::string pending; // a row broken by a line break inside a quoted cell
    int64_t pendingStart = 0;
    int pendingLines = 0;
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(const bool more, m_ctx.nextLine(line));
        if (!more) break;
        const std::string_view text = line.text;
        if (!pending.empty()) {
            if (looksLikeRow(text)) { // the quote never closes: the next row began
                report(diag::kQuotedNewline, pendingStart, 0, "unbalanced quote; row dropped");
                pending.clear();
            } else {
                pending += '\n';
                pending += text;
                if (oddQuotes(pending) && ++pendingLines < kMaxPendingLines) continue;
                // One message per broken row, saying what became of it.
                if (oddQuotes(pending)) {
                    report(diag::kQuotedNewline, pendingStart, 0,
                           fmt::format("a quoted cell not closed within {} lines (lines {}-{}); row dropped",
                                       kMaxPendingLines, pendingStart, line.number));
                    pending.clear();
                    continue;
                }
                m_csv.split(pending, m_fields);
                if (m_fields.size() != m_columns.size()) {
                    report(diag::kQuotedNewline, pendingStart, 0,
                           fmt::format("a quoted cell with a line break (lines {}-{}) in a row of {} fields where the "
                                       "header has {}; row dropped",
                                       pendingStart, line.number, m_fields.size(), m_columns.size()));
                    pending.clear();
                    continue;
                }
                report(diag::kQuotedNewline, pendingStart, 0,
                       fmt::format("a quoted cell with a line break (lines {}-{}): its value is ambiguous and stored "
                                   "as missing; the rest of the row is kept",
                                   pendingStart, line.number));
                RUNLENS_TRY(row(pending));
                pending.clear();
                continue;
            }
        }
        RUNLENS_ASSIGN_OR_RETURN(
            const bool blankOrHeaderLine,
            blankOrHeader(text, haveHeader, [this](std::string_view h) { return parseHeader(h); }));
        if (blankOrHeaderLine) continue;
        if (text == m_header) {
            report(diag::kRepeatedHeader, 0, 0, "header repeated inside the data; skipped");
            continue;
        }
        if (++m_ctx.rowsRead % kCheckpointRows == 0)
            if (Status s = m_ctx.checkpoint(); !s) return s;
        if (oddQuotes(text)) {
            pending = std::string(text);
            pendingStart = line.number;
            pendingLines = 1;
            continue;
        }
        RUNLENS_TRY(row(text));
    }
    if (!pending.empty()) report(diag::kQuotedNewline, pendingStart, 0, "file ends inside a quoted cell; row dropped");
    if (!haveHeader) return makeError(ErrorCode::Format, "empty file: no header line", m_ctx.lines.location());
    // A column with no number at all (every cell missing or broken) is still a series: all its points missing.
    for (Column& c : m_columns)
        if (!c.sink && !c.skipped && !c.early.empty())
            if (Status s = openSink(c); !s) return s;
    m_ctx.notes.push_back(fmt::format("{} column{} as csv.*", m_numericColumns, m_numericColumns == 1 ? "" : "s"));
    return okStatus();
}

} // namespace

int WideCsvImporter::sniff(const SniffInput& input) const
{
    std::vector<std::string_view> lines; // the first two non-blank lines; the second only when complete
    std::string_view head = input.head;
    while (lines.size() < 2 && !head.empty()) {
        const size_t nl = head.find('\n');
        if (nl == std::string_view::npos && !lines.empty()) break;
        const std::string_view l = trim(head.substr(0, nl));
        if (!l.empty()) lines.push_back(l);
        head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    }
    if (lines.empty() || lines[0].front() == '#' || lines[0].front() == '{') return 0;
    std::vector<std::string_view> header, row;
    CsvSplitter headerCsv(',', CsvSplitter::Spaces::Trim), rowCsv(',', CsvSplitter::Spaces::Trim);
    headerCsv.split(lines[0], header);
    const int tc = timeColumn(header);
    if (header.size() < 2 || tc < 0 ||
        std::any_of(header.begin(), header.end(), [](std::string_view f) { return f.empty(); }))
        return 0;
    if (lines.size() < 2) return 20;
    if (oddQuotes(lines[1])) return 30; // a row broken by a quoted line break
    rowCsv.split(lines[1], row);
    if (row.size() != header.size()) return 0;
    const std::string_view t = row[static_cast<size_t>(tc)];
    return parseNumber(t) || localTime(t) || zonedTime(t) ? 40 : 0;
}

Status WideCsvImporter::run(ImportContext& context) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(context.options.timeZone));
    Parser parser(context, std::move(tz));
    return parser.run();
}

} // namespace runlens::importers
