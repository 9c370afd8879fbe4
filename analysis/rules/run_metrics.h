#pragma once

// The metrics the rules read, resampled onto one grid over the run: per GPU its utilization and SM activity,
// per node its disk and network rates (summed over devices) and CPU utilization. Several series of one metric
// on one device (nvidia-smi query and dmon both give utilization) are averaged per slot.

#include "analysis/rules/episodes.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"

#include <string>
#include <vector>

namespace runlens::analysis {

struct GpuMetrics
{
    std::string node, gpu; // names
    std::vector<double> util;      // %, NaN: no sample
    std::vector<double> smActive;  // 0–1; empty when the run has no SM activity for this GPU
    std::vector<double> commBusy;  // 0–1 from profiler traces (NCCL kernels' share of time); empty when untraced
};

struct NodeMetrics
{
    std::string node;
    std::vector<double> diskWrite, diskRead; // B/s over every disk; empty when none
    std::vector<double> netTx, netRx;        // B/s over every NIC
    std::vector<double> cpuUtil;             // %
    std::vector<double> collectiveBusy;      // 0–1 from traces (CPU-side collective spans, e.g. gloo:all_reduce)
};

struct RunMetrics
{
    TimeGrid grid;
    std::vector<GpuMetrics> gpus;
    std::vector<NodeMetrics> nodes;
};

Expected<RunMetrics> loadRunMetrics(store::RunDatabase& db, int64_t gridNs);

} // namespace runlens::analysis
