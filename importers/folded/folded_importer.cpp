#include "importers/folded/folded_importer.h"

#include "importers/common/frame_name.h"
#include "importers/common/stack_depth.h"
#include "importers/common/text_fields.h"
#include "importers/common/text_map.h"
#include "importers/diagnostic_kinds.h"

#include <QByteArrayView>
#include <QStringDecoder>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace runlens::importers {
namespace {

constexpr int kSniffMaxLines = 200;
constexpr double kMaxCount = 9.0e18; // counts must fit an int64 sample count
constexpr int64_t kCheckpointEvery = 4096;

bool isComment(std::string_view t)
{
    return t.front() == '#' || t.substr(0, 2) == "//";
}

// flamegraph.pl's count: \d+(?:\.\d*)?
bool isCountToken(std::string_view t)
{
    size_t i = 0;
    while (i < t.size() && isDigit(t[i]))
        ++i;
    if (i == 0) return false;
    if (i == t.size()) return true;
    if (t[i] != '.') return false;
    for (++i; i < t.size(); ++i)
        if (!isDigit(t[i])) return false;
    return true;
}

// Splits "rest<whitespace>COUNT" at the last whitespace; false when the line does not end with a count.
bool splitTrailingCount(std::string_view line, std::string_view& rest, std::string_view& count)
{
    size_t p = line.size();
    while (p > 0 && !isSpace(line[p - 1]))
        --p;
    if (p == 0 || p == line.size() || !isCountToken(line.substr(p))) return false;
    count = line.substr(p);
    rest = trim(line.substr(0, p));
    return !rest.empty();
}

struct FoldedLine
{
    std::string_view stack;
    std::string_view count;
    std::string_view firstCount; // the dropped "before" count of a differential line, else empty
};

// `stack COUNT` or, differential, `stack COUNT1 COUNT2` (flamegraph.pl treats a stack that itself
// ends with a count the same way). The line must be trimmed and non-empty.
std::optional<FoldedLine> parseFoldedLine(std::string_view line)
{
    FoldedLine f;
    if (!splitTrailingCount(line, f.stack, f.count)) return std::nullopt;
    std::string_view before, first;
    if (splitTrailingCount(f.stack, before, first)) {
        f.stack = before;
        f.firstCount = first;
    }
    return f;
}

// Replaces bytes that are not UTF-8 with U+FFFD; returns true when it had to.
bool repairUtf8(std::string_view in, std::string& out)
{
    // ASCII, checked eight bytes at a time (most stacks are).
    size_t i = 0;
    uint64_t high = 0;
    for (; i + 8 <= in.size(); i += 8) {
        uint64_t w;
        std::memcpy(&w, in.data() + i, 8);
        high |= w;
    }
    for (; i < in.size(); ++i)
        high |= static_cast<unsigned char>(in[i]);
    if ((high & 0x8080808080808080ull) == 0) return false;
    QStringDecoder decoder(QStringDecoder::Utf8);
    const QString s = decoder.decode(QByteArrayView(in.data(), static_cast<qsizetype>(in.size())));
    if (!decoder.hasError()) return false;
    out = s.toStdString();
    return true;
}

// A tid as py-spy writes it: decimal (Linux OS tid) or 0x-hex (pthread id on macOS).
std::optional<int64_t> parseTid(std::string_view s)
{
    if (s.empty()) return std::nullopt;
    return parseInteger(s);
}

struct ThreadKey
{
    std::string_view process;
    int64_t pid = 0;
    std::string_view name;
    int64_t tid = 0;
};

// `process <pid>:"<cmdline>"` at the start of s. The command line may itself contain ';', so it ends
// at the first `";` (or at a final `"`). Returns the length consumed, 0 when s does not start with one.
size_t parseProcessFrame(std::string_view s, ThreadKey& key)
{
    constexpr std::string_view kPrefix = "process ";
    if (s.substr(0, kPrefix.size()) != kPrefix) return 0;
    const size_t colon = s.find(":\"", kPrefix.size());
    if (colon == std::string_view::npos) return 0;
    auto pid = parseInteger(s.substr(kPrefix.size(), colon - kPrefix.size()));
    if (!pid) return 0;
    const size_t start = colon + 2;
    size_t end = s.find("\";", start);
    if (end == std::string_view::npos) {
        if (s.size() < start + 1 || s.back() != '"') return 0;
        end = s.size() - 1;
    }
    key.process = s.substr(start, end - start);
    key.pid = *pid;
    return end + 1;
}

// `thread (<tid>)`, `thread (<tid>): <name>` or `thread (<name>)` as a whole frame.
bool parseThreadFrame(std::string_view f, ThreadKey& key)
{
    constexpr std::string_view kPrefix = "thread (";
    if (f.substr(0, kPrefix.size()) != kPrefix) return false;
    const std::string_view rest = f.substr(kPrefix.size());
    const size_t close = rest.find(')');
    if (close != std::string_view::npos) {
        const std::string_view after = rest.substr(close + 1);
        if (auto tid = parseTid(rest.substr(0, close)); tid && (after.empty() || after.substr(0, 2) == ": ")) {
            key.tid = *tid;
            key.name = after.empty() ? std::string_view() : after.substr(2);
            return true;
        }
    }
    if (rest.size() < 2 || rest.back() != ')') return false;
    key.name = rest.substr(0, rest.size() - 1);
    key.tid = 0;
    return true;
}

struct StackTotal
{
    int64_t sampleCount = 0;
    double weight = 0;
    std::optional<SourceLocation> firstLine; // where a stack too deep to keep whole first appeared
};

// The distinct stack texts of a file with their summed counts, and their order of first appearance (for a stable
// layout).
struct StackTotals
{
    TextMap<StackTotal> byStack;
    std::vector<std::pair<const std::string, StackTotal>*> order;
    int64_t differential = 0; // lines with two counts
};

struct Sample
{
    std::string_view stack;
    double count = 0;
};

// The stack and count of a line that is not blank (text: trimmed), or nullopt when the line is a comment or is
// reported and dropped. Every line but a comment counts as a row read.
std::optional<Sample> readSample(ImportContext& ctx, const Line& line, std::string_view text, int64_t& differential)
{
    if (line.tooLong) {
        ++ctx.rowsRead;
        ctx.report(diag::kLineTooLong, 0,
                   fmt::format("line longer than the reader's limit, skipped: \"{}\"", quoteLine(text)));
        return std::nullopt;
    }
    if (isComment(text)) {
        ctx.report(diag::kCommentLine, 0, quoteLine(text));
        return std::nullopt;
    }
    ++ctx.rowsRead;
    const auto parsed = parseFoldedLine(text);
    if (!parsed) {
        ctx.report(diag::kInvalidLine, 0,
                   fmt::format("expected \"frame;frame;...;leaf COUNT\", got \"{}\"", quoteLine(text)));
        return std::nullopt;
    }
    const auto value = parseNumber(parsed->count);
    if (!value || !std::isfinite(*value) || *value > kMaxCount) {
        ctx.report(diag::kBadNumber, 0, fmt::format("sample count {} is out of range", quoteLine(parsed->count)));
        return std::nullopt;
    }
    if (!parsed->firstCount.empty()) {
        ++differential;
        ctx.report(diag::kDifferentialCount, 0,
                   fmt::format("two counts ({} {}): kept the second", parsed->firstCount, parsed->count));
    }
    if (*value == 0) {
        ctx.report(diag::kZeroCount, 0, fmt::format("zero count for \"{}\", not stored", quoteLine(parsed->stack)));
        return std::nullopt;
    }
    // ";;;" splits into frames without names: a sample of nothing, not a stack.
    if (parsed->stack.find_first_not_of("; \t") == std::string_view::npos) {
        ctx.report(diag::kEmptyStack, 0,
                   fmt::format("\"{}\" has separators but no frame names; {} samples dropped", quoteLine(parsed->stack),
                               quoteLine(parsed->count)));
        return std::nullopt;
    }
    return Sample{parsed->stack, *value};
}

// Pass 1: the counts of each distinct stack text summed (a hash of the whole line, no parsing of frames).
Status sumStacks(ImportContext& ctx, size_t depthLimit, StackTotals& totals)
{
    std::string repaired;
    Line line;
    int64_t lineCount = 0;
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(auto more, ctx.lines.next(line));
        if (!more) break;
        RUNLENS_TRY(ctx.checkpointEvery(lineCount, kCheckpointEvery));
        const std::string_view text = trim(line.text);
        if (text.empty()) continue;
        const auto sample = readSample(ctx, line, text, totals.differential);
        if (!sample) continue;
        std::string_view stack = sample->stack;
        if (repairUtf8(stack, repaired)) {
            ctx.report(diag::kBadUtf8, 0, "bytes that are not UTF-8 replaced by U+FFFD");
            stack = repaired;
        }
        auto it = totals.byStack.find(stack);
        if (it == totals.byStack.end()) {
            it = totals.byStack.try_emplace(std::string(stack)).first;
            totals.order.push_back(&*it);
            if (static_cast<size_t>(std::count(stack.begin(), stack.end(), ';')) >= depthLimit)
                it->second.firstLine = ctx.lines.location();
        }
        const int64_t count = std::floor(sample->count) == sample->count ? static_cast<int64_t>(sample->count) : 1;
        int64_t& sum = it->second.sampleCount;
        sum = sum > std::numeric_limits<int64_t>::max() - count ? std::numeric_limits<int64_t>::max() : sum + count;
        it->second.weight += sample->count;
    }
    return okStatus();
}

// py-spy's root frames at the start of a stack into key: processes (outermost parent first; the innermost one owns
// the thread), then a thread. The frames below them go to frames; a stack of nothing but root frames keeps the last
// one as its only frame, and is then rootOnly (true).
bool splitRootFrames(std::string_view stack, ThreadKey& key, std::vector<std::string_view>& frames)
{
    std::string_view rest = stack;
    std::string_view lastRoot;
    for (;;) {
        const std::string_view head = rest.substr(0, rest.find(';'));
        size_t used = parseProcessFrame(rest, key);
        if (used == 0 && parseThreadFrame(head, key)) used = head.size();
        if (used == 0) break;
        lastRoot = rest.substr(0, used);
        rest = used < rest.size() ? rest.substr(used + 1) : std::string_view();
        if (rest.empty()) break;
    }
    if (rest.empty()) {
        frames.assign(1, lastRoot);
        return true;
    }
    splitFields(rest, ';', frames);
    return false;
}

// Pass 2: each distinct stack split into its thread and frames and stored once.
Status storeStacks(ImportContext& ctx, size_t depthLimit, const StackTotals& totals, int64_t& samples,
                   std::unordered_set<int64_t>& threadIds)
{
    TextMap<int64_t> frameIds; // by frame text
    std::vector<std::string_view> frames;
    for (size_t i = 0; i < totals.order.size(); ++i) {
        if ((i + 1) % kCheckpointEvery == 0)
            if (Status s = ctx.checkpoint(); !s) return s;
        const auto& [stack, total] = *totals.order[i];
        ThreadKey key;
        const bool rootOnly = splitRootFrames(stack, key, frames);
        RUNLENS_ASSIGN_OR_RETURN(auto threadId, ctx.writer.thread(ctx.nodeId, key.process, key.pid, key.name, key.tid));
        threadIds.insert(threadId);

        int64_t callsite = 0;
        if (const size_t keep = keptFrames(frames.size(), depthLimit); keep > 0) {
            reportCutStack(ctx, frames.size(), depthLimit, total.firstLine);
            RUNLENS_ASSIGN_OR_RETURN(auto root, cutRootCallsite(ctx.writer));
            callsite = root;
            frames.erase(frames.begin(), frames.end() - static_cast<std::ptrdiff_t>(keep));
        }
        for (const std::string_view f : frames) {
            int64_t frameId = 0;
            if (auto found = rootOnly ? frameIds.end() : frameIds.find(f); found != frameIds.end()) {
                frameId = found->second;
            } else {
                const FrameParts parts = rootOnly ? FrameParts{f, {}, 0} : splitFrameName(f);
                RUNLENS_ASSIGN_OR_RETURN(auto id, ctx.writer.frame(parts.name, parts.file, parts.line, {}));
                frameId = id;
                if (!rootOnly) frameIds.emplace(std::string(f), frameId);
            }
            RUNLENS_ASSIGN_OR_RETURN(auto next, ctx.writer.callsite(callsite, frameId));
            callsite = next;
        }
        RUNLENS_TRY(ctx.writer.stackSample(threadId, callsite, std::nullopt, total.sampleCount, total.weight));
        samples += total.sampleCount;
    }
    return okStatus();
}

} // namespace

int FoldedImporter::sniff(const SniffInput& input) const
{
    std::string_view head = input.head;
    // The head may end inside a line: judge only complete lines when there are any.
    if (const size_t lastNl = head.rfind('\n'); lastNl != std::string_view::npos && !head.ends_with('\n'))
        head = head.substr(0, lastNl);
    int total = 0, good = 0, multiFrame = 0;
    size_t pos = 0;
    for (int n = 0; pos < head.size() && n < kSniffMaxLines; ++n) {
        size_t nl = head.find('\n', pos);
        if (nl == std::string_view::npos) nl = head.size();
        const std::string_view line = trim(head.substr(pos, nl - pos));
        pos = nl + 1;
        if (line.empty() || isComment(line)) continue;
        ++total;
        const auto parsed = parseFoldedLine(line);
        if (!parsed) {
            if (total == 1 && line.find(',') != std::string_view::npos) return 0; // a CSV header
            continue;
        }
        const std::string_view stack = parsed->stack;
        if (stack.find(';') == std::string_view::npos) {
            // A single frame is possible, but tables (CSV rows, `nvidia-smi dmon` columns, Prometheus
            // samples, `key=value` logs) also end with a number: do not count those.
            const std::string_view first = stack.substr(0, stack.find_first_of(" \t"));
            if (stack.find_first_of(",{|=\t") != std::string_view::npos || parseNumber(first) || first == "-") continue;
        } else {
            ++multiFrame;
        }
        ++good;
    }
    if (total == 0 || good * 5 < total * 4) return 0;
    return multiFrame > 0 ? 90 : 30;
}

Status FoldedImporter::run(ImportContext& ctx) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto depthLimit, maxStackDepth(ctx.options));
    StackTotals totals;
    RUNLENS_TRY(sumStacks(ctx, depthLimit, totals));
    int64_t samples = 0;
    std::unordered_set<int64_t> threadIds;
    RUNLENS_TRY(storeStacks(ctx, depthLimit, totals, samples, threadIds));

    ctx.notes.push_back(fmt::format("{} stacks, {} samples, {} thread{} (untimed)", totals.order.size(), samples,
                                    threadIds.size(), threadIds.size() == 1 ? "" : "s"));
    if (totals.differential > 0)
        ctx.notes.push_back(fmt::format("{} differential lines: the second count kept", totals.differential));
    return okStatus();
}

} // namespace runlens::importers
