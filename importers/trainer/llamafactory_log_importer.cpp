#include "importers/trainer/llamafactory_log_importer.h"

#include "importers/common/text_fields.h"
#include "importers/diagnostic_kinds.h"
#include "importers/trainer/train_steps.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <simdjson.h>

namespace runlens::importers {
namespace {

namespace dom = simdjson::dom;
using trainer::StepRecord;

constexpr int kCheckpointLines = 8192;
// elapsed_time is cut to whole seconds; total_tokens / throughput must land in [elapsed, elapsed + 1). The slack
// covers throughput's rounding to two decimals and the moment between the two clock readings.
constexpr double kSlackS = 0.05;
constexpr double kMaxElapsedS = 100.0 * 366 * 86400; // as train_steps' bound on a time from the start

// str(timedelta): "H:MM:SS", "H:MM:SS.ffffff", "N day(s), H:MM:SS" → seconds.
std::optional<double> parseTimedelta(std::string_view s)
{
    double days = 0;
    if (const size_t comma = s.find(','); comma != std::string_view::npos) {
        std::string_view d = trim(s.substr(0, comma));
        const size_t space = d.find(' ');
        if (space == std::string_view::npos) return std::nullopt;
        const std::string_view word = d.substr(space + 1);
        if (word != "day" && word != "days") return std::nullopt;
        auto n = parseInteger(d.substr(0, space));
        if (!n) return std::nullopt;
        days = static_cast<double>(*n);
        s = trim(s.substr(comma + 1));
    }
    const size_t c1 = s.find(':');
    const size_t c2 = c1 == std::string_view::npos ? c1 : s.find(':', c1 + 1);
    if (c2 == std::string_view::npos || c2 - c1 != 3 || s.size() < c2 + 3) return std::nullopt;
    auto h = parseInteger(s.substr(0, c1));
    auto m = parseInteger(s.substr(c1 + 1, 2));
    auto sec = parseNumber(s.substr(c2 + 1));
    if (!h || !m || !sec || *h < 0 || *m < 0 || *m > 59 || !std::isfinite(*sec) || *sec < 0 || *sec >= 60 ||
        s.substr(c2 + 1, 2).find_first_not_of("0123456789") != std::string_view::npos)
        return std::nullopt;
    return days * 86400 + static_cast<double>(*h) * 3600 + static_cast<double>(*m) * 60 + *sec;
}

struct LogLine
{
    StepRecord record;
    double elapsedS = 0; // as printed (whole seconds)
    std::optional<double> throughput, totalTokens;
};

enum class Reading
{
    RunningAverage, // throughput = total_tokens / time since start (LLaMA-Factory's LogCallback)
    LastInterval,   // throughput = tokens of the last interval / its duration
    ElapsedOnly,
};

struct ExactTimes
{
    std::vector<double> exact; // seconds from the start, by line
    std::vector<bool> fine;    // refined by throughput, not only elapsed_time's whole second
    int64_t inconsistent = 0;  // lines whose throughput fits neither reading
};

class Parser
{
public:
    explicit Parser(ImportContext& ctx) : m_ctx(ctx) {}
    Status run();

private:
    void line(std::string_view text, int64_t number);
    std::optional<double> number(dom::object& obj, std::string_view key, StepRecord& r);
    Reading chooseReading(int64_t& withThroughput) const;
    ExactTimes exactTimes(Reading reading);
    std::vector<double> spreadShared(const std::vector<double>& exact) const;
    std::vector<StepRecord> stepRecords(const ExactTimes& times, const std::vector<double>& placed,
                                        int64_t& coarse) const;
    void readingNotes(Reading reading, int64_t withThroughput, int64_t coarse, int64_t inconsistent);
    Status finish();

    ImportContext& m_ctx;
    dom::parser m_json;
    std::string m_scratch;
    std::vector<LogLine> m_lines;
    int64_t m_repeated = 0;
};

std::optional<double> Parser::number(dom::object& obj, std::string_view key, StepRecord& r)
{
    dom::element e;
    if (obj.at_key(key).get(e)) return std::nullopt;
    if (e.is_null()) { // a NaN or infinity, written by json.dumps as a bare token
        r.nanFields.emplace_back(key);
        m_ctx.report(diag::kNanValue, 0, fmt::format("{} is NaN or infinite; stored as missing", key));
        return std::nullopt;
    }
    double v = 0;
    if (e.is_int64())
        v = static_cast<double>(e.get_int64().value());
    else if (e.is_uint64())
        v = static_cast<double>(e.get_uint64().value());
    else if (e.get_double().get(v)) {
        m_ctx.report(diag::kBadNumber, 0,
                     fmt::format("expected a number for {}, got {}; ignored", key, clip(simdjson::minify(e))));
        return std::nullopt;
    }
    return v;
}

void Parser::line(std::string_view text, int64_t number)
{
    m_scratch.assign(text);
    trainer::replaceNonFiniteTokens(m_scratch);
    dom::object obj;
    if (auto err = m_json.parse(m_scratch).get_object().get(obj)) {
        m_ctx.report(diag::kInvalidLine, 0,
                     fmt::format("not a JSON object ({}): \"{}\"; dropped", simdjson::error_message(err), clip(text)));
        return;
    }
    LogLine l;
    l.record.line = number;
    int64_t steps = 0;
    if (obj.at_key("current_steps").get_int64().get(steps) || steps < 0) {
        m_ctx.report(diag::kInvalidLine, 0,
                     fmt::format("no current_steps (a whole number): \"{}\"; dropped", clip(text)));
        return;
    }
    l.record.step = steps;
    std::string_view elapsed;
    std::optional<double> e;
    if (!obj.at_key("elapsed_time").get_string().get(elapsed)) e = parseTimedelta(elapsed);
    if (!e) {
        m_ctx.report(diag::kBadTimestamp, 0,
                     fmt::format("step {}: no elapsed_time such as \"0:01:03\" ({}); dropped", steps, clip(elapsed)));
        return;
    }
    // str(timedelta) of a negative time ("-1 day, 23:59:59"), or one past any run: the line cannot be placed, and
    // kept it would make every later line look like a step back.
    if (*e < 0 || *e > kMaxElapsedS) {
        m_ctx.report(diag::kBadTimestamp, 0,
                     fmt::format("step {}: elapsed_time \"{}\" is {}; dropped", steps, clip(elapsed),
                                 *e < 0 ? "negative" : "more than 100 years"));
        return;
    }
    l.elapsedS = *e;
    if (!m_lines.empty()) {
        const LogLine& p = m_lines.back();
        if (steps < *p.record.step || *e < p.elapsedS) {
            ++m_repeated;
            m_ctx.report(diag::kRepeatedStep, 0,
                         fmt::format("step {} at elapsed {:g} s comes after step {} at elapsed {:g} s (a second run "
                                     "appended to the file?); dropped",
                                     steps, *e, *p.record.step, p.elapsedS));
            return;
        }
    }
    l.record.loss = this->number(obj, "loss", l.record);
    l.record.evalLoss = this->number(obj, "eval_loss", l.record);
    l.record.lr = this->number(obj, "lr", l.record);
    l.throughput = this->number(obj, "throughput", l.record);
    l.totalTokens = this->number(obj, "total_tokens", l.record);
    if (l.throughput && *l.throughput <= 0) l.throughput.reset();
    m_lines.push_back(std::move(l));
}

Status Parser::run()
{
    RUNLENS_TRY(m_ctx.forEachLine(kCheckpointLines, [this](const Line& ln) {
        const std::string_view text = trim(ln.text);
        if (text.empty()) return okStatus(); // json.dumps never writes one; nothing is lost
        ++m_ctx.rowsRead;
        line(text, ln.number);
        return okStatus();
    }));
    return finish();
}

// Which reading of throughput agrees with elapsed_time; withThroughput counts the lines that give one. The first
// line cannot tell the readings apart.
Reading Parser::chooseReading(int64_t& withThroughput) const
{
    int64_t average = 0, interval = 0;
    withThroughput = 0;
    double prevTokens = 0, prevElapsed = 0;
    for (size_t i = 0; i < m_lines.size(); ++i) {
        const LogLine& l = m_lines[i];
        if (!l.throughput || !l.totalTokens) continue;
        ++withThroughput;
        if (i > 0) {
            const double t = *l.totalTokens / *l.throughput;
            average += t >= l.elapsedS - kSlackS && t < l.elapsedS + 1 + kSlackS;
            const double dt = (*l.totalTokens - prevTokens) / *l.throughput;
            interval += dt > 0 && std::fabs(dt - (l.elapsedS - prevElapsed)) < 1 + kSlackS;
        }
        prevTokens = *l.totalTokens;
        prevElapsed = l.elapsedS;
    }
    return withThroughput == 0                                           ? Reading::ElapsedOnly
           : average >= interval && (average > 0 || withThroughput == 1) ? Reading::RunningAverage
           : interval > 0                                                ? Reading::LastInterval
                                                                         : Reading::ElapsedOnly;
}

// Elapsed times to the sub-second where throughput allows, kept within the whole second elapsed_time names.
ExactTimes Parser::exactTimes(Reading reading)
{
    ExactTimes out;
    out.exact.resize(m_lines.size());
    out.fine.assign(m_lines.size(), false);
    double prevExact = 0, prevTokens = 0;
    for (size_t i = 0; i < m_lines.size(); ++i) {
        LogLine& l = m_lines[i];
        const double lo = l.elapsedS, hi = l.elapsedS + 1;
        std::optional<double> t;
        if (l.throughput && l.totalTokens && reading == Reading::RunningAverage)
            t = *l.totalTokens / *l.throughput;
        else if (l.throughput && l.totalTokens && reading == Reading::LastInterval && *l.totalTokens > prevTokens)
            t = prevExact + (*l.totalTokens - prevTokens) / *l.throughput;
        if (t && *t >= lo - kSlackS && *t < hi + kSlackS && *t >= prevExact) {
            out.exact[i] = std::clamp(*t, lo, hi);
            out.fine[i] = true;
        } else {
            // A log whose throughput never relates tokens to time (total_tokens not counted: always 0) is timed
            // by elapsed_time throughout; only a line that breaks the relation the others follow is reported.
            if (l.throughput && l.totalTokens && reading != Reading::ElapsedOnly) {
                ++out.inconsistent;
                m_ctx.diagnostics.report(
                    diag::kInconsistentThroughput, trainer::locationOf(m_ctx, l.record.line),
                    fmt::format("step {}: throughput {} with total_tokens {} does not fit elapsed_time {} s; step "
                                "timed by elapsed_time",
                                *l.record.step, *l.throughput, *l.totalTokens, l.elapsedS));
            }
            out.exact[i] = reading == Reading::ElapsedOnly ? lo : std::clamp(prevExact, lo, hi);
        }
        prevExact = out.exact[i];
        if (l.totalTokens) prevTokens = *l.totalTokens;
    }
    return out;
}

// Lines that share one time (whole seconds without a finer reading) spread over the rest of that second, so that
// each keeps its own point; their step times still come from the shared time.
std::vector<double> Parser::spreadShared(const std::vector<double>& exact) const
{
    std::vector<double> placed = exact;
    for (size_t i = 0; i < m_lines.size();) {
        size_t j = i + 1;
        double bound = m_lines[i].elapsedS + 1;
        while (j < m_lines.size() && exact[j] == exact[i])
            bound = std::min(bound, m_lines[j++].elapsedS + 1);
        if (j < m_lines.size()) bound = std::min(bound, exact[j]);
        for (size_t k = i + 1; k < j; ++k)
            placed[k] = exact[i] + (bound - exact[i]) * static_cast<double>(k - i) / static_cast<double>(j - i);
        i = j;
    }
    return placed;
}

// The records at their placed times (from the start, for now), with step times (and tokens/s) over the lines since
// the last one that gave a step time; a line whose elapsed time has not moved yet waits for the next. coarse counts
// the step times from whole seconds only.
std::vector<StepRecord> Parser::stepRecords(const ExactTimes& times, const std::vector<double>& placed,
                                            int64_t& coarse) const
{
    const std::vector<double>& exact = times.exact;
    std::vector<StepRecord> records;
    records.reserve(m_lines.size());
    for (const LogLine& l : m_lines)
        records.push_back(l.record);
    // Before the first line: the training start (step 0, no time, no tokens) when the first line looks like the
    // first logged interval; a resumed run's first line has no span.
    const auto firstSteps = trainer::stepsSincePrevious(records, 0);
    std::optional<size_t> base;
    bool waitedOnCoarse = false; // a line of the current span did not fit the reading
    coarse = 0;
    for (size_t i = 0; i < m_lines.size(); ++i) {
        const LogLine& l = m_lines[i];
        StepRecord& r = records[i];
        r.tsNs = static_cast<int64_t>(std::llround(placed[i] * 1e9));
        if (!base && !firstSteps) {
            base = i;
            continue;
        }
        const int64_t fromStep = base ? *m_lines[*base].record.step : *r.step - *firstSteps;
        const double fromS = base ? exact[*base] : 0;
        const double fromTokens = base && m_lines[*base].totalTokens ? *m_lines[*base].totalTokens : 0;
        const int64_t steps = *r.step - fromStep;
        const double span = exact[i] - fromS;
        if (steps == 0) {
            base = i; // an evaluation or the closing summary at the same step: its time is not a step's
            waitedOnCoarse = false;
        } else if (span > 0) {
            r.stepTimeS = span / static_cast<double>(steps);
            const bool coarseSpan = !times.fine[i] || (base && !times.fine[*base]) || waitedOnCoarse;
            // Tokens per second only over spans both ends of which fit the reading (a count that disagrees with
            // its throughput does not give a rate).
            if (l.totalTokens && *l.totalTokens > fromTokens && !coarseSpan)
                r.tokensPerS = (*l.totalTokens - fromTokens) / span;
            if (coarseSpan) ++coarse;
            base = i;
            waitedOnCoarse = false;
        } else { // elapsed_time has not moved yet: the span goes on to the next line
            waitedOnCoarse = waitedOnCoarse || !times.fine[i];
        }
    }
    return records;
}

// How the step times were read, for the import summary.
void Parser::readingNotes(Reading reading, int64_t withThroughput, int64_t coarse, int64_t inconsistent)
{
    switch (reading) {
    case Reading::RunningAverage:
        m_ctx.notes.emplace_back("step times from total_tokens / throughput (tokens per second since the start)");
        break;
    case Reading::LastInterval:
        m_ctx.notes.emplace_back("throughput read as the rate of the last interval (it agrees with elapsed_time that "
                                 "way, not as an average since the start); step times from it");
        break;
    case Reading::ElapsedOnly:
        m_ctx.notes.emplace_back(withThroughput > 0
                                     ? "throughput fits elapsed_time neither as an average since the start nor as the "
                                       "rate of the last interval: step times from elapsed_time (whole seconds)"
                                     : "step times from elapsed_time (whole seconds), averaged over the lines it takes "
                                       "to move");
        break;
    }
    if (coarse > 0 && reading != Reading::ElapsedOnly)
        m_ctx.notes.push_back(fmt::format("{} step times from elapsed_time (whole seconds) only", coarse));
    if (inconsistent > 0)
        m_ctx.notes.push_back(fmt::format("{} lines with a throughput that fits neither reading", inconsistent));
    if (m_repeated > 0)
        m_ctx.notes.push_back(fmt::format("{} lines dropped whose step or elapsed time went back", m_repeated));
}

Status Parser::finish()
{
    if (m_lines.empty())
        return makeError(ErrorCode::Format,
                         m_ctx.rowsRead == 0 ? "empty file: no trainer log lines" : "no readable trainer log line",
                         m_ctx.lines.location());
    int64_t withThroughput = 0, coarse = 0;
    const Reading reading = chooseReading(withThroughput);
    const ExactTimes times = exactTimes(reading);
    std::vector<StepRecord> records = stepRecords(times, spreadShared(times.exact), coarse);

    // The start: start=, or where the steps match the node's GPU activity (elapsed_time counts whole seconds unless
    // throughput gives a finer reading).
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(m_ctx.options.timeZone));
    // A time not refined by throughput is elapsed_time cut to the whole second: on average half a second early.
    std::vector<int64_t> bias(records.size());
    for (size_t i = 0; i < records.size(); ++i)
        bias[i] = times.fine[i] ? 0 : 500'000'000;
    RUNLENS_TRY(trainer::anchorRelative(m_ctx, tz, records,
                                        reading == Reading::ElapsedOnly ? 1'000'000'000 : 100'000'000, bias));
    readingNotes(reading, withThroughput, coarse, times.inconsistent);

    trainer::RawNames raw;
    raw.step = "current_steps";
    raw.stepTime = reading == Reading::ElapsedOnly ? "elapsed_time" : "throughput";
    raw.tokensPerS = "throughput";
    return trainer::writeSteps(m_ctx, records, raw);
}

} // namespace

int LlamaFactoryLogImporter::sniff(const SniffInput& input) const
{
    std::string_view h = input.head;
    if (h.starts_with("\xef\xbb\xbf")) h.remove_prefix(3);
    const size_t nl = h.find('\n');
    const std::string_view first = trim(h.substr(0, nl));
    if (first.empty() || first.front() != '{') return 0;
    auto hasKey = [&](std::string_view key) { return first.find(key) != std::string_view::npos; };
    if (!hasKey("\"current_steps\":") || !hasKey("\"total_steps\":")) return 0;
    return hasKey("\"elapsed_time\":") ? 95 : 80;
}

Status LlamaFactoryLogImporter::run(ImportContext& context) const
{
    Parser parser(context);
    return parser.run();
}

} // namespace runlens::importers
