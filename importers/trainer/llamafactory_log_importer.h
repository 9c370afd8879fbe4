#pragma once

// LLaMA-Factory trainer_log.jsonl (docs/formats.md §15): one JSON object per line, written by LogCallback.on_log on
// rank 0: current_steps, total_steps, loss, eval_loss, lr, epoch, elapsed_time (str(timedelta), whole seconds
// since training began), and throughput (tokens/s) with total_tokens when the trainer counts input tokens.
//
// Time: the file has no wall-clock time. Steps are placed at start + elapsed, start being the start= option or else
// where the steps and pauses match the node's GPU activity (trainer::anchorRelative, common/time_anchor.h); a log
// that matches nothing is unanchored (kept off the timeline).
//
// Step times: LLaMA-Factory writes throughput = total_tokens / time since start, which gives the elapsed time
// to the sub-second (total_tokens / throughput), so step time = Δelapsed / Δsteps. Writers that log the rate of
// the last interval instead are recognised by which reading agrees with elapsed_time (the whole seconds each
// line also carries); a line that agrees with neither is reported and timed by elapsed_time alone. Without
// throughput the step time is Δelapsed_time / Δsteps, over as many lines as it takes elapsed_time to move.

#include "importers/importer.h"

namespace runlens::importers {

class LlamaFactoryLogImporter final : public Importer
{
public:
    std::string_view format() const override { return "llamafactory-trainer-log"; }
    std::string_view description() const override
    {
        return "LLaMA-Factory trainer_log.jsonl (current_steps, loss, lr, elapsed_time, throughput per line)";
    }
    int version() const override { return 2; }
    bool placedByOthers() const override { return true; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
