#include "importers/trainer/megatron_deepspeed_log_importer.h"

#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/diagnostic_kinds.h"
#include "importers/trainer/train_steps.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace runlens::importers {
namespace {

using trainer::StepRecord;

constexpr int kCheckpointLines = 16384;
constexpr size_t kMergeWindow = 8; // lines of one step are printed together

enum class Kind
{
    Other,
    Iteration,  // Megatron
    Progress,   // DeepSpeed step=
    Timers,     // time (ms) | ...
    Throughput, // DeepSpeed ThroughputTimer
    Pipeline,   // DeepSpeed pipeline engine
    Broken,     // looks like one of the above but its step cannot be read
};

// Reads digits at pos (after optional blanks); returns the value and moves pos past them.
std::optional<int64_t> digitsAt(std::string_view s, size_t& pos)
{
    while (pos < s.size() && s[pos] == ' ')
        ++pos;
    const size_t start = pos;
    while (pos < s.size() && isDigit(s[pos]))
        ++pos;
    if (pos == start || pos - start > 18) return std::nullopt;
    return parseInteger(s.substr(start, pos - start));
}

// Terminal escapes before a line: ESC c, ESC [ ... final byte.
std::string_view stripEscapes(std::string_view s)
{
    while (!s.empty() && s.front() == '\x1b') {
        size_t n = 2;
        if (s.size() > 1 && s[1] == '[') {
            n = 2;
            while (n < s.size() && !(s[n] >= 0x40 && s[n] <= 0x7e))
                ++n;
            ++n;
        }
        s.remove_prefix(std::min(n, s.size()));
    }
    return s;
}

struct Classified
{
    Kind kind = Kind::Other;
    size_t at = 0;       // where the message starts
    size_t fieldsAt = 0; // Iteration: after the "iteration N/ M |"
    std::optional<int64_t> step;
};

// "iteration N/ M |" at pos.
bool iterationHeader(std::string_view s, size_t pos, int64_t& step, size_t& end)
{
    size_t p = pos + 9; // "iteration"
    if (p >= s.size() || s[p] != ' ') return false;
    auto n = digitsAt(s, p);
    if (!n) return false;
    while (p < s.size() && s[p] == ' ')
        ++p;
    if (p >= s.size() || s[p] != '/') return false;
    ++p;
    if (!digitsAt(s, p)) return false;
    while (p < s.size() && s[p] == ' ')
        ++p;
    if (p >= s.size() || s[p] != '|') return false;
    step = *n;
    end = p + 1;
    return true;
}

Classified classify(std::string_view s)
{
    Classified c;
    if (s.find("elapsed time per iteration") != std::string_view::npos ||
        s.find("consumed samples") != std::string_view::npos) {
        for (size_t at = s.find("iteration"); at != std::string_view::npos; at = s.find("iteration", at + 1)) {
            int64_t step = 0;
            size_t end = 0;
            if (iterationHeader(s, at, step, end)) return {Kind::Iteration, at, end, step};
        }
        if (s.find(" | ") != std::string_view::npos) return {Kind::Broken, 0, 0, std::nullopt};
    }
    if (const size_t at = s.find("time (ms) |"); at != std::string_view::npos) return {Kind::Timers, at, at + 11, {}};
    if (const size_t at = s.find("RunningAvgSamplesPerSec="); at != std::string_view::npos) {
        c = {Kind::Throughput, at, at, std::nullopt};
        if (const size_t g = s.rfind("global_step=", at); g != std::string_view::npos) {
            size_t p = g + 12;
            c.step = digitsAt(s, p);
            if (!c.step) c.kind = Kind::Broken;
        }
        return c;
    }
    for (size_t at = s.find("step="); at != std::string_view::npos; at = s.find("step=", at + 1)) {
        if (at > 0 && s[at - 1] != ' ' && s[at - 1] != ']') continue;
        if (s.find(", skipped=", at) == std::string_view::npos) continue;
        size_t p = at + 5;
        auto n = digitsAt(s, p);
        if (!n || s.substr(p, 10) != ", skipped=") return {Kind::Broken, at, 0, std::nullopt};
        return {Kind::Progress, at, p, n};
    }
    if (const size_t at = s.find("steps: ");
        at != std::string_view::npos && s.find("iter time (s):", at) != std::string_view::npos) {
        size_t p = at + 7;
        auto n = digitsAt(s, p);
        if (!n) return {Kind::Broken, at, 0, std::nullopt};
        return {Kind::Pipeline, at, p, n};
    }
    return c;
}

// "[2024-04-04 09:09:53,312]" or "[2024-04-04 09:09:53.312345]" before the message: the text inside.
std::optional<std::string> bracketTime(std::string_view s, size_t before)
{
    for (size_t at = s.find('['); at != std::string_view::npos && at < before; at = s.find('[', at + 1)) {
        const std::string_view t = s.substr(at + 1);
        if (t.size() < 19 || !isDigit(t[0]) || !isDigit(t[3]) || t[4] != '-' || t[7] != '-' || t[10] != ' ' ||
            t[13] != ':' || t[16] != ':')
            continue;
        const size_t close = t.find(']');
        if (close == std::string_view::npos || close > 32) continue;
        std::string out(t.substr(0, close));
        for (char& ch : out)
            if (ch == ',') ch = '.';
        return out;
    }
    return std::nullopt;
}

// The next non-empty piece of a `a: 1 | b: 2 |` line at or after pos, trimmed, and where its field starts (pieceAt);
// pos moves past its bar. False when no piece is left.
bool nextPiece(std::string_view s, size_t& pos, std::string_view& piece, size_t& pieceAt)
{
    while (pos < s.size()) {
        size_t bar = s.find('|', pos);
        if (bar == std::string_view::npos) bar = s.size();
        piece = trim(s.substr(pos, bar - pos));
        pieceAt = pos;
        pos = bar + 1;
        if (!piece.empty()) return true;
    }
    return false;
}

struct Extra
{
    std::optional<double> consumedTokens, batch, seqlen;
};

class Parser
{
public:
    Parser(ImportContext& ctx, TimeZoneResolver tz) : m_ctx(ctx), m_tz(std::move(tz)) {}
    Status run();

private:
    Status line(std::string_view text, int64_t number);
    StepRecord& recordFor(const Classified& c, std::optional<int64_t> ts, int64_t number);
    std::optional<double> value(std::string_view key, std::string_view v, size_t column, StepRecord& r);
    void iteration(std::string_view s, size_t fieldsAt, StepRecord& r, Extra& extra);
    void timers(std::string_view s, size_t fieldsAt, StepRecord& r);
    void throughput(std::string_view s, size_t at, StepRecord& r);
    void progress(std::string_view s, size_t at, StepRecord& r);
    void pipeline(std::string_view s, size_t at, StepRecord& r);
    Status finish();

    ImportContext& m_ctx;
    TimeZoneResolver m_tz;
    std::vector<StepRecord> m_records;
    std::vector<Extra> m_extra;
    std::optional<int64_t> m_prevTs;
    int64_t m_counts[7] = {};
    bool m_zoneNoted = false;
};

std::optional<double> Parser::value(std::string_view key, std::string_view v, size_t column, StepRecord& r)
{
    auto n = parseNumber(trim(v));
    if (!n) {
        m_ctx.report(diag::kBadNumber, static_cast<int64_t>(column) + 1,
                     fmt::format("expected a number for \"{}\", got \"{}\"; ignored", key, clip(trim(v))));
        return std::nullopt;
    }
    if (!std::isfinite(*n)) {
        m_ctx.report(diag::kNanValue, static_cast<int64_t>(column) + 1,
                     fmt::format("\"{}\" is {}; stored as missing", key, clip(trim(v))));
        if (key == "learning rate" || key == "lr")
            r.nanFields.emplace_back("lr");
        else if (key == "grad norm")
            r.nanFields.emplace_back("grad_norm");
        else if (key.find("loss") != std::string_view::npos && key != "loss scale")
            r.nanFields.emplace_back("loss");
        return std::nullopt;
    }
    return n;
}

StepRecord& Parser::recordFor(const Classified& c, std::optional<int64_t> ts, int64_t number)
{
    if (c.step)
        for (size_t k = m_records.size(), n = 0; k-- > 0 && n < kMergeWindow; ++n)
            if (m_records[k].step == c.step) {
                if (!m_records[k].tsNs) m_records[k].tsNs = ts;
                return m_records[k];
            }
    StepRecord r;
    r.line = number;
    r.step = c.step;
    r.tsNs = ts;
    m_records.push_back(std::move(r));
    m_extra.emplace_back();
    return m_records.back();
}

void Parser::iteration(std::string_view s, size_t fieldsAt, StepRecord& r, Extra& extra)
{
    std::optional<double> otherLoss;
    bool lmLoss = false;
    size_t pos = fieldsAt, pieceAt = 0;
    std::string_view piece;
    while (nextPiece(s, pos, piece, pieceAt)) {
        const size_t colon = piece.rfind(':');
        if (colon == std::string_view::npos) {
            m_ctx.report(diag::kInvalidLine, static_cast<int64_t>(pieceAt) + 1,
                         fmt::format("field \"{}\" is not \"key: value\"; ignored", clip(piece)));
            continue;
        }
        const std::string_view key = trim(piece.substr(0, colon));
        const std::string_view v = piece.substr(colon + 1);
        const size_t column = pieceAt + (piece.data() - s.substr(pieceAt).data()) + colon + 1;
        if (key == "elapsed time per iteration (ms)") {
            if (auto n = value(key, v, column, r)) r.stepTimeS = *n / 1000.0;
        } else if (key == "learning rate") {
            r.lr = value(key, v, column, r);
        } else if (key == "lm loss") {
            r.loss = value(key, v, column, r);
            lmLoss = true;
        } else if (key == "grad norm") {
            r.gradNorm = value(key, v, column, r);
        } else if (key == "throughput per GPU (TFLOP/s/GPU)") {
            r.tflopsPerGpu = value(key, v, column, r);
        } else if (key == "samples per second") {
            r.samplesPerS = value(key, v, column, r);
        } else if (key == "consumed tokens") {
            extra.consumedTokens = value(key, v, column, r);
        } else if (key == "global batch size") {
            extra.batch = value(key, v, column, r);
        } else if (key == "actual seqlen") {
            extra.seqlen = value(key, v, column, r);
        } else if (!otherLoss && key != "loss scale" && key.size() >= 4 && key.substr(key.size() - 4) == "loss") {
            otherLoss = value(key, v, column, r);
        }
    }
    if (!lmLoss && otherLoss) r.loss = otherLoss;
}

void Parser::timers(std::string_view s, size_t fieldsAt, StepRecord& r)
{
    size_t pos = fieldsAt, pieceAt = 0;
    std::string_view piece;
    while (nextPiece(s, pos, piece, pieceAt)) {
        const size_t colon = piece.rfind(':');
        const std::string_view name = colon == std::string_view::npos ? piece : trim(piece.substr(0, colon));
        if (colon == std::string_view::npos || name.empty() || name.size() > 64) {
            m_ctx.report(diag::kInvalidLine, static_cast<int64_t>(pieceAt) + 1,
                         fmt::format("timer field \"{}\" is not \"name: value\"; ignored", clip(piece)));
            continue;
        }
        auto n = value(name, piece.substr(colon + 1), pieceAt, r);
        if (!n) continue;
        bool seen = false;
        for (const auto& t : r.timers)
            seen = seen || t.first == name;
        if (!seen) r.timers.emplace_back(std::string(name), *n / 1000.0);
    }
}

// ", CurrSamplesPerSec=227.48, " → the value of key= up to the next comma.
std::optional<std::string_view> keyValue(std::string_view s, std::string_view key, size_t& column)
{
    const size_t at = s.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    column = at + key.size();
    const size_t end = s.find(',', column);
    return s.substr(column, end == std::string_view::npos ? std::string_view::npos : end - column);
}

void Parser::throughput(std::string_view s, size_t at, StepRecord& r)
{
    size_t column = 0;
    if (auto v = keyValue(s.substr(at), "CurrSamplesPerSec=", column)) {
        if (!r.samplesPerS) r.samplesPerS = value("CurrSamplesPerSec", *v, at + column, r);
    } else {
        m_ctx.report(diag::kInvalidLine, static_cast<int64_t>(at) + 1,
                     "a throughput line without CurrSamplesPerSec=; ignored");
    }
}

void Parser::progress(std::string_view s, size_t at, StepRecord& r)
{
    const size_t lr = s.find("lr=[", at);
    if (lr == std::string_view::npos) return;
    const size_t start = lr + 4;
    const size_t end = s.find_first_of(",]", start);
    if (end == std::string_view::npos) {
        m_ctx.report(diag::kInvalidLine, static_cast<int64_t>(lr) + 1, "lr=[ without its closing bracket; ignored");
        return;
    }
    if (!r.lr) r.lr = value("lr", s.substr(start, end - start), start, r);
}

void Parser::pipeline(std::string_view s, size_t at, StepRecord& r)
{
    auto field = [&](std::string_view key) -> std::optional<double> {
        const size_t k = s.find(key, at);
        if (k == std::string_view::npos) return std::nullopt;
        const size_t start = k + key.size();
        const size_t end = s.find(' ', s.find_first_not_of(' ', start));
        return value(trim(key.substr(0, key.size() - 1)),
                     s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start), start, r);
    };
    if (!r.loss) r.loss = field("loss:");
    if (auto t = field("iter time (s):"); t && !r.stepTimeS) r.stepTimeS = t;
    if (auto v = field("samples/sec:"); v && !r.samplesPerS) r.samplesPerS = v;
}

Status Parser::line(std::string_view text, int64_t number)
{
    const std::string_view s = stripEscapes(text);
    const Classified c = classify(s);
    ++m_counts[static_cast<int>(c.kind)];
    if (c.kind == Kind::Other) return okStatus();
    ++m_ctx.rowsRead;
    if (c.kind == Kind::Broken) {
        m_ctx.report(diag::kInvalidLine, static_cast<int64_t>(c.at) + 1,
                     fmt::format("a training log line whose step cannot be read: \"{}\"; dropped", clip(trim(s))));
        return okStatus();
    }
    std::optional<int64_t> ts;
    if (auto t = bracketTime(s, c.at)) {
        if (auto local = parseLocalDateTime(*t)) {
            ts = m_tz.toUtcNs(*local, m_prevTs);
            m_prevTs = ts;
            if (!m_zoneNoted) {
                m_zoneNoted = true;
                RUNLENS_TRY(m_ctx.writer.setNodeTimeZone(m_ctx.nodeId, m_tz.id()));
                m_ctx.notes.push_back(fmt::format("naive local times read in time zone {}", m_tz.description()));
            }
        } else {
            m_ctx.report(diag::kBadTimestamp, 0, fmt::format("cannot read time \"{}\"; line taken as untimed", *t));
        }
    }
    if (c.kind == Kind::Timers && m_records.empty() && !ts) {
        m_ctx.report(diag::kInvalidLine, static_cast<int64_t>(c.at) + 1,
                     "timers before any step line and without a time; dropped");
        return okStatus();
    }
    if (c.kind == Kind::Timers && !m_records.empty()) {
        timers(s, c.fieldsAt, m_records.back());
        return okStatus();
    }
    StepRecord& r = recordFor(c, ts, number);
    Extra& extra = m_extra[static_cast<size_t>(&r - m_records.data())];
    switch (c.kind) {
    case Kind::Iteration:
        iteration(s, c.fieldsAt, r, extra);
        break;
    case Kind::Progress:
        progress(s, c.fieldsAt, r);
        break;
    case Kind::Timers:
        timers(s, c.fieldsAt, r);
        break;
    case Kind::Throughput:
        throughput(s, c.at, r);
        break;
    case Kind::Pipeline:
        pipeline(s, c.fieldsAt, r);
        break;
    case Kind::Other:
    case Kind::Broken:
        break;
    }
    return okStatus();
}

Status Parser::run()
{
    RUNLENS_TRY(m_ctx.forEachLine(kCheckpointLines, [this](const Line& ln) { return line(ln.text, ln.number); }));
    return finish();
}

Status Parser::finish()
{
    if (m_records.empty())
        return makeError(ErrorCode::Format,
                         "no Megatron iteration line and no DeepSpeed step, timer or throughput line",
                         m_ctx.lines.location());
    // tokens/s: consumed tokens per second since the previous iteration, or global batch × sequence length.
    for (size_t i = 0; i < m_records.size(); ++i) {
        StepRecord& r = m_records[i];
        const Extra& e = m_extra[i];
        if (!r.stepTimeS || *r.stepTimeS <= 0 || r.tokensPerS) continue;
        const auto steps = trainer::stepsSincePrevious(m_records, i);
        std::optional<double> prevTokens;
        for (size_t j = i; j-- > 0 && !prevTokens;)
            if (m_records[j].step) prevTokens = m_extra[j].consumedTokens.value_or(-1);
        if (!prevTokens && steps && e.consumedTokens) prevTokens = 0; // a fresh run's first line
        if (e.consumedTokens && prevTokens && *prevTokens >= 0 && steps && *steps > 0 &&
            *e.consumedTokens > *prevTokens)
            r.tokensPerS = (*e.consumedTokens - *prevTokens) / (static_cast<double>(*steps) * *r.stepTimeS);
        else if (e.batch && e.seqlen)
            r.tokensPerS = *e.batch * *e.seqlen / *r.stepTimeS;
    }
    if (const int64_t derived = trainer::deriveStepTimes(m_records); derived > 0)
        m_ctx.notes.push_back(fmt::format("{} step times from the logger times of consecutive step lines", derived));
    RUNLENS_TRY(trainer::placeUntimed(m_ctx, m_tz, m_records));

    std::string read;
    const char* names[] = {"other",     "Megatron iteration",   "DeepSpeed step",
                           "timer",     "DeepSpeed throughput", "DeepSpeed pipeline",
                           "unreadable"};
    for (int k = 1; k < 6; ++k)
        if (m_counts[k] > 0) read += fmt::format("{}{} {}", read.empty() ? "" : ", ", m_counts[k], names[k]);
    m_ctx.notes.push_back(
        fmt::format("{} lines read ({}); {} other lines are not training progress", m_ctx.rowsRead, read, m_counts[0]));

    trainer::RawNames raw;
    raw.step = "iteration";
    raw.stepTime = "elapsed time per iteration (ms)";
    raw.loss = "lm loss";
    raw.lr = "learning rate";
    raw.gradNorm = "grad norm";
    raw.tokensPerS = "consumed tokens";
    raw.samplesPerS = "samples per second";
    raw.tflopsPerGpu = "throughput per GPU (TFLOP/s/GPU)";
    return trainer::writeSteps(m_ctx, m_records, raw);
}

} // namespace

int MegatronDeepSpeedLogImporter::sniff(const SniffInput& input) const
{
    std::string_view head = input.head;
    int best = 0;
    for (int n = 0; n < 4000 && !head.empty(); ++n) {
        const size_t nl = head.find('\n');
        if (nl == std::string_view::npos) break; // a cut last line is not judged
        const Classified c = classify(stripEscapes(head.substr(0, nl)));
        head.remove_prefix(nl + 1);
        switch (c.kind) {
        case Kind::Iteration:
            return 90;
        case Kind::Progress:
        case Kind::Pipeline:
            best = std::max(best, 80);
            break;
        case Kind::Throughput:
            best = std::max(best, 75);
            break;
        case Kind::Timers:
            best = std::max(best, 50);
            break;
        case Kind::Other:
        case Kind::Broken:
            break;
        }
    }
    return best;
}

Status MegatronDeepSpeedLogImporter::run(ImportContext& context) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(context.options.timeZone));
    Parser parser(context, std::move(tz));
    return parser.run();
}

} // namespace runlens::importers
