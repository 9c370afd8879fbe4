#include "importers/dcgm/dcgmi_dmon_importer.h"

#include "analysis/store/saturating.h"
#include "importers/common/counters.h"
#include "importers/common/metric_map.h"
#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/common/untimed.h"
#include "importers/diagnostic_kinds.h"

#include <cmath>
#include <fmt/format.h>
#include <map>

namespace runlens::importers {
namespace {

constexpr int kCheckpointRows = 16384;
constexpr int64_t kMs = 1'000'000;
// DCGM "blank" values (DCGM_INT64_BLANK, DCGM_FP64_BLANK and their NOT_FOUND/NOT_SUPPORTED/NOT_PERMISSIONED
// successors): dcgmi prints them as N/A, but a patched or older build may leak them.
constexpr int64_t kInt64Blank = 0x7ffffffffffffff0;
constexpr double kFp64Blank = 140737488355328.0;

// A wall clock a wrapper printed before the dcgmi text: "2026-01-15 10:00:01", "2026/01/15 10:00:01.250",
// "2026-01-15T10:00:01", optionally in [brackets], or epoch seconds (milliseconds from 1e11 on). rest is the text
// after it.
struct WallClock
{
    std::optional<LocalTime> local;
    int64_t epochNs = 0;
};

std::optional<WallClock> wallClockPrefix(std::string_view line, std::string_view& rest)
{
    std::string_view s = line;
    const bool bracket = !s.empty() && s.front() == '[';
    if (bracket) s.remove_prefix(1);
    if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
    size_t end = s.find_first_of(" \t]");
    if (end == 10 && s[end] == ' ' && (s[4] == '-' || s[4] == '/')) end = s.find_first_of(" \t]", 11); // date time
    if (end == std::string_view::npos) return std::nullopt;
    WallClock w;
    if (auto t = parseLocalDateTime(s.substr(0, end))) {
        w.local = *t;
    } else if (auto n = parseNumber(s.substr(0, end)); n && std::isfinite(*n) && *n >= 1e9 && *n < 1e14) {
        // Seconds below 1e11, milliseconds above; beyond the years a nanosecond timestamp holds: not a time.
        const auto ns = store::roundToInt64(*n >= 1e11 ? *n * 1e6 : *n * 1e9);
        if (!ns) return std::nullopt;
        w.epochNs = *ns;
    } else {
        return std::nullopt;
    }
    s.remove_prefix(end);
    if (bracket && (s.empty() || s.front() != ']')) return std::nullopt;
    if (bracket) s.remove_prefix(1);
    rest = trim(s);
    return w;
}

// "GPU 0", "GPU-I 3", "GPU-CI 1", "GPU 0 LINK 2", "Switch 0", "SW 0 LINK 1", "vGPU 2" at the start of a row.
struct Entity
{
    std::string_view kind; // device kind
    std::string name;
    size_t fields = 0; // how many fields the label takes
};

std::optional<Entity> parseEntity(const std::vector<std::string_view>& f)
{
    static constexpr std::pair<std::string_view, std::string_view> kKinds[] = {
        {"GPU", "gpu"},   {"GPU-I", "gpu-i"},     {"GPU-CI", "gpu-ci"},
        {"vGPU", "vgpu"}, {"Switch", "nvswitch"}, {"SW", "nvswitch"}};
    if (f.size() < 2) return std::nullopt;
    const auto* kind =
        std::find_if(std::begin(kKinds), std::end(kKinds), [&](const auto& k) { return k.first == f[0]; });
    const auto id = parseInteger(f[1]);
    if (kind == std::end(kKinds) || !id || *id < 0) return std::nullopt;
    if (f.size() >= 4 && f[2] == "LINK")
        if (auto link = parseInteger(f[3]); link && *link >= 0)
            return Entity{kind->second == "gpu" ? "nvlink" : "nvswitch-link", fmt::format("{}/{}", *id, *link), 4};
    return Entity{kind->second, std::to_string(*id), 2};
}

struct Column
{
    std::string tag;    // SMACT
    size_t pos = 0;     // where the tag starts in the header (the unit row is aligned with it)
    std::string metric; // canonical, or dcgm.<TAG>
    std::string unit;   // of the series
    std::optional<SourceMetric> mapping;
    double factor = 1.0;
    bool counter = false; // stored as its rate (TOTEC)
};

// One reading of the file (untimed::Reading): the Count pass counts intervals.
class Parser : public untimed::Reading
{
public:
    Parser(ImportContext& ctx, TimeZoneResolver& tz, Pass pass) : Reading(ctx, pass), m_tz(tz) {}
    Status run();

    std::optional<int64_t> startNs; // of the first interval
    int64_t intervalNs = 1000 * kMs;
    bool estimated = false;
    int64_t intervals = 0; // Count pass results
    std::optional<bool> wallClock;

private:
    void header(std::string_view rest, const std::vector<std::string_view>& tags);
    void units(std::string_view rest, const std::vector<std::string_view>& units);
    Status row(const std::optional<WallClock>& clock);
    Status value(size_t slot, size_t col, int64_t column, std::string_view v, int64_t ts);

    TimeZoneResolver& m_tz;
    bool m_stop = false, m_expectUnits = false, m_readUnits = false, m_clockIgnored = false, m_zoneNoted = false;
    bool m_estimateReported = false, m_startNoted = false;
    std::vector<std::string> m_headerTags;
    std::vector<Column> m_columns;
    int64_t m_repeatedHeaders = 0, m_interval = -1;
    std::vector<std::string_view> m_fields;
    std::map<std::string, size_t, std::less<>> m_slots; // "gpu:0" → slot
    std::vector<Entity> m_entities;                     // by slot
    std::vector<int64_t> m_deviceIds, m_lastInterval, m_lastTs;
    std::vector<std::vector<store::SeriesSink*>> m_sinks; // [slot][column]
    std::vector<std::vector<CounterRate>> m_counters;     // [slot][column]
    std::optional<int64_t> m_prevTs;
    std::string m_key;
};

void Parser::header(std::string_view rest, const std::vector<std::string_view>& tags)
{
    m_expectUnits = true;
    m_readUnits = !std::equal(tags.begin() + 1, tags.end(), m_headerTags.begin(), m_headerTags.end());
    if (!m_readUnits) {
        ++m_repeatedHeaders; // dcgmi prints its header again every 14 intervals
        return;
    }
    if (!m_headerTags.empty()) report(diag::kRepeatedHeader, 0, "header with other fields; columns re-read");
    m_headerTags.assign(tags.begin() + 1, tags.end());
    m_columns.clear();
    for (size_t i = 1; i < tags.size(); ++i) {
        Column c;
        c.tag = std::string(tags[i]);
        c.pos = static_cast<size_t>(tags[i].data() - rest.data());
        c.mapping = dcgmMetric(c.tag);
        c.metric = c.mapping ? std::string(c.mapping->metric) : "dcgm." + c.tag;
        if (c.mapping) {
            c.unit = std::string(c.mapping->unit);
            c.factor = unitFactor(c.mapping->sourceUnit, c.mapping->unit).value_or(1.0);
            c.counter = c.mapping->kind == ValueKind::Counter;
            if (c.counter)
                note(fmt::format("{} is a counter stored as its rate in {} (from each device's second sample on)",
                                 c.tag, c.unit));
        } else {
            report(diag::kUnmappedMetric, static_cast<int64_t>(i + 1),
                   fmt::format("field \"{}\" has no canonical metric; kept as {}", clip(c.tag), clip(c.metric)));
        }
        for (const Column& other : m_columns) { // one canonical name twice: the second keeps its raw name
            if (!c.mapping || other.metric != c.metric) continue;
            c.metric = "dcgm." + c.tag;
            note(fmt::format("{} is stored as {} ({} already gives {})", c.tag, c.metric, other.tag, other.metric));
        }
        m_columns.push_back(std::move(c));
    }
    m_sinks.assign(m_sinks.size(), std::vector<store::SeriesSink*>(m_columns.size(), nullptr));
    m_counters.assign(m_counters.size(), std::vector<CounterRate>(m_columns.size()));
}

// The unit row ("ID  W  C", blanks for fields without a unit) is aligned with the header, so a unit belongs to
// the field whose column it starts in. A unit that converts to the canonical one overrides the table.
void Parser::units(std::string_view rest, const std::vector<std::string_view>& units)
{
    for (size_t u = 1; u < units.size(); ++u) {
        size_t col = u - 1;
        if (units.size() != m_columns.size() + 1) {
            const auto pos = static_cast<size_t>(units[u].data() - rest.data());
            col = 0;
            while (col + 1 < m_columns.size() && m_columns[col + 1].pos <= pos)
                ++col;
        }
        if (col >= m_columns.size()) break;
        Column& c = m_columns[col];
        if (!c.mapping)
            c.unit = units[u] == "#" ? std::string() : std::string(units[u]); // "#": a count
        else if (auto f = unitFactor(units[u], c.mapping->unit))
            c.factor = *f;
    }
}

Status Parser::value(size_t slot, size_t col, int64_t column, std::string_view v, int64_t ts)
{
    const Column& c = m_columns[col];
    std::optional<double> x;
    if (isMissingToken(v)) {
    } else if (auto i = parseInteger(v)) {
        if (*i >= kInt64Blank)
            report(diag::kSentinelValue, column, fmt::format("{} for \"{}\" is a DCGM blank value", clip(v), c.tag));
        else
            x = static_cast<double>(*i);
    } else if (auto d = parseNumber(v); !d) {
        report(diag::kBadNumber, column,
               fmt::format("expected a number for \"{}\", got \"{}\"; stored as missing", c.tag, clip(v)));
    } else if (!std::isfinite(*d)) {
        report(diag::kNanValue, column, fmt::format("\"{}\" for \"{}\" stored as missing", clip(v), c.tag));
    } else if (*d >= kFp64Blank && *d < kFp64Blank + 4) { // DCGM_FP64_BLANK and its +1..+3
        report(diag::kSentinelValue, column, fmt::format("{} for \"{}\" is a DCGM blank value", clip(v), c.tag));
    } else {
        x = d;
    }
    if (x && c.counter) { // a counter's first sample gives no rate
        auto rate = m_counters[slot][col].add(ts, *x);
        if (!rate) return okStatus();
        if (rate->afterReset)
            report(diag::kCounterReset, column,
                   fmt::format("{} went down (restart); the rate counts from zero", c.tag));
        x = rate->perSecond;
    }
    store::SeriesSink*& sink = m_sinks[slot][col];
    if (!sink) {
        RUNLENS_ASSIGN_OR_RETURN(auto s, m_ctx.writer.series(m_deviceIds[slot], c.metric, c.unit, c.tag));
        sink = s;
    }
    if (x && implausibleValue(c.unit, *x * c.factor)) {
        report(diag::kImplausibleValue, column,
               fmt::format("{} for \"{}\" is outside its range; stored as missing", clip(v), c.tag));
        x.reset();
    }
    if (x)
        sink->append(ts, *x * c.factor);
    else
        sink->appendMissing(ts, v);
    return m_ctx.writer.flushIfNeeded(*sink);
}

Status Parser::row(const std::optional<WallClock>& clock)
{
    auto entity = parseEntity(m_fields);
    if (!entity) {
        if (m_fields.size() > 2 && m_fields[0] == "dmon" && m_fields[2] == "stopped")
            note("the capture was stopped by a signal (Ctrl-C)");
        else
            report(
                diag::kInvalidLine, 1,
                fmt::format("not a dcgmi dmon row: \"{}\" is not an entity such as \"GPU 0\" or \"GPU-I 3\"; dropped",
                            clip(m_fields.size() > 1 ? fmt::format("{} {}", m_fields[0], m_fields[1])
                                                     : std::string(m_fields[0]))));
        return okStatus();
    }
    if (m_fields.size() != entity->fields + m_columns.size()) {
        report(diag::kWrongFieldCount, 0,
               fmt::format("{} values where the header has {} fields; row dropped", m_fields.size() - entity->fields,
                           m_columns.size()));
        return okStatus();
    }
    if (!wallClock) {
        wallClock = clock.has_value();
        m_stop = m_pass == Pass::Count && *wallClock; // no interval to count
    }
    m_key.assign(entity->kind).append(":").append(entity->name);
    auto it = m_slots.find(m_key);
    if (it == m_slots.end()) {
        it = m_slots.emplace(m_key, m_entities.size()).first;
        m_entities.push_back(*entity);
        m_deviceIds.push_back(0);
        m_lastInterval.push_back(-1);
        m_lastTs.push_back(std::numeric_limits<int64_t>::min());
        m_sinks.emplace_back(m_columns.size(), nullptr);
        m_counters.emplace_back(m_columns.size());
    }
    const size_t slot = it->second;
    int64_t ts = 0;
    if (*wallClock) {
        if (m_pass == Pass::Count) return okStatus();
        if (!clock) {
            report(diag::kBadTimestamp, 1, "a row without the wall clock the first row had; row dropped");
            return okStatus();
        }
        if (clock->local && !m_zoneNoted) {
            m_zoneNoted = true;
            RUNLENS_TRY(m_ctx.writer.setNodeTimeZone(m_ctx.nodeId, m_tz.id()));
            note(fmt::format("wall clock before each row read in time zone {}", m_tz.description()));
        }
        ts = clock->local ? m_tz.toUtcNs(*clock->local, m_prevTs) : clock->epochNs;
    } else {
        if (clock && !m_clockIgnored) note("a wall clock on some rows ignored: the first row had none");
        m_clockIgnored = m_clockIgnored || clock;
        if (m_interval < 0 || m_lastInterval[slot] == m_interval) ++m_interval; // an entity repeats
        m_lastInterval[slot] = m_interval;
        intervals = m_interval + 1;
        if (m_pass == Pass::Count) return okStatus();
        if (!startNs) {
            report(diag::kBadTimestamp, 0, "no start= for rows without a wall clock; row dropped");
            return okStatus();
        }
        if (!estimated && !m_startNoted)
            note(fmt::format("no time in the file: rows placed from {} every {} ms (start=, interval=)",
                             untimed::utcText(*startNs), static_cast<double>(intervalNs) / 1e6));
        m_startNoted = true;
        ts = *startNs + m_interval * intervalNs;
    }
    if (estimated && !*wallClock && !m_estimateReported)
        report(diag::kEstimatedTime, 0, "timestamps estimated from the file's modification time (see the notes)");
    m_estimateReported = m_estimateReported || (estimated && !*wallClock);
    if (ts < m_lastTs[slot]) {
        report(diag::kBackwardsTime, 1,
               fmt::format("time earlier than the previous row of {}:{}; row dropped", entity->kind, entity->name));
        return okStatus();
    }
    m_lastTs[slot] = ts;
    m_prevTs = ts;
    if (!m_deviceIds[slot]) {
        RUNLENS_ASSIGN_OR_RETURN(auto id, m_ctx.writer.device(m_ctx.nodeId, entity->kind, entity->name));
        m_deviceIds[slot] = id;
    }
    for (size_t i = 0; i < m_columns.size(); ++i) {
        const size_t field = entity->fields + i;
        RUNLENS_TRY(value(slot, i, static_cast<int64_t>(field + 1), m_fields[field], ts));
    }
    return okStatus();
}

Status Parser::run()
{
    Line line;
    int64_t sinceCheckpoint = 0;
    while (!m_stop) {
        // A line too long to read is a row lost once the header is known.
        RUNLENS_ASSIGN_OR_RETURN(const bool more,
                                 m_ctx.nextLine(line, !m_headerTags.empty() && m_pass == Pass::Import));
        if (!more) break;
        std::string_view rest = trim(line.text);
        if (rest.empty()) continue;
        const auto clock = wallClockPrefix(rest, rest);
        splitWhitespace(rest, m_fields);
        if (m_fields.empty()) continue;
        if (m_fields[0] == "#Entity") {
            header(rest, m_fields);
        } else if (m_fields[0] == "ID" && m_expectUnits) {
            if (m_readUnits) units(rest, m_fields);
            m_expectUnits = false;
        } else if (m_headerTags.empty()) {
            if (m_fields[0] == "dcgmi" || (m_fields.size() > 1 && m_fields[1] == "dcgmi")) {
                report(diag::kCommentLine, 0, "the dcgmi command line, skipped");
                continue;
            }
            if (m_pass == Pass::Count) return okStatus(); // the Import pass reports it
            return makeError(
                ErrorCode::Format,
                fmt::format("expected the dcgmi dmon header (\"#Entity   TAG ...\"), got \"{}\"", clip(rest)),
                m_ctx.lines.location(1));
        } else {
            m_expectUnits = false;
            if (m_pass == Pass::Import) ++m_ctx.rowsRead;
            RUNLENS_TRY(row(clock));
            RUNLENS_TRY(m_ctx.checkpointEvery(sinceCheckpoint, kCheckpointRows));
        }
    }
    if (m_pass == Pass::Count) return okStatus();
    if (m_headerTags.empty())
        return makeError(ErrorCode::Format, "empty file: no dcgmi dmon header line", m_ctx.lines.location());
    std::map<std::string_view, int> kinds;
    for (const Entity& e : m_entities)
        ++kinds[e.kind];
    std::string devices;
    for (const auto& [kind, n] : kinds)
        devices += fmt::format("{}{} {}", devices.empty() ? "" : ", ", n, kind);
    note(fmt::format("devices: {}", devices.empty() ? "none" : devices));
    if (m_repeatedHeaders > 0) note(fmt::format("header repeated {} times", m_repeatedHeaders));
    return okStatus();
}

} // namespace

int DcgmiDmonImporter::sniff(const SniffInput& input) const
{
    std::string_view head = input.head;
    std::vector<std::string_view> lines;
    while (!head.empty() && lines.size() < 2) {
        const size_t nl = head.find('\n');
        std::string_view line = trim(head.substr(0, nl));
        wallClockPrefix(line, line);
        const bool command = lines.empty() && (line.rfind("dcgmi ", 0) == 0 || line.rfind("$ dcgmi ", 0) == 0);
        if (!line.empty() && !command) lines.push_back(line);
        if (nl == std::string_view::npos) break;
        head.remove_prefix(nl + 1);
    }
    if (lines.empty() || lines[0].rfind("#Entity", 0) != 0) return 0;
    return lines.size() > 1 && lines[1].rfind("ID", 0) == 0 ? 99 : 90;
}

Status DcgmiDmonImporter::run(ImportContext& context) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(context.options.timeZone));
    RUNLENS_ASSIGN_OR_RETURN(auto placement, untimed::readPlacement(context.options, tz, kMs, 1000 * kMs));
    Parser parser(context, tz, Parser::Pass::Import);
    parser.startNs = placement.startNs;
    parser.intervalNs = placement.intervalNs;
    if (!parser.startNs) {
        // Count the intervals on a second reading, then place the last one at the file's modification time.
        RUNLENS_ASSIGN_OR_RETURN(auto second, untimed::openSecondReading(context));
        Parser counter(*second->context, tz, Parser::Pass::Count);
        RUNLENS_TRY(counter.run());
        const auto mtime = untimed::fileModifiedNs(context.path);
        if (counter.wallClock == false && !mtime)
            return makeError(ErrorCode::Usage, "dcgmi dmon prints no time: set start= (and interval=)");
        if (counter.wallClock == false) {
            const int64_t mtimeMs = *mtime / kMs * kMs;
            parser.startNs = mtimeMs - std::max<int64_t>(counter.intervals - 1, 0) * parser.intervalNs;
            parser.estimated = true;
            context.notes.push_back(fmt::format("no time in the file: {} intervals of {} ms placed so that the last "
                                                "is at the file's modification time {} (an estimate; set start=)",
                                                counter.intervals, static_cast<double>(parser.intervalNs) / 1e6,
                                                untimed::utcText(mtimeMs)));
        }
    }
    return parser.run();
}

} // namespace runlens::importers
