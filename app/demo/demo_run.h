#pragma once

// A synthetic multi-node training run written in real formats, for the demo and the benchmarks:
// per node an nvidia-smi --query-gpu CSV, per rank a py-spy speedscope file of timed stack samples with
// DeepSpeed ZeRO-3 frames (demo_stacks.h), and on node 0 (rank 0) LLaMA-Factory's trainer_log.jsonl. The run is
// communication-bound in its steady state (GPU utilization high, power low, the autograd threads waiting in
// fetch_sub_module and __reduce_and_partition_ipg_grads) with periodic checkpoint stalls (utilization and power drop
// while rank 0 writes). Deterministic for a given seed.

#include "analysis/store/error.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
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
    int sequencesPerGpu = 2; // sequences each GPU trains on per step (micro-batch × gradient accumulation)
    int seqLen = 8192;       // tokens per sequence
    double epochs = 1;       // the passes over the data set the run makes
};

// The model the demo trains: Llama 4 Scout, a mixture of experts (16 experts, one routed per token beside a shared
// one) with 109e9 parameters of which 17e9 are active for each token.
inline constexpr double kDemoModelActiveParams = 17e9;
inline constexpr double kDemoModelTotalParams = 109e9;
inline constexpr int kDemoModelLayers = 48;
inline constexpr int kDemoModelHidden = 5120;
// The trainer logs every step (logging_steps 1): the rules take each line's step time as one step ending there
// (analysis/rules/step_detection.cpp), so a log every N steps would read as steps N times as long. About 160 lines
// for the 30-minute default run, 2000 for zero3's 28 h.
inline constexpr int kDemoLoggingSteps = 1;

// Tokens per training step: the global batch (sequences per GPU × GPUs) × the sequence length, the same in zero3
// and zero3-tuned (tuning changes how fast a step runs, not what it trains on).
int64_t demoTokensPerStep(const DemoSpec& spec);
// When training begins (the trainer's start, which its log's elapsed_time counts from), in seconds from the run's
// start: the first step boundary after the model is loaded and sharded.
double demoTrainStartS(const DemoSpec& spec);
// When each training step ends, in seconds from the run's start: at the step boundaries the GPU metrics dip at,
// except those inside a checkpoint stall (no step ends while the checkpoint is written; the step it falls in takes
// that much longer). Step n (from 1) ends at element n - 1.
std::vector<double> demoStepEnds(const DemoSpec& spec);
// The training loss of step n: a power-law decay with a little noise, both functions of the step and the seed only,
// so runs that differ in speed (zero3, zero3-tuned) have the same loss curve against steps.
double demoStepLoss(const DemoSpec& spec, int64_t step);
// The run settings that describe the model for the MFU (analysis/mfu.h): active parameters, layers, hidden size and
// sequence length.
std::map<std::string, std::optional<std::string>> demoModelSettings(const DemoSpec& spec);

// The trainer log's file name (in node0/) and its start as the import option start= (epoch seconds). The log has no
// wall clock, and its evenly spaced steps match the GPU activity equally well a step or so apart, so the demo
// gives the start it knows instead of leaving the log to be matched.
extern const char* const kDemoTrainerLogName;
std::string demoTrainerLogStart(const DemoSpec& spec);

// Writes rank 0's LLaMA-Factory trainer_log.jsonl (docs/formats.md §15): a line every kDemoLoggingSteps steps and a
// closing line at the last step. Returns lines written.
Expected<int64_t> writeDemoTrainerLog(const DemoSpec& spec, std::FILE* out);

// The runs `runlens demo --scenario` knows: "default" (2 nodes, 30 min, 10.6 s steps), "zero3" (the reference case:
// 4 nodes × 8 GPUs, 28 h, 50 s steps, SM activity 0.21, 6 GB/s per InfiniBand port of 25 GB/s, a 2 min checkpoint
// every 2 h, stacks at 1 Hz) and "zero3-tuned" (the same model after tuning ZeRO-3: 40 s steps, SM activity 0.28,
// 7.5 GiB/s per port, 22.4 h). Unknown names are a usage error. The zero3 scenarios train 3 epochs on 6 sequences
// per GPU and step; the default on 2.
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

// Writes the whole run under dir/<node>/... (the trainer log in node0/); returns the files written.
Expected<std::vector<std::string>> writeDemoRun(const DemoSpec& spec, const std::string& dir);

// Creates the file at path, fills it with `write` (one of the writers above, returning what it wrote) and closes it,
// then adds path to files. An Io error naming the file when it cannot be created, written or closed; the writer's
// own error when it fails.
Status writeDemoFile(const std::string& path, const std::function<Expected<int64_t>(std::FILE*)>& write,
                     std::vector<std::string>& files);

} // namespace runlens::app
