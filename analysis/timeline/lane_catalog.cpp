#include "analysis/timeline/lane_catalog.h"

#include <algorithm>
#include <map>
#include <set>

namespace runlens::timeline {

namespace {

struct Group
{
    const char* id;
    const char* title;
    const char* unit;
    std::vector<LaneMetric> metrics;
};

// The canonical lanes, in display order (DESIGN.md §4 names).
const std::vector<Group>& groups()
{
    static const std::vector<Group> kGroups = {
        {"gpu_util", "GPU utilization vs SM activity", "%",
         {{"gpu.util", 1, "GPU util"}, {"gpu.sm_active", 100, "SM active"}, {"gpu.gr_active", 100, "graphics active"}}},
        {"gpu_activity", "Tensor / DRAM activity, SM occupancy", "%",
         {{"gpu.tensor_active", 100, "tensor active"},
          {"gpu.dram_active", 100, "DRAM active"},
          {"gpu.sm_occupancy", 100, "SM occupancy"}}},
        {"trace_busy", "Profiled kernels / communication busy", "%",
         {{"gpu.kernel_busy", 100, "kernels"},
          {"gpu.comm_busy", 100, "comm kernels"},
          {"trace.collective_busy", 100, "collectives (host)"}}},
        {"net", "Network", "B/s", {{"net.tx", 1, "tx"}, {"net.rx", 1, "rx"}}},
        {"gpu_link", "GPU links (NVLink, PCIe)", "B/s",
         {{"gpu.nvlink_tx", 1, "NVLink tx"},
          {"gpu.nvlink_rx", 1, "NVLink rx"},
          {"gpu.pcie_tx", 1, "PCIe tx"},
          {"gpu.pcie_rx", 1, "PCIe rx"}}},
        {"storage", "Storage", "B/s", {{"disk.write", 1, "write"}, {"disk.read", 1, "read"}}},
        {"cpu", "CPU", "%", {{"cpu.util", 1, "CPU util"}}},
        {"host_mem", "Host memory", "bytes",
         {{"host.mem_available", 1, "available"}, {"host.mem_dirty", 1, "dirty"}}},
        {"gpu_mem", "GPU memory used", "bytes", {{"gpu.mem_used", 1, "used"}}},
        {"gpu_power", "GPU power", "W", {{"gpu.power", 1, "power"}}},
        {"gpu_clock", "GPU clocks", "Hz", {{"gpu.sm_clock", 1, "SM clock"}, {"gpu.mem_clock", 1, "memory clock"}}},
        {"gpu_temp", "GPU temperature", "°C", {{"gpu.temp", 1, "GPU"}, {"gpu.mem_temp", 1, "memory"}}},
        {"step_time", "Step time", "s", {{"train.step_time", 1, "step time"}}},
        {"loss", "Loss", "", {{"train.loss", 1, "loss"}}},
        {"tokens", "Throughput", "tokens/s", {{"train.tokens_per_s", 1, "tokens/s"}}},
    };
    return kGroups;
}

} // namespace

std::vector<LaneSpec> laneSpecs(const RunCatalog& catalog)
{
    std::map<std::string, std::string> units; // metric → unit of its first series
    for (const auto& s : catalog.series)
        units.emplace(s.metric, s.unit);
    std::vector<LaneSpec> out;
    std::set<std::string> grouped;
    for (const Group& g : groups()) {
        LaneSpec lane{g.id, g.title, g.unit, {}, true};
        for (const LaneMetric& m : g.metrics) {
            grouped.insert(m.metric);
            if (units.count(m.metric)) lane.metrics.push_back(m);
        }
        if (!lane.metrics.empty()) out.push_back(std::move(lane));
    }
    for (const auto& [metric, unit] : units) {
        if (grouped.count(metric)) continue;
        const bool ratio = unit == "ratio";
        out.push_back({"metric:" + metric, metric, ratio ? "%" : unit, {{metric, ratio ? 100.0 : 1.0, metric}}, false});
    }
    return out;
}

std::vector<int64_t> laneSeries(const RunCatalog& catalog, const LaneSpec& lane)
{
    std::vector<const store::SeriesInfo*> found;
    for (const auto& s : catalog.series)
        for (const auto& m : lane.metrics)
            if (m.metric == s.metric) found.push_back(&s);
    auto metricRank = [&](const std::string& metric) {
        for (size_t i = 0; i < lane.metrics.size(); ++i)
            if (lane.metrics[i].metric == metric) return i;
        return lane.metrics.size();
    };
    std::stable_sort(found.begin(), found.end(), [&](const store::SeriesInfo* a, const store::SeriesInfo* b) {
        const int na = catalog.nodeIndex(a->nodeId), nb = catalog.nodeIndex(b->nodeId);
        if (na != nb) return na < nb;
        if (a->deviceId != b->deviceId) return a->deviceId < b->deviceId;
        return metricRank(a->metric) < metricRank(b->metric);
    });
    std::vector<int64_t> ids;
    for (const auto* s : found)
        ids.push_back(s->id);
    return ids;
}

} // namespace runlens::timeline
