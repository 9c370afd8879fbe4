#include "importers/trainer/train_steps.h"

#include "analysis/store/run_writer.h"
#include "analysis/store/saturating.h"
#include "importers/common/metric_map.h"
#include "importers/common/time_anchor.h"
#include "importers/common/untimed.h"
#include "importers/diagnostic_kinds.h"

#include <cmath>
#include <fmt/format.h>
#include <map>

namespace runlens::importers::trainer {
namespace {

constexpr double kNsPerS = 1e9;
constexpr double kNsPerYear = 365.25 * 86400 * kNsPerS;
// Relative step times beyond a century from the start are not a training run; the bound also keeps every sum of
// a start and a relative time, and the file time minus one, far from int64's limits.
constexpr int64_t kMaxRelativeNs = int64_t{100} * 366 * 86400 * 1'000'000'000;

int64_t seconds(double s)
{
    return static_cast<int64_t>(std::llround(s * kNsPerS));
}

struct SeriesState
{
    store::SeriesSink* sink = nullptr;
    std::optional<int64_t> lastTs;
    std::optional<double> lastValue;
};

class StepSeriesWriter
{
public:
    StepSeriesWriter(ImportContext& ctx, int64_t deviceId) : m_ctx(ctx), m_deviceId(deviceId) {}

    Status put(const StepRecord& r, std::string_view metric, std::string_view raw, std::optional<double> value,
               bool nan = false)
    {
        if (!value && !nan) return okStatus();
        auto it = m_series.find(std::string(metric));
        if (it == m_series.end()) {
            const auto canonical = canonicalUnit(metric);
            const std::string_view unit = canonical ? *canonical : "s"; // only timers have no canonical name
            if (!canonical)
                m_ctx.diagnostics.report(diag::kUnmappedMetric, locationOf(m_ctx, r.line),
                                         fmt::format("\"{}\" has no canonical name: kept as {} (s)", raw, metric));
            RUNLENS_ASSIGN_OR_RETURN(auto sink, m_ctx.writer.series(m_deviceId, metric, unit, raw));
            it = m_series.emplace(std::string(metric), SeriesState{sink, std::nullopt, std::nullopt}).first;
        }
        SeriesState& s = it->second;
        const int64_t ts = *r.tsNs;
        if (m_ctx.anchor.state == "unanchored") {
            const auto canonical = canonicalUnit(metric);
            return m_ctx.writer.unanchoredPoint(metric, canonical ? *canonical : "s", raw, ts,
                                                nan ? std::nullopt : value);
        }
        if (s.lastTs && ts < *s.lastTs) {
            m_ctx.diagnostics.report(diag::kBackwardsTime, locationOf(m_ctx, r.line),
                                     fmt::format("{} at {} is earlier than the previous point ({}); dropped", metric,
                                                 untimed::utcText(ts), untimed::utcText(*s.lastTs)));
            return okStatus();
        }
        if (s.lastTs && ts == *s.lastTs && value && s.lastValue == value) return okStatus(); // the same step again
        if (s.lastTs && ts == *s.lastTs) {
            m_ctx.diagnostics.report(diag::kDuplicateSample, locationOf(m_ctx, r.line),
                                     fmt::format("a second {} for the same time; the first is kept", metric));
            return okStatus();
        }
        s.lastTs = ts;
        s.lastValue = value;
        if (nan || !std::isfinite(*value))
            s.sink->appendMissing(ts, "NaN");
        else
            s.sink->append(ts, *value);
        return m_ctx.writer.flushIfNeeded(*s.sink);
    }

private:
    ImportContext& m_ctx;
    int64_t m_deviceId;
    std::map<std::string, SeriesState> m_series;
};

bool isNan(const StepRecord& r, std::string_view field)
{
    for (const std::string& f : r.nanFields)
        if (f == field) return true;
    return false;
}

} // namespace

SourceLocation locationOf(const ImportContext& ctx, int64_t line, int64_t column)
{
    return {ctx.lines.input().displayName(), line, column, -1};
}

std::optional<int64_t> stepsSincePrevious(const std::vector<StepRecord>& records, size_t i)
{
    if (!records[i].step) return std::nullopt;
    for (size_t j = i; j-- > 0;)
        if (records[j].step) return *records[i].step - *records[j].step;
    // The first record with a step: from step 0 when the next interval is at least as long (a fresh run).
    for (size_t j = i + 1; j < records.size(); ++j)
        if (records[j].step && *records[j].step > *records[i].step) {
            const int64_t next = *records[j].step - *records[i].step;
            if (*records[i].step <= next) return records[i].step;
            return std::nullopt;
        }
    return records[i].step; // the only step of the file
}

int64_t deriveStepTimes(std::vector<StepRecord>& records)
{
    int64_t derived = 0;
    std::optional<size_t> prev;
    for (size_t i = 0; i < records.size(); ++i) {
        StepRecord& r = records[i];
        if (!r.step || !r.tsNs) continue;
        if (prev && !r.stepTimeS) {
            const StepRecord& p = records[*prev];
            const int64_t steps = *r.step - *p.step;
            if (steps > 0 && *r.tsNs > *p.tsNs) {
                r.stepTimeS = static_cast<double>(*r.tsNs - *p.tsNs) / kNsPerS / static_cast<double>(steps);
                ++derived;
            }
        }
        prev = i;
    }
    return derived;
}

Status placeUntimed(ImportContext& ctx, TimeZoneResolver& tz, std::vector<StepRecord>& records)
{
    auto placement = untimed::readPlacement(ctx.options, tz, 1'000'000'000, 0);
    if (!placement) return placement.error();
    int64_t untimedCount = 0;
    for (const StepRecord& r : records)
        untimedCount += r.tsNs ? 0 : 1;
    const bool anyTimed = untimedCount < static_cast<int64_t>(records.size());
    if (untimedCount == 0) return okStatus();

    // The span a record covers: its steps since the previous record times its seconds per step.
    auto span = [&](size_t i) -> std::optional<int64_t> {
        const auto steps = stepsSincePrevious(records, i);
        if (!steps || *steps < 0 || !records[i].stepTimeS) return std::nullopt;
        return seconds(static_cast<double>(*steps) * *records[i].stepTimeS);
    };
    std::string how;
    if (!anyTimed) {
        if (placement->startNs) {
            records[0].tsNs = *placement->startNs + span(0).value_or(0);
            how = fmt::format("no wall-clock time in the file: steps placed from start={} ({}) by their step times",
                              ctx.options.extra.at("start"), untimed::utcText(*placement->startNs));
        } else {
            records[0].tsNs = span(0).value_or(0); // relative to the start of the first logged interval
        }
    }
    // Forward from every placed record, then backward for the records before the first placed one.
    for (size_t i = 1; i < records.size(); ++i)
        if (!records[i].tsNs && records[i - 1].tsNs)
            if (auto s = span(i)) records[i].tsNs = *records[i - 1].tsNs + *s;
    for (size_t i = records.size() - 1; i-- > 0;)
        if (!records[i].tsNs && records[i + 1].tsNs)
            if (auto s = span(i + 1)) records[i].tsNs = *records[i + 1].tsNs - *s;

    std::vector<StepRecord> placed;
    placed.reserve(records.size());
    int64_t dropped = 0;
    for (StepRecord& r : records) {
        if (r.tsNs) {
            placed.push_back(std::move(r));
            continue;
        }
        ++dropped;
        ctx.diagnostics.report(diag::kBadTimestamp, locationOf(ctx, r.line),
                               r.step
                                   ? fmt::format("step {}: no time and no step time to place it by; dropped", *r.step)
                                   : std::string("a record with neither a time nor a step; dropped"));
    }
    records = std::move(placed);
    if (!how.empty())
        ctx.notes.push_back(how);
    else if (untimedCount > dropped && anyTimed)
        ctx.notes.push_back(fmt::format("{} records without a time placed from the nearest timed line by their step "
                                        "times",
                                        untimedCount - dropped));
    if (records.empty())
        return makeError(ErrorCode::Format, "no step could be placed in time (no times and no step times)",
                         ctx.lines.location());
    if (!anyTimed && !placement->startNs) return anchorRelative(ctx, tz, records, 100'000'000);
    return okStatus();
}

Status anchorRelative(ImportContext& ctx, TimeZoneResolver& tz, std::vector<StepRecord>& records, int64_t resolutionNs,
                      const std::vector<int64_t>& biasNs)
{
    if (records.empty()) return okStatus();
    auto placement = untimed::readPlacement(ctx.options, tz, 1'000'000'000, 0);
    if (!placement) return placement.error();
    // A record whose time from the start is past kMaxRelativeNs, or past int64 once placed, cannot be a step of a
    // run: it is reported and dropped rather than overflowing.
    std::erase_if(records, [&](const StepRecord& r) {
        if (*r.tsNs >= -kMaxRelativeNs && *r.tsNs <= kMaxRelativeNs) return false; // (llabs(INT64_MIN) overflows)
        ctx.diagnostics.report(diag::kBadTimestamp, locationOf(ctx, r.line),
                               fmt::format("step {} falls {:.3g} years from the run's start: record dropped",
                                           r.step.value_or(-1), static_cast<double>(*r.tsNs) / kNsPerYear));
        return true;
    });
    auto shift = [&](int64_t startNs) {
        std::erase_if(records, [&](StepRecord& r) {
            if (const auto t = store::checkedAdd(*r.tsNs, startNs)) {
                r.tsNs = t;
                return false;
            }
            ctx.diagnostics.report(diag::kBadTimestamp, locationOf(ctx, r.line),
                                   fmt::format("step {} placed after {} falls past the year 2262: record dropped",
                                               r.step.value_or(-1), untimed::utcText(startNs)));
            return true;
        });
    };
    if (records.empty()) return okStatus();
    if (placement->startNs) {
        shift(*placement->startNs);
        ctx.anchor = {"option", placement->startNs, 0, fmt::format("start={}", ctx.options.extra.at("start"))};
        ctx.notes.push_back(fmt::format("no wall-clock time in the file: placed at start={} ({})",
                                        ctx.options.extra.at("start"), untimed::utcText(*placement->startNs)));
        return okStatus();
    }
    std::vector<int64_t> rel, steps;
    int64_t lastStep = 0;
    for (size_t i = 0; i < records.size(); ++i) {
        const StepRecord& r = records[i];
        if (!r.step || *r.step <= lastStep) continue; // evaluations and summaries at the same step say no pace
        rel.push_back(*r.tsNs + (i < biasNs.size() ? biasNs[i] : 0));
        steps.push_back(*r.step);
        lastStep = *r.step;
    }
    const anchor::LogActivity activity = anchor::activityFromSteps(rel, steps, resolutionNs);
    std::optional<int64_t> prior;
    if (const auto mtime = untimed::fileModifiedNs(ctx.path)) prior = *mtime - *records.back().tsNs;
    auto placed = anchor::placeOnNode(ctx.writer.database(), ctx.nodeId, activity, prior);
    if (!placed) return placed.error();
    if (placed->anchored) {
        shift(placed->startNs);
        ctx.anchor = {"aligned", placed->startNs, placed->uncertaintyNs, placed->method};
        ctx.notes.push_back(fmt::format("no wall-clock time in the file: aligned with node {}: start {} ± {:.1f} s; "
                                        "{}",
                                        ctx.nodeName, untimed::utcText(placed->startNs),
                                        static_cast<double>(placed->uncertaintyNs) / 1e9, placed->method));
        return okStatus();
    }
    ctx.anchor = {"unanchored", std::nullopt, std::nullopt, placed->why};
    ctx.notes.push_back(fmt::format("no wall-clock time in the file and {}: kept unanchored, off the timeline (give "
                                    "start=, or import it again after the node's GPU metrics)",
                                    placed->why));
    ctx.diagnostics.report(diag::kUnanchored, locationOf(ctx, records.back().line),
                           fmt::format("not placed in time: {}", placed->why));
    return okStatus();
}

Status writeSteps(ImportContext& ctx, const std::vector<StepRecord>& records, const RawNames& raw)
{
    RUNLENS_ASSIGN_OR_RETURN(auto device, ctx.writer.device(ctx.nodeId, "host", ""));
    StepSeriesWriter out(ctx, device);
    int64_t sinceCheckpoint = 0;
    for (const StepRecord& r : records) {
        Q_ASSERT(r.tsNs);
        const auto step = r.step ? std::optional<double>(static_cast<double>(*r.step)) : std::nullopt;
        for (Status s :
             {out.put(r, "train.step", raw.step, step), out.put(r, "train.step_time", raw.stepTime, r.stepTimeS),
              out.put(r, "train.loss", raw.loss, r.loss, isNan(r, "loss")),
              out.put(r, "train.eval_loss", raw.evalLoss, r.evalLoss, isNan(r, "eval_loss")),
              out.put(r, "train.lr", raw.lr, r.lr, isNan(r, "lr")),
              out.put(r, "train.grad_norm", raw.gradNorm, r.gradNorm, isNan(r, "grad_norm")),
              out.put(r, "train.tokens_per_s", raw.tokensPerS, r.tokensPerS),
              out.put(r, "train.samples_per_s", raw.samplesPerS, r.samplesPerS),
              out.put(r, "train.tflops_per_gpu", raw.tflopsPerGpu, r.tflopsPerGpu)})
            if (!s) return s;
        for (const auto& [name, value] : r.timers)
            if (Status s = out.put(r, "timer." + name, name, value); !s) return s;
        RUNLENS_TRY(ctx.checkpointEvery(sinceCheckpoint, 4096));
    }
    return okStatus();
}

int replaceNonFiniteTokens(std::string& json)
{
    int replaced = 0;
    bool inString = false;
    std::string out;
    out.reserve(json.size());
    for (size_t i = 0; i < json.size(); ++i) {
        const char c = json[i];
        if (inString) {
            out += c;
            if (c == '\\' && i + 1 < json.size())
                out += json[++i];
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') inString = true;
        const std::string_view rest = std::string_view(json).substr(i);
        size_t n = 0;
        if (rest.starts_with("NaN"))
            n = 3;
        else if (rest.starts_with("Infinity"))
            n = 8;
        else if (rest.starts_with("-Infinity"))
            n = 9;
        if (n > 0) {
            out += "null";
            i += n - 1;
            ++replaced;
            continue;
        }
        out += c;
    }
    if (replaced > 0) json = std::move(out);
    return replaced;
}

} // namespace runlens::importers::trainer
