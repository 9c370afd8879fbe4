#include "importers/prometheus/prom_text_importer.h"

#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/diagnostic_kinds.h"
#include "importers/prometheus/prom_series.h"

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <utility>

namespace runlens::importers {
namespace {

constexpr int kCheckpointLines = 16384;
constexpr size_t kMaxKeyBytes = size_t{64} * 1024; // a longer `name{labels}` is refused rather than made a series
constexpr size_t kMaxRawToken = 64;                // of a bad value, kept as the missing point's raw text
constexpr size_t npos = std::string_view::npos;

// Character classes: kBlank, kStart ([a-zA-Z_:], starts a name), kDigit (continues one).
enum : unsigned char
{
    kOther,
    kDigit,
    kStart,
    kBlank
};
constexpr auto kClass = [] {
    std::array<unsigned char, 256> t{};
    for (int c = 0; c < 256; ++c)
        t[static_cast<size_t>(c)] = c == ' ' || c == '\t'                                                      ? kBlank
                                    : (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ? kStart
                                    : c >= '0' && c <= '9'                                                     ? kDigit
                                                                                                               : kOther;
    return t;
}();
unsigned char charClass(char c)
{
    return kClass[static_cast<unsigned char>(c)];
}
// The index of the first character at or after i that is not (same) or is (!same) of class cls.
size_t skip(std::string_view s, size_t i, unsigned char cls, bool same = true)
{
    while (i < s.size() && (charClass(s[i]) == cls) == same)
        ++i;
    return i;
}
size_t skipName(std::string_view s, size_t i)
{
    while (i < s.size() && (charClass(s[i]) == kStart || charClass(s[i]) == kDigit))
        ++i;
    return i;
}

// The index after the closing quote of the string starting at s[i] == '"', or npos.
size_t skipQuoted(std::string_view s, size_t i)
{
    for (++i;;) {
        const void* q = i < s.size() ? std::memchr(s.data() + i, '"', s.size() - i) : nullptr;
        if (!q) return npos;
        const size_t j = static_cast<size_t>(static_cast<const char*>(q) - s.data());
        size_t b = j;
        while (b > i && s[b - 1] == '\\')
            --b;
        if ((j - b) % 2 == 0) return j + 1; // not escaped
        i = j + 1;
    }
}

// A name or value as written → its text: quotes removed, \\ \" \n resolved (other escapes kept as written).
// Without escapes a view of the input; else appended to buf, which the caller has reserved (views stay valid).
std::string_view unescape(std::string_view s, std::string& buf)
{
    if (s.size() < 2 || s.front() != '"') return s;
    s = s.substr(1, s.size() - 2);
    if (s.find('\\') == npos) return s;
    const size_t start = buf.size();
    for (size_t i = 0; i < s.size(); ++i) {
        const char e = s[i] == '\\' && i + 1 < s.size() ? s[++i] : '\0';
        if (e && e != '\\' && e != '"' && e != 'n') buf += '\\';
        buf += e == 'n' ? '\n' : e ? e : s[i];
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
    const size_t firstItem = skip(s, i + 1, kBlank);
    for (i = firstItem;;) {
        if (i >= s.size()) return fail(i, "unterminated label set");
        if (s[i] == '}') return i + 1;
        const size_t nameStart = i;
        if (s[i] == '"') {
            i = skipQuoted(s, i);
            if (i == npos) return fail(nameStart, "unterminated quoted name");
        } else if (charClass(s[i]) == kStart) {
            i = skipName(s, i);
        } else {
            return fail(i, "expected a label name");
        }
        const std::string_view name = s.substr(nameStart, i - nameStart);
        i = skip(s, i, kBlank);
        if (i < s.size() && s[i] == '=') {
            i = skip(s, i + 1, kBlank);
            if (i >= s.size() || s[i] != '"') return fail(i, "expected a quoted label value");
            const size_t valueStart = i;
            i = skipQuoted(s, i);
            if (i == npos) return fail(valueStart, "unterminated label value");
            if (out) out->push_back({name, s.substr(valueStart, i - valueStart)});
        } else if (name.front() == '"' && quotedName && nameStart == firstItem) {
            *quotedName = name; // the first item of `{"name", ...}`
        } else {
            return fail(i, "expected '=' after a label name");
        }
        i = skip(s, i, kBlank);
        if (i < s.size() && s[i] == ',')
            i = skip(s, i + 1, kBlank);
        else if (i >= s.size() || s[i] != '}')
            return fail(i, "expected ',' or '}' after a label");
    }
}

// A sample line split into views: `key value [timestamp] [# exemplar]`.
struct SampleLine
{
    std::string_view key;  // `name{labels}` as written: the router's series key
    std::string_view name; // the metric name as written (quoted for `{"name", ...}`)
    std::string_view value, timestamp;
};

bool parseSampleLine(std::string_view line, SampleLine& out, Problem& problem)
{
    size_t i = skipName(line, 0);
    out.name = line.substr(0, i);
    if (i > 0 && charClass(line[0]) != kStart) return problem = {0, "a metric name cannot start with a digit"}, false;
    if (i < line.size() && line[i] == '{') {
        std::string_view quoted;
        i = scanLabels(line, i, nullptr, out.name.empty() ? &quoted : nullptr, &problem);
        if (i == npos) return false;
        if (out.name.empty()) out.name = quoted;
    }
    if (out.name.empty()) return problem = {0, "expected a metric name"}, false;
    out.key = line.substr(0, i);
    if (i >= line.size() || charClass(line[i]) != kBlank)
        return problem = {i, i >= line.size() ? "no value" : "expected a space before the value"}, false;
    i = skip(line, i, kBlank);
    size_t end = skip(line, i, kBlank, false);
    out.value = line.substr(i, end - i);
    out.timestamp = {};
    if (i = skip(line, end, kBlank); i < line.size() && line[i] != '#') { // '#': an OpenMetrics exemplar, not read
        end = skip(line, i, kBlank, false);
        out.timestamp = line.substr(i, end - i);
        i = skip(line, end, kBlank);
    }
    if (i < line.size() && line[i] != '#') return problem = {i, "unexpected text after the timestamp"}, false;
    return true;
}

// Concatenated snapshots: a new one starts when a metric seen in the current snapshot starts again (its block is
// entered a second time, or its first series repeats inside its block). One metric's lines are contiguous in one
// exposition, so this needs a look-up only where the metric name changes.
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
        if (it == m_metrics.end()) it = m_metrics.emplace(name, Metric{std::string(key), m_snapshot - 1}).first;
        m_current = &it->second;
        if (m_current->snapshot == m_snapshot) ++m_snapshot;
        m_current->snapshot = m_snapshot;
    }
    int64_t snapshot() const { return m_snapshot; }
    struct Metric
    {
        std::string firstKey;
        int64_t snapshot = 0; // the last snapshot the metric was seen in
    };
    const std::map<std::string, Metric, std::less<>>& metrics() const { return m_metrics; }

private:
    std::map<std::string, Metric, std::less<>> m_metrics;
    std::string m_name;
    Metric* m_current = nullptr;
    int64_t m_snapshot = 0;
};

// "1520879607", "1520879607.789" in seconds (unitDigits 9) or milliseconds (6) → ns, exactly; else through double.
std::optional<int64_t> toNs(std::string_view t, int unitDigits)
{
    const int64_t unit = unitDigits == 9 ? 1'000'000'000 : 1'000'000;
    const bool negative = !t.empty() && t[0] == '-';
    size_t i = negative ? 1 : 0, digits = 0;
    int64_t whole = 0, fraction = 0;
    for (; i < t.size() && charClass(t[i]) == kDigit && i < 18u + negative; ++i)
        whole = whole * 10 + (t[i] - '0');
    if (i < t.size() && t[i] == '.')
        for (++i; i < t.size() && charClass(t[i]) == kDigit; ++i)
            if (digits < static_cast<size_t>(unitDigits)) fraction = fraction * 10 + (t[i] - '0'), ++digits;
    if (i == t.size() && i > (negative ? 1u : 0u) && whole < std::numeric_limits<int64_t>::max() / unit - 1) {
        for (; digits < static_cast<size_t>(unitDigits); ++digits)
            fraction *= 10;
        return (whole * unit + fraction) * (negative ? -1 : 1);
    }
    auto v = parseNumber(t); // exponent forms
    if (!v || !std::isfinite(*v) || std::fabs(*v * static_cast<double>(unit)) > 9.2e18) return std::nullopt;
    return std::llround(*v * static_cast<double>(unit));
}

// time=: ISO 8601 ("2026-01-15T10:00:00Z", "...+02:00", or naive in --tz) or Unix epoch seconds.
Expected<int64_t> parseTimeOption(const std::string& text, const std::string& tzSpec)
{
    if (auto n = parseNumber(text); n && std::isfinite(*n))
        if (auto ns = toNs(text, 9)) return *ns;
    const std::string_view s = trim(text);
    const size_t zone = std::min(s.find_first_of("Zz+-", 19), s.size()); // after the date's dashes
    auto local = parseLocalDateTime(s.substr(0, zone));
    auto tz = TimeZoneResolver::fromSpec(zone == s.size()                   ? tzSpec
                                         : s[zone] == 'Z' || s[zone] == 'z' ? std::string("UTC")
                                                                            : std::string(s.substr(zone)));
    if (!local || !tz)
        return makeError(ErrorCode::Usage,
                         fmt::format("time={}: expected ISO 8601 (2026-01-15T10:00:00Z) or Unix epoch seconds", text));
    return tz->toUtcNs(*local);
}

std::string utcText(int64_t ns)
{
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::sys_seconds(std::chrono::seconds(ns / 1'000'000'000)));
}

class Parser
{
public:
    explicit Parser(ImportContext& ctx) : m_ctx(ctx), m_router(ctx) {}
    Status run();

private:
    void comment(std::string_view text);
    Status sample(std::string_view text);
    Expected<int64_t> untimed();
    Expected<int64_t> countSnapshots();
    std::string notes();
    void invalid(size_t column, std::string_view why, std::string_view text)
    {
        m_ctx.report(diag::kInvalidLine, static_cast<int64_t>(column) + 1,
                     fmt::format("{}: \"{}\"; line dropped", why, clip(text)));
        if (m_firstProblem.empty()) m_firstProblem = fmt::format("line {}: {}", m_ctx.lines.location().line, why);
    }
    // The router calls this for a key it has not seen: the labels of m_key, which parseSampleLine checked.
    PromSeriesId parseId()
    {
        PromSeriesId id;
        m_raw.clear();
        m_unescaped.clear();
        m_unescaped.reserve(m_key.size()); // unescaped text is never longer: the views stay valid
        std::string_view quoted;
        Problem problem;
        const size_t brace = m_key.find('{');
        if (brace != npos) scanLabels(m_key, brace, &m_raw, brace == 0 ? &quoted : nullptr, &problem);
        id.family = brace == 0 ? unescape(quoted, m_unescaped) : m_key.substr(0, brace);
        for (const RawLabel& l : m_raw)
            id.labels.push_back({unescape(l.name, m_unescaped), unescape(l.value, m_unescaped)});
        return id;
    }

    ImportContext& m_ctx;
    PromSeriesRouter m_router;
    SnapshotDetector m_detector;
    std::map<std::string, std::string, std::less<>> m_declared; // # HELP/# TYPE family → its type
    std::string_view m_key;                                     // of the sample being added
    std::string m_unescaped, m_firstProblem;
    std::vector<RawLabel> m_raw;
    int m_tsDigits = 0; // 9: seconds (OpenMetrics), 6: milliseconds (0.0.4); 0: no timestamp yet
    bool m_openMetrics = false;
    int64_t m_eofLine = 0; // the last `# EOF`, until the text after it has been reported
    int64_t m_valid = 0, m_samples = 0;
    // Samples without a timestamp: snapshot k (counted from the first such one) at m_base + k * m_intervalNs.
    std::optional<int64_t> m_timeOption;
    int64_t m_intervalNs = 0, m_base = 0, m_firstUntimedSnapshot = -1, m_untimed = 0;
};

void Parser::comment(std::string_view text)
{
    std::string_view rest = trim(text.substr(1));
    const std::string_view word = rest.substr(0, skip(rest, 0, kBlank, false));
    if (word == "EOF" && rest.size() == 3) {
        m_openMetrics = true;
        m_eofLine = m_ctx.lines.location().line;
        ++m_valid;
        return;
    }
    if (word != "HELP" && word != "TYPE" && word != "UNIT") return; // any other comment
    rest = trim(rest.substr(4));
    const size_t end = !rest.empty() && rest[0] == '"' ? skipQuoted(rest, 0) : skipName(rest, 0);
    const std::string_view type = end == npos ? "" : trim(rest.substr(end));
    if (end == 0 || end == npos || (end < rest.size() && charClass(rest[end]) != kBlank) ||
        (word == "TYPE" && type.empty()))
        return invalid(text.size() - rest.size(), fmt::format("malformed # {} line", word), text);
    m_unescaped.clear();
    const std::string_view family = unescape(rest.substr(0, end), m_unescaped);
    ++m_valid;
    m_openMetrics = m_openMetrics || word == "UNIT";
    auto it = m_declared.find(family);
    if (it == m_declared.end()) it = m_declared.emplace(family, "").first;
    if (word == "TYPE" && it->second != type) { // the router is told once per family, not once per snapshot
        it->second = std::string(type);
        m_router.setType(family, type);
    }
}

Expected<int64_t> Parser::countSnapshots()
{
    RUNLENS_ASSIGN_OR_RETURN(auto input, InputStream::open(m_ctx.path, m_ctx.lines.input().displayName()));
    LineReader lines(*input);
    SnapshotDetector detector;
    Line line;
    SampleLine s;
    Problem problem;
    int64_t lineCount = 0;
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(auto more, lines.next(line));
        if (!more) break;
        RUNLENS_TRY(m_ctx.checkpointEvery(lineCount, kCheckpointLines));
        const std::string_view text = trim(line.text);
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
                return makeError(
                    ErrorCode::Io,
                    "samples without a timestamp and no file time to place them: give time=", m_ctx.lines.location());
            m_base = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::file_clock::to_sys(written).time_since_epoch())
                         .count();
            int64_t snapshots = 1; // the modification time dates the last one
            if (m_intervalNs) {
                RUNLENS_ASSIGN_OR_RETURN(auto n, countSnapshots());
                snapshots = n - m_firstUntimedSnapshot;
                m_base -= (snapshots - 1) * m_intervalNs;
            }
            std::string what =
                fmt::format("samples without a timestamp placed at the file's modification time {}{} "
                            "(an estimate; give time= to set it)",
                            utcText(m_base + (snapshots - 1) * m_intervalNs),
                            snapshots > 1 ? fmt::format(" for the last of {} snapshots", snapshots) : "");
            m_ctx.report(diag::kEstimatedTime, 0, what);
            m_ctx.notes.push_back(std::move(what));
        }
    }
    const int64_t k = m_detector.snapshot() - m_firstUntimedSnapshot;
    if (k > 0 && m_intervalNs == 0)
        return makeError(ErrorCode::Format,
                         fmt::format("a second snapshot without timestamps starts here ({} again): give the seconds "
                                     "between snapshots with the option interval=SECONDS (--option interval=15)",
                                     clip(m_key)),
                         m_ctx.lines.location());
    return m_base + k * m_intervalNs;
}

Status Parser::sample(std::string_view text)
{
    SampleLine s;
    Problem problem;
    if (!parseSampleLine(text, s, problem)) return invalid(problem.at, problem.what, text), okStatus();
    if (s.key.size() > kMaxKeyBytes)
        return invalid(0, fmt::format("series name and labels longer than {} bytes", kMaxKeyBytes), text), okStatus();
    ++m_valid;
    m_key = s.key;
    m_detector.see(s.name, s.key);
    auto column = [&](std::string_view part) { return static_cast<int64_t>(part.data() - text.data()) + 1; };
    int64_t ts;
    if (!s.timestamp.empty()) {
        if (auto v = m_tsDigits ? std::nullopt : parseNumber(s.timestamp)) {
            // 0.0.4 writes integer milliseconds, OpenMetrics float seconds; a 0.0.4 time is >= 1e11 ms (1973).
            const bool seconds = m_openMetrics || s.timestamp.find_first_of(".eE") != npos || *v < 1e11;
            m_tsDigits = seconds ? 9 : 6;
            m_ctx.notes.emplace_back(seconds ? "timestamps read as seconds (OpenMetrics)"
                                             : "timestamps read as milliseconds (text exposition 0.0.4)");
        }
        auto t = m_tsDigits ? toNs(s.timestamp, m_tsDigits) : std::nullopt;
        if (!t) {
            m_ctx.report(diag::kBadTimestamp, column(s.timestamp),
                         fmt::format("cannot read timestamp \"{}\"; sample dropped", clip(s.timestamp)));
            return okStatus();
        }
        ts = *t;
    } else {
        RUNLENS_ASSIGN_OR_RETURN(auto t, untimed());
        ts = t;
    }
    double value = std::numeric_limits<double>::quiet_NaN();
    if (auto v = parseNumber(s.value)) {
        value = *v;
    } else {
        m_ctx.report(
            diag::kBadNumber, column(s.value),
            fmt::format("expected a number for {}, got \"{}\"; stored as missing", clip(s.key), clip(s.value)));
        s.value = s.value.substr(0, kMaxRawToken);
    }
    ++m_samples;
    return m_router.add(
        s.key, [this] { return parseId(); }, ts, value, s.value);
}

// "N samples of F families[; D declared with no samples (names)]": a sample's family is its # TYPE/# HELP family
// (x_bucket, x_total → x) or else its own name.
std::string Parser::notes()
{
    std::map<std::string_view, bool> declared; // → has samples
    for (const auto& entry : m_declared)
        declared.emplace(entry.first, false);
    int64_t families = 0;
    for (const auto& [name, metric] : m_detector.metrics()) {
        auto it = declared.find(name);
        for (std::string_view suffix : {"_total", "_bucket", "_sum", "_count", "_created", "_gsum", "_gcount", "_info"})
            if (it == declared.end() && name.ends_with(suffix))
                it = declared.find(std::string_view(name).substr(0, name.size() - suffix.size()));
        families += it == declared.end() || !std::exchange(it->second, true);
    }
    std::string empty;
    size_t n = 0;
    for (const auto& [name, used] : declared)
        if (!used && ++n <= 5) empty += fmt::format("{}{}", n > 1 ? ", " : "", name);
    return fmt::format("{} samples of {} families{}", m_samples, families,
                       n ? fmt::format("; {} declared with no samples ({}{})", n, empty, n > 5 ? ", ..." : "") : "");
}

Status Parser::run()
{
    const auto& extra = m_ctx.options.extra;
    if (auto it = extra.find("time"); it != extra.end()) {
        RUNLENS_ASSIGN_OR_RETURN(auto t, parseTimeOption(it->second, m_ctx.options.timeZone));
        m_timeOption = t;
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
    int64_t lineCount = 0;
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(auto more, m_ctx.lines.next(line));
        if (!more) break;
        RUNLENS_TRY(m_ctx.checkpointEvery(lineCount, kCheckpointLines));
        const std::string_view text = trim(line.text);
        if (text.empty()) continue;
        ++nonBlank;
        if (m_eofLine) { // OpenMetrics ends at # EOF: what follows is another exposition appended to the file
            m_ctx.report(diag::kRepeatedHeader, 0,
                         fmt::format("text after # EOF (line {}): read as another exposition appended", m_eofLine));
            m_eofLine = 0;
        }
        if (line.tooLong) {
            m_ctx.report(diag::kLineTooLong, 0, fmt::format("line longer than {} bytes dropped", text.size()));
        } else if (text[0] == '#') {
            comment(text);
        } else {
            ++m_ctx.rowsRead;
            RUNLENS_TRY(sample(text));
        }
    }
    if (nonBlank == 0) return makeError(ErrorCode::Format, "empty file: no samples", m_ctx.lines.location());
    if (m_valid == 0)
        return makeError(ErrorCode::Format,
                         fmt::format("not Prometheus text: no sample or # HELP/# TYPE line could be read ({})",
                                     m_firstProblem.empty() ? "only comments" : m_firstProblem),
                         {m_ctx.lines.input().displayName(), 1});
    RUNLENS_TRY(m_router.finish());
    m_ctx.notes.push_back(notes());
    if (m_untimed > 0) m_ctx.notes.push_back(fmt::format("{} samples without a timestamp", m_untimed));
    return okStatus();
}

// Complete lines of a sniffed head (the head may end inside a line), trimmed, blank ones left out.
template <typename F> void forEachHeadLine(std::string_view head, F f)
{
    if (const size_t lastNl = head.rfind('\n'); lastNl != npos && !head.ends_with('\n')) head = head.substr(0, lastNl);
    for (size_t pos = 0; pos < head.size();) {
        const size_t nl = std::min(head.find('\n', pos), head.size());
        const std::string_view line = trim(head.substr(pos, nl - pos));
        pos = nl + 1;
        if (!line.empty() && !f(line)) return;
    }
}

} // namespace

int PromTextImporter::sniff(const SniffInput& input) const
{
    int meta = 0, braced = 0, bare = 0, other = 0;
    SampleLine s;
    Problem problem;
    forEachHeadLine(input.head, [&](std::string_view line) {
        if (line[0] == '#') {
            const std::string_view rest = trim(line.substr(1)), word = rest.substr(0, 5);
            const bool named = rest.size() > 5 && (charClass(rest[5]) == kStart || rest[5] == '"');
            meta += rest == "EOF" || (named && (word == "HELP " || word == "TYPE " || word == "UNIT "));
        } else if (parseSampleLine(line, s, problem) && parseNumber(s.value)) {
            ++(s.key.size() > s.name.size() ? braced : bare);
        } else {
            ++other;
        }
        return meta + braced + bare + other < 200;
    });
    const int samples = braced + bare;
    if ((meta == 0 && samples == 0) || other * 5 > samples + other) return 0;
    return meta > 0 ? 95 : braced > 0 ? 90 : 25; // bare `name 12` lines could as well be single-frame folded stacks
}

std::optional<std::string> PromTextImporter::hostLabel(const SniffInput& input) const
{
    std::optional<std::string> found;
    SampleLine s;
    Problem problem;
    std::vector<RawLabel> labels;
    forEachHeadLine(input.head, [&](std::string_view line) {
        if (line[0] == '#' || !parseSampleLine(line, s, problem) || s.key.size() == s.name.size()) return true;
        labels.clear();
        std::string_view quoted;
        scanLabels(s.key, s.key.find('{'), &labels, &quoted, &problem);
        for (std::string_view wanted : {"hostname", "Hostname", "instance"})
            for (const RawLabel& l : labels) {
                std::string buf;
                buf.reserve(l.value.size());
                if (l.name == wanted && l.value.size() > 2)
                    return found = nodeNameFromLabel(unescape(l.value, buf)), false;
            }
        return true;
    });
    return found;
}

Status PromTextImporter::run(ImportContext& context) const
{
    Parser parser(context);
    return parser.run();
}

} // namespace runlens::importers
