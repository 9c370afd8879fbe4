#include "importers/prometheus/prom_json_importer.h"

#include "importers/common/text_fields.h"
#include "importers/diagnostic_kinds.h"
#include "importers/prometheus/prom_series.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <simdjson.h>

namespace runlens::importers {
namespace {

namespace sj = simdjson;
namespace od = simdjson::ondemand;

constexpr int kCheckpointSamples = 16384;
constexpr size_t kMaxJsonBytes = 0xFFFFFFFFu - 2 * SIMDJSON_PADDING; // simdjson's document size limit
constexpr size_t kMaxApiNotes = 20;                                 // warnings/infos kept as notes per file
constexpr std::string_view kUnnamedFamily = "query";                 // series without __name__ → prom.query

constexpr store::DiagnosticKind kUnquotedValue{
    "unquoted_value", false, "a sample value written as a JSON number, not a quoted string as the API writes it"};

// Unix seconds as written ("1795941722.812") → ns, exact up to 9 decimals; other spellings (exponent form)
// through a double rounded to the microsecond.
std::optional<int64_t> secondsToNs(std::string_view t)
{
    t = trim(t);
    constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1'000'000'000 - 1;
    int64_t secs = 0, frac = 0;
    size_t i = 0;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9' && secs <= kMaxSeconds; ++i)
        secs = secs * 10 + (t[i] - '0');
    bool simple = i > 0 && secs <= kMaxSeconds;
    if (simple && i < t.size() && t[i] == '.') {
        int digits = 0;
        for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i, ++digits) {
            if (digits < 9) frac = frac * 10 + (t[i] - '0');
            if (digits == 9 && t[i] >= '5') ++frac; // rounded at the nanosecond
        }
        for (; digits < 9; ++digits)
            frac *= 10;
        simple = digits > 0;
    } else {
        frac *= 1'000'000'000;
    }
    if (simple && i == t.size()) return secs * 1'000'000'000 + frac;
    auto v = parseNumber(t);
    if (!v || !std::isfinite(*v) || std::fabs(*v) > static_cast<double>(kMaxSeconds)) return std::nullopt;
    return std::llround(*v * 1e6) * 1000;
}

std::string describe(sj::error_code e)
{
    switch (e) {
    case sj::INCOMPLETE_ARRAY_OR_OBJECT:
        return "the JSON ends inside an object or array (file truncated?)";
    case sj::UNCLOSED_STRING:
        return "a JSON string is never closed (file truncated?)";
    case sj::TAPE_ERROR:
        return "invalid JSON here (a missing or extra comma, bracket, brace, colon or quote)";
    case sj::UTF8_ERROR:
        return "the JSON is not valid UTF-8";
    default:
        return fmt::format("invalid JSON: {}", sj::error_message(e));
    }
}

std::string clip(std::string_view v)
{
    return v.size() <= 60 ? std::string(v) : fmt::format("{}... ({} bytes)", v.substr(0, 60), v.size());
}

// file:line:column of a byte of the decoded text; lines counted incrementally (diagnostics come in order).
class Locator
{
public:
    void reset(std::string_view text, std::string file)
    {
        m_text = text;
        m_file = std::move(file);
        m_pos = m_lineStart = text.data();
        m_line = 1;
    }
    SourceLocation at(const char* p)
    {
        if (p < m_text.data() || p > m_text.data() + m_text.size()) return {m_file};
        if (p < m_pos) reset(m_text, m_file);
        while (const void* nl = std::memchr(m_pos, '\n', static_cast<size_t>(p - m_pos))) {
            m_pos = m_lineStart = static_cast<const char*>(nl) + 1;
            ++m_line;
        }
        m_pos = p;
        return {m_file, m_line, p - m_lineStart + 1, m_lineStart - m_text.data()};
    }

private:
    std::string_view m_text;
    std::string m_file;
    const char* m_pos = nullptr;
    const char* m_lineStart = nullptr;
    int64_t m_line = 1;
};

// One JSON document per line (each line a whole object), rather than one document over many lines.
bool isJsonLines(std::string_view text)
{
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return false;
    const std::string_view first = trim(text.substr(0, nl)), rest = trim(text.substr(nl + 1));
    return first.size() >= 2 && first.front() == '{' && first.back() == '}' && !rest.empty() && rest.front() == '{';
}

class Parser
{
public:
    explicit Parser(ImportContext& ctx) : m_ctx(ctx), m_router(ctx)
    {
        if (auto it = ctx.options.extra.find("name"); it != ctx.options.extra.end()) m_name = it->second;
    }
    Status run();

private:
    Status readAll();
    Status document(std::string_view text);
    Status response(od::object obj, const char* start);
    Status data(od::value v);
    Status series(od::object obj);
    Status labels(od::value v);
    void prepare();
    Status samples(od::value v, std::string_view field);
    Status sample(od::value v);
    Status jsonError(sj::error_code e, const char* at);
    void report(const store::DiagnosticKind& kind, const char* at, std::string message)
    {
        m_ctx.diagnostics.report(kind, m_where.at(at), std::move(message));
    }
    // The type of a value; a JSON error is kept in m_jsonError (checked by the caller through `ok`).
    od::json_type typeOf(od::value& v, sj::error_code& e)
    {
        od::json_type t{};
        e = v.type().get(t);
        return t;
    }

    ImportContext& m_ctx;
    PromSeriesRouter m_router;
    od::parser m_parser;
    od::document* m_doc = nullptr;
    std::string m_buf; // the decoded file, with simdjson's padding in its capacity
    std::string_view m_text;
    Locator m_where;
    std::string m_name; // option name=: the family of series without __name__

    // The series being read: its family, labels (views into the document) and router key.
    std::string_view m_family;
    std::vector<PromLabel> m_labels;
    std::string m_key;
    bool m_badLabels = false;
    const std::function<PromSeriesId()> m_parse = [this] { return PromSeriesId{m_family, m_labels}; };

    int64_t m_series = 0, m_unnamed = 0, m_untilCheckpoint = kCheckpointSamples;
    size_t m_apiNotes = 0;
};

Status Parser::readAll()
{
    InputStream& in = m_ctx.lines.input();
    if (in.compression() == Compression::None && in.rawSize() > 0 && in.rawSize() < kMaxJsonBytes)
        m_buf.reserve(in.rawSize() + SIMDJSON_PADDING);
    for (;;) {
        auto block = in.nextBlock();
        if (!block) return block.error();
        if (block->empty()) break;
        if (m_buf.size() + block->size() > kMaxJsonBytes)
            return makeError(ErrorCode::Unsupported, "JSON larger than 4 GiB (decoded): too large to parse",
                             {in.displayName()});
        m_buf.append(*block);
    }
    const size_t size = m_buf.size();
    m_buf.append(SIMDJSON_PADDING, ' '); // initialised padding, kept in the capacity
    m_buf.resize(size);
    return okStatus();
}

Status Parser::run()
{
    if (Status s = readAll(); !s) return s;
    m_text = m_buf;
    m_where.reset(m_text, m_ctx.lines.input().displayName());
    if (m_text.substr(0, 3) == "\xEF\xBB\xBF") m_text.remove_prefix(3);
    if (trim(m_text).empty()) return makeError(ErrorCode::Format, "empty file: no JSON", m_where.at(m_text.data()));
    if (isJsonLines(m_text)) {
        for (std::string_view rest = m_text; !rest.empty();) {
            const size_t nl = std::min(rest.find('\n'), rest.size());
            if (const std::string_view line = trim(rest.substr(0, nl)); !line.empty())
                if (Status s = document(line); !s) return s;
            rest.remove_prefix(std::min(nl + 1, rest.size()));
        }
    } else if (Status s = document(m_text); !s) {
        return s;
    }
    if (Status s = m_router.finish(); !s) return s;
    m_ctx.notes.push_back(fmt::format("{} series", m_series));
    if (m_unnamed > 0)
        m_ctx.notes.push_back(
            m_name.empty()
                ? fmt::format("{} series without __name__ (an expression result) kept as prom.{} with their labels; "
                              "name them with --option name=FAMILY",
                              m_unnamed, kUnnamedFamily)
                : fmt::format("{} series without __name__ read as family {} (option name)", m_unnamed, m_name));
    return okStatus();
}

Status Parser::jsonError(sj::error_code e, const char* at)
{
    const char* p = at;
    if (e == sj::INCOMPLETE_ARRAY_OR_OBJECT || e == sj::UNCLOSED_STRING) {
        p = m_text.data() + trim(m_text).size() + (trim(m_text).data() - m_text.data());
        if (p > m_text.data()) --p; // the last byte: where the cut is
    } else if (const char* cur = nullptr; m_doc && !m_doc->current_location().get(cur)) {
        p = cur;
    }
    return makeError(ErrorCode::Format, describe(e), m_where.at(p));
}

Status Parser::document(std::string_view text)
{
    const std::string_view saved = m_text;
    m_text = text;
    od::document doc;
    const size_t capacity = static_cast<size_t>(m_buf.data() + m_buf.capacity() - text.data());
    sj::error_code e = m_parser.iterate(sj::padded_string_view(text.data(), text.size(), capacity)).get(doc);
    if (e) return jsonError(e, text.data());
    m_doc = &doc;
    struct Reset
    {
        Parser* p;
        std::string_view text;
        ~Reset() { p->m_doc = nullptr, p->m_text = text; }
    } reset{this, saved};

    od::json_type type{};
    if ((e = doc.type().get(type))) return jsonError(e, text.data());
    if (type == od::json_type::object) {
        od::object obj;
        if ((e = doc.get_object().get(obj))) return jsonError(e, text.data());
        if (Status s = response(obj, text.data()); !s) return s;
    } else if (type == od::json_type::array) {
        od::array list;
        if ((e = doc.get_array().get(list))) return jsonError(e, text.data());
        for (auto item : list) {
            od::value v;
            od::object obj;
            if ((e = item.get(v))) return jsonError(e, nullptr);
            const char* at = v.raw_json_token().data();
            if (typeOf(v, e) != od::json_type::object || e)
                return e ? jsonError(e, at)
                         : makeError(ErrorCode::Format, "an array element is not a Prometheus API response object",
                                     m_where.at(at));
            if ((e = v.get_object().get(obj))) return jsonError(e, at);
            if (Status s = response(obj, at); !s) return s;
        }
    } else {
        return makeError(ErrorCode::Format, "expected a JSON object (a Prometheus HTTP API response)",
                         m_where.at(text.data()));
    }
    if (const char* rest = nullptr; !doc.current_location().get(rest))
        return makeError(ErrorCode::Format, "unexpected content after the end of the JSON document", m_where.at(rest));
    return okStatus();
}

Status Parser::response(od::object obj, const char* start)
{
    std::string_view status, errorType, error;
    bool sawData = false;
    sj::error_code e{};
    for (auto field : obj) {
        std::string_view key;
        od::value v;
        if ((e = field.unescaped_key().get(key)) || (e = field.value().get(v))) return jsonError(e, nullptr);
        const char* at = v.raw_json_token().data();
        const od::json_type type = typeOf(v, e);
        if (e) return jsonError(e, at);
        if (key == "data") {
            sawData = true;
            if (status == "error") continue;
            if (Status s = data(v); !s) return s;
        } else if (key == "warnings" || key == "infos") {
            if (type != od::json_type::array) continue;
            for (auto item : v.get_array()) {
                std::string_view text;
                if ((e = item.get_string().get(text))) return jsonError(e, at);
                if (m_apiNotes++ < kMaxApiNotes)
                    m_ctx.notes.push_back(fmt::format("Prometheus {}: {}", key.substr(0, key.size() - 1), text));
            }
        } else if (type == od::json_type::string && (key == "status" || key == "errorType" || key == "error")) {
            std::string_view text;
            if ((e = v.get_string().get(text))) return jsonError(e, at);
            (key == "status" ? status : key == "error" ? error : errorType) = text;
        }
    }
    if (status == "error")
        return makeError(ErrorCode::Format,
                         fmt::format("the Prometheus API returned an error ({}): {}",
                                     errorType.empty() ? "no errorType" : errorType, error),
                         m_where.at(start));
    if (!sawData)
        return makeError(ErrorCode::Format, "no \"data\": not a Prometheus HTTP API response", m_where.at(start));
    if (m_apiNotes > kMaxApiNotes)
        m_ctx.notes.push_back(fmt::format("{} more warnings/infos not shown", m_apiNotes - kMaxApiNotes));
    return okStatus();
}

Status Parser::data(od::value v)
{
    const char* at = v.raw_json_token().data();
    sj::error_code e{};
    if (typeOf(v, e) != od::json_type::object || e)
        return e ? jsonError(e, at)
                 : makeError(ErrorCode::Format,
                             "\"data\" is not a query result (resultType, result): not a query or query_range "
                             "response",
                             m_where.at(at));
    std::string_view resultType;
    for (auto field : v.get_object()) {
        std::string_view key;
        od::value r;
        if ((e = field.unescaped_key().get(key)) || (e = field.value().get(r))) return jsonError(e, nullptr);
        at = r.raw_json_token().data();
        const od::json_type type = typeOf(r, e);
        if (e) return jsonError(e, at);
        if (key == "resultType" && type == od::json_type::string) {
            if ((e = r.get_string().get(resultType))) return jsonError(e, at);
            if (resultType != "matrix" && resultType != "vector" && resultType != "scalar" && resultType != "string")
                return makeError(ErrorCode::Unsupported,
                                 fmt::format("resultType \"{}\" is not a Prometheus result (matrix, vector, "
                                             "scalar, string)",
                                             clip(resultType)),
                                 m_where.at(at));
        } else if (key == "result" && resultType == "string") {
            report(diag::kSkippedFamily, at, "a string result is not a time series; not imported");
        } else if (key == "result" && resultType == "scalar") {
            m_labels.clear();
            m_badLabels = false;
            prepare();
            ++m_ctx.rowsRead;
            if (Status s = sample(r); !s) return s;
        } else if (key == "result") {
            if (type != od::json_type::array) {
                report(diag::kInvalidLine, at, "\"result\" is not an array; nothing imported");
                continue;
            }
            for (auto item : r.get_array()) {
                od::value one;
                od::object obj;
                if ((e = item.get(one))) return jsonError(e, nullptr);
                at = one.raw_json_token().data();
                if (typeOf(one, e) != od::json_type::object || e) {
                    if (e) return jsonError(e, at);
                    report(diag::kInvalidLine, at, "a result element is not a series object; skipped");
                    continue;
                }
                if ((e = one.get_object().get(obj))) return jsonError(e, at);
                if (Status s = series(obj); !s) return s;
            }
        }
    }
    return okStatus();
}

Status Parser::series(od::object obj)
{
    ++m_series;
    m_labels.clear();
    m_badLabels = false;
    bool sawMetric = false, deferred = false;
    sj::error_code e{};
    // Samples are routed by their labels: sample arrays written before "metric" are read in a second pass.
    for (int pass = 0; pass < 2; ++pass) {
        for (auto field : obj) {
            std::string_view key;
            od::value v;
            if ((e = field.unescaped_key().get(key)) || (e = field.value().get(v))) return jsonError(e, nullptr);
            if (key == "metric") {
                if (pass == 1) break; // what follows was read in the first pass
                if (Status s = labels(v); !s) return s;
                sawMetric = true;
                prepare();
            } else if (key == "values" || key == "value" || key == "histograms" || key == "histogram") {
                if (pass == 0 && !sawMetric) {
                    deferred = true;
                } else if (Status s = samples(v, key); !s) {
                    return s;
                }
            }
        }
        if (!deferred) break;
        bool rewound = false;
        if ((e = obj.reset().get(rewound))) return jsonError(e, nullptr);
        if (!sawMetric) prepare();
    }
    return okStatus();
}

Status Parser::labels(od::value v)
{
    const char* at = v.raw_json_token().data();
    sj::error_code e{};
    if (typeOf(v, e) != od::json_type::object || e) {
        if (e) return jsonError(e, at);
        report(diag::kInvalidLine, at, "\"metric\" is not an object of labels; series skipped");
        m_badLabels = true;
        return okStatus();
    }
    for (auto field : v.get_object()) {
        std::string_view name, value;
        od::value l;
        if ((e = field.unescaped_key().get(name)) || (e = field.value().get(l))) return jsonError(e, nullptr);
        at = l.raw_json_token().data();
        if (typeOf(l, e) != od::json_type::string || e) {
            if (e) return jsonError(e, at);
            report(diag::kInvalidLine, at, fmt::format("label {} is not a string; series skipped", clip(name)));
            m_badLabels = true;
            continue;
        }
        if ((e = l.get_string().get(value))) return jsonError(e, at);
        m_labels.push_back({name, value});
    }
    return okStatus();
}

// The family and router key of the series whose labels are in m_labels.
void Parser::prepare()
{
    m_family = {};
    auto name = std::find_if(m_labels.begin(), m_labels.end(), [](const PromLabel& l) { return l.name == "__name__"; });
    if (name != m_labels.end()) {
        m_family = name->value;
        m_labels.erase(name);
    }
    if (m_family.empty()) {
        m_family = m_name.empty() ? kUnnamedFamily : std::string_view(m_name);
        ++m_unnamed;
    }
    std::sort(m_labels.begin(), m_labels.end(), [](const PromLabel& a, const PromLabel& b) { return a.name < b.name; });
    m_key.assign(m_family);
    m_key += '{';
    for (const PromLabel& l : m_labels)
        fmt::format_to(std::back_inserter(m_key), "{}{}=\"{}\"", m_key.back() == '{' ? "" : ",", l.name, l.value);
    m_key += '}';
}

Status Parser::samples(od::value v, std::string_view field)
{
    const char* at = v.raw_json_token().data();
    sj::error_code e{};
    const bool single = field.back() != 's';
    const od::json_type type = typeOf(v, e);
    if (e) return jsonError(e, at);
    if (m_badLabels) return okStatus();
    if (field.substr(0, 9) == "histogram") { // native histograms: not charted
        size_t n = 1;
        if (!single && type == od::json_type::array && (e = v.count_elements().get(n))) return jsonError(e, at);
        m_ctx.rowsRead += static_cast<int64_t>(n);
        report(diag::kSkippedFamily, at, fmt::format("{} native histogram sample(s) of {} not imported", n, m_key));
        return okStatus();
    }
    if (single) {
        ++m_ctx.rowsRead;
        return sample(v);
    }
    if (type != od::json_type::array) {
        report(diag::kInvalidLine, at, fmt::format("\"values\" of {} is not an array; series skipped", m_key));
        return okStatus();
    }
    for (auto item : v.get_array()) {
        od::value one;
        if ((e = item.get(one))) return jsonError(e, nullptr);
        ++m_ctx.rowsRead;
        if (Status s = sample(one); !s) return s;
        if (--m_untilCheckpoint == 0) {
            m_untilCheckpoint = kCheckpointSamples;
            if (Status s = m_ctx.checkpoint(); !s) return s;
        }
    }
    return okStatus();
}

// One [<unix seconds>, "<value>"] pair.
Status Parser::sample(od::value v)
{
    const char* at = v.raw_json_token().data();
    sj::error_code e{};
    if (typeOf(v, e) != od::json_type::array || e) {
        if (e) return jsonError(e, at);
        report(diag::kInvalidLine, at, fmt::format("a sample of {} is not a [time, \"value\"] pair; dropped", m_key));
        return okStatus();
    }
    int n = 0;
    std::string_view time, text;
    od::json_type timeType{}, valueType{};
    for (auto item : v.get_array()) {
        od::value part;
        if ((e = item.get(part))) return jsonError(e, at);
        if (n < 2) {
            od::json_type& t = n == 0 ? timeType : valueType;
            std::string_view& token = n == 0 ? time : text;
            t = typeOf(part, e);
            if (e) return jsonError(e, at);
            token = part.raw_json_token();
            if (n == 1 && t == od::json_type::string) {
                token = trim(token); // "..." as written; unescaped only when it has escapes (never for numbers)
                if (token.find('\\') == std::string_view::npos)
                    token = token.substr(1, token.size() - 2);
                else if ((e = part.get_string().get(token)))
                    return jsonError(e, at);
            }
        }
        ++n;
    }
    if (n != 2) {
        report(diag::kInvalidLine, at,
               fmt::format("a sample of {} has {} elements, not [time, \"value\"]; dropped", m_key, n));
        return okStatus();
    }
    const auto ns = timeType == od::json_type::number ? secondsToNs(time) : std::nullopt;
    if (!ns) {
        report(diag::kBadTimestamp, at, fmt::format("cannot read time {} of a sample of {}; dropped", clip(time), m_key));
        return okStatus();
    }
    double value = std::numeric_limits<double>::quiet_NaN();
    if (valueType == od::json_type::string) {
        if (auto number = parseNumber(text)) {
            value = *number;
        } else {
            report(diag::kBadNumber, at,
                   fmt::format("expected a number for {}, got \"{}\"; stored as missing", m_key, clip(text)));
        }
    } else if (valueType == od::json_type::number) {
        text = trim(text);
        auto number = parseNumber(text);
        if (!number) return jsonError(sj::NUMBER_ERROR, at);
        value = *number;
        report(kUnquotedValue, at, fmt::format("value {} of {} is not a quoted string; read anyway", clip(text), m_key));
    } else if (valueType == od::json_type::null) {
        text = "null";
        report(diag::kBadNumber, at, fmt::format("null value for {}; stored as missing", m_key));
    } else {
        report(diag::kBadNumber, at, fmt::format("the value of a sample of {} is not a string; dropped", m_key));
        return okStatus();
    }
    return m_router.add(m_key, m_parse, *ns, value, text);
}

} // namespace

int PromJsonImporter::sniff(const SniffInput& input) const
{
    std::string_view head = trim(input.head.substr(input.head.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0));
    if (head.empty() || (head.front() != '{' && head.front() != '[')) return 0;
    auto has = [&](std::string_view s) { return head.find(s) != std::string_view::npos; };
    const bool status = has("\"status\""), data = has("\"data\""), resultType = has("\"resultType\"");
    if (status && data && resultType) return 95;
    if (status && has("\"errorType\"")) return 90; // an error response: imported to fail with its text
    if (resultType && has("\"result\"")) return 80;
    if (data && has("\"result\"") && has("\"metric\"")) return 60;
    return 0;
}

// The host of the first series, read from the head as text, with the router's preference (hostname, then
// instance with its port dropped), so files of the same import without labels join this node.
std::optional<std::string> PromJsonImporter::hostLabel(const SniffInput& input) const
{
    const std::string_view head = input.head;
    for (std::string_view key : {"\"hostname\"", "\"Hostname\"", "\"instance\""}) {
        for (size_t pos = head.find(key); pos != std::string_view::npos; pos = head.find(key, pos + 1)) {
            size_t i = pos + key.size();
            while (i < head.size() && isSpace(head[i]))
                ++i;
            if (i >= head.size() || head[i] != ':') continue;
            for (++i; i < head.size() && isSpace(head[i]);)
                ++i;
            if (i >= head.size() || head[i] != '"') continue;
            const size_t end = head.find('"', i + 1);
            if (end == std::string_view::npos) break;
            if (std::string name = nodeNameFromLabel(head.substr(i + 1, end - i - 1)); !name.empty()) return name;
        }
    }
    return std::nullopt;
}

Status PromJsonImporter::run(ImportContext& context) const
{
    Parser parser(context);
    return parser.run();
}

} // namespace runlens::importers
