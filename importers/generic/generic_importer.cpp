#include "importers/generic/generic_importer.h"

#include "analysis/store/ascii.h"
#include "importers/common/metric_map.h"
#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/diagnostic_kinds.h"
#include "importers/generic/generic_blocks.h"
#include "importers/input/csv_fields.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>
#include <simdjson.h>
#include <unordered_map>

namespace runlens::importers {
namespace {

constexpr int kCheckpointRows = 16384;
constexpr size_t kMaxName = 256; // longer names are not names (a cut or garbled line)

std::atomic<size_t> g_blockBytes{4u << 20};

std::optional<double> convert(std::string_view from, std::string_view to)
{
    return unitFactor(from, to);
}

// "+02:00", "+0200", "+02", "-05:30" → seconds east of UTC.
std::optional<int64_t> offsetSeconds(std::string_view s)
{
    if (s.size() < 3 || (s[0] != '+' && s[0] != '-')) return std::nullopt;
    const int64_t sign = s[0] == '-' ? -1 : 1;
    std::string digits;
    for (char c : s.substr(1))
        if (c != ':') digits.push_back(c);
    if ((digits.size() != 2 && digits.size() != 4) || digits.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    const int64_t h = (digits[0] - '0') * 10 + (digits[1] - '0');
    const int64_t m = digits.size() == 4 ? (digits[2] - '0') * 10 + (digits[3] - '0') : 0;
    if (h > 14 || m > 59) return std::nullopt;
    return sign * (h * 3600 + m * 60);
}

char separatorOf(std::string_view header)
{
    if (header.find(',') != std::string_view::npos) return ',';
    if (header.find(';') != std::string_view::npos) return ';';
    return '\t';
}

enum class Field
{
    Ts,
    Node,
    Device,
    Metric,
    Value,
    Unit,
    Label
};

Field fieldOf(std::string_view name)
{
    if (name == "ts" || name == "timestamp" || name == "time") return Field::Ts;
    if (name == "node") return Field::Node;
    if (name == "device") return Field::Device;
    if (name == "metric") return Field::Metric;
    if (name == "value") return Field::Value;
    if (name == "unit") return Field::Unit;
    return Field::Label;
}

// One record, whichever the syntax. Views stay valid until the next record.
struct Record
{
    std::string_view ts, node, device, metric, value, unit;
    bool valueIsNull = false;
    std::vector<std::pair<std::string, std::string>> labels; // sorted by name
    int64_t valueColumn = 0, tsColumn = 0;

    std::string_view& field(Field f)
    {
        return f == Field::Ts       ? ts
               : f == Field::Node   ? node
               : f == Field::Device ? device
               : f == Field::Metric ? metric
               : f == Field::Value  ? value
                                    : unit;
    }
};

struct SeriesState
{
    store::SeriesSink* sink = nullptr;
    std::string unit;     // the series' unit
    std::string lastUnit; // the unit of the previous row, and its factor
    double factor = 1.0;
    bool unitChecked = false;
};

class GenericParser
{
public:
    GenericParser(ImportContext& ctx, TimeZoneResolver tz) : m_ctx(ctx), m_tz(std::move(tz)) {}
    Status run();

private:
    Status csvHeader(std::string_view line);
    Status csvRow(std::string_view line);
    Status jsonRow(std::string_view line);
    Status record(Record& r);
    Status csvBlocks(int64_t& sinceCheckpoint);
    Status blockRow(const CsvBlock& block, const BlockRow& row);
    CsvLayout layout() const;
    Status checkpoint(uint64_t rawBytes) const;
    SourceLocation where(int64_t column = 0) const { return {m_file, m_line, column, m_byte}; }
    void report(const store::DiagnosticKind& kind, int64_t column, const std::string& message)
    {
        m_ctx.diagnostics.report(kind, where(column), message);
    }
    std::optional<int64_t> timestamp(std::string_view v, int64_t nodeId, int64_t column);
    Expected<int64_t> deviceFor(int64_t nodeId, std::string_view device, Record& r);

    ImportContext& m_ctx;
    TimeZoneResolver m_tz;
    CsvSplitter m_csv; // its separator found in the header
    std::vector<Field> m_columns;
    std::vector<std::string> m_names;
    std::vector<size_t> m_labelColumns; // sorted by name
    std::vector<std::string_view> m_fields;
    simdjson::dom::parser m_json;
    std::deque<std::string> m_jsonText; // numbers and booleans as written; a deque keeps views valid
    Record m_record;
    std::string m_lastNode;
    int64_t m_lastNodeId = -1;
    std::map<std::pair<int64_t, std::string>, int64_t, std::less<>> m_devices;
    std::unordered_map<std::string, SeriesState> m_series;
    std::string m_key;
    std::set<std::string, std::less<>> m_unmapped, m_otherKinds;
    std::set<int64_t> m_nodes, m_zoneNodes;
    std::set<std::string> m_timeForms;
    std::optional<int64_t> m_prevTs;
    std::optional<Error> m_fatal;
    bool m_nestedNoted = false;
    std::string m_file;           // the input as diagnostics name it
    int64_t m_line = 0;           // the line being read, for diagnostics
    int64_t m_byte = -1;          // and the offset of its first byte
    SeriesState* m_resolved = {}; // the series of the last record(), if it got one
    struct Key                    // a series key of the block reader
    {
        std::string unit;
        store::SeriesSink* sink = nullptr; // once a row of it was read in its series' unit, and the factor
        double factor = 1.0;
    };
    std::vector<Key> m_keys;
};

Status GenericParser::csvHeader(std::string_view line)
{
    m_csv = CsvSplitter(separatorOf(line));
    m_csv.split(line, m_fields);
    std::set<Field> seen;
    for (std::string_view f : m_fields) {
        m_names.push_back(asciiLower(trim(f)));
        m_columns.push_back(fieldOf(m_names.back()));
        if (m_columns.back() == Field::Label) m_labelColumns.push_back(m_columns.size() - 1);
        seen.insert(m_columns.back());
    }
    std::sort(m_labelColumns.begin(), m_labelColumns.end(),
              [&](size_t a, size_t b) { return m_names[a] < m_names[b]; });
    for (auto [field, name] : {std::pair{Field::Ts, "ts"}, {Field::Metric, "metric"}, {Field::Value, "value"}})
        if (!seen.count(field))
            return makeError(ErrorCode::Format,
                             fmt::format("the header has no \"{}\" column (generic metrics need ts, metric and value; "
                                         "node, device, unit optional)",
                                         name),
                             m_ctx.lines.location(1));
    if (!m_labelColumns.empty()) {
        std::string names;
        for (size_t c : m_labelColumns)
            names += (names.empty() ? "" : ", ") + clip(m_names[c]);
        m_ctx.notes.push_back(fmt::format("columns stored as series labels: {}", names));
    }
    return okStatus();
}

Status GenericParser::csvRow(std::string_view line)
{
    const bool closed = m_csv.split(line, m_fields);
    if (m_fields.size() != m_columns.size()) {
        report(diag::kWrongFieldCount, 0,
               fmt::format("{} fields where the header has {}{}; row dropped", m_fields.size(), m_columns.size(),
                           closed ? "" : " (a quote opened in the row is not closed)"));
        return okStatus();
    }
    Record& r = m_record;
    r = Record{};
    for (size_t i = 0; i < m_fields.size(); ++i) {
        const Field f = m_columns[i];
        if (f == Field::Ts) r.tsColumn = static_cast<int64_t>(i + 1);
        if (f == Field::Value) r.valueColumn = static_cast<int64_t>(i + 1);
        if (f != Field::Label) r.field(f) = trim(m_fields[i]);
    }
    for (size_t c : m_labelColumns)
        if (!trim(m_fields[c]).empty()) r.labels.emplace_back(m_names[c], std::string(trim(m_fields[c])));
    return record(r);
}

Status GenericParser::jsonRow(std::string_view line)
{
    simdjson::dom::object obj;
    if (auto err = m_json.parse(line.data(), line.size()).get_object().get(obj)) {
        report(diag::kInvalidLine, 0,
               fmt::format("not a JSON object ({}): \"{}\"; dropped", simdjson::error_message(err), clip(line)));
        return okStatus();
    }
    Record& r = m_record;
    r = Record{};
    m_jsonText.clear();
    auto text = [&](simdjson::dom::element e) -> std::string_view {
        std::string_view s;
        if (!e.get_string().get(s)) return s;
        m_jsonText.push_back(simdjson::minify(e)); // numbers and booleans as written
        return m_jsonText.back();
    };
    auto label = [&](std::string_view key, simdjson::dom::element e) {
        if (e.is_null()) return;
        if (e.is_object() || e.is_array()) {
            if (!m_nestedNoted) m_ctx.notes.push_back(fmt::format("nested JSON values (\"{}\") ignored", clip(key)));
            m_nestedNoted = true;
            return;
        }
        r.labels.emplace_back(std::string(key), std::string(text(e)));
    };
    for (auto [key, value] : obj) {
        const Field f = fieldOf(key);
        if (f == Field::Value) {
            r.valueIsNull = value.is_null();
            if (value.is_bool())
                r.value = value.get_bool().value_unsafe() ? "1" : "0";
            else if (!r.valueIsNull)
                r.value = text(value);
        } else if (f == Field::Ts) {
            r.ts = text(value);
        } else if (simdjson::dom::object inner;
                   f == Field::Label && key == "labels" && !value.get_object().get(inner)) {
            for (auto [k, v] : inner)
                label(k, v);
        } else if (f == Field::Label) {
            label(key, value);
        } else if (value.is_string()) {
            r.field(f) = value.get_string().value_unsafe();
        } else if (!value.is_null()) {
            report(diag::kInvalidLine, 0, fmt::format("\"{}\" is not a string; record dropped", clip(key)));
            return okStatus();
        }
    }
    for (auto [name, present] : {std::pair{"ts", !r.ts.empty()}, {"metric", !r.metric.empty()}})
        if (!present) {
            report(diag::kInvalidLine, 0, fmt::format("record without \"{}\"; dropped", name));
            return okStatus();
        }
    std::sort(r.labels.begin(), r.labels.end());
    return record(r);
}

std::optional<int64_t> GenericParser::timestamp(std::string_view v, int64_t nodeId, int64_t column)
{
    auto form = [&](const char* what) {
        if (m_timeForms.insert(what).second) m_ctx.notes.emplace_back(what);
    };
    if (!v.empty() && v.find_first_not_of("0123456789.") == std::string_view::npos) {
        if (auto ns = epochNs(v)) {
            form("times as Unix epoch numbers (unit from their magnitude)");
            return ns;
        }
    } else if (v.size() >= 19) {
        std::string_view body = v;
        std::optional<int64_t> offset;
        if (body.back() == 'Z' || body.back() == 'z') {
            body.remove_suffix(1);
            offset = 0;
        } else if (const size_t sign = body.find_last_of("+-"); sign != std::string_view::npos && sign >= 19) {
            offset = offsetSeconds(body.substr(sign));
            if (!offset) body = {};
            body = body.substr(0, sign);
        }
        if (auto t = parseLocalDateTime(body)) {
            if (offset) {
                form("ISO 8601 times with Z or a UTC offset");
                return t->localNs - *offset * 1'000'000'000;
            }
            if (m_timeForms.insert("local").second)
                m_ctx.notes.push_back(fmt::format("naive local times read in time zone {}", m_tz.description()));
            if (m_zoneNodes.insert(nodeId).second)
                if (Status s = m_ctx.writer.setNodeTimeZone(nodeId, m_tz.id()); !s) m_fatal = s.error();
            return m_tz.toUtcNs(*t, m_prevTs);
        }
    }
    report(diag::kBadTimestamp, column, fmt::format("cannot read time \"{}\"; row dropped", clip(v)));
    return std::nullopt;
}

Expected<int64_t> GenericParser::deviceFor(int64_t nodeId, std::string_view device, Record& r)
{
    auto it = m_devices.find(std::pair{nodeId, std::string(device)});
    if (it != m_devices.end()) return it->second;
    const size_t colon = device.find(':');
    std::string kind = asciiLower(device.substr(0, colon));
    std::string_view name = colon == std::string_view::npos ? std::string_view() : device.substr(colon + 1);
    if (kind.empty()) kind = "host";
    if (kind != "gpu" && kind != "nic" && kind != "ib" && kind != "disk" && kind != "cpu" && kind != "host") {
        if (m_otherKinds.insert(kind).second)
            m_ctx.notes.push_back(
                fmt::format("devices of kind \"{}\" stored on the host with a label device=...", clip(kind)));
        auto id = deviceFor(nodeId, "host", r);
        if (id) r.labels.emplace_back("device", std::string(device)); // not cached: the label must be added each row
        if (id) std::sort(r.labels.begin(), r.labels.end());
        return id;
    }
    auto id = flaggedDevice(m_ctx.writer, nodeId, kind, name);
    if (!id) return id;
    m_devices.emplace(std::pair{nodeId, std::string(device)}, *id);
    return id;
}

Status GenericParser::record(Record& r)
{
    m_resolved = nullptr;
    ++m_ctx.rowsRead;
    if (r.metric.empty()) {
        report(diag::kInvalidLine, 0, "row without a metric name; dropped");
        return okStatus();
    }
    size_t labelBytes = 0;
    for (const auto& [k, v] : r.labels)
        labelBytes += k.size() + v.size() + 2;
    if (std::max({r.metric.size(), r.node.size(), r.device.size(), r.unit.size()}) > kMaxName ||
        labelBytes > 4 * kMaxName) {
        report(diag::kInvalidLine, 0,
               fmt::format("a metric, node, device, unit or label longer than {} bytes (metric \"{}\"); row "
                           "dropped",
                           kMaxName, clip(r.metric)));
        return okStatus();
    }
    if (m_lastNodeId < 0 || r.node != m_lastNode) {
        RUNLENS_ASSIGN_OR_RETURN(auto node, m_ctx.nodeFor(r.node));
        m_lastNodeId = node;
        m_lastNode = std::string(r.node);
        m_nodes.insert(node);
    }
    auto ts = timestamp(trim(r.ts), m_lastNodeId, r.tsColumn);
    if (m_fatal) return *m_fatal;
    if (!ts) return okStatus();
    RUNLENS_ASSIGN_OR_RETURN(auto deviceId, deviceFor(m_lastNodeId, r.device, r));

    std::string labels;
    for (const auto& [k, v] : r.labels)
        labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", k, v);
    m_key = fmt::format("{}\x1f{}\x1f{}", deviceId, r.metric, labels);
    auto it = m_series.find(m_key);
    if (it == m_series.end()) {
        SeriesState s;
        const auto canonical = canonicalUnit(r.metric);
        s.unit = canonical ? std::string(*canonical) : std::string(r.unit);
        if (!canonical && m_unmapped.insert(std::string(r.metric)).second)
            report(diag::kUnmappedMetric, 0,
                   fmt::format("metric \"{}\" has no canonical name; kept as it is", clip(r.metric)));
        RUNLENS_ASSIGN_OR_RETURN(auto sink, m_ctx.writer.series(deviceId, r.metric, s.unit, r.metric, labels));
        s.sink = sink;
        it = m_series.emplace(m_key, std::move(s)).first;
    }
    SeriesState& s = it->second;
    m_resolved = &s;
    if (auto last = s.sink->lastTs(); last && *ts <= *last) {
        if (*ts == *last)
            report(diag::kDuplicateSample, r.tsColumn,
                   fmt::format("a second value of {} at the same time; the first is kept", clip(r.metric)));
        else
            report(diag::kBackwardsTime, r.tsColumn,
                   fmt::format("time \"{}\" is earlier than the previous value of {}; row dropped", clip(r.ts),
                               clip(r.metric)));
        return okStatus();
    }
    m_prevTs = ts;
    const std::string_view v = trim(r.value);
    auto n = r.valueIsNull ? std::nullopt : parseNumber(v);
    if (!n) {
        if (!r.valueIsNull && !isMissingToken(v) && v != "null")
            report(diag::kBadNumber, r.valueColumn,
                   fmt::format("expected a number for {}, got \"{}\"; stored as missing", clip(r.metric), clip(v)));
        s.sink->appendMissing(*ts, r.valueIsNull ? std::string_view("null") : v);
        return m_ctx.writer.flushIfNeeded(*s.sink);
    }
    if (!std::isfinite(*n)) {
        report(diag::kNanValue, r.valueColumn, fmt::format("\"{}\" for {} stored as missing", clip(v), clip(r.metric)));
        s.sink->appendMissing(*ts, v);
        return m_ctx.writer.flushIfNeeded(*s.sink);
    }
    if (!s.unitChecked || r.unit != s.lastUnit) {
        const auto f = r.unit.empty() ? std::optional<double>(1.0) : convert(r.unit, s.unit);
        if (!f) {
            report(diag::kUnknownUnit, 0,
                   fmt::format("unit \"{}\" of {} cannot be converted to \"{}\"; stored as missing", clip(r.unit),
                               clip(r.metric), s.unit));
            s.sink->appendMissing(*ts, v);
            return m_ctx.writer.flushIfNeeded(*s.sink);
        }
        s.factor = *f;
        s.lastUnit = std::string(r.unit);
        s.unitChecked = true;
    }
    s.sink->append(*ts, *n * s.factor);
    return m_ctx.writer.flushIfNeeded(*s.sink);
}

Status GenericParser::run()
{
    Line line;
    enum class Mode
    {
        Unknown,
        Csv,
        Json
    } mode = Mode::Unknown;
    int64_t sinceCheckpoint = 0;
    m_file = m_ctx.lines.input().displayName();
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(const bool more, m_ctx.nextLine(line));
        if (!more) break;
        const std::string_view text = trim(line.text);
        if (text.empty() || text[0] == '#') continue;
        m_line = line.number;
        m_byte = line.byteOffset;
        Status s = okStatus();
        if (mode == Mode::Unknown) {
            mode = text[0] == '{' ? Mode::Json : Mode::Csv;
            s = mode == Mode::Json ? jsonRow(text) : csvHeader(text);
        } else {
            s = jsonRow(text);
        }
        if (!s) return s;
        RUNLENS_TRY(m_ctx.checkpointEvery(sinceCheckpoint, kCheckpointRows));
        if (mode == Mode::Csv) { // the rows after the header: read and parsed in blocks on another thread
            RUNLENS_TRY(csvBlocks(sinceCheckpoint));
            break;
        }
    }
    if (mode == Mode::Unknown)
        return makeError(ErrorCode::Format, "empty file: no header or JSON record", m_ctx.lines.location());
    if (m_nodes.size() > 1) m_ctx.notes.push_back(fmt::format("{} nodes named in the file", m_nodes.size()));
    return okStatus();
}

CsvLayout GenericParser::layout() const
{
    CsvLayout l;
    l.separator = m_csv.separator();
    l.columns = m_columns.size();
    for (size_t i = 0; i < m_columns.size(); ++i) { // a column named twice: the last one counts, as in csvRow()
        const Field f = m_columns[i];
        if (f == Field::Ts) l.ts = i;
        if (f == Field::Value) l.value = i;
        if (f == Field::Metric) l.metric = i;
        if (f == Field::Unit) l.unit = i;
        if (f != Field::Ts && f != Field::Value) l.keyColumns.push_back(i);
    }
    return l;
}

Status GenericParser::checkpoint(uint64_t rawBytes) const
{
    const Progress* p = m_ctx.progress;
    if (!p) return okStatus();
    if (p->cancel && p->cancel->load(std::memory_order_relaxed))
        return makeError(ErrorCode::Cancelled, "import cancelled", where());
    if (p->report) p->report(rawBytes, m_ctx.lines.input().rawSize());
    return okStatus();
}

// The rows of one block in file order: a row the block reader parsed whose key has its series, later than the
// series' last time, is appended here; every other row takes csvRow(). A key gets its series once a row of it
// was read while the series' last unit was the key's: the factor from one unit to the series' unit depends on
// nothing else, so the rows after need neither the name lookups nor the unit check to be stored the same.
Status GenericParser::blockRow(const CsvBlock& block, const BlockRow& row)
{
    if (row.key != BlockRow::kGeneral) {
        if (const Key& key = m_keys[row.key]; key.sink) {
            const auto last = key.sink->lastTs();
            if (!last || row.tsNs > *last) {
                ++m_ctx.rowsRead;
                m_prevTs = row.tsNs;
                key.sink->append(row.tsNs, row.value * key.factor);
                return m_ctx.writer.flushIfNeeded(*key.sink);
            }
        }
    }
    RUNLENS_TRY(csvRow(std::string_view(block.text).substr(row.offset, row.size)));
    if (row.key == BlockRow::kGeneral || !m_resolved) return okStatus();
    if (Key& key = m_keys[row.key]; m_resolved->unitChecked && m_resolved->lastUnit == key.unit) {
        key.sink = m_resolved->sink;
        key.factor = m_resolved->factor;
    }
    return okStatus();
}

Status GenericParser::csvBlocks(int64_t& sinceCheckpoint)
{
    CsvBlockReader reader(m_ctx.lines, layout(), g_blockBytes.load());
    for (;;) {
        const std::unique_ptr<CsvBlock> block = reader.next();
        if (!block) return okStatus();
        for (std::string& unit : block->newUnits)
            m_keys.push_back({std::move(unit), nullptr, 1.0});
        for (const BlockRow& row : block->rows) {
            m_line = row.line;
            m_byte = row.byte;
            if (row.tooLong) {
                report(diag::kLineTooLong, 0, fmt::format("line of more than {} bytes dropped", row.size));
                continue;
            }
            m_resolved = nullptr;
            RUNLENS_TRY(blockRow(*block, row));
            if (++sinceCheckpoint % kCheckpointRows == 0) RUNLENS_TRY(checkpoint(block->rawBytes));
        }
        if (block->error) return *block->error;
        if (block->last) return okStatus();
    }
}

// The first line that is not blank or a comment.
std::string_view firstLine(std::string_view head, bool* complete)
{
    while (!head.empty()) {
        const size_t nl = head.find('\n');
        const std::string_view line = trim(head.substr(0, nl));
        *complete = nl != std::string_view::npos;
        if (!line.empty() && line[0] != '#') return line;
        if (nl == std::string_view::npos) break;
        head.remove_prefix(nl + 1);
    }
    return {};
}

} // namespace

int GenericMetricsImporter::sniff(const SniffInput& input) const
{
    bool complete = false;
    const std::string_view line = firstLine(input.head, &complete);
    if (line.empty()) return 0;
    std::set<Field> fields;
    if (line[0] == '{') {
        simdjson::dom::parser parser;
        simdjson::dom::object obj;
        if (!complete || parser.parse(line.data(), line.size()).get_object().get(obj)) {
            for (std::string_view k : {"\"ts\"", "\"metric\"", "\"value\""}) // a cut line: the keys as text
                if (line.find(k) == std::string_view::npos) return 0;
            return 60;
        }
        for (auto [key, value] : obj)
            fields.insert(fieldOf(key));
    } else {
        std::vector<std::string_view> cells;
        CsvSplitter csv(separatorOf(line)); // outlives the views into it
        csv.split(line, cells);
        for (std::string_view c : cells)
            fields.insert(fieldOf(asciiLower(trim(c))));
    }
    if (!fields.count(Field::Ts) || !fields.count(Field::Metric) || !fields.count(Field::Value)) return 0;
    return fields.count(Field::Node) || fields.count(Field::Device) ? 95 : 85;
}

std::optional<std::string> GenericMetricsImporter::hostLabel(const SniffInput& input) const
{
    std::string_view head = input.head;
    bool complete = false;
    const std::string_view first = firstLine(head, &complete);
    if (first.empty() || !complete) return std::nullopt;
    if (first[0] == '{') {
        simdjson::dom::parser parser;
        std::string_view node;
        if (parser.parse(first.data(), first.size())["node"].get_string().get(node) || node.empty())
            return std::nullopt;
        return std::string(node);
    }
    std::vector<std::string_view> cells;
    CsvSplitter csv(separatorOf(first));
    csv.split(first, cells);
    size_t nodeColumn = cells.size();
    for (size_t i = 0; i < cells.size(); ++i)
        if (asciiLower(trim(cells[i])) == "node") nodeColumn = i;
    if (nodeColumn == cells.size()) return std::nullopt;
    head.remove_prefix(static_cast<size_t>(first.data() + first.size() - head.data()));
    const std::string_view row = firstLine(head, &complete);
    if (row.empty() || !complete) return std::nullopt;
    csv.split(row, cells);
    if (cells.size() <= nodeColumn || trim(cells[nodeColumn]).empty()) return std::nullopt;
    return std::string(trim(cells[nodeColumn]));
}

size_t GenericMetricsImporter::setCsvBlockBytes(size_t bytes)
{
    return g_blockBytes.exchange(bytes);
}

Status GenericMetricsImporter::run(ImportContext& context) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(context.options.timeZone));
    GenericParser parser(context, std::move(tz));
    return parser.run();
}

} // namespace runlens::importers
