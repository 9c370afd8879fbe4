#include "importers/prometheus/prom_json_importer.h"

#include "importers/common/text_fields.h"
#include "importers/common/whole_input.h"
#include "importers/diagnostic_kinds.h"
#include "importers/prometheus/prom_series.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <iterator>
#include <limits>
#include <memory>
#include <simdjson.h>

namespace runlens::importers {
namespace {

namespace sj = simdjson;
namespace od = simdjson::ondemand;

constexpr int kCheckpointSamples = 16384;
constexpr size_t kMaxJsonBytes = 0xFFFFFFFFu - 2 * sj::SIMDJSON_PADDING; // simdjson's document size limit
constexpr size_t kMaxApiNotes = 20;                                      // warnings/infos kept as notes
constexpr std::string_view kUnnamedFamily = "query";                     // no __name__ → prom.query

// Unix seconds as written ("1795941722.812") → ns, exact to 9 decimals; other spellings (exponent form)
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
            if (digits == 9 && t[i] >= '5') ++frac; // rounded to the nanosecond
        }
        simple = digits > 0;
        for (; digits < 9; ++digits)
            frac *= 10;
    }
    if (simple && i == t.size()) return secs * 1'000'000'000 + frac;
    auto v = parseNumber(t);
    if (!v || !std::isfinite(*v) || std::fabs(*v) > static_cast<double>(kMaxSeconds)) return std::nullopt;
    return std::llround(*v * 1e6) * 1000;
}

// The usual spelling of a sample, [1795941722.812,"258048"], read straight from the text (end bounds it); false
// for anything else (escapes, other types, malformed), which then takes the general path.
bool quickPair(const char* p, const char* end, std::string_view& time, std::string_view& value)
{
    const char* t = ++p;
    while (p < end && *p != ',' && *p != ']' && *p != '"')
        ++p;
    if (p == end || *p != ',') return false;
    time = {t, static_cast<size_t>(p - t)};
    for (++p; p < end && isSpace(*p);)
        ++p;
    if (p == end || *p != '"') return false;
    const char* v = ++p;
    while (p < end && *p != '"' && *p != '\\')
        ++p;
    if (p == end || *p != '"') return false;
    value = {v, static_cast<size_t>(p - v)};
    for (++p; p < end && isSpace(*p);)
        ++p;
    return p < end && *p == ']';
}

// A JSON value, its type and its text (which gives its place in the file), not yet consumed.
struct Item
{
    od::value v;
    od::json_type type = od::json_type::null; // until inspect() reads it
    std::string_view token;
};

class Parser
{
public:
    explicit Parser(ImportContext& ctx) : m_ctx(ctx), m_router(ctx)
    {
        if (auto it = ctx.options.extra.find("name"); it != ctx.options.extra.end()) m_name = it->second;
    }
    Parser(const Parser&) = delete; // m_parse refers to this object
    Parser& operator=(const Parser&) = delete;
    Status run();

private:
    Status readAll();
    Status document(std::string_view text);
    Status response(Item& item);
    Status data(Item& item);
    Status series(Item& item);
    void prepare();
    Status samples(Item& item, std::string_view field);
    Status sample(Item& item);

    Status check(sj::error_code e, std::string_view at) { return e ? jsonError(e, at.data()) : okStatus(); }
    Status inspect(Item& i)
    {
        i.token = i.v.raw_json_token(); // a peek: nothing consumed
        return check(i.v.type().get(i.type), i.token);
    }
    Status text(Item& i, std::string_view& out) { return check(i.v.get_string().get(out), i.token); }
    // f(Item&) for each element of an array, f(key, Item&) for each field of an object; stops at the first error.
    template <typename F> Status eachElement(Item& array, F&& f)
    {
        od::array a;
        Status s = check(array.v.get_array().get(a), array.token);
        if (!s) return s;
        for (auto element : a) {
            Item item;
            s = check(element.get(item.v), {});
            if (s) s = inspect(item);
            if (s) s = f(item);
            if (!s) break;
        }
        return s;
    }
    template <typename F> Status eachField(od::object& object, F&& f)
    {
        Status s = okStatus();
        for (auto field : object) {
            std::string_view key;
            Item item;
            s = check(field.unescaped_key().get(key), {});
            if (s) s = check(field.value().get(item.v), {});
            if (s) s = inspect(item);
            if (s) s = f(key, item);
            if (!s) break;
        }
        return s;
    }
    template <typename F> Status eachField(Item& item, F&& f, od::object&& object = {}) // object: storage
    {
        Status s = check(item.v.get_object().get(object), item.token);
        return s ? eachField(object, f) : s;
    }
    Status fail(std::string_view at, std::string message, ErrorCode code = ErrorCode::Format)
    {
        return makeError(code, std::move(message), where(at.data()));
    }
    Status jsonError(sj::error_code e, const char* at);
    void report(const store::DiagnosticKind& kind, std::string_view at, const std::string& message)
    {
        m_ctx.diagnostics.report(kind, where(at.data()), message);
    }
    Status skip(const store::DiagnosticKind& kind, std::string_view at, const std::string& message) // reported, read on
    {
        report(kind, at, message);
        return okStatus();
    }
    SourceLocation where(const char* p);

    ImportContext& m_ctx;
    PromSeriesRouter m_router;
    od::parser m_parser;
    od::document* m_doc = nullptr;
    std::string m_buf;                 // the decoded file, with simdjson's padding in its capacity
    std::string_view m_text;           // the document being read
    std::string m_name;                // option name=: the family of series without __name__
    const char* m_linePos = nullptr;   // where(): lines counted up to here,
    const char* m_lineStart = nullptr; // the start of that line
    int64_t m_line = 1;                // and its number

    // The series being read: its family, labels (views into the document) and router key.
    std::string_view m_family;
    std::vector<PromLabel> m_labels;
    std::string m_key;
    bool m_badLabels = false;
    const std::function<PromSeriesId()> m_parse = [this] { return PromSeriesId{m_family, m_labels}; };

    int64_t m_series = 0, m_unnamed = 0, m_untilCheckpoint = kCheckpointSamples;
    size_t m_apiNotes = 0;
};

// file:line:column of a byte of the decoded file; lines are counted on from the last place asked for.
SourceLocation Parser::where(const char* p)
{
    const std::string& file = m_ctx.lines.input().displayName();
    if (!p || p < m_buf.data() || p > m_buf.data() + m_buf.size()) return {file};
    if (!m_linePos || p < m_linePos) {
        m_linePos = m_lineStart = m_buf.data();
        m_line = 1;
    }
    while (const void* nl = std::memchr(m_linePos, '\n', static_cast<size_t>(p - m_linePos))) {
        m_linePos = m_lineStart = static_cast<const char*>(nl) + 1;
        ++m_line;
    }
    m_linePos = p;
    return {file, m_line, p - m_lineStart + 1, m_lineStart - m_buf.data()};
}

Status Parser::readAll()
{
    RUNLENS_ASSIGN_OR_RETURN(auto maxBytes, maxDocumentBytes(m_ctx.options, kMaxJsonBytes));
    InputStream& in = m_ctx.lines.input();
    if (in.compression() == Compression::None && in.rawSize() > 0 && in.rawSize() < maxBytes.maxBytes)
        m_buf.reserve(in.rawSize() + sj::SIMDJSON_PADDING);
    RUNLENS_TRY(appendWholeInput(in, maxBytes, m_buf));
    const size_t size = m_buf.size();
    m_buf.append(sj::SIMDJSON_PADDING, ' '); // initialised padding, kept in the capacity
    m_buf.resize(size);
    return okStatus();
}

Status Parser::run()
{
    RUNLENS_TRY(readAll());
    std::string_view text = m_buf;
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    text = trim(text);
    if (text.empty()) return fail(text, "empty file: no JSON");
    // One document (a response or an array of them), or JSON lines: a first line that is a whole object.
    const std::string_view first = trim(text.substr(0, text.find('\n')));
    const bool lines = first.size() < text.size() && first.front() == '{' && first.back() == '}';
    for (std::string_view rest = text; !rest.empty();) {
        const size_t nl = lines ? std::min(rest.find('\n'), rest.size()) : rest.size();
        if (const std::string_view doc = trim(rest.substr(0, nl)); !doc.empty())
            if (Status s = document(doc); !s) return s;
        rest.remove_prefix(std::min(nl + 1, rest.size()));
    }
    RUNLENS_TRY(m_router.finish());
    m_ctx.notes.push_back(fmt::format("{} series", m_series));
    if (m_apiNotes > kMaxApiNotes)
        m_ctx.notes.push_back(fmt::format("{} more warnings/infos not shown", m_apiNotes - kMaxApiNotes));
    if (m_unnamed > 0)
        m_ctx.notes.push_back(fmt::format("{} series without __name__ (an expression result) read as family {}{}",
                                          m_unnamed, m_name.empty() ? kUnnamedFamily : m_name,
                                          m_name.empty() ? "; name them with --option name=FAMILY" : ""));
    return okStatus();
}

Status Parser::jsonError(sj::error_code e, const char* at)
{
    if (e == sj::SCALAR_DOCUMENT_AS_VALUE) return fail(m_text, "expected a JSON object (a Prometheus API response)");
    const std::string_view t = trim(m_text);
    const char* last = t.empty() ? m_text.data() : &t.back(); // where the text stops
    const char* p = at;
    if (const char* cur = nullptr; m_doc && !m_doc->current_location().get(cur)) p = cur;
    if (e == sj::TAPE_ERROR && p && p >= last) e = sj::INCOMPLETE_ARRAY_OR_OBJECT; // the text stops too early
    std::string message = fmt::format("invalid JSON: {}", sj::error_message(e));
    if (e == sj::TAPE_ERROR) message = "invalid JSON here (a missing or extra comma, bracket, brace, colon or quote)";
    if (e == sj::UTF8_ERROR) message = "the JSON is not valid UTF-8";
    if (e == sj::INCOMPLETE_ARRAY_OR_OBJECT) message = "the JSON ends inside an object or array (file truncated?)";
    if (e == sj::UNCLOSED_STRING) message = "a JSON string is never closed (file truncated?)";
    if (e == sj::INCOMPLETE_ARRAY_OR_OBJECT || e == sj::UNCLOSED_STRING) p = last;
    return makeError(ErrorCode::Format, std::move(message), where(p));
}

// One JSON document: a response, or an array of responses.
Status Parser::document(std::string_view text)
{
    m_text = text;
    od::document doc;
    Item root;
    const size_t capacity = static_cast<size_t>(m_buf.data() + m_buf.capacity() - text.data());
    if (sj::error_code e = m_parser.iterate(sj::padded_string_view(text.data(), text.size(), capacity)).get(doc))
        return jsonError(e, text.data());
    m_doc = &doc;
    const std::unique_ptr<Parser, void (*)(Parser*)> forget(this, [](Parser* p) { p->m_doc = nullptr; });
    if (sj::error_code e = doc.get_value().get(root.v)) return jsonError(e, text.data());
    RUNLENS_TRY(inspect(root));
    Status s =
        root.type == od::json_type::array ? eachElement(root, [this](Item& i) { return response(i); }) : response(root);
    if (!s) return s;
    if (const char* rest = nullptr; !doc.current_location().get(rest))
        return fail(rest, "unexpected content after the end of the JSON document");
    return okStatus();
}

Status Parser::response(Item& item)
{
    if (item.type != od::json_type::object)
        return fail(item.token, "expected a JSON object (a Prometheus API response)");
    std::string_view status, errorType, error;
    bool sawData = false;
    Status s = eachField(item, [&](std::string_view key, Item& v) -> Status {
        if (key == "data") {
            sawData = true;
            return status == "error" ? okStatus() : data(v);
        }
        if ((key == "warnings" || key == "infos") && v.type == od::json_type::array) {
            return eachElement(v, [&](Item& one) -> Status {
                std::string_view note;
                if (one.type != od::json_type::string || m_apiNotes++ >= kMaxApiNotes) return okStatus();
                RUNLENS_TRY(text(one, note));
                m_ctx.notes.push_back(fmt::format("Prometheus {}: {}", key.substr(0, key.size() - 1), note));
                return okStatus();
            });
        }
        if (v.type != od::json_type::string || (key != "status" && key != "errorType" && key != "error"))
            return okStatus();
        return text(v, key == "status" ? status : key == "error" ? error : errorType);
    });
    if (!s) return s;
    if (status == "error")
        return fail(item.token, fmt::format("the Prometheus API returned an error ({}): {}",
                                            errorType.empty() ? "no errorType" : errorType, error));
    if (!sawData) return fail(item.token, "no \"data\": not a Prometheus HTTP API response");
    return okStatus();
}

Status Parser::data(Item& item)
{
    if (item.type != od::json_type::object)
        return fail(item.token, "\"data\" is not a query result: not a query or query_range response");
    std::string_view type;
    return eachField(item, [&](std::string_view key, Item& r) -> Status {
        if (key == "resultType" && r.type == od::json_type::string) {
            RUNLENS_TRY(text(r, type));
            if (type != "matrix" && type != "vector" && type != "scalar" && type != "string")
                return fail(r.token, fmt::format("resultType \"{}\" is not a Prometheus query result", clip(type)),
                            ErrorCode::Unsupported);
        } else if (key == "result" && type == "string") {
            return skip(diag::kSkippedFamily, r.token, "a string result is not a time series; not imported");
        } else if (key == "result" && type == "scalar") {
            ++m_series;
            m_labels.clear();
            m_badLabels = false;
            prepare();
            return samples(r, "value");
        } else if (key == "result" && r.type != od::json_type::array) {
            return skip(diag::kInvalidLine, r.token, "\"result\" is not an array; nothing imported");
        } else if (key == "result") {
            return eachElement(r, [this](Item& one) { return series(one); });
        }
        return okStatus();
    });
}

Status Parser::series(Item& item)
{
    if (item.type != od::json_type::object)
        return skip(diag::kInvalidLine, item.token, "a result element is not a series object; skipped");
    ++m_series;
    m_labels.clear();
    m_badLabels = false;
    od::object obj;
    Item metric;
    bool rewound = false;
    // The labels first, wherever "metric" is (samples are routed by them), then the samples.
    RUNLENS_TRY(check(item.v.get_object().get(obj), item.token));
    const sj::error_code found = obj.find_field_unordered("metric").get(metric.v);
    if (found && found != sj::NO_SUCH_FIELD) return jsonError(found, item.token.data());
    Status s = found ? okStatus() : inspect(metric);
    if (s && !found && metric.type != od::json_type::object) {
        report(diag::kInvalidLine, metric.token, "\"metric\" is not an object; series skipped");
        m_badLabels = true;
    } else if (s && !found) {
        s = eachField(metric, [this](std::string_view name, Item& l) -> Status {
            std::string_view value;
            m_badLabels = m_badLabels || l.type != od::json_type::string;
            if (l.type != od::json_type::string)
                return skip(diag::kInvalidLine, l.token, fmt::format("label {} is not a string; series skipped", name));
            Status st = text(l, value);
            if (st) m_labels.push_back({name, value});
            return st;
        });
    }
    if (!s) return s;
    prepare();
    RUNLENS_TRY(check(obj.reset().get(rewound), item.token));
    return eachField(obj, [&](std::string_view key, Item& v) -> Status {
        const bool isSamples = key == "values" || key == "value" || key == "histograms" || key == "histogram";
        return isSamples ? samples(v, key) : okStatus();
    });
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

Status Parser::samples(Item& item, std::string_view field)
{
    if (m_badLabels) return okStatus();
    const bool single = field.back() != 's';
    if (field.substr(0, 9) == "histogram") { // native histograms: not charted
        size_t n = 1;
        if (!single && item.type == od::json_type::array)
            if (sj::error_code e = item.v.count_elements().get(n)) return jsonError(e, item.token.data());
        m_ctx.rowsRead += static_cast<int64_t>(n);
        return skip(diag::kSkippedFamily, item.token,
                    fmt::format("{} native histogram samples of {} skipped", n, m_key));
    }
    if (!single && item.type != od::json_type::array)
        return skip(diag::kInvalidLine, item.token, fmt::format("\"values\" of {} is not an array; skipped", m_key));
    if (single) ++m_ctx.rowsRead;
    return single ? sample(item) : eachElement(item, [&](Item& one) -> Status {
        ++m_ctx.rowsRead;
        Status s = sample(one);
        if (!s || --m_untilCheckpoint > 0) return s;
        m_untilCheckpoint = kCheckpointSamples;
        return m_ctx.checkpoint();
    });
}

// One [<unix seconds>, "<value>"] pair: the usual spelling read from the text, any other through the parser.
Status Parser::sample(Item& item)
{
    int n = 2;
    std::string_view time, value;
    od::json_type type = od::json_type::string;
    const char* end = m_text.data() + m_text.size();
    if (item.type != od::json_type::array)
        return skip(diag::kInvalidLine, item.token,
                    fmt::format("a sample of {} is not a [time, \"value\"] pair", m_key));
    if (!quickPair(item.token.data(), end, time, value)) {
        n = 0;
        Status s = eachElement(item, [&](Item& part) -> Status {
            if (++n == 1) time = part.type == od::json_type::number ? part.token : std::string_view();
            if (n != 2) return okStatus();
            type = part.type;
            value = trim(part.token);
            return type == od::json_type::string ? text(part, value) : okStatus();
        });
        if (!s) return s;
    }
    if (n != 2)
        return skip(diag::kInvalidLine, item.token, fmt::format("a sample of {} has {} elements, not 2", m_key, n));
    const auto ns = secondsToNs(time);
    if (!ns) return skip(diag::kBadTimestamp, item.token, fmt::format("cannot read the time of a sample of {}", m_key));
    if (type == od::json_type::null) {
        report(diag::kBadNumber, item.token, fmt::format("null value for {}; stored as missing", m_key));
    } else if (type != od::json_type::string && type != od::json_type::number) {
        return skip(diag::kBadNumber, item.token, fmt::format("the value of a sample of {} is not a string", m_key));
    }
    const auto number = type == od::json_type::null ? std::nullopt : parseNumber(value);
    if (type == od::json_type::number)
        report(diag::kUnquotedValue, item.token,
               fmt::format("value {} of {} is not a quoted string", clip(value), m_key));
    if (!number && type != od::json_type::null)
        report(diag::kBadNumber, item.token,
               fmt::format("expected a number for {}, got \"{}\"; stored as missing", m_key, clip(value)));
    return m_router.add(m_key, m_parse, *ns, number.value_or(std::numeric_limits<double>::quiet_NaN()), value);
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

// The host named in the head, read as text with the router's preference (hostname, then instance without its
// port), so that files of the same import without labels join this node.
std::optional<std::string> PromJsonImporter::hostLabel(const SniffInput& input) const
{
    for (std::string_view key : {"\"hostname\"", "\"Hostname\"", "\"instance\""}) {
        for (size_t pos = input.head.find(key); pos != std::string_view::npos; pos = input.head.find(key, pos + 1)) {
            std::string_view rest = trim(input.head.substr(pos + key.size())); // : "value"
            if (rest.empty() || rest.front() != ':') continue;
            rest = trim(rest.substr(1));
            const size_t end = rest.find('"', 1);
            if (rest.empty() || rest.front() != '"' || end == std::string_view::npos) continue;
            if (std::string name = nodeNameFromLabel(rest.substr(1, end - 1)); !name.empty()) return name;
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
