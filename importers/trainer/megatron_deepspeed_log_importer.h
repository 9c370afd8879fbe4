#pragma once

// Megatron-LM and DeepSpeed training logs as text (docs/formats.md §17-18). The lines read, anywhere in a log that
// also holds other output, after launcher prefixes ("[default0]:", "7: ", "INFO [..] >> ") and terminal escapes:
// - Megatron `[time] iteration N/ M | key: value | ...`: elapsed time per iteration (ms) → train.step_time, lm loss
//   (or the first other "... loss" key) → train.loss, learning rate, grad norm, throughput per GPU (TFLOP/s/GPU),
//   samples per second; tokens/s from consumed tokens (or global batch size × actual seqlen) per second.
// - DeepSpeed progress `step=N, skipped=K, lr=[...], mom=[...]`: the step, its logger time, lr of group 0; the
//   step time is the time between two such lines over the steps between them.
// - DeepSpeed / Megatron timers `time (ms) | name: value | ...` → timer.<name> (s), at the latest step.
// - DeepSpeed ThroughputTimer `epoch=E/micro_step=M/global_step=G, RunningAvgSamplesPerSec=.., CurrSamplesPerSec=..`
//   (and the older `E/M, RunningAvgSamplesPerSec=..`) → train.samples_per_s.
// - DeepSpeed pipeline `steps: N loss: L iter time (s): T samples/sec: S`.
// Lines of the same step join one record. Logger times `[YYYY-MM-DD HH:MM:SS,mmm]` / `.ffffff` are naive local
// times read in the node's zone; records without one are placed by step times (see trainer/train_steps.h).

#include "importers/importer.h"

namespace runlens::importers {

class MegatronDeepSpeedLogImporter final : public Importer
{
public:
    std::string_view format() const override { return "megatron-deepspeed-log"; }
    std::string_view description() const override
    {
        return "Megatron-LM iteration lines and DeepSpeed step / timer / throughput lines in a training log";
    }
    int version() const override { return 2; }
    bool placedByOthers() const override { return true; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
