#include "importers/prometheus/prom_text_importer.h"

#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/diagnostic_kinds.h"
#include "importers/prometheus/prom_series.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace runlens::importers {
namespace {

constexpr int kCheckpointLines = 16384;
constexpr size_t kMaxKeyBytes = 64 * 1024; // a longer `name{labels}` is refused rather than made a series
constexpr size_t npos = std::string_view::npos;

bool isBlank(char c)
{
    return c == ' ' || c == '\t';
}
bool isNameStart(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool isNameChar(char c)
{
    return isNameStart(c) || (c >= '0' && c <= '9');
}
std::string_view trimBlanks(std::string_view s)
{
    while (!s.empty() && isBlank(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && isBlank(s.back()))
        s.remove_suffix(1);
    return s;
}
size_t skipBlanks(std::string_view s, size_t i)
{
    while (i < s.size() && isBlank(s[i]))
        ++i;
    return i;
}

// A value quoted in a message, cut so a huge bad line cannot make a huge diagnostic.
std::string clip(std::string_view v)
{
    constexpr size_t kMax = 60;
    if (v.size() <= kMax) return std::string(v);
    return fmt::format("{}... ({} bytes)", v.substr(0, kMax), v.size());
}

// The index after the closing quote of the string starting at s[i] == '"', or npos.
size_t skipQuoted(std::string_view s, size_t i)
{
    for (++i; i < s.size(); ++i) {
        if (s[i] == '\\')
            ++i;
        else if (s[i] == '"')
            return i + 1;
    }
    return npos;
}

// A name or value as written (quoted or not) → its text: quotes removed, \\ \" \n resolved (other escapes kept).
// Without escapes it is a view of the input; else it is appended to buf, which the caller has reserved.
std::string_view unescape(std::string_view s, std::string& buf)
{
    if (s.size() < 2 || s.front() != '"') return s;
    s = s.substr(1, s.size() - 2);
    if (s.find('\\') == npos) return s;
    const size_t start = buf.size();
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) {
            const char e = s[++i];
            if (e != '\\' && e != '"' && e != 'n') buf += '\\';
            buf += e == 'n' ? '\n' : e;
        } else {
            buf += s[i];
        }
    }
    return std::string_view(buf).substr(start);
}

struct RawLabel
{
    std::string_view name, value; // as written (quoted name: with its quotes; value: with its quotes)
};

struct Problem
{
    size_t at = 0; // 0-based column
    const char* what = nullptr;
};

// Reads the label set starting at s[i] == '{': returns the index after '}', or npos with *problem set.
// out (optional) receives the labels; *quotedName a leading quoted metric name (`{"my.metric", l="v"}`).
size_t scanLabels(std::string_view s, size_t i, std::vector<RawLabel>* out, std::string_view* quotedName,
                  Problem* problem)
{
    auto fail = [&](size_t at, const char* what) {
        *problem = {at, what};
        return npos;
    };
    bool first = true;
    for (i = skipBlanks(s, i + 1);; first = false) {
        if (i >= s.size()) return fail(i, "unterminated label set");
        if (s[i] == '}') return i + 1;
        const size_t nameStart = i;
        if (s[i] == '"') {
            i = skipQuoted(s, i);
            if (i == npos) return fail(nameStart, "unterminated quoted name");
        } else if (isNameStart(s[i])) {
            while (i < s.size() && isNameChar(s[i]))
                ++i;
        } else {
            return fail(i, "expected a label name");
        }
        const std::string_view name = s.substr(nameStart, i - nameStart);
        i = skipBlanks(s, i);
        if (i < s.size() && s[i] == '=') {
            i = skipBlanks(s, i + 1);
            if (i >= s.size() || s[i] != '"') return fail(i, "expected a quoted label value");
            const size_t valueStart = i;
            i = skipQuoted(s, i);
            if (i == npos) return fail(valueStart, "unterminated label value");
            if (out) out->push_back({name, s.substr(valueStart, i - valueStart)});
        } else if (first && name.front() == '"' && quotedName && quotedName->empty()) {
            *quotedName = name;
        } else {
            return fail(i, "expected '=' after a label name");
        }
        i = skipBlanks(s, i);
        if (i < s.size() && s[i] == ',') {
            i = skipBlanks(s, i + 1);
        } else if (i >= s.size() || s[i] != '}') {
            return fail(i, "expected ',' or '}' after a label");
        }
    }
}

// A sample line split into its parts (views into the line).
struct SampleLine
{
    std::string_view key;  // `name{labels}` as written: the router's series key
    std::string_view name; // the metric name as written (quoted for `{"name", ...}`)
    std::string_view value, timestamp;
};

bool parseSampleLine(std::string_view line, SampleLine& out, Problem& problem)
{
    size_t i = 0;
    while (i < line.size() && isNameChar(line[i]))
        ++i;
    out.name = line.substr(0, i);
    if (i > 0 && !isNameStart(line[0])) return problem = {0, "a metric name cannot start with a digit"}, false;
    if (i < line.size() && line[i] == '{') {
        std::string_view quoted;
        i = scanLabels(line, i, nullptr, out.name.empty() ? &quoted : nullptr, &problem);
        if (i == npos) return false;
        if (out.name.empty()) out.name = quoted;
    }
    if (out.name.empty()) return problem = {0, "expected a metric name"}, false;
    out.key = line.substr(0, i);
    if (i >= line.size() || !isBlank(line[i]))
        return problem = {i, i >= line.size() ? "no value" : "expected a space before the value"}, false;
    i = skipBlanks(line, i);
    size_t end = i;
    while (end < line.size() && !isBlank(line[end]))
        ++end;
    out.value = line.substr(i, end - i);
    out.timestamp = {};
    i = skipBlanks(line, end);
    if (i < line.size() && line[i] != '#') { // '#': an OpenMetrics exemplar, not read
        end = i;
        while (end < line.size() && !isBlank(line[end]))
            ++end;
        out.timestamp = line.substr(i, end - i);
        i = skipBlanks(line, end);
    }
    if (i < line.size() && line[i] != '#') return problem = {i, "unexpected text after the timestamp"}, false;
    return true;
}

// Concatenated snapshots: a new one starts when a metric seen in the current snapshot starts again (its block is
// entered a second time, or its first series repeats inside its block). Blocks of one metric are contiguous in
// one exposition, so this finds the boundaries with a look-up only where the metric name changes.
class SnapshotDetector
{
public:
    void see(std::string_view name, std::string_view key)
    {
        if (m_current && name == m_name) {
            if (key == m_current->firstKey) m_current->snapshot = ++m_snapshot;
            return;
        }
        m_name.assign(name);
        auto it = m_metrics.find(name);
        if (it == m_metrics.end()) {
            m_current = &m_metrics.emplace(std::string(name), Metric{std::string(key), m_snapshot}).first->second;
            return;
        }
        m_current = &it->second;
        if (m_current->snapshot == m_snapshot) ++m_snapshot;
        m_current->snapshot = m_snapshot;
    }
    int64_t snapshot() const { return m_snapshot; }
    template <typename F> void forEachMetric(F f) const
    {
        for (const auto& entry : m_metrics)
            f(entry.first);
    }

private:
    struct Metric
    {
        std::string firstKey;
        int64_t snapshot = 0;
    };
    std::map<std::string, Metric, std::less<>> m_metrics;
    std::string m_name;
    Metric* m_current = nullptr;
    int64_t m_snapshot = 0;
};

// "1520879607", "1520879607.789" in seconds (unitDigits 9) or milliseconds (6) → ns, exactly; else through double.
std::optional<int64_t> toNs(std::string_view t, int unitDigits)
{
    const int64_t unit = unitDigits == 9 ? 1'000'000'000 : 1'000'000;
    const size_t dot = t.find('.');
    const std::string_view whole = t.substr(0, dot);
    const std::string_view fraction = dot == npos ? std::string_view() : t.substr(dot + 1);
    if (!whole.empty() && whole.find_first_not_of("-0123456789") == npos &&
        fraction.find_first_not_of("0123456789") == npos) {
        const int64_t limit = std::numeric_limits<int64_t>::max() / unit - 1;
        if (auto w = parseInteger(whole); w && *w<limit&& * w> - limit) {
            int64_t f = 0;
            for (size_t d = 0; d < static_cast<size_t>(unitDigits); ++d)
                f = f * 10 + (d < fraction.size() ? fraction[d] - '0' : 0);
            return *w * unit + (whole.front() == '-' ? -f : f);
        }
    }
    auto v = parseNumber(t);
    if (!v || !std::isfinite(*v) || std::fabs(*v * static_cast<double>(unit)) > 9.2e18) return std::nullopt;
    return std::llround(*v * static_cast<double>(unit));
}

// time=: ISO 8601 ("2026-01-15T10:00:00Z", "+02:00", or naive in --tz) or epoch seconds.
Expected<int64_t> parseTimeOption(const std::string& text, const std::string& tzSpec)
{
    auto fail = [&] {
        return makeError(ErrorCode::Usage, fmt::format("time={}: expected ISO 8601 (2026-01-15T10:00:00Z) or Unix "
                                                       "epoch seconds",
                                                       text));
    };
    if (auto n = parseNumber(text); n && std::isfinite(*n))
        if (auto ns = toNs(text, 9)) return *ns;
    std::string_view s = trim(text);
    std::optional<int64_t> offsetS;
    if (!s.empty() && (s.back() == 'Z' || s.back() == 'z')) {
        offsetS = 0;
        s.remove_suffix(1);
    } else if (const size_t sign = s.find_last_of("+-"); sign != npos && sign > 10) { // after the date's dashes
        std::string zone(s.substr(sign + 1));
        std::erase(zone, ':');
        auto hhmm = parseInteger(zone);
        if (zone.size() != 4 || !hhmm) return fail();
        offsetS = (*hhmm / 100 * 3600 + *hhmm % 100 * 60) * (s[sign] == '-' ? -1 : 1);
        s = s.substr(0, sign);
    }
    auto local = parseLocalDateTime(s);
    if (!local) return fail();
    if (offsetS) return local->localNs - *offsetS * 1'000'000'000;
    auto tz = TimeZoneResolver::fromSpec(tzSpec);
    if (!tz) return tz.error();
    return tz->toUtcNs(*local);
}

std::string utcText(int64_t ns)
{
    const auto tp = std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(ns / 1'000'000));
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::floor<std::chrono::seconds>(tp));
}

class Parser
{
public:
    explicit Parser(ImportContext& ctx) : m_ctx(ctx), m_router(ctx) {}
    Status run();

private:
    Status comment(std::string_view text);
    Status sample(std::string_view text);
    Expected<int64_t> untimed();
    Expected<int64_t> countSnapshots();
    PromSeriesId parseId();
    void invalid(size_t column, std::string_view why, std::string_view text)
    {
        m_ctx.report(diag::kInvalidLine, static_cast<int64_t>(column) + 1,
                     fmt::format("{}: \"{}\"; line dropped", why, clip(text)));
        if (m_firstProblem.empty()) m_firstProblem = fmt::format("line {}: {}", m_ctx.lines.location().line, why);
    }

    ImportContext& m_ctx;
    PromSeriesRouter m_router;
    SnapshotDetector m_detector;
    std::map<std::string, bool, std::less<>> m_declared; // # HELP/# TYPE family → has samples
    std::string_view m_key;                              // of the sample being added (for parseId)
    std::string m_unescaped;
    std::vector<RawLabel> m_raw;
    int m_tsDigits = 0; // 9: seconds (OpenMetrics), 6: milliseconds (0.0.4); 0: no timestamp yet
    bool m_openMetrics = false;
    int64_t m_eofLine = 0; // the last `# EOF`, until the text after it has been reported
    int64_t m_valid = 0, m_samples = 0;
    std::string m_firstProblem;
    // Samples without a timestamp: snapshot k (from the first one without) at m_base + k * m_intervalNs.
    std::optional<int64_t> m_timeOption;
    int64_t m_intervalNs = 0, m_base = 0, m_firstUntimedSnapshot = -1, m_untimed = 0;
};

Status Parser::comment(std::string_view text)
{
    std::string_view rest = trimBlanks(text.substr(1));
    const std::string_view word = rest.substr(0, std::min(rest.find_first_of(" \t"), rest.size()));
    if (word == "EOF" && rest.size() == 3) {
        m_openMetrics = true;
        m_eofLine = m_ctx.lines.location().line;
        ++m_valid;
        return okStatus();
    }
    if (word != "HELP" && word != "TYPE" && word != "UNIT") return okStatus(); // any other comment
    rest = trimBlanks(rest.substr(4));
    size_t end = 0;
    if (!rest.empty() && rest[0] == '"') {
        end = skipQuoted(rest, 0);
    } else {
        while (end < rest.size() && isNameChar(rest[end]))
            ++end;
    }
    if (end == 0 || end == npos || (end < rest.size() && !isBlank(rest[end])) ||
        (word == "TYPE" && trimBlanks(rest.substr(end)).empty())) {
        invalid(text.size() - rest.size(), fmt::format("malformed # {} line", word), text);
        return okStatus();
    }
    m_unescaped.clear();
    const std::string_view family = unescape(rest.substr(0, end), m_unescaped);
    ++m_valid;
    if (word == "UNIT") m_openMetrics = true;
    if (word == "TYPE") m_router.setType(family, trimBlanks(rest.substr(end)));
    m_declared.try_emplace(std::string(family), false);
    return okStatus();
}

PromSeriesId Parser::parseId()
{
    PromSeriesId id;
    m_raw.clear();
    m_unescaped.clear();
    m_unescaped.reserve(m_key.size()); // unescaped text is never longer: the views below stay valid
    std::string_view quoted;
    Problem problem;
    const size_t brace = m_key.find('{');
    if (brace != npos) scanLabels(m_key, brace, &m_raw, brace == 0 ? &quoted : nullptr, &problem);
    id.family = brace == 0 ? unescape(quoted, m_unescaped) : m_key.substr(0, brace);
    id.labels.reserve(m_raw.size());
    for (const RawLabel& l : m_raw)
        id.labels.push_back({unescape(l.name, m_unescaped), unescape(l.value, m_unescaped)});
    return id;
}

Expected<int64_t> Parser::countSnapshots()
{
    auto input = InputStream::open(m_ctx.path, m_ctx.lines.input().displayName());
    if (!input) return input.error();
    LineReader lines(**input);
    SnapshotDetector detector;
    Line line;
    SampleLine s;
    Problem problem;
    for (int64_t n = 1;; ++n) {
        auto more = lines.next(line);
        if (!more) return more.error();
        if (!*more) break;
        if (n % kCheckpointLines == 0)
            if (Status st = m_ctx.checkpoint(); !st) return st.error();
        const std::string_view text = trimBlanks(line.text);
        if (!line.tooLong && !text.empty() && text[0] != '#' && parseSampleLine(text, s, problem))
            detector.see(s.name, s.key);
    }
    return detector.snapshot() + 1;
}

Expected<int64_t> Parser::untimed()
{
    ++m_untimed;
    if (m_firstUntimedSnapshot < 0) {
        m_firstUntimedSnapshot = m_detector.snapshot();
        if (m_timeOption) {
            m_base = *m_timeOption;
            m_ctx.notes.push_back(fmt::format("samples without a timestamp placed at time= {}{}", utcText(m_base),
                                              m_intervalNs ? " and interval= apart" : ""));
        } else {
            std::error_code ec;
            const auto written = std::filesystem::last_write_time(m_ctx.path, ec);
            if (ec)
                return makeError(ErrorCode::Io,
                                 "samples without a timestamp and no modification time to place them: give time=",
                                 m_ctx.lines.location());
            m_base = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::file_clock::to_sys(written).time_since_epoch())
                         .count();
            int64_t snapshots = 1;
            if (m_intervalNs) {
                auto n = countSnapshots();
                if (!n) return n.error();
                snapshots = *n - m_firstUntimedSnapshot;
                m_base -= (snapshots - 1) * m_intervalNs;
            }
            const std::string what =
                fmt::format("samples without a timestamp placed at the file's modification time "
                            "{}{} (an estimate; give time= to set it)",
                            utcText(m_base + (snapshots - 1) * m_intervalNs),
                            snapshots > 1 ? fmt::format(" for the last of {} snapshots", snapshots) : std::string());
            m_ctx.notes.push_back(what);
            m_ctx.report(diag::kEstimatedTime, 0, what);
        }
    }
    const int64_t k = m_detector.snapshot() - m_firstUntimedSnapshot;
    if (k == 0) return m_base;
    if (m_intervalNs == 0)
        return makeError(ErrorCode::Format,
                         fmt::format("a second snapshot without timestamps starts here ({} again): give the option "
                                     "interval=SECONDS, the time between snapshots, to place them in time",
                                     clip(m_key)),
                         m_ctx.lines.location());
    return m_base + k * m_intervalNs;
}

Status Parser::sample(std::string_view text)
{
    SampleLine s;
    Problem problem;
    if (!parseSampleLine(text, s, problem)) {
        invalid(problem.at, problem.what, text);
        return okStatus();
    }
    if (s.key.size() > kMaxKeyBytes) {
        invalid(0, fmt::format("series name and labels longer than {} bytes", kMaxKeyBytes), text);
        return okStatus();
    }
    ++m_valid;
    m_key = s.key;
    m_detector.see(s.name, s.key);
    int64_t ts;
    if (!s.timestamp.empty()) {
        if (m_tsDigits == 0) {
            // 0.0.4 writes integer milliseconds, OpenMetrics float seconds; a 0.0.4 time is >= 1e11 ms (1973).
            auto v = parseNumber(s.timestamp);
            const bool seconds = m_openMetrics || s.timestamp.find_first_of(".eE") != npos || (v && *v < 1e11);
            m_tsDigits = seconds ? 9 : 6;
            m_ctx.notes.push_back(seconds ? "timestamps read as seconds (OpenMetrics)"
                                          : "timestamps read as milliseconds (text exposition 0.0.4)");
        }
        auto t = toNs(s.timestamp, m_tsDigits);
        if (!t) {
            m_ctx.report(diag::kBadTimestamp, static_cast<int64_t>(s.timestamp.data() - text.data()) + 1,
                         fmt::format("cannot read timestamp \"{}\"; sample dropped", clip(s.timestamp)));
            return okStatus();
        }
        ts = *t;
    } else {
        auto t = untimed();
        if (!t) return t.error();
        ts = *t;
    }
    double value;
    if (auto v = parseNumber(s.value)) {
        value = *v;
    } else {
        m_ctx.report(
            diag::kBadNumber, static_cast<int64_t>(s.value.data() - text.data()) + 1,
            fmt::format("expected a number for {}, got \"{}\"; stored as missing", clip(s.key), clip(s.value)));
        value = std::numeric_limits<double>::quiet_NaN();
    }
    ++m_samples;
    return m_router.add(
        s.key, [this] { return parseId(); }, ts, value, s.value);
}

Status Parser::run()
{
    const auto& extra = m_ctx.options.extra;
    if (auto it = extra.find("time"); it != extra.end()) {
        auto t = parseTimeOption(it->second, m_ctx.options.timeZone);
        if (!t) return t.error();
        m_timeOption = *t;
    }
    if (auto it = extra.find("interval"); it != extra.end()) {
        auto v = parseNumber(trim(it->second));
        if (!v || !std::isfinite(*v) || *v <= 0 || *v > 1e9)
            return makeError(ErrorCode::Usage,
                             fmt::format("interval={}: expected the seconds between snapshots", it->second));
        m_intervalNs = std::llround(*v * 1e9);
    }
    Line line;
    int64_t nonBlank = 0;
    for (int64_t n = 1;; ++n) {
        auto more = m_ctx.lines.next(line);
        if (!more) return more.error();
        if (!*more) break;
        if (n % kCheckpointLines == 0)
            if (Status s = m_ctx.checkpoint(); !s) return s;
        const std::string_view text = trimBlanks(line.text);
        if (text.empty()) continue;
        ++nonBlank;
        if (m_eofLine) {
            // OpenMetrics ends at # EOF; what follows is taken as another exposition appended to the file.
            m_ctx.report(diag::kRepeatedHeader, 0,
                         fmt::format("text after # EOF (line {}): read as another exposition appended", m_eofLine));
            m_eofLine = 0;
        }
        if (line.tooLong) {
            m_ctx.report(diag::kLineTooLong, 0, fmt::format("line longer than {} bytes dropped", text.size()));
            continue;
        }
        if (text[0] == '#') {
            if (Status s = comment(text); !s) return s;
            continue;
        }
        ++m_ctx.rowsRead;
        if (Status s = sample(text); !s) return s;
    }
    if (nonBlank == 0) return makeError(ErrorCode::Format, "empty file: no samples", m_ctx.lines.location());
    if (m_valid == 0)
        return makeError(ErrorCode::Format,
                         fmt::format("not Prometheus text: no sample or # HELP/# TYPE line could be read (first "
                                     "problem: {})",
                                     m_firstProblem.empty() ? "none" : m_firstProblem),
                         {m_ctx.lines.input().displayName(), 1});
    if (Status s = m_router.finish(); !s) return s;

    // Families: a sample's metric name, or the # TYPE/# HELP family it belongs to (x_bucket → x, x_total → x).
    int64_t families = 0;
    m_detector.forEachMetric([&](const std::string& name) {
        auto it = m_declared.find(name);
        for (std::string_view suffix : {"_total", "_bucket", "_sum", "_count", "_created", "_gsum", "_gcount", "_info"})
            if (it == m_declared.end() && name.ends_with(suffix))
                it = m_declared.find(std::string_view(name).substr(0, name.size() - suffix.size()));
        if (it == m_declared.end())
            ++families;
        else if (!it->second)
            it->second = true, ++families;
    });
    std::string empty;
    int64_t emptyCount = 0;
    for (const auto& [name, used] : m_declared)
        if (!used && ++emptyCount <= 5) empty += (empty.empty() ? "" : ", ") + name;
    m_ctx.notes.push_back(fmt::format("{} samples of {} families{}", m_samples, families,
                                      emptyCount ? fmt::format("; {} declared with no samples ({}{})", emptyCount,
                                                               empty, emptyCount > 5 ? ", ..." : "")
                                                 : std::string()));
    if (m_untimed > 0) m_ctx.notes.push_back(fmt::format("{} samples without a timestamp", m_untimed));
    return okStatus();
}

} // namespace

int PromTextImporter::sniff(const SniffInput& input) const
{
    std::string_view head = input.head;
    if (const size_t lastNl = head.rfind('\n'); lastNl != npos && !head.ends_with('\n')) head = head.substr(0, lastNl);
    int meta = 0, braced = 0, bare = 0, other = 0;
    SampleLine s;
    Problem problem;
    for (size_t pos = 0, n = 0; pos < head.size() && n < 200; ++n) {
        const size_t nl = std::min(head.find('\n', pos), head.size());
        const std::string_view line = trim(head.substr(pos, nl - pos));
        pos = nl + 1;
        if (line.empty()) continue;
        if (line[0] == '#') {
            const std::string_view rest = trimBlanks(line.substr(1));
            const bool named = rest.size() > 5 && (isNameStart(rest[5]) || rest[5] == '"');
            if (rest == "EOF" || (named && (rest.starts_with("HELP ") || rest.starts_with("UNIT "))) ||
                (named && rest.starts_with("TYPE ") &&
                 (rest.ends_with(" counter") || rest.ends_with(" gauge") || rest.ends_with(" histogram") ||
                  rest.ends_with(" summary") || rest.ends_with(" untyped") || rest.ends_with(" unknown") ||
                  rest.ends_with(" info") || rest.ends_with(" stateset") || rest.ends_with(" gaugehistogram"))))
                ++meta;
            continue;
        }
        if (parseSampleLine(line, s, problem) && parseNumber(s.value))
            ++(s.key.size() > s.name.size() ? braced : bare);
        else
            ++other;
    }
    const int samples = braced + bare;
    if ((meta == 0 && samples == 0) || other * 5 > (samples + other)) return 0;
    return meta > 0 ? 95 : braced > 0 ? 90 : 25; // bare `name 12` lines could as well be single-frame folded stacks
}

std::optional<std::string> PromTextImporter::hostLabel(const SniffInput& input) const
{
    std::string_view head = input.head;
    if (const size_t lastNl = head.rfind('\n'); lastNl != npos && !head.ends_with('\n')) head = head.substr(0, lastNl);
    SampleLine s;
    Problem problem;
    std::vector<RawLabel> labels;
    for (size_t pos = 0; pos < head.size();) {
        const size_t nl = std::min(head.find('\n', pos), head.size());
        const std::string_view line = trimBlanks(head.substr(pos, nl - pos));
        pos = nl + 1;
        if (line.empty() || line[0] == '#' || !parseSampleLine(line, s, problem) || s.key.size() == s.name.size())
            continue;
        labels.clear();
        std::string_view quoted;
        scanLabels(s.key, s.key.find('{'), &labels, &quoted, &problem);
        for (std::string_view wanted : {"hostname", "Hostname", "instance"}) {
            for (const RawLabel& l : labels) {
                std::string buf;
                buf.reserve(l.value.size());
                if (l.name == wanted)
                    if (const std::string_view v = unescape(l.value, buf); !v.empty()) return nodeNameFromLabel(v);
            }
        }
    }
    return std::nullopt;
}

Status PromTextImporter::run(ImportContext& context) const
{
    Parser parser(context);
    return parser.run();
}

} // namespace runlens::importers
