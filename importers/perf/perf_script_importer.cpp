#include "importers/perf/perf_script_importer.h"

#include "analysis/store/saturating.h"
#include "importers/common/stack_depth.h"
#include "importers/common/text_fields.h"
#include "importers/common/untimed.h"
#include "importers/diagnostic_kinds.h"

#include <fmt/format.h>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace runlens::importers {
namespace {

constexpr int kSniffMaxLines = 200;
constexpr int64_t kCheckpointEvery = 4096;

bool isHex(std::string_view s)
{
    if (s.empty()) return false;
    for (const char c : s)
        if (!isDigit(c) && !((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
    return true;
}
bool allDigits(std::string_view s)
{
    if (s.empty()) return false;
    for (const char c : s)
        if (!isDigit(c)) return false;
    return true;
}

// Whether t is a `SECONDS.USEC:` time; ns is then its value as nanoseconds, exactly, or nothing when that is beyond
// int64 (292 years): such a time is still the header's time field, reported where it would be placed.
bool parseTimestamp(std::string_view t, std::optional<int64_t>& ns)
{
    if (t.size() < 4 || t.back() != ':') return false;
    t.remove_suffix(1);
    const size_t dot = t.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 >= t.size() || t.size() - dot - 1 > 9) return false;
    const std::string_view sec = t.substr(0, dot), frac = t.substr(dot + 1);
    if (!allDigits(sec) || !allDigits(frac) || sec.size() > 10) return false;
    int64_t s = 0;
    for (const char c : sec)
        s = s * 10 + (c - '0'); // at most 10 digits: fits
    int64_t f = 0;
    for (size_t i = 0; i < 9; ++i)
        f = f * 10 + (i < frac.size() ? frac[i] - '0' : 0);
    const auto whole = store::checkedMul(s, 1'000'000'000);
    ns = whole ? store::checkedAdd(*whole, f) : std::nullopt;
    return true;
}

struct Header
{
    std::string_view comm;
    int64_t pid = 0;
    int64_t tid = 0;
    std::optional<int64_t> timeNs;
    std::string timeText; // the time as written, when it is beyond int64 nanoseconds (timeNs empty)
    double weight = 1;
};

// `comm PID[/TID] [CPU] SECONDS.USEC: [PERIOD] EVENT:`; the line must be trimmed.
std::optional<Header> parseHeader(std::string_view line, std::vector<std::string_view>& toks)
{
    splitWhitespace(line, toks);
    if (toks.size() < 3) return std::nullopt;
    Header h;
    size_t end = toks.size(); // first token after the comm/pid/cpu part
    for (size_t i = 2; i < toks.size(); ++i)
        if (parseTimestamp(toks[i], h.timeNs)) {
            if (!h.timeNs) h.timeText = std::string(toks[i]);
            end = i;
            break;
        }
    size_t after = end + 1;
    if (end == toks.size()) { // legacy: `comm pid [cpu] [period] event:`
        for (size_t i = 2; i < toks.size() && end == toks.size(); ++i)
            if (toks[i].size() > 1 && toks[i].back() == ':') end = i;
        if (end == toks.size()) return std::nullopt;
        // `comm pid [cpu] period event:`: a period needs a pid or [cpu] token before it.
        const auto pidLike = [](std::string_view t) {
            return t.find_first_not_of("0123456789/") == std::string_view::npos ||
                   (t.size() > 2 && t.front() == '[' && t.back() == ']');
        };
        if (end >= 3 && allDigits(toks[end - 1]) && pidLike(toks[end - 2])) {
            h.weight = *parseNumber(toks[end - 1]);
            --end;
        }
        after = end;
    }
    if (end >= 2 && toks[end - 1].size() > 2 && toks[end - 1].front() == '[' && toks[end - 1].back() == ']' &&
        allDigits(toks[end - 1].substr(1, toks[end - 1].size() - 2)))
        --end; // [CPU]
    if (end < 2) return std::nullopt;
    const std::string_view idTok = toks[end - 1];
    const size_t slash = idTok.find('/');
    const std::string_view pidText = idTok.substr(0, slash);
    const std::string_view tidText = slash == std::string_view::npos ? pidText : idTok.substr(slash + 1);
    if (!allDigits(pidText) || !allDigits(tidText) || pidText.size() > 18 || tidText.size() > 18) return std::nullopt;
    h.pid = *parseInteger(pidText);
    h.tid = *parseInteger(tidText);
    h.comm = trim(line.substr(0, static_cast<size_t>(toks[end - 1].data() - line.data())));
    if (h.comm.empty()) return std::nullopt;
    // After the timestamp: [PERIOD] EVENT: ...
    if (h.timeNs || !h.timeText.empty()) {
        if (after >= toks.size()) return std::nullopt;
        if (allDigits(toks[after]) && after + 1 < toks.size()) h.weight = *parseNumber(toks[after]);
    }
    return h;
}

struct FrameLine
{
    std::string_view sym;
    std::string_view dso;
};

// `<hex ip> <sym>[+0x<off>] (<dso>)`; the line must be trimmed. The dso may be missing.
std::optional<FrameLine> parseFrameLine(std::string_view line)
{
    const size_t sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos || !isHex(line.substr(0, sp))) return std::nullopt;
    std::string_view rest = trim(line.substr(sp));
    FrameLine f;
    if (!rest.empty() && rest.back() == ')') {
        const size_t open = rest.rfind(" (");
        if (open != std::string_view::npos) {
            f.dso = rest.substr(open + 2, rest.size() - open - 3);
            rest = trim(rest.substr(0, open));
        } else if (rest.front() == '(') { // no symbol column
            f.dso = rest.substr(1, rest.size() - 2);
            rest = {};
        }
    }
    if (const size_t plus = rest.rfind("+0x");
        plus != std::string_view::npos && plus > 0 && isHex(rest.substr(plus + 3)))
        rest = rest.substr(0, plus);
    f.sym = rest.empty() ? std::string_view("[unknown]") : rest;
    return f;
}

std::string_view baseName(std::string_view dso)
{
    const size_t slash = dso.rfind('/');
    return slash == std::string_view::npos ? dso : dso.substr(slash + 1);
}

bool isIndented(std::string_view raw)
{
    return !raw.empty() && (raw.front() == '\t' || raw.front() == ' ');
}

// The samples of a perf script output: a header line, then its frames (leaf first), then a blank line.
class SampleReader
{
public:
    SampleReader(ImportContext& ctx, std::optional<int64_t> anchorNs, size_t depthLimit)
        : m_ctx(ctx), m_anchorNs(anchorNs), m_depthLimit(depthLimit)
    {
    }
    Status run();

private:
    Status readLine(const Line& line, std::string_view text);
    Status frame(const FrameLine& f);
    Status finishSample();
    void notes();

    ImportContext& m_ctx;
    const std::optional<int64_t> m_anchorNs;
    const size_t m_depthLimit;
    std::map<std::tuple<std::string, int64_t, int64_t>, int64_t> m_threads;
    std::map<std::pair<std::string, std::string>, int64_t> m_frames;
    std::vector<int64_t> m_stack;           // frame ids, leaf first: at most m_depthLimit of them
    size_t m_stackDepth = 0;                // the sample's frames, kept or not
    std::optional<SourceLocation> m_deepAt; // the first frame line past the limit
    std::vector<std::string_view> m_toks;
    std::optional<Header> m_current;
    std::string m_currentComm;
    int64_t m_headerLines = 0, m_samples = 0, m_emptySamples = 0;
    std::optional<int64_t> m_minTime, m_maxTime;
    std::string m_capturedOn;
};

// Stores the sample read so far (its header and frames), if any.
Status SampleReader::finishSample()
{
    const size_t depth = std::exchange(m_stackDepth, 0);
    const auto cutAt = std::exchange(m_deepAt, std::nullopt);
    if (!m_current) return okStatus();
    const Header h = *m_current;
    m_current.reset();
    if (m_stack.empty()) {
        ++m_emptySamples;
        m_ctx.report(diag::kEmptyStack, 0,
                     fmt::format("sample of {} {}/{} has no frames", quoteLine(m_currentComm), h.pid, h.tid));
        return okStatus();
    }
    // With anchor= every time is placed: one beyond int64 nanoseconds, or past it once anchored, cannot be.
    std::optional<int64_t> ts;
    if (m_anchorNs && h.timeNs) ts = store::checkedAdd(*m_anchorNs, *h.timeNs);
    if (m_anchorNs && !ts && (h.timeNs || !h.timeText.empty())) {
        m_stack.clear();
        m_ctx.report(diag::kBadTimestamp, 0,
                     fmt::format("sample of {} {}/{} at perf time {} s: past the year 2262 once placed with "
                                 "anchor=, skipped",
                                 quoteLine(m_currentComm), h.pid, h.tid,
                                 h.timeNs ? fmt::format("{:.9f}", static_cast<double>(*h.timeNs) / 1e9)
                                          : clip(h.timeText.substr(0, h.timeText.size() - 1))));
        return okStatus();
    }
    const auto key = std::make_tuple(m_currentComm, h.pid, h.tid);
    auto t = m_threads.find(key);
    if (t == m_threads.end()) {
        RUNLENS_ASSIGN_OR_RETURN(auto id,
                                 m_ctx.writer.thread(m_ctx.nodeId, m_currentComm, h.pid, m_currentComm, h.tid));
        t = m_threads.emplace(key, id).first;
    }
    int64_t callsite = 0;
    if (const size_t keep = keptFrames(depth, m_depthLimit); keep > 0) {
        reportCutStack(m_ctx, depth, m_depthLimit, cutAt);
        m_stack.resize(keep);
        RUNLENS_ASSIGN_OR_RETURN(auto root, cutRootCallsite(m_ctx.writer));
        callsite = root;
    }
    for (size_t k = m_stack.size(); k-- > 0;) { // outermost frame first
        RUNLENS_ASSIGN_OR_RETURN(auto next, m_ctx.writer.callsite(callsite, m_stack[k]));
        callsite = next;
    }
    m_stack.clear();
    ++m_samples;
    return m_ctx.writer.stackSample(t->second, callsite, ts, 1, h.weight);
}

// A frame line of the current sample: its frame id onto the stack, unless the stack is already past what a cut
// stack keeps (then only counted).
Status SampleReader::frame(const FrameLine& f)
{
    if (++m_stackDepth > m_depthLimit) {
        if (!m_deepAt) m_deepAt = m_ctx.lines.location();
        return okStatus();
    }
    auto key = std::make_pair(std::string(f.sym), std::string(f.dso));
    auto it = m_frames.find(key);
    if (it == m_frames.end()) {
        RUNLENS_ASSIGN_OR_RETURN(auto id, m_ctx.writer.frame(f.sym, {}, 0, baseName(f.dso)));
        it = m_frames.emplace(std::move(key), id).first;
    }
    m_stack.push_back(it->second);
    return okStatus();
}

// A line that is not blank (text: trimmed).
Status SampleReader::readLine(const Line& line, std::string_view text)
{
    if (line.tooLong) {
        m_ctx.report(diag::kLineTooLong, 0,
                     fmt::format("line longer than the reader's limit: \"{}\"", quoteLine(text)));
        return okStatus();
    }
    if (text.front() == '#' && !m_current) {
        ++m_headerLines;
        if (text.starts_with("# captured on:")) m_capturedOn = std::string(trim(text.substr(14)));
        return okStatus();
    }
    const bool legacyFrame = m_current && text.back() == ')' && parseFrameLine(text);
    if (!isIndented(line.text) && !legacyFrame) {
        if (auto h = parseHeader(text, m_toks)) {
            RUNLENS_TRY(finishSample());
            m_current = h;
            m_currentComm = std::string(h->comm);
            ++m_ctx.rowsRead;
            if (h->timeNs) {
                if (!m_minTime || *h->timeNs < *m_minTime) m_minTime = h->timeNs;
                if (!m_maxTime || *h->timeNs > *m_maxTime) m_maxTime = h->timeNs;
            }
            return okStatus();
        }
    }
    const auto f = m_current ? parseFrameLine(text) : std::nullopt;
    if (!f) {
        m_ctx.report(
            diag::kInvalidLine, 0,
            fmt::format("expected a sample header or an \"ip sym (dso)\" frame line, got \"{}\"", quoteLine(text)));
        return okStatus();
    }
    return frame(*f);
}

void SampleReader::notes()
{
    m_ctx.notes.push_back(fmt::format("{} samples, {} threads", m_samples, m_threads.size()));
    if (m_headerLines > 0)
        m_ctx.notes.push_back(
            fmt::format("perf header block: {} comment lines skipped{}", m_headerLines,
                        m_capturedOn.empty() ? std::string() : " (captured on: " + m_capturedOn + ")"));
    if (m_minTime) {
        if (m_anchorNs)
            m_ctx.notes.push_back(
                fmt::format("perf times placed with anchor= {} (perf time 0)", untimed::utcText(*m_anchorNs)));
        else
            m_ctx.notes.push_back(
                fmt::format("perf times ({:.6f}..{:.6f} s since boot) are not wall clock: samples stored "
                            "untimed; give anchor= (wall time of perf time 0) to keep them",
                            static_cast<double>(*m_minTime) / 1e9, static_cast<double>(*m_maxTime) / 1e9));
    }
    if (m_emptySamples > 0) m_ctx.notes.push_back(fmt::format("{} samples without frames skipped", m_emptySamples));
}

Status SampleReader::run()
{
    Line line;
    int64_t lineCount = 0;
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(auto more, m_ctx.lines.next(line));
        if (!more) break;
        RUNLENS_TRY(m_ctx.checkpointEvery(lineCount, kCheckpointEvery));
        const std::string_view text = trim(line.text);
        RUNLENS_TRY(text.empty() ? finishSample() : readLine(line, text));
    }
    RUNLENS_TRY(finishSample());
    notes();
    return okStatus();
}

} // namespace

int PerfScriptImporter::sniff(const SniffInput& input) const
{
    std::string_view head = input.head;
    std::vector<std::string_view> toks;
    bool prevHeader = false;
    size_t pos = 0;
    for (int n = 0; pos < head.size() && n < kSniffMaxLines; ++n) {
        size_t nl = head.find('\n', pos);
        if (nl == std::string_view::npos) nl = head.size();
        const std::string_view raw = head.substr(pos, nl - pos);
        pos = nl + 1;
        const std::string_view line = trim(raw);
        if (line.empty() || line.front() == '#') {
            prevHeader = false;
            continue;
        }
        if (prevHeader) {
            // Legacy output has unindented frames; they still need the `(dso)` column.
            if (parseFrameLine(line) && line.back() == ')' &&
                (isIndented(raw) || line.find(" (") != std::string_view::npos))
                return 90;
        }
        prevHeader = !isIndented(raw) && line.back() == ':' && parseHeader(line, toks).has_value();
    }
    return 0;
}

Status PerfScriptImporter::run(ImportContext& ctx) const
{
    // anchor= is the wall time of perf time 0, read like the start= option of untimed captures.
    std::optional<int64_t> anchorNs;
    if (auto it = ctx.options.extra.find("anchor"); it != ctx.options.extra.end()) {
        RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(ctx.options.timeZone));
        ImportOptions only;
        only.extra["start"] = it->second;
        auto placement = untimed::readPlacement(only, tz, 1'000'000'000, 0);
        if (!placement)
            return makeError(ErrorCode::Usage,
                             "anchor=" + clip(it->second) + ": expected epoch seconds or an ISO 8601 time");
        anchorNs = placement->startNs;
    }
    RUNLENS_ASSIGN_OR_RETURN(auto depthLimit, maxStackDepth(ctx.options));
    SampleReader reader(ctx, anchorNs, depthLimit);
    return reader.run();
}

} // namespace runlens::importers
