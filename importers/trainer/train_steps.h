#pragma once

// What the trainer-log importers share: one logged training step as plain values, placing steps without a
// wall-clock time on the timeline, and writing the steps as the train.* series of the node's host device.
//
// Times. A record carries its own wall-clock time (Megatron, DeepSpeed logger lines) or none. Records without
// one are placed from their neighbours by their step times (t = t_prev + steps × seconds per step), or, when no
// record of the file has a time, relative to the log's own zero and then anchored: at the start= option, else
// where its steps and pauses match the GPU activity of its node (common/time_anchor.h). A log that matches
// nothing is unanchored: its values are kept off the timeline. The file's modification time only breaks ties.

#include "importers/common/time_parse.h"
#include "importers/importer.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace runlens::importers::trainer {

// One logged step (or a log record between steps, such as an evaluation). Values are in canonical units.
struct StepRecord
{
    int64_t line = 0;                // where it was read (the first line, when several lines make one record)
    std::optional<int64_t> step;     // global step / iteration
    std::optional<int64_t> tsNs;     // wall-clock time, UTC
    std::optional<double> stepTimeS; // seconds per step, over the steps since the previous record
    std::optional<double> loss, evalLoss, lr, gradNorm, tokensPerS, samplesPerS, tflopsPerGpu;
    std::vector<std::pair<std::string, double>> timers; // named phase timers, seconds
    std::vector<std::string> nanFields;                 // values logged as NaN or infinity (stored as missing)
};

// The source names the series keep beside their canonical names.
struct RawNames
{
    std::string_view step = "step", stepTime, loss = "loss", evalLoss = "eval_loss", lr = "lr", gradNorm = "grad_norm",
                     tokensPerS, samplesPerS, tflopsPerGpu;
};

// Where a value of a record came from, for the messages about its line.
SourceLocation locationOf(const ImportContext& ctx, int64_t line, int64_t column = 0);

// The steps between a record and the one before it; for the first record, its own step when that looks like the
// first logged interval (a fresh run), otherwise unknown (a resumed run's first record).
std::optional<int64_t> stepsSincePrevious(const std::vector<StepRecord>& records, size_t i);

// For records with a time and a step but no step time: the seconds per step since the previous timed record.
// Returns how many step times were derived.
int64_t deriveStepTimes(std::vector<StepRecord>& records);

// Fills tsNs of the records without one (see the header comment). Records that cannot be placed are reported
// (bad_timestamp, dropped) and removed. A Usage error when nothing at all can be placed.
Status placeUntimed(ImportContext& ctx, TimeZoneResolver& tz, std::vector<StepRecord>& records);

// Places records whose tsNs are relative to the log's zero (see the header comment); resolutionNs says how finely
// the log gives its times, lastRelNs is the relative time of its last line (for the modification-time prior).
// Sets ctx.anchor; when unanchored the records keep their relative times.
// biasNs (empty, or one per record): how much later than its recorded time each record is expected to have happened
// (a whole-second elapsed time cut from 3.7 s to 3 s: 0.5 s), used for the matching only.
Status anchorRelative(ImportContext& ctx, TimeZoneResolver& tz, std::vector<StepRecord>& records, int64_t resolutionNs,
                      const std::vector<int64_t>& biasNs = {});

// Writes the records (all with tsNs) as series train.step, train.step_time, train.loss, ... on the host device
// of the file's node (of an unanchored log: as unanchored points at their relative times). Points earlier than
// the previous point of the same series are reported and dropped.
Status writeSteps(ImportContext& ctx, const std::vector<StepRecord>& records, const RawNames& raw);

// Bare NaN / Infinity / -Infinity tokens (Python's json.dumps writes them) outside strings replaced by null, so a
// strict JSON parser reads the text; returns how many were replaced.
int replaceNonFiniteTokens(std::string& json);

} // namespace runlens::importers::trainer
