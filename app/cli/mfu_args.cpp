#include "app/cli/mfu_args.h"

#include "analysis/mfu/mfu.h"
#include "analysis/store/run_settings.h"

#include <fmt/format.h>

namespace runlens::app {
namespace {

struct MfuOption
{
    const char* name;
    const char* key;
    const char* help; // followed by where the value is kept
    const char* value;
    const char* more; // after where it is kept
};

constexpr MfuOption kOptions[] = {
    {"model-params", analysis::kSettingModelParams, "The model's parameter count for the MFU, e.g. 7e9 or 70B", "N",
     "; none clears it"},
    {"model-layers", analysis::kSettingModelLayers, "The model's layers, for the MFU's attention term", "L", ""},
    {"model-hidden", analysis::kSettingModelHidden, "The model's hidden size, for the MFU's attention term", "H", ""},
    {"seq-len", analysis::kSettingSeqLen,
     "The training sequence length, for the MFU's attention term and samples/s → tokens/s", "S", ""},
    {"gpu-peak-tflops", analysis::kSettingPeakTflops,
     "The GPUs' dense peak in TFLOP/s per GPU, instead of the built-in table's", "TFLOPS", ""},
    {"gpu-precision", analysis::kSettingPrecision, "The peak's data type: bf16 (default), fp16 or fp8", "TYPE", ""},
    {"gpu-count", analysis::kSettingGpuCount, "The job's GPUs, when the run holds the metrics of only some of them",
     "N", ""},
};

} // namespace

void addMfuOptions(QCommandLineParser& parser, MfuKept kept)
{
    const char* where = kept == MfuKept::WithStore ? "kept in the run with --store" : "kept in the run";
    for (const MfuOption& o : kOptions)
        parser.addOption({QString::fromLatin1(o.name),
                          QString::fromStdString(fmt::format("{} ({}{}).", o.help, where, o.more)),
                          QString::fromLatin1(o.value)});
}

Expected<std::map<std::string, std::optional<std::string>>> mfuSettingChanges(const QCommandLineParser& parser)
{
    std::map<std::string, std::optional<std::string>> changes;
    for (const MfuOption& o : kOptions) {
        const QString name = QString::fromLatin1(o.name);
        if (!parser.isSet(name)) continue;
        const std::string v = parser.value(name).trimmed().toStdString();
        if (v == "none") {
            changes[o.key] = std::nullopt;
            continue;
        }
        const bool precision = std::string_view(o.key) == analysis::kSettingPrecision;
        if (precision ? !analysis::isPeakPrecision(v) : !analysis::parseMfuNumber(v))
            return makeError(ErrorCode::Usage,
                             fmt::format("--{} needs {}, got \"{}\"", o.name,
                                         precision ? "bf16, fp16 or fp8" : "a positive number such as 7e9 or 70B", v));
        changes[o.key] = precision ? v : fmt::format("{}", *analysis::parseMfuNumber(v));
    }
    return changes;
}

Status keepMfuSettings(store::RunDatabase& db, const std::map<std::string, std::optional<std::string>>& changes)
{
    if (changes.empty()) return okStatus();
    RUNLENS_TRY(store::storeRunSettings(db, changes));
    std::string what;
    for (const auto& [key, value] : changes)
        what += fmt::format("{}{}={}", what.empty() ? "" : ", ", key, value ? *value : "(cleared)");
    fmt::print("Kept in the run for the MFU: {}\n", what);
    return okStatus();
}

} // namespace runlens::app
