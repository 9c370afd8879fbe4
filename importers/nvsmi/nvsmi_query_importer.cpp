#include "importers/nvsmi/nvsmi_query_importer.h"

#include "analysis/store/ascii.h"
#include "importers/common/metric_map.h"
#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/diagnostic_kinds.h"
#include "importers/input/csv_fields.h"
#include "importers/input/table_header.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace runlens::importers {
namespace {

constexpr int kCheckpointRows = 16384;

// "utilization.gpu [%]" → ("utilization.gpu", "%").
std::pair<std::string, std::string> splitHeaderField(std::string_view field)
{
    field = trim(field);
    std::string unit;
    if (!field.empty() && field.back() == ']') {
        const size_t open = field.rfind('[');
        if (open != std::string_view::npos) {
            unit = std::string(trim(field.substr(open + 1, field.size() - open - 2)));
            field = trim(field.substr(0, open));
        }
    }
    return {asciiLower(field), unit};
}

enum class Role
{
    Timestamp,
    Index,
    Attribute,
    Metric,
    Unknown
};

struct Column
{
    std::string raw;      // as in the header
    std::string property; // lower case, unit removed
    std::string headerUnit;
    Role role = Role::Unknown;
    MetricMapping mapping{};
    std::string metricName; // canonical, or nvsmi.<property> for unmapped numeric columns
    std::string lastUnit;   // the unit of the last value seen, and its factor
    double factor = 1.0;
    bool unitChecked = false;
};

// Words nvidia-smi prints for boolean and state properties.
std::optional<double> wordValue(std::string_view v)
{
    if (v == "Active" || v == "Enabled" || v == "Yes" || v == "On") return 1.0;
    if (v == "Not Active" || v == "Disabled" || v == "No" || v == "Off") return 0.0;
    if (v.size() >= 2 && v.size() <= 3 && v[0] == 'P' && v[1] >= '0' && v[1] <= '9') {
        if (auto p = parseInteger(v.substr(1))) return static_cast<double>(*p);
    }
    if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
        if (auto h = parseInteger(v)) return static_cast<double>(*h);
    }
    return std::nullopt;
}

// Units are a few bytes: comparing them inline beats a library call per value.
bool sameShortText(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}

class Parser
{
public:
    Parser(ImportContext& ctx, TimeZoneResolver tz) : m_ctx(ctx), m_tz(std::move(tz)) {}

    Status run();

private:
    Status parseHeader(std::string_view line);
    bool isHeaderLine(std::string_view line) const;
    Status row(std::string_view line);
    std::optional<int64_t> timestamp(std::string_view v, int64_t column);
    Expected<int64_t> deviceFor(std::string_view key);
    Status value(int64_t deviceId, size_t slot, Column& c, std::string_view v, int64_t ts, int64_t column);

    // Diagnostics name the current line, or the line a pending broken row started on.
    void report(const store::DiagnosticKind& kind, int64_t column, const std::string& message)
    {
        SourceLocation where = m_ctx.lines.location(column);
        if (m_rowLine > 0) where.line = m_rowLine;
        m_ctx.diagnostics.report(kind, std::move(where), message);
    }
    bool startsWithTimestamp(std::string_view line) const;

    ImportContext& m_ctx;
    TimeZoneResolver m_tz;
    int64_t m_rowLine = 0;
    std::vector<Column> m_columns;
    std::string m_firstHeaderField;
    int m_tsColumn = -1;
    int m_idColumn = -1; // index, or uuid / bus id when there is no index
    std::vector<std::string_view> m_fields;
    CsvSplitter m_csv{',', CsvSplitter::Spaces::Keep, CsvSplitter::Quotes::AsText}; // nvidia-smi quotes nothing
    std::map<std::string, int64_t, std::less<>> m_devices;
    std::map<std::string, size_t, std::less<>> m_deviceSlots;
    std::vector<std::vector<store::SeriesSink*>> m_sinks;  // [device slot][column]
    std::vector<std::vector<std::string>> m_lastAttribute; // [device slot][column]: last text of an attribute
    std::vector<int64_t> m_lastTs;                         // per device slot
    std::map<std::pair<int64_t, std::string>, std::string> m_attributes; // (device, property) → value
    std::vector<std::pair<int64_t, size_t>> m_byIndex; // GPU index → (device id, slot); id 0 = not seen
    size_t m_lastSlot = 0;
    enum class TimeForm
    {
        Unknown,
        Local,
        EpochS,
        EpochMs,
        EpochUs,
        EpochNs
    } m_timeForm = TimeForm::Unknown;
    std::optional<Error> m_fatal;    // a database error met where a Status cannot be returned
    std::optional<int64_t> m_prevTs; // of the previous accepted row, to place repeated local hours
};

Status Parser::parseHeader(std::string_view line)
{
    m_columns.clear();
    m_tsColumn = m_idColumn = -1;
    m_csv.split(line, m_fields);
    int uuidColumn = -1, busColumn = -1;
    for (size_t i = 0; i < m_fields.size(); ++i) {
        Column c;
        c.raw = std::string(trim(m_fields[i]));
        std::tie(c.property, c.headerUnit) = splitHeaderField(m_fields[i]);
        if (c.property == "timestamp") {
            c.role = Role::Timestamp;
            if (m_tsColumn < 0) m_tsColumn = static_cast<int>(i);
        } else if (c.property == "index") {
            c.role = Role::Index;
            m_idColumn = static_cast<int>(i);
        } else if (auto m = nvsmiMetric(c.property)) {
            c.role = Role::Metric;
            c.mapping = *m;
            c.metricName = std::string(m->metric);
            // Two properties with one canonical name (power.draw and power.draw.average): the first keeps
            // it, the other keeps its own name so no series gets two points per row.
            for (const Column& other : m_columns) {
                if (other.role == Role::Metric && other.metricName == c.metricName) {
                    c.metricName = "nvsmi." + c.property;
                    m_ctx.notes.push_back(fmt::format("{} is stored as {} ({} already gives {})", c.raw, c.metricName,
                                                      other.raw, other.metricName));
                    break;
                }
            }
        } else if (nvsmiIsAttribute(c.property)) {
            c.role = Role::Attribute;
            if (c.property == "uuid" || c.property == "gpu_uuid") uuidColumn = static_cast<int>(i);
            if (c.property == "pci.bus_id" || c.property == "gpu_bus_id") busColumn = static_cast<int>(i);
        } else {
            c.role = Role::Unknown; // decided by its first value: numeric → raw series, text → attribute
            c.metricName = "nvsmi." + c.property;
            report(diag::kUnmappedColumn, static_cast<int64_t>(i + 1),
                   fmt::format("column \"{}\" has no canonical metric; kept as {}", c.raw, c.metricName));
        }
        m_columns.push_back(std::move(c));
    }
    if (m_idColumn < 0) m_idColumn = uuidColumn >= 0 ? uuidColumn : busColumn;
    if (m_tsColumn < 0)
        return makeError(ErrorCode::Format,
                         "no timestamp column: nvidia-smi CSV needs --query-gpu=timestamp,... to be placed in time",
                         m_ctx.lines.location(1));
    if (m_idColumn < 0) m_ctx.notes.emplace_back("no index, uuid or pci.bus_id column: every row is taken as GPU 0");
    m_firstHeaderField = std::string(trim(m_fields.front()));
    return okStatus();
}

bool Parser::isHeaderLine(std::string_view line) const
{
    const size_t comma = line.find(',');
    return trim(line.substr(0, comma)) == m_firstHeaderField && !parseLocalDateTime(trim(line.substr(0, comma)));
}

std::optional<int64_t> Parser::timestamp(std::string_view v, int64_t column)
{
    if (m_timeForm == TimeForm::Unknown) {
        if (parseLocalDateTime(v)) {
            m_timeForm = TimeForm::Local;
            if (Status st = m_ctx.writer.setNodeTimeZone(m_ctx.nodeId, m_tz.id()); !st) m_fatal = st.error();
            m_ctx.notes.push_back(fmt::format("naive local timestamps read in time zone {}", m_tz.description()));
        } else if (auto n = parseNumber(v); n && std::isfinite(*n) && *n > 0) {
            // Epoch time prepended by a wrapper script: its unit follows from its magnitude.
            m_timeForm = *n < 1e11   ? TimeForm::EpochS
                         : *n < 1e14 ? TimeForm::EpochMs
                         : *n < 1e17 ? TimeForm::EpochUs
                                     : TimeForm::EpochNs;
            m_ctx.notes.emplace_back("timestamps are Unix epoch numbers (UTC)");
        }
    }
    switch (m_timeForm) {
    case TimeForm::Local:
        if (auto t = parseLocalDateTime(v)) return m_tz.toUtcNs(*t, m_prevTs);
        break;
    case TimeForm::Unknown:
        break;
    default:
        const int64_t scaleNs = m_timeForm == TimeForm::EpochS    ? 1'000'000'000
                                : m_timeForm == TimeForm::EpochMs ? 1'000'000
                                : m_timeForm == TimeForm::EpochUs ? 1'000
                                                                  : 1;
        if (auto i = parseInteger(v); i && *i >= 0 && *i <= std::numeric_limits<int64_t>::max() / scaleNs)
            return *i * scaleNs; // whole numbers exactly, without a detour through double
        if (auto n = parseNumber(v); n && std::isfinite(*n)) {
            const double scale = m_timeForm == TimeForm::EpochS    ? 1e9
                                 : m_timeForm == TimeForm::EpochMs ? 1e6
                                 : m_timeForm == TimeForm::EpochUs ? 1e3
                                                                   : 1.0;
            const double ns = *n * scale;
            if (std::fabs(ns) < 9.2e18) return static_cast<int64_t>(std::llround(ns));
        }
    }
    report(diag::kBadTimestamp, column, fmt::format("cannot read timestamp \"{}\"; row dropped", clip(v)));
    return std::nullopt;
}

Expected<int64_t> Parser::deviceFor(std::string_view key)
{
    if (auto it = m_deviceSlots.find(key); it != m_deviceSlots.end()) {
        m_lastSlot = it->second;
        return m_devices.find(key)->second;
    }
    // Without an index column, GPUs are numbered in order of first appearance.
    std::string name = m_idColumn >= 0 && m_columns[m_idColumn].role == Role::Index
                           ? std::string(key)
                           : std::to_string(m_deviceSlots.size());
    RUNLENS_ASSIGN_OR_RETURN(auto id, m_ctx.writer.device(m_ctx.nodeId, "gpu", name));
    m_devices.emplace(std::string(key), id);
    m_lastSlot = m_sinks.size();
    m_deviceSlots.emplace(std::string(key), m_lastSlot);
    m_sinks.emplace_back(m_columns.size(), nullptr);
    m_lastAttribute.emplace_back(m_columns.size());
    m_lastTs.push_back(std::numeric_limits<int64_t>::min());
    return id;
}

Status Parser::value(int64_t deviceId, size_t slot, Column& c, std::string_view v, int64_t ts, int64_t column)
{
    const size_t col = static_cast<size_t>(column - 1);
    if (c.role == Role::Attribute) {
        std::string& last = m_lastAttribute[slot][col]; // the usual case: same as in the previous row
        if (!last.empty() && sameShortText(last, v)) return okStatus();
        last = std::string(v);
        auto key = std::make_pair(deviceId, c.property);
        auto it = m_attributes.find(key);
        if (it == m_attributes.end()) {
            m_attributes.emplace(key, std::string(v));
            if (!isMissingToken(v)) return m_ctx.writer.setDeviceAttribute(deviceId, c.property, v);
        } else if (it->second != v) {
            report(diag::kAttributeChanged, column,
                   fmt::format("{} changed from \"{}\" to \"{}\"", c.property, clip(it->second), clip(v)));
            it->second = std::string(v);
            return m_ctx.writer.setDeviceAttribute(deviceId, c.property, v);
        }
        return okStatus();
    }

    store::SeriesSink*& sink = m_sinks[slot][col];
    if (!sink) {
        if (c.role == Role::Unknown) {
            if (isMissingToken(v)) return okStatus(); // decide on a real value
            if (!parseNumberWithUnit(v) && !wordValue(v)) {
                c.role = Role::Attribute;
                return value(deviceId, slot, c, v, ts, column);
            }
            c.role = Role::Metric;
            c.mapping = {c.metricName, c.headerUnit, c.headerUnit};
        }
        RUNLENS_ASSIGN_OR_RETURN(auto s, m_ctx.writer.series(deviceId, c.metricName, c.mapping.unit, c.raw));
        sink = s;
    }

    double number;
    std::string_view unit;
    if (auto n = parseNumberWithUnit(v)) { // the common case first
        number = n->value;
        unit =
            n->unit.empty() ? std::string_view(c.headerUnit.empty() ? c.mapping.defaultSource : c.headerUnit) : n->unit;
    } else if (isMissingToken(v)) {
        sink->appendMissing(ts, v);
        return m_ctx.writer.flushIfNeeded(*sink);
    } else if (auto w = wordValue(v)) {
        number = *w;
        unit = c.mapping.unit;
    } else {
        report(diag::kBadNumber, column,
               fmt::format("expected a number for \"{}\", got \"{}\"; stored as missing", c.raw, clip(v)));
        sink->appendMissing(ts, v);
        return m_ctx.writer.flushIfNeeded(*sink);
    }
    if (!std::isfinite(number)) {
        report(diag::kNanValue, column, fmt::format("\"{}\" for \"{}\" stored as missing", clip(v), c.raw));
        sink->appendMissing(ts, v);
        return m_ctx.writer.flushIfNeeded(*sink);
    }
    if (!c.unitChecked || !sameShortText(unit, c.lastUnit)) {
        auto f = unitFactor(unit, c.mapping.unit);
        if (!f) {
            report(diag::kBadNumber, column,
                   fmt::format("unit \"{}\" for \"{}\" cannot be converted to {}; stored as missing", unit, c.raw,
                               c.mapping.unit));
            sink->appendMissing(ts, v);
            return m_ctx.writer.flushIfNeeded(*sink);
        }
        c.factor = *f;
        c.lastUnit = std::string(unit);
        c.unitChecked = true;
    }
    if (implausibleValue(c.mapping.unit, number * c.factor)) {
        report(diag::kImplausibleValue, column,
               fmt::format("{} for \"{}\" is outside its range; stored as missing", clip(v), c.raw));
        sink->appendMissing(ts, v);
        return m_ctx.writer.flushIfNeeded(*sink);
    }
    sink->append(ts, number * c.factor);
    return m_ctx.writer.flushIfNeeded(*sink);
}

Status Parser::row(std::string_view line)
{
    m_csv.split(line, m_fields);
    if (m_fields.size() != m_columns.size()) {
        report(diag::kWrongFieldCount, 0,
               fmt::format("{} fields where the header has {}; row dropped", m_fields.size(), m_columns.size()));
        return okStatus();
    }
    for (std::string_view& f : m_fields)
        f = trim(f);
    auto ts = timestamp(m_fields[static_cast<size_t>(m_tsColumn)], m_tsColumn + 1);
    if (!ts) return okStatus();

    const std::string_view key = m_idColumn >= 0 ? m_fields[static_cast<size_t>(m_idColumn)] : std::string_view("0");
    // GPU indexes are small numbers: look them up directly, not through the map, on every row.
    int64_t deviceId;
    size_t slot;
    int64_t index = -1;
    if (key.size() <= 4)
        if (auto i = parseInteger(key)) index = *i;
    if (index >= 0 && static_cast<size_t>(index) < m_byIndex.size() && m_byIndex[static_cast<size_t>(index)].first) {
        std::tie(deviceId, slot) = m_byIndex[static_cast<size_t>(index)];
    } else {
        RUNLENS_ASSIGN_OR_RETURN(auto d, deviceFor(key));
        deviceId = d;
        slot = m_lastSlot;
        if (index >= 0 && index < 4096) {
            if (m_byIndex.size() <= static_cast<size_t>(index)) m_byIndex.resize(static_cast<size_t>(index) + 1);
            m_byIndex[static_cast<size_t>(index)] = {deviceId, slot};
        }
    }
    if (*ts < m_lastTs[slot]) {
        report(diag::kBackwardsTime, m_tsColumn + 1,
               fmt::format("timestamp {} is earlier than the previous row of GPU {}; row dropped",
                           clip(m_fields[static_cast<size_t>(m_tsColumn)]), clip(key)));
        return okStatus();
    }
    // Timestamps have millisecond resolution and one row per GPU per sample: a second row of a GPU at the same
    // time is a repeated row (two captures joined), not a sample.
    if (*ts == m_lastTs[slot]) {
        report(diag::kDuplicateSample, m_tsColumn + 1,
               fmt::format("a second row of GPU {} at {}; the first is kept", clip(key),
                           clip(m_fields[static_cast<size_t>(m_tsColumn)])));
        return okStatus();
    }
    m_lastTs[slot] = *ts;
    m_prevTs = ts;
    for (size_t i = 0; i < m_columns.size(); ++i) {
        Column& c = m_columns[i];
        if (c.role == Role::Timestamp || c.role == Role::Index) continue;
        RUNLENS_TRY(value(deviceId, slot, c, m_fields[i], *ts, static_cast<int64_t>(i + 1)));
    }
    return okStatus();
}

bool Parser::startsWithTimestamp(std::string_view line) const
{
    std::vector<std::string_view> fields;
    CsvSplitter csv{',', CsvSplitter::Spaces::Keep, CsvSplitter::Quotes::AsText};
    csv.split(line, fields);
    if (m_tsColumn < 0 || fields.size() <= static_cast<size_t>(m_tsColumn)) return false;
    const std::string_view v = trim(fields[static_cast<size_t>(m_tsColumn)]);
    if (m_timeForm == TimeForm::Local) return parseLocalDateTime(v).has_value();
    if (m_timeForm != TimeForm::Unknown) return parseNumber(v).has_value();
    return parseLocalDateTime(v).has_value() || parseNumber(v).has_value();
}

Status Parser::run()
{
    Line line;
    bool haveHeader = false;
    std::string pending; // a row broken by a quoted line break
    int64_t pendingStart = 0;
    int pendingLines = 0;
    constexpr int kMaxPendingLines = 8;
    int64_t sinceCheckpoint = 0;
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(const bool more, m_ctx.nextLine(line));
        if (!more) break;
        std::string_view text = line.text;
        if (!pending.empty()) {
            // nvidia-smi never quotes; an odd quote is a cell broken by a line break (a wrapper's CSV), or a
            // stray quote when the next line starts a new row.
            if (startsWithTimestamp(text) || ++pendingLines > kMaxPendingLines) {
                m_rowLine = pendingStart;
                RUNLENS_TRY(row(pending));
                m_rowLine = 0;
                pending.clear();
            } else {
                pending += '\n';
                pending += text;
                if (oddQuotes(pending)) continue;
                m_rowLine = pendingStart;
                report(diag::kQuotedNewline, 0,
                       fmt::format("row with a line break inside a quoted cell (lines {}-{}) dropped", pendingStart,
                                   line.number));
                m_rowLine = 0;
                pending.clear();
                continue;
            }
        }
        RUNLENS_ASSIGN_OR_RETURN(
            const bool blankOrHeaderLine,
            blankOrHeader(text, haveHeader, [this](std::string_view h) { return parseHeader(h); }));
        if (blankOrHeaderLine) continue;
        if (oddQuotes(text)) {
            pending = std::string(text);
            pendingStart = line.number;
            pendingLines = 0;
            ++m_ctx.rowsRead;
            continue;
        }
        if (isHeaderLine(text)) {
            // Another capture appended to the same file: its header may list other properties.
            report(diag::kRepeatedHeader, 0, "header repeated inside the data; columns re-read");
            RUNLENS_TRY(parseHeader(text));
            m_sinks.assign(m_sinks.size(), std::vector<store::SeriesSink*>(m_columns.size(), nullptr));
            m_lastAttribute.assign(m_sinks.size(), std::vector<std::string>(m_columns.size()));
            continue;
        }
        ++m_ctx.rowsRead;
        RUNLENS_TRY(row(text));
        if (m_fatal) return *m_fatal;
        RUNLENS_TRY(m_ctx.checkpointEvery(sinceCheckpoint, kCheckpointRows));
    }
    if (!pending.empty()) {
        m_rowLine = pendingStart;
        report(diag::kQuotedNewline, 0, "file ends inside a quoted cell; last row dropped");
        m_rowLine = 0;
    }
    if (!haveHeader) return makeError(ErrorCode::Format, "empty file: no header line", m_ctx.lines.location());
    m_ctx.notes.push_back(fmt::format("{} GPU{}", m_deviceSlots.size(), m_deviceSlots.size() == 1 ? "" : "s"));
    return okStatus();
}

} // namespace

int NvsmiQueryImporter::sniff(const SniffInput& input) const
{
    std::string_view head = input.head;
    // The first non-blank line is the header.
    while (!head.empty()) {
        const size_t nl = head.find('\n');
        std::string_view line = trim(head.substr(0, nl));
        if (!line.empty()) {
            std::vector<std::string_view> fields;
            CsvSplitter csv{',', CsvSplitter::Spaces::Keep, CsvSplitter::Quotes::AsText};
            csv.split(line, fields);
            int known = 0, metrics = 0;
            bool timestampField = false;
            for (std::string_view f : fields) {
                const auto [property, unit] = splitHeaderField(f);
                if (property == "timestamp") timestampField = true;
                if (nvsmiMetric(property)) ++metrics;
                if (property == "timestamp" || property == "index" || nvsmiMetric(property) ||
                    nvsmiIsAttribute(property))
                    ++known;
            }
            // --query-gpu has GPU metrics; --query-compute-apps / --query-retired-pages do not.
            if (metrics >= 1 && known >= 2 && (timestampField || known >= 3))
                return known * 2 >= static_cast<int>(fields.size()) ? 95 : 70;
            return 0;
        }
        if (nl == std::string_view::npos) break;
        head.remove_prefix(nl + 1);
    }
    return 0;
}

Status NvsmiQueryImporter::run(ImportContext& context) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(context.options.timeZone));
    Parser parser(context, std::move(tz));
    return parser.run();
}

} // namespace runlens::importers
