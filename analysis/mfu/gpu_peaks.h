#pragma once

// The GPUs' dense tensor-core peaks (resources/gpus/peaks.tsv, compiled in): per GPU model, TFLOP/s for bf16, fp16
// and fp8 without structured sparsity, and the datasheet they come from. A model is found from the GPU name a run
// stores (device attribute "name", e.g. "NVIDIA H100 80GB HBM3").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::analysis {

struct GpuPeak
{
    std::string model;                     // "H100 SXM"
    std::vector<std::string> match;        // words that must all appear in the GPU name
    std::optional<double> bf16, fp16, fp8; // TFLOP/s, dense; nullopt: no tensor-core support for the type
    std::string source;                    // the datasheet

    // The peak for a precision ("bf16", "fp16", "fp8"); nullopt when the GPU has none or the precision is unknown.
    std::optional<double> tflops(std::string_view precision) const;
};

// The table, in its order (the first match wins).
const std::vector<GpuPeak>& gpuPeaks();
// Parses a table in the peaks.tsv format; malformed lines are skipped (the built-in table is checked by tests).
std::vector<GpuPeak> parseGpuPeaks(std::string_view text);
// The first entry whose words all appear in the name (case-insensitive, whole words); nullptr when none does.
const GpuPeak* findGpuPeak(std::string_view gpuName, const std::vector<GpuPeak>& table = gpuPeaks());

} // namespace runlens::analysis
