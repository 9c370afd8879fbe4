#pragma once

// Model FLOPs utilization (MFU): the FLOP/s the model's training needs at the throughput the run achieved, over
// what the GPUs could do at their dense tensor-core peak (docs/design.md, "MFU").
//
//     FLOPs per token = 6·N + 12·L·H·S    (N parameters; L layers, H hidden size, S sequence length)
//     MFU = FLOPs per token × tokens/s / (GPUs × peak FLOP/s per GPU)
//
// 6·N counts a training step's matrix multiplications of the weights (2·N forward, 4·N backward), 12·L·H·S the
// attention scores and their use (PaLM, appendix B; Megatron-LM's count has the same leading terms). The
// attention term is left out unless the layers, the hidden size and the sequence length are all given.
// Activation recomputation is not counted (that would be the hardware FLOPs utilization).
// Tokens/s come from the trainer log (train.tokens_per_s), else its samples/s × the sequence length. When the
// log carries the achieved TFLOP/s per GPU itself (Megatron's "throughput per GPU (TFLOP/s/GPU)",
// train.tflops_per_gpu) and the model is not described, MFU is that over the peak.
// The peak is the user's (gpu.peak_tflops), else the table's entry for the GPU name the run stores.

#include "analysis/mfu/gpu_peaks.h"
#include "analysis/store/error.h"

#include <QJsonObject>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace runlens::store {
class RunDatabase;
}

namespace runlens::analysis {

// The run settings (store/run_settings.h) the MFU reads.
inline constexpr const char* kSettingModelParams = "model.params";
inline constexpr const char* kSettingModelLayers = "model.layers";
inline constexpr const char* kSettingModelHidden = "model.hidden";
inline constexpr const char* kSettingSeqLen = "model.seq_len";
inline constexpr const char* kSettingPeakTflops = "gpu.peak_tflops";
inline constexpr const char* kSettingPrecision = "gpu.precision";
inline constexpr const char* kSettingGpuCount = "gpu.count";

struct MfuSettings
{
    std::optional<double> params, layers, hidden, seqLen; // the model
    std::optional<double> peakTflops;                     // dense TFLOP/s per GPU, overriding the table
    std::optional<double> gpus;                           // GPUs of the job, overriding the run's GPU count
    std::string precision = "bf16";                       // the peak's data type: bf16, fp16 or fp8

    // From the run's settings; values that are not numbers are ignored.
    static MfuSettings fromRunSettings(const std::map<std::string, std::string>& settings);
};

// A number such as 70e9, 7000000000, 7B or 175G (suffixes K, M, B or G, T); nullopt when it is not a positive
// finite number.
std::optional<double> parseMfuNumber(std::string_view text);
// Whether a precision is one the table has (bf16, fp16, fp8; any case).
bool isPeakPrecision(std::string_view precision);

// What the run says, besides the settings.
struct MfuInputs
{
    MfuSettings settings;
    std::vector<std::string> gpuNames; // one per GPU of the run: its stored name, "" when it has none
    std::optional<double> tokensPerS, samplesPerS, logTflopsPerGpu; // typical values from the trainer log
};

struct Mfu
{
    std::optional<double> mfu;                  // a fraction; nullopt when it cannot be worked out (see missing)
    std::optional<double> achievedTflopsPerGpu; // the model's FLOP/s per GPU
    std::optional<double> peakTflops;           // per GPU
    std::string gpuModel;                       // the table's model, or the stored name
    std::string precision;
    std::string peakSource; // "table" (datasheet says which) or "user"
    std::string datasheet;
    int gpus = 0;
    std::string gpusSource;  // "run" (its GPU devices) or "user"
    std::string flopsSource; // "model" (FLOPs per token × tokens/s) or "trainer_log" (its TFLOP/s)
    std::string formula;     // "6N + attention" or "6N"
    std::optional<double> flopsPerToken;
    std::optional<double> params, layers, hidden, seqLen;
    std::optional<double> tokensPerS;
    std::string tokensSource;              // "tokens_per_s" or "samples_per_s"
    std::optional<double> logTflopsPerGpu; // the trainer log's own figure, when it has one
    std::vector<std::string> missing;      // why the MFU is not known, each naming the option that supplies it
    std::vector<std::string> notes;        // what was left out (e.g. the attention term)
};

Mfu computeMfu(const MfuInputs& inputs);
// Reads the run's GPUs and trainer series and computes the MFU with the settings given.
Expected<Mfu> runMfu(store::RunDatabase& db, const MfuSettings& settings);
// Reads the settings stored in the run too.
Expected<Mfu> runMfu(store::RunDatabase& db);

// "MFU 41 % (H200 bf16 dense 989 TFLOP/s × 8 GPUs; 6N + attention, N = 7e9; tokens/s from the trainer log)", or
// "MFU not known: ..." with what to give.
std::string mfuLine(const Mfu& m);
// 7e9, 1.3e10, 4096, 0.5: a short form of a count.
std::string shortNumber(double v);
QJsonObject toJson(const Mfu& m);

} // namespace runlens::analysis
