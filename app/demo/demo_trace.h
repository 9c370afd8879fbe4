#pragma once

// PyTorch profiler (Kineto) traces for the demo run: per rank a Chrome Trace Event JSON of a few profiled
// training steps of the same communication-bound ZeRO-3 story as the metrics (demo_run.h): every block's
// parameters are all-gathered and its gradients reduce-scattered by NCCL kernels that keep the GPU "busy"
// while the compute kernels fill under a tenth of each step.

#include "analysis/store/error.h"
#include "app/demo/demo_run.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace runlens::app {

// Writes one rank's trace of `steps` profiled steps, the first numbered firstStep and starting at startNs
// (epoch ns), with baseTimeNanoseconds, distributedInfo, deviceProperties, CPU ops and ProfilerStep#N
// annotations, kernel launches with their flows, compute kernels, NCCL AllGather/ReduceScatter kernels and an
// input memcpy per step. Returns the number of events written.
Expected<int64_t> writeDemoKinetoTrace(const DemoSpec& spec, int globalRank, int firstStep, int steps, int64_t startNs,
                                       std::FILE* out);

// Writes the traces of one node's ranks (kineto-rank<R>.json) into nodeDir, two profiled steps a fifth of
// the way into the run (after warm-up, clear of checkpoints), and appends their paths to files.
Status writeDemoTraces(const DemoSpec& spec, int node, const std::string& nodeDir, std::vector<std::string>& files);

} // namespace runlens::app
