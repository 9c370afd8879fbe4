#pragma once

// HF transformers trainer_state.json (docs/formats.md §16): one JSON object (json.dumps of TrainerState, indent 2,
// sorted keys) whose log_history is a list of dicts, each with epoch and step: train entries (loss,
// learning_rate, grad_norm), eval entries (eval_loss, ...) and a final entry (train_runtime, train_loss, ...).
//
// Time: the file has no timestamps and no per-step durations. Steps are spread evenly: step N at
// start + N × seconds per step, the seconds per step from the interval= option or else train_runtime / step of
// the final entry; start from start= or else where the steps' span matches the node's GPU activity
// (trainer::anchorRelative), unanchored when nothing matches. No train.step_time is written: the file does not measure
// it (the average is in the notes).

#include "importers/importer.h"

namespace runlens::importers {

class HfTrainerStateImporter final : public Importer
{
public:
    std::string_view format() const override { return "hf-trainer-state"; }
    std::string_view description() const override
    {
        return "Hugging Face transformers trainer_state.json (log_history: loss, learning_rate, grad_norm, eval)";
    }
    int version() const override { return 2; }
    bool placedByOthers() const override { return true; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
