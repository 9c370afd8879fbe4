#pragma once

// The options that describe the model and the GPUs for the MFU (analysis/mfu), shared by import, info and
// analyze: --model-params, --model-layers, --model-hidden, --seq-len, --gpu-peak-tflops, --gpu-precision,
// --gpu-count. import and info keep them in the run (run_setting), analyze only with --store, so later commands
// use them; "none" clears one.

#include "analysis/store/error.h"

#include <QCommandLineParser>
#include <map>
#include <optional>
#include <string>

namespace runlens::store {
class RunDatabase;
}

namespace runlens::app {

// Where the command keeps the options' values, as their help says.
enum class MfuKept
{
    Always,    // import, info
    WithStore, // analyze: only with --store
};

// Adds the options to parser.
void addMfuOptions(QCommandLineParser& parser, MfuKept kept = MfuKept::Always);
// The settings the options set (a value) or clear (nullopt); a Usage error for a value that is not a number.
Expected<std::map<std::string, std::optional<std::string>>> mfuSettingChanges(const QCommandLineParser& parser);
// Stores the changes and prints a line saying what the run now keeps.
Status keepMfuSettings(store::RunDatabase& db, const std::map<std::string, std::optional<std::string>>& changes);

} // namespace runlens::app
