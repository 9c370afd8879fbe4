#include "analysis/timeline/lane_catalog.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace runlens::timeline {
namespace {

// The canonical lane groups, in display order. Ratios (0-1) are scaled to percent beside percentages.
std::vector<LaneSpec> canonicalLanes()
{
    return {
        {"gpu_util",
         "GPU utilization vs SM activity",
         "%",
         {{"gpu.util", 1, "GPU utilization"}, {"gpu.sm_active", 100, "SM active"}, {"gpu.gr_active", 100, "GR active"}},
         true},
        {"gpu_activity",
         "Tensor / DRAM activity",
         "%",
         {{"gpu.tensor_active", 100, "Tensor active"},
          {"gpu.dram_active", 100, "DRAM active"},
          {"gpu.sm_occupancy", 100, "SM occupancy"}},
         true},
        {"trace_busy",
         "Kernel / communication busy",
         "%",
         {{"gpu.kernel_busy", 100, "Kernel busy"},
          {"gpu.comm_busy", 100, "Communication busy"},
          {"trace.collective_busy", 100, "Collective busy"}},
         true},
        {"net", "Network", "B/s", {{"net.tx", 1, "Send"}, {"net.rx", 1, "Receive"}}, true},
        // Per port, against the port's rate: the link load the COMM_BOUND sub-type is judged on.
        {"ib",
         "InfiniBand",
         "B/s",
         {{"ib.tx", 1, "Send"}, {"ib.rx", 1, "Receive"}, {"ib.capacity", 1, "Port capacity"}},
         true},
        {"storage", "Storage", "B/s", {{"disk.read", 1, "Read"}, {"disk.write", 1, "Write"}}, true},
        {"cpu", "CPU", "%", {{"cpu.util", 1, "CPU utilization"}}, true},
        {"host_mem",
         "Host memory",
         "bytes",
         {{"host.mem_available", 1, "Available"}, {"host.mem_used", 1, "Used"}},
         true},
        {"gpu_mem", "GPU memory used", "bytes", {{"gpu.mem_used", 1, "Memory used"}}, true},
        {"gpu_power", "GPU power", "W", {{"gpu.power", 1, "Power"}}, true},
        {"gpu_clock", "GPU clock", "Hz", {{"gpu.sm_clock", 1, "SM clock"}, {"gpu.mem_clock", 1, "Memory clock"}}, true},
        {"gpu_temp",
         "GPU temperature",
         "°C",
         {{"gpu.temp", 1, "Temperature"}, {"gpu.mem_temp", 1, "Memory temperature"}},
         true},
        {"step_time", "Step time", "s", {{"train.step_time", 1, "Step time"}}, true},
        {"loss", "Loss", "", {{"train.loss", 1, "Loss"}}, true},
        {"tokens", "Throughput", "tokens/s", {{"train.tokens_per_s", 1, "Tokens/s"}}, true},
    };
}

// The MFU over time: the trainer series it follows from, scaled to % (RunCatalog::mfu). After the throughput lane.
LaneSpec mfuLane(const MfuScale& mfu)
{
    return {"mfu", "MFU", "%", {{mfu.metric, mfu.percentPerUnit, "MFU"}}, true};
}

} // namespace

std::vector<LaneSpec> laneSpecs(const RunCatalog& catalog)
{
    std::map<std::string, std::string> metricUnit; // metric → unit of its first series
    for (const store::SeriesInfo& s : catalog.series)
        metricUnit.emplace(s.metric, s.unit);

    std::vector<LaneSpec> out;
    std::set<std::string> grouped;
    for (LaneSpec& lane : canonicalLanes()) {
        bool present = false;
        for (const LaneMetric& m : lane.metrics) {
            grouped.insert(m.metric);
            present |= metricUnit.count(m.metric) > 0;
        }
        if (!present) continue;
        // Only the metrics the run has: legends and envelopes then name nothing that is absent.
        std::erase_if(lane.metrics, [&](const LaneMetric& m) { return metricUnit.count(m.metric) == 0; });
        out.push_back(std::move(lane));
    }
    if (catalog.mfu && metricUnit.count(catalog.mfu->metric)) out.push_back(mfuLane(*catalog.mfu));
    for (const auto& [metric, unit] : metricUnit) {
        if (grouped.count(metric)) continue;
        // A 0-1 ratio is shown in percent, like the grouped ratios.
        const bool ratio = unit == "ratio";
        out.push_back({"metric:" + metric, metric, ratio ? "%" : unit, {{metric, ratio ? 100.0 : 1.0, metric}}, false});
    }
    return out;
}

std::vector<int64_t> laneSeries(const RunCatalog& catalog, const LaneSpec& lane)
{
    // Node by the catalogue's node order, then device kind and name in the catalogue's device order, then metric
    // in the lane's order.
    std::map<int64_t, size_t> devicePos;
    for (size_t i = 0; i < catalog.devices.size(); ++i)
        devicePos[catalog.devices[i].id] = i;
    std::vector<std::tuple<int, size_t, size_t, int64_t>> keyed;
    for (const store::SeriesInfo& s : catalog.series) {
        const auto it = std::find_if(lane.metrics.begin(), lane.metrics.end(),
                                     [&](const LaneMetric& m) { return m.metric == s.metric; });
        if (it == lane.metrics.end()) continue;
        const auto dev = devicePos.find(s.deviceId);
        keyed.emplace_back(catalog.nodeIndex(s.nodeId), dev == devicePos.end() ? SIZE_MAX : dev->second,
                           static_cast<size_t>(it - lane.metrics.begin()), s.id);
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<int64_t> out;
    out.reserve(keyed.size());
    for (const auto& k : keyed)
        out.push_back(std::get<3>(k));
    return out;
}

} // namespace runlens::timeline
