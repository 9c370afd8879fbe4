#include "importers/trainer/hf_trainer_state_importer.h"

#include "analysis/store/saturating.h"
#include "importers/common/json_error.h"
#include "importers/common/text_fields.h"
#include "importers/common/untimed.h"
#include "importers/common/whole_input.h"
#include "importers/diagnostic_kinds.h"
#include "importers/trainer/train_steps.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <simdjson.h>

namespace runlens::importers {
namespace {

namespace sj = simdjson;
namespace dom = simdjson::dom;
using trainer::StepRecord;

constexpr size_t kMaxJsonBytes = 0xFFFFFFFFu - 2 * sj::SIMDJSON_PADDING;

// The line on which each element of the top-level "log_history" array starts (the DOM parser keeps no
// positions), found by one pass over the text that tracks strings and nesting.
std::vector<int64_t> logHistoryLines(std::string_view text)
{
    std::vector<int64_t> lines;
    int64_t line = 1;
    int depth = 0;
    bool inString = false, inArray = false, expectValue = false;
    size_t stringStart = 0;
    std::string_view lastKey;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') ++line;
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"') {
                inString = false;
                if (depth == 1) lastKey = text.substr(stringStart, i - stringStart);
            }
            continue;
        }
        if (inArray && depth == 2 && expectValue && !isSpace(c) && c != ']') {
            lines.push_back(line);
            expectValue = false;
        }
        switch (c) {
        case '"':
            inString = true;
            stringStart = i + 1;
            break;
        case '{':
        case '[':
            ++depth;
            if (c == '[' && depth == 2 && lastKey == "log_history") {
                inArray = true;
                expectValue = true;
            }
            break;
        case '}':
        case ']':
            --depth;
            if (inArray && depth == 1) return lines;
            break;
        case ',':
            if (inArray && depth == 2) expectValue = true;
            break;
        default:
            break;
        }
    }
    return lines;
}

// Whether the object the text starts with has the key at its own level (not inside a nested value).
bool topLevelKey(std::string_view text, std::string_view key)
{
    int depth = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            const size_t start = i + 1;
            for (++i; i < text.size() && text[i] != '"'; ++i)
                if (text[i] == '\\') ++i;
            if (depth != 1 || text.substr(start, i - start) != key) continue;
            const size_t next = text.find_first_not_of(" \t\r\n", i + 1);
            if (next != std::string_view::npos && text[next] == ':') return true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    return false;
}

class Reader
{
public:
    Reader(ImportContext& ctx, std::vector<int64_t> lines) : m_ctx(ctx), m_lines(std::move(lines)) {}
    Status run(dom::element root);

private:
    void report(const store::DiagnosticKind& kind, size_t entry, const std::string& message)
    {
        const int64_t line = entry < m_lines.size() ? m_lines[entry] : 0;
        m_ctx.diagnostics.report(kind, trainer::locationOf(m_ctx, line), message);
    }
    std::optional<double> number(dom::object& obj, std::string_view key, size_t entry, StepRecord& r);

    ImportContext& m_ctx;
    std::vector<int64_t> m_lines;
};

std::optional<double> Reader::number(dom::object& obj, std::string_view key, size_t entry, StepRecord& r)
{
    dom::element e;
    if (obj.at_key(key).get(e)) return std::nullopt;
    if (e.is_null()) { // json.dumps writes NaN and infinity as bare tokens, read here as null
        r.nanFields.emplace_back(key == "learning_rate" ? "lr" : key);
        report(diag::kNanValue, entry,
               fmt::format("log_history entry {}: {} is NaN or infinite; stored as missing", entry, key));
        return std::nullopt;
    }
    double v = 0;
    if (e.is_int64()) return static_cast<double>(e.get_int64().value());
    if (e.is_uint64()) return static_cast<double>(e.get_uint64().value());
    if (e.get_double().get(v)) {
        report(diag::kBadNumber, entry,
               fmt::format("log_history entry {}: expected a number for {}, got {}; ignored", entry, key,
                           clip(sj::minify(e))));
        return std::nullopt;
    }
    return v;
}

Status Reader::run(dom::element root)
{
    dom::object top;
    if (root.get_object().get(top))
        return makeError(ErrorCode::Format, "not a trainer_state.json: the top level is not an object",
                         trainer::locationOf(m_ctx, 1));
    dom::array history;
    if (top.at_key("log_history").get_array().get(history))
        return makeError(ErrorCode::Format, "not a trainer_state.json: no log_history array",
                         trainer::locationOf(m_ctx, 1));

    std::vector<StepRecord> records;
    std::optional<double> runtimeS;
    std::optional<int64_t> runtimeStep;
    size_t entry = 0;
    for (dom::element e : history) {
        const size_t index = entry++;
        ++m_ctx.rowsRead;
        StepRecord r;
        r.line = index < m_lines.size() ? m_lines[index] : 0;
        dom::object obj;
        int64_t step = 0;
        if (e.get_object().get(obj)) {
            report(diag::kInvalidLine, index, fmt::format("log_history entry {} is not an object; dropped", index));
            continue;
        }
        if (obj.at_key("step").get_int64().get(step) || step < 0) {
            report(diag::kInvalidLine, index,
                   fmt::format("log_history entry {} has no step (a whole number); dropped", index));
            continue;
        }
        if (!records.empty() && step < *records.back().step) {
            report(
                diag::kRepeatedStep, index,
                fmt::format("log_history entry {}: step {} after step {}; dropped", index, step, *records.back().step));
            continue;
        }
        r.step = step;
        r.loss = number(obj, "loss", index, r);
        r.lr = number(obj, "learning_rate", index, r);
        r.gradNorm = number(obj, "grad_norm", index, r);
        r.evalLoss = number(obj, "eval_loss", index, r);
        if (auto t = number(obj, "train_runtime", index, r); t && *t > 0) {
            runtimeS = t;
            runtimeStep = step;
        } else if (t) {
            report(diag::kBadNumber, index,
                   fmt::format("log_history entry {}: train_runtime {} is not a positive number of seconds; ignored",
                               index, *t));
        }
        records.push_back(std::move(r));
    }
    if (records.empty())
        return makeError(ErrorCode::Format, "log_history has no readable entry", trainer::locationOf(m_ctx, 1));

    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(m_ctx.options.timeZone));
    RUNLENS_ASSIGN_OR_RETURN(auto placement, untimed::readPlacement(m_ctx.options, tz, 1'000'000'000, 0));
    double perStepS = 0;
    if (placement.intervalNs > 0) {
        perStepS = static_cast<double>(placement.intervalNs) / 1e9;
        m_ctx.notes.push_back(fmt::format("steps spread evenly at interval={} s per step", perStepS));
    } else if (runtimeS && runtimeStep && *runtimeStep > 0) {
        perStepS = *runtimeS / static_cast<double>(*runtimeStep);
        m_ctx.notes.push_back(fmt::format("no times in the file: steps spread evenly at train_runtime / step = "
                                          "{:.4g} s per step (the average; train.step_time not written)",
                                          perStepS));
    } else {
        return makeError(ErrorCode::Usage, "trainer_state.json has no times and no usable train_runtime: set "
                                           "interval= (seconds per step) and start=");
    }
    m_ctx.diagnostics.report(diag::kEstimatedTime, trainer::locationOf(m_ctx, records.back().line),
                             "no times in trainer_state.json: steps spread evenly (see the notes)");
    // A step too large for its time to fit int64 nanoseconds (9e18) is reported and dropped.
    std::erase_if(records, [&](StepRecord& r) {
        r.tsNs = store::roundToInt64(static_cast<double>(*r.step) * perStepS * 1e9);
        if (r.tsNs) return false;
        m_ctx.diagnostics.report(
            diag::kBadTimestamp, trainer::locationOf(m_ctx, r.line),
            fmt::format("step {} at {:.4g} s per step is beyond any time: record dropped", *r.step, perStepS));
        return true;
    });
    // Step 0 at start=, or where the steps match the node's GPU activity (only the run's edges can match: the
    // steps are spread evenly).
    RUNLENS_TRY(trainer::anchorRelative(m_ctx, tz, records, static_cast<int64_t>(std::llround(perStepS * 1e9))));

    trainer::RawNames raw;
    raw.lr = "learning_rate";
    return trainer::writeSteps(m_ctx, records, raw);
}

} // namespace

int HfTrainerStateImporter::sniff(const SniffInput& input) const
{
    std::string_view h = input.head;
    if (h.starts_with("\xef\xbb\xbf")) h.remove_prefix(3);
    h = trim(h);
    if (h.empty() || h.front() != '{') return 0;
    const bool history = topLevelKey(h, "log_history");
    if (!history) return 0;
    return topLevelKey(h, "global_step") ? 95 : 75;
}

Status HfTrainerStateImporter::run(ImportContext& ctx) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto maxBytes, maxDocumentBytes(ctx.options, kMaxJsonBytes));
    InputStream& in = ctx.lines.input();
    std::string buf;
    RUNLENS_TRY(appendWholeInput(in, maxBytes, buf));
    const int nonFinite = trainer::replaceNonFiniteTokens(buf);
    std::vector<int64_t> lines = logHistoryLines(buf);
    const sj::padded_string json(buf);
    buf = std::string();
    dom::parser parser;
    dom::element root;
    if (sj::error_code e = parser.parse(json).get(root)) return jsonDocumentError(json, e, in.displayName());
    if (nonFinite > 0) ctx.notes.push_back(fmt::format("{} NaN or infinite values stored as missing", nonFinite));
    Reader reader(ctx, std::move(lines));
    return reader.run(root);
}

} // namespace runlens::importers
