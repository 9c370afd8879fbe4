#pragma once

// The seed-scale run for the timeline benchmarks, written straight through the store (no text parsing):
// per GPU utilization ≈ 99 % with SM activity ≈ 0.21 (the communication-bound signature), tensor and DRAM
// activity, power, SM clock, temperature and memory; per node two InfiniBand links, storage with checkpoint
// write bursts, CPU and memory. A checkpoint every 30 minutes stalls every GPU for 2 minutes; one GPU has a
// single 5-second dip. Deterministic.

#include <string>

namespace runlens::bench {

struct SeedRun
{
    int nodes = 4;
    int gpusPerNode = 8;
    double hours = 28;
    int intervalMs = 1000;
};

// Returns the number of points written, or -1 on failure (the message is printed).
long long writeSeedRun(const std::string& path, const SeedRun& spec);

} // namespace runlens::bench
