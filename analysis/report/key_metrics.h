#pragma once

// The few numbers per node a report leads with: how busy its GPUs were and how well (utilization, SM and tensor
// activity), and how loaded its interconnect and storage were against their capacity, over the node's steady
// state (start-up left out) within a window. NaN where the run does not record the metric.

#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace runlens::analysis {

struct NodeKeyMetrics
{
    static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    std::string node;
    size_t gpus = 0;
    double steadyS = 0; // seconds judged (the node's steady state in the window)
    double utilPct = kNone, smActive = kNone, tensorActive = kNone; // medians over GPUs and slots
    // The interconnect (InfiniBand ports, else the NICs), the busier direction per slot.
    double linkMean = kNone, linkPeak = kNone, linkCapacity = kNone;
    std::string linkCapacitySource; // ib.capacity, net.capacity or the link_capacity option; empty: unknown
    double diskWriteMean = kNone, diskWritePeak = kNone, diskReadMean = kNone, diskReadPeak = kNone;
    double cpuUtilPct = kNone; // median
};

// One entry per node with GPUs (then nodes without GPUs that have host metrics), over [fromNs, toNs).
std::vector<NodeKeyMetrics> keyMetrics(const RunMetrics& metrics, const RuleParams& params, int64_t fromNs,
                                       int64_t toNs);

} // namespace runlens::analysis
