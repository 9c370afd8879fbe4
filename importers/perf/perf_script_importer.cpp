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
constexpr size_t kQuoteBytes = 80;
constexpr int64_t kCheckpointEvery = 4096;

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}
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

std::string quote(std::string_view text)
{
    if (text.size() <= kQuoteBytes) return std::string(text);
    size_t n = kQuoteBytes;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80)
        --n;
    return std::string(text.substr(0, n)) + "...";
}

struct Token
{
    std::string_view text;
    size_t begin = 0; // offset in the line
};

void tokenize(std::string_view line, std::vector<Token>& out)
{
    out.clear();
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && isSpace(line[i]))
            ++i;
        const size_t b = i;
        while (i < line.size() && !isSpace(line[i]))
            ++i;
        if (i > b) out.push_back({line.substr(b, i - b), b});
    }
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
std::optional<Header> parseHeader(std::string_view line, std::vector<Token>& toks)
{
    tokenize(line, toks);
    if (toks.size() < 3) return std::nullopt;
    Header h;
    size_t end = toks.size(); // first token after the comm/pid/cpu part
    for (size_t i = 2; i < toks.size(); ++i)
        if (parseTimestamp(toks[i].text, h.timeNs)) {
            if (!h.timeNs) h.timeText = std::string(toks[i].text);
            end = i;
            break;
        }
    size_t after = end + 1;
    if (end == toks.size()) { // legacy: `comm pid [cpu] [period] event:`
        for (size_t i = 2; i < toks.size() && end == toks.size(); ++i)
            if (toks[i].text.size() > 1 && toks[i].text.back() == ':') end = i;
        if (end == toks.size()) return std::nullopt;
        // `comm pid [cpu] period event:`: a period needs a pid or [cpu] token before it.
        const auto pidLike = [](std::string_view t) {
            return t.find_first_not_of("0123456789/") == std::string_view::npos ||
                   (t.size() > 2 && t.front() == '[' && t.back() == ']');
        };
        if (end >= 3 && allDigits(toks[end - 1].text) && pidLike(toks[end - 2].text)) {
            h.weight = *parseNumber(toks[end - 1].text);
            --end;
        }
        after = end;
    }
    if (end >= 2 && toks[end - 1].text.size() > 2 && toks[end - 1].text.front() == '[' &&
        toks[end - 1].text.back() == ']' && allDigits(toks[end - 1].text.substr(1, toks[end - 1].text.size() - 2)))
        --end; // [CPU]
    if (end < 2) return std::nullopt;
    const std::string_view idTok = toks[end - 1].text;
    const size_t slash = idTok.find('/');
    const std::string_view pidText = idTok.substr(0, slash);
    const std::string_view tidText = slash == std::string_view::npos ? pidText : idTok.substr(slash + 1);
    if (!allDigits(pidText) || !allDigits(tidText) || pidText.size() > 18 || tidText.size() > 18) return std::nullopt;
    h.pid = *parseInteger(pidText);
    h.tid = *parseInteger(tidText);
    h.comm = trim(line.substr(0, toks[end - 1].begin));
    if (h.comm.empty()) return std::nullopt;
    // After the timestamp: [PERIOD] EVENT: ...
    if (h.timeNs || !h.timeText.empty()) {
        if (after >= toks.size()) return std::nullopt;
        if (allDigits(toks[after].text) && after + 1 < toks.size()) h.weight = *parseNumber(toks[after].text);
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

} // namespace

int PerfScriptImporter::sniff(const SniffInput& input) const
{
    std::string_view head = input.head;
    std::vector<Token> toks;
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
                             "anchor=" + untimed::clip(it->second) + ": expected epoch seconds or an ISO 8601 time");
        anchorNs = placement->startNs;
    }

    std::map<std::tuple<std::string, int64_t, int64_t>, int64_t> threads;
    std::map<std::pair<std::string, std::string>, int64_t> frames;
    auto depthLimit = maxStackDepth(ctx.options);
    if (!depthLimit) return depthLimit.error();
    std::vector<int64_t> stack;           // frame ids, leaf first: at most depthLimit of them
    size_t stackDepth = 0;                // the sample's frames, kept or not
    std::optional<SourceLocation> deepAt; // the first frame line past the limit
    std::vector<Token> toks;
    std::optional<Header> current;
    std::string currentComm;
    int64_t headerLines = 0, samples = 0, emptySamples = 0;
    std::optional<int64_t> minTime, maxTime;
    std::string capturedOn;

    auto finish = [&]() -> Status {
        const size_t depth = std::exchange(stackDepth, 0);
        const auto cutAt = std::exchange(deepAt, std::nullopt);
        if (!current) return okStatus();
        const Header h = *current;
        current.reset();
        if (stack.empty()) {
            ++emptySamples;
            ctx.report(diag::kEmptyStack, 0,
                       fmt::format("sample of {} {}/{} has no frames", quote(currentComm), h.pid, h.tid));
            return okStatus();
        }
        // With anchor= every time is placed: one beyond int64 nanoseconds, or past it once anchored, cannot be.
        std::optional<int64_t> ts;
        if (anchorNs) {
            if (h.timeNs) ts = store::checkedAdd(*anchorNs, *h.timeNs);
            if (!ts && (h.timeNs || !h.timeText.empty())) {
                stack.clear();
                ctx.report(diag::kBadTimestamp, 0,
                           fmt::format("sample of {} {}/{} at perf time {} s: past the year 2262 once placed with "
                                       "anchor=, skipped",
                                       quote(currentComm), h.pid, h.tid,
                                       h.timeNs ? fmt::format("{:.9f}", static_cast<double>(*h.timeNs) / 1e9)
                                                : untimed::clip(h.timeText.substr(0, h.timeText.size() - 1))));
                return okStatus();
            }
        }
        const auto key = std::make_tuple(currentComm, h.pid, h.tid);
        auto t = threads.find(key);
        if (t == threads.end()) {
            RUNLENS_ASSIGN_OR_RETURN(auto id, ctx.writer.thread(ctx.nodeId, currentComm, h.pid, currentComm, h.tid));
            t = threads.emplace(key, id).first;
        }
        int64_t callsite = 0;
        if (const size_t keep = keptFrames(depth, *depthLimit); keep > 0) {
            reportCutStack(ctx, depth, *depthLimit, cutAt);
            stack.resize(keep);
            RUNLENS_ASSIGN_OR_RETURN(auto root, cutRootCallsite(ctx.writer));
            callsite = root;
        }
        for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
            RUNLENS_ASSIGN_OR_RETURN(auto next, ctx.writer.callsite(callsite, *it));
            callsite = next;
        }
        stack.clear();
        ++samples;
        return ctx.writer.stackSample(t->second, callsite, ts, 1, h.weight);
    };

    Line line;
    for (int64_t n = 1;; ++n) {
        RUNLENS_ASSIGN_OR_RETURN(auto more, ctx.lines.next(line));
        if (!more) break;
        if (n % kCheckpointEvery == 0)
            if (Status s = ctx.checkpoint(); !s) return s;
        const std::string_view text = trim(line.text);
        if (text.empty()) {
            RUNLENS_TRY(finish());
            continue;
        }
        if (line.tooLong) {
            ctx.report(diag::kLineTooLong, 0, fmt::format("line longer than the reader's limit: \"{}\"", quote(text)));
            continue;
        }
        if (text.front() == '#' && !current) {
            ++headerLines;
            if (text.starts_with("# captured on:")) capturedOn = std::string(trim(text.substr(14)));
            continue;
        }
        const bool legacyFrame = current && text.back() == ')' && parseFrameLine(text);
        if (!isIndented(line.text) && !legacyFrame) {
            if (auto h = parseHeader(text, toks)) {
                RUNLENS_TRY(finish());
                current = h;
                currentComm = std::string(h->comm);
                ++ctx.rowsRead;
                if (h->timeNs) {
                    if (!minTime || *h->timeNs < *minTime) minTime = h->timeNs;
                    if (!maxTime || *h->timeNs > *maxTime) maxTime = h->timeNs;
                }
                continue;
            }
        }
        const auto f = current ? parseFrameLine(text) : std::nullopt;
        if (!f) {
            ctx.report(
                diag::kInvalidLine, 0,
                fmt::format("expected a sample header or an \"ip sym (dso)\" frame line, got \"{}\"", quote(text)));
            continue;
        }
        if (++stackDepth > *depthLimit) { // past what a cut stack keeps: counted, not stored
            if (!deepAt) deepAt = ctx.lines.location();
            continue;
        }
        auto key = std::make_pair(std::string(f->sym), std::string(f->dso));
        auto it = frames.find(key);
        if (it == frames.end()) {
            RUNLENS_ASSIGN_OR_RETURN(auto id, ctx.writer.frame(f->sym, {}, 0, baseName(f->dso)));
            it = frames.emplace(std::move(key), id).first;
        }
        stack.push_back(it->second);
    }
    RUNLENS_TRY(finish());

    ctx.notes.push_back(fmt::format("{} samples, {} threads", samples, threads.size()));
    if (headerLines > 0)
        ctx.notes.push_back(fmt::format("perf header block: {} comment lines skipped{}", headerLines,
                                        capturedOn.empty() ? std::string() : " (captured on: " + capturedOn + ")"));
    if (minTime) {
        if (anchorNs)
            ctx.notes.push_back(
                fmt::format("perf times placed with anchor= {} (perf time 0)", untimed::utcText(*anchorNs)));
        else
            ctx.notes.push_back(
                fmt::format("perf times ({:.6f}..{:.6f} s since boot) are not wall clock: samples stored "
                            "untimed; give anchor= (wall time of perf time 0) to keep them",
                            *minTime / 1e9, *maxTime / 1e9));
    }
    if (emptySamples > 0) ctx.notes.push_back(fmt::format("{} samples without frames skipped", emptySamples));
    return okStatus();
}

} // namespace runlens::importers
