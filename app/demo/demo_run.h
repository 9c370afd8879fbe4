#pragma once

// A synthetic multi-node training run written in real formats, for the demo and the benchmarks:
// per node an nvidia-smi --query-gpu CSV, and per rank a py-spy speedscope file of timed stack samples with
// DeepSpeed ZeRO-3 frames (demo_stacks.h). The run is communication-bound in its steady state (GPU utilization high,
// power low, the autograd threads waiting in fetch_sub_module and __reduce_and_partition_ipg_grads) with periodic
// checkpoint stalls (utilization and power drop while rank 0 writes). Deterministic for a given seed.

#include "analysis/store/error.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace runlens::app {

struct DemoSpec
{
    std::string scenario = "default"; // demoScenario() names
    double stepS = 10.6;              // seconds per training step (the GPUs dip at each step boundary)
    double smActive = 0.21;           // SM activity in the steady state (utilization stays ~99 %)
    double ibBytesPerS = 6.0e9;       // InfiniBand traffic per node and direction, over 4 × 200 Gb/s ports
    int nodes = 2;
    int gpusPerNode = 8;
    double hours = 0.5;
    int intervalMs = 1000;
    uint64_t seed = 42;
    int64_t startUnixS = 1793606400; // 2026-11-02 08:00:00 UTC
    int checkpointEveryS = 360;      // a checkpoint every 6 minutes
    int checkpointStallS = 25;       // GPUs idle while it is written
    bool stacks = true;      // per rank: py-spy speedscope samples (demo_stacks.h) and a Kineto trace (demo_trace.h)
    int stackRateHz = 10;    // py-spy --rate (its default is 100; 10 keeps a long run small)
    int autogradThreads = 1; // pt_autograd_0..N-1 beside MainThread
    bool exporters = true;   // dcgm-exporter and node_exporter scrapes (Prometheus text) per node
};

// The runs `runlens demo --scenario` knows: "default" (2 nodes, 30 min, 10.6 s steps), "zero3" (the reference case:
// 4 nodes × 8 GPUs, 28 h, 50 s steps, SM activity 0.21, 6 GB/s per InfiniBand port of 25 GB/s, a 2 min checkpoint
// every 2 h, stacks at 1 Hz) and "zero3-tuned" (the same model after tuning ZeRO-3: 40 s steps, SM activity 0.28,
// 7.5 GiB/s per port, 22.4 h). Unknown names are a usage error.
Expected<DemoSpec> demoScenario(const std::string& name);
extern const char* const kDemoScenarios; // "default, zero3, zero3-tuned"

// The nvidia-smi properties written, as in the header of a real capture.
extern const char* const kDemoNvsmiHeader;

// Writes one node's nvidia-smi CSV (timestamps in UTC: import with --tz UTC). Returns rows written.
Expected<int64_t> writeDemoNvsmiCsv(const DemoSpec& spec, int node, std::FILE* out);

// Writes one node's dcgm-exporter scrapes (every interval, with millisecond timestamps, Hostname label) and
// node_exporter scrapes (every 5 s: InfiniBand, Ethernet, NVMe, CPU seconds, memory; instance label) as
// concatenated Prometheus text snapshots. Returns sample lines written.
Expected<int64_t> writeDemoDcgmExporter(const DemoSpec& spec, int node, std::FILE* out);
Expected<int64_t> writeDemoNodeExporter(const DemoSpec& spec, int node, std::FILE* out);

// Writes the whole run under dir/<node>/...; returns the files written.
Expected<std::vector<std::string>> writeDemoRun(const DemoSpec& spec, const std::string& dir);

} // namespace runlens::app
