#pragma once

// The demo run's stack samples, per rank, as py-spy records them from a DeepSpeed ZeRO-3 training process:
// the threads MainThread and pt_autograd_0..N-1, sampled every 1/stackRateHz seconds over the whole run.
// The timeline matches the demo's metrics: model set-up, then ~10.6 s steps (DataLoader fetch, forward with
// the ZeRO-3 parameter all-gather waits in fetch_sub_module, backward with the autograd thread gathering
// parameters and reduce-scattering gradients in __reduce_and_partition_ipg_grads, optimizer step), and a
// checkpoint stall every checkpointEveryS in which rank 0 writes (save_checkpoint -> torch.save -> _save)
// while the other ranks write their ZeRO shard and wait at a barrier. Samples are taken with py-spy's --idle
// so each thread's samples are continuous in time; an autograd thread waiting for work (no Python frames)
// shows the engine's native wait frames instead of an empty stack. Deterministic for a given seed.

#include "analysis/store/error.h"

#include <cstdint>
#include <cstdio>

namespace runlens::app {

struct DemoSpec;

// One rank as a py-spy speedscope file: one sampled profile per thread, named `Thread <tid> "<name>"`, unit
// seconds, every weight 1/stackRateHz, frames {name, file, line}, and startUnixNs (the wall-clock time of the
// profile's first sample). Returns the samples written over all threads.
// A run's share of a step spent waiting for communication against the reference (zero3) run's, from its SM
// activity (1 − SM / 0.8): a run whose GPUs compute more of each step waits less. The stacks' wait shares and the
// traces' collective durations scale with it.
double demoWaitScale(const DemoSpec& spec);

// How long a run's collectives take against the reference run's, with the compute of a step unchanged (the same
// model): the waiting share of a step w = 1 − SM / 0.8 gives collectives w / (1 − w) of the compute time. The
// traces scale their collective durations by it.
double demoCommScale(const DemoSpec& spec);

// A rank's process id in the demo's stacks and traces: 32 apart, so every thread id of a node is distinct (the
// threads of a process follow its pid).
int64_t demoPidOf(int globalRank);

Expected<int64_t> writeDemoSpeedscope(const DemoSpec& spec, int globalRank, std::FILE* out);

// The same samples aggregated as py-spy --format raw --threads (folded stacks with process and thread root
// frames, untimed). Returns the samples counted.
Expected<int64_t> writeDemoFolded(const DemoSpec& spec, int globalRank, std::FILE* out);

} // namespace runlens::app
