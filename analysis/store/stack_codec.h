#pragma once

// Encoding of timed stack samples (the stack_chunk.data BLOB) and of per-callsite totals (the summary BLOBs
// of stack_chunk and stack_bucket).
//
// Samples, before zstd compression: varints
//   version(=1) count, then for each sample (in time order):
//   zigzag(ts - previous ts) (the first against 0), callsite id, (sample_count << 1 | same_weight),
//   and unless same_weight the weight as 8 bytes of IEEE-754, little-endian.
// Totals (not compressed: they are read for every whole chunk in a window): varints
//   version(=1) count, then for each callsite in ascending id order: id delta, samples, weight (8 bytes).

#include "analysis/store/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace runlens::store {

inline constexpr int kStackChunkSamples = 4096;

struct StackSample
{
    int64_t tsNs = 0;
    int64_t callsiteId = 0;
    int64_t count = 1;
    double weight = 0;
};

struct CallsiteTotal
{
    int64_t callsiteId = 0;
    int64_t samples = 0;
    double weight = 0;
};

// Per-callsite sums, indexed by callsite id (grown on demand).
struct CallsiteSums
{
    std::vector<int64_t> samples;
    std::vector<double> weight;
    void add(int64_t callsiteId, int64_t n, double w)
    {
        const auto i = static_cast<size_t>(callsiteId);
        if (i >= samples.size()) {
            samples.resize(i + 1 + i / 2, 0);
            weight.resize(samples.size(), 0.0);
        }
        samples[i] += n;
        weight[i] += w;
    }
};

// Encodes samples already sorted by time.
std::string encodeStackSamples(const std::vector<StackSample>& samples);
Expected<std::vector<StackSample>> decodeStackSamples(const void* data, size_t size);

// Encodes totals sorted by callsite id (each id once).
std::string encodeCallsiteTotals(const std::vector<CallsiteTotal>& totals);
// Adds every total of a summary BLOB to sums. Ids ascend, each once, and are below callsiteCount (the callsites
// that exist): any other id is a corrupt summary, so sums never grow for an id the bytes made up.
Status addCallsiteTotals(const void* data, size_t size, CallsiteSums& sums, int64_t callsiteCount);
Expected<std::vector<CallsiteTotal>> decodeCallsiteTotals(const void* data, size_t size);

} // namespace runlens::store
