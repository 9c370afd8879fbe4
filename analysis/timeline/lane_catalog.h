#pragma once

// Which metrics share a timeline lane. Lanes are by metric group: GPU utilization with SM activity on one
// axis (so the "utilization illusion" shows at a glance), tensor/DRAM activity, network, storage, CPU, host
// memory, GPU power, clock and temperature, trace busy fractions, step time, loss and throughput, and the MFU
// (the trainer's throughput scaled to %) when the run's MFU is known. Ratios (0-1) are shown as percent beside
// percentages. A metric of no group gets a lane of its own, hidden until asked for.

#include "analysis/timeline/run_catalog.h"

#include <string>
#include <vector>

namespace runlens::timeline {

struct LaneMetric
{
    std::string metric; // canonical name, e.g. gpu.sm_active
    double scale = 1;   // stored value × scale = shown value (0-1 ratios → %)
    std::string label;  // as shown in legends, e.g. "SM active"
};

struct LaneSpec
{
    std::string id;    // stable, for saved layouts: "gpu_util", "net", "metric:gpu.pcie_tx"
    std::string title; // "GPU utilization vs SM activity"
    std::string unit;  // of the shown values: "%", "B/s", "W", "Hz", "°C", "bytes", "s", ""
    std::vector<LaneMetric> metrics;
    bool shownByDefault = true;
};

// The lanes the run has data for, in the canonical order (the MFU lane after throughput), then one hidden lane
// per ungrouped metric.
std::vector<LaneSpec> laneSpecs(const RunCatalog& catalog);

// The series of a lane (every series whose metric is one of the lane's), in node, device, metric order.
std::vector<int64_t> laneSeries(const RunCatalog& catalog, const LaneSpec& lane);

} // namespace runlens::timeline
