#pragma once

// Seed-scale inputs for each metric format (4 nodes × 8 GPUs × H hours at 1 s), each written with a CSV of
// the same values for the `sqlite3 .import` baseline; the long format also as a realistic collector writes it
// (nanosecond times, about 25,000 series, 6 scrapes per hour of the seed).

#include <cstdint>
#include <string>
#include <vector>

namespace runlens::bench {

struct GeneratedFormat
{
    std::string format;                 // the importer's format id
    std::vector<std::string> files;     // inputs for runlens import
    std::vector<std::string> extraArgs; // import options the format needs (e.g. a start time)
    std::vector<std::string> baseline;  // the same values as CSV files (with a header), for sqlite3 .import
    int64_t rows = 0;                   // records in the input (lines of values)
    int64_t samples = 0;                // numeric values in them
    std::string label;                  // the row's name in the table and its files; empty = the format id
};

// Values per row of an `nvidia-smi dmon` capture with GPM columns: all but the date, time and GPU index.
inline constexpr int kDmonSamplesPerRow = 9;

// Node `node`'s `nvidia-smi dmon` capture with GPM columns (`gpus` GPUs every second for `seconds` from
// 2026-11-02 08:00 UTC; import with --tz UTC) at path, and the same values as a CSV file with a header at baseline.
// Returns the rows written.
int64_t writeDmonNode(const std::string& path, const std::string& baseline, int node, int gpus, int64_t seconds);

// Writes every format's inputs under dir; returns them in the order benchmarked.
std::vector<GeneratedFormat> generateFormats(const std::string& dir, int nodes, int gpus, double hours);

} // namespace runlens::bench
