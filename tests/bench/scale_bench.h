#pragma once

// The benchmark at cluster scale (`runlens_bench --scale`): 128 nodes × 8 GPUs × 24 h of nvidia-smi CSV, nvidia-smi
// dmon with GPM columns, node_exporter scrapes and py-spy stacks at 10 Hz on one thread per rank, generated and
// imported one node at a time (the disk holds one node's inputs, never the whole run's), then analysed, reported,
// shown in the timeline and as the flame graph of 1 h windows, each against its target.

#include "tests/bench/timeline_widget_bench.h"

#include <string>

namespace runlens::bench {

// Values per row of the nvidia-smi CSV the demo writes: all but timestamp, index, name and pci.bus_id.
inline constexpr int kNvsmiSamplesPerRow = 9;

struct ScaleSize
{
    int nodes = 128;
    int gpusPerNode = 8;
    double hours = 24;
};

// The size `--scale --quick` and the plain `--quick` run: seconds, so the code is exercised on every CI run.
inline constexpr ScaleSize kQuickScale{2, 2, 0.1};

// Prints the progress and a table against the targets; returns false when the work failed (an import, analyze or
// report exited with an error, or the timeline or flame graph could not be shown).
bool benchScale(TimedApplication& app, const std::string& dir, const ScaleSize& size, bool quick);

} // namespace runlens::bench
