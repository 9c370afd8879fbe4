#include "analysis/rules/run_metrics.h"

#include <QString>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <type_traits>

namespace runlens::analysis {

namespace {

// Series of a metric, with or without labels ("gpu.util", "gpu.util{rank=0}").
bool isMetric(const std::string& name, const char* metric)
{
    const size_t n = std::char_traits<char>::length(metric);
    return name.compare(0, n, metric) == 0 && (name.size() == n || name[n] == '{');
}

// The clock-event reason bit a per-reason boolean series stands for (nvidia-smi clocks_event_reasons.<reason>),
// 0 for any other metric.
uint64_t clockEventBit(const std::string& name)
{
    static const std::pair<const char*, uint64_t> kBits[] = {
        {"gpu.clock_event.gpu_idle", kClockEventGpuIdle},
        {"gpu.clock_event.app_clocks", kClockEventAppClocks},
        {"gpu.clock_event.sw_power_cap", kClockEventSwPowerCap},
        {"gpu.clock_event.hw_slowdown", kClockEventHwSlowdown},
        {"gpu.clock_event.sync_boost", kClockEventSyncBoost},
        {"gpu.clock_event.sw_thermal_slowdown", kClockEventSwThermal},
        {"gpu.clock_event.hw_thermal_slowdown", kClockEventHwThermal},
        {"gpu.clock_event.hw_power_brake", kClockEventHwPowerBrake},
    };
    for (const auto& [metric, bit] : kBits)
        if (isMetric(name, metric)) return bit;
    return 0;
}

// A per-reason boolean series' value reads as set from this on (0/1 samples, or their mean over an interval).
constexpr double kReasonSet = 0.5;

// ORs reason bits into per-slot masks (NaN: no sample yet); a boolean series sets `bit` when its value is at least
// kReasonSet, a mask series (bit 0) contributes its value's bits.
void orReasons(const std::vector<store::Point>& points, const TimeGrid& grid, uint64_t bit, std::vector<double>& mask)
{
    mask.resize(grid.size, std::numeric_limits<double>::quiet_NaN());
    for (const store::Point& p : points) {
        if (p.missing || !std::isfinite(p.value) || p.value < 0) continue;
        const size_t i = grid.slotOf(p.tsNs);
        if (i >= grid.size) continue;
        const uint64_t bits = bit ? (p.value >= kReasonSet ? bit : 0) : static_cast<uint64_t>(p.value);
        const uint64_t before = std::isfinite(mask[i]) ? static_cast<uint64_t>(mask[i]) : 0;
        mask[i] = static_cast<double>(before | bits);
    }
}

bool isVirtual(const store::DeviceInfo& d)
{
    return std::any_of(d.attributes.begin(), d.attributes.end(),
                       [](const auto& kv) { return kv.first == "virtual" && kv.second == "1"; });
}

// Node-level metrics, summed over the node's devices.
enum NodeMetric
{
    DiskWrite,
    DiskRead,
    NetTx,
    NetRx,
    Cpu,
    Collective,
    IbTx,
    IbRx,
};

// A node metric's total over the node's devices (NaN where none has a sample) and how many devices it adds up.
struct NodeTotal
{
    std::vector<double> total;
    size_t devices = 0;
};

// Every series the rules read, resampled onto the grid. A metric's series are accumulated one device at a time and
// turned into means at once (see loadGridSeries), so only the finished means stay in memory.
struct Accumulated
{
    std::map<int64_t, SlotValues> util, sm, tensor, comm;                   // by GPU device: per-slot means
    std::map<int64_t, SlotValues> clock, power, limit, enforcedLimit, temp; // by GPU device
    std::map<int64_t, std::vector<double>> reasons;                         // by GPU device: OR-ed bit masks
    // The trainer's series per node (the longest one wins).
    std::map<int64_t, std::vector<store::Point>> stepTimes, losses, stepNumbers;
    std::map<std::pair<int64_t, int>, NodeTotal> nodeTotals; // (node, metric)
    // Capacities: per node, the sum over its IB ports / NICs of each device's median (a rate can renegotiate).
    std::map<int64_t, double> ibCapacity, nicCapacity;
};

// A series that goes onto the grid, and where: a GPU metric's means (gpu set, node -1) or a node metric's total.
struct GridSeries
{
    int64_t seriesId = 0;
    std::map<int64_t, SlotValues>* gpu = nullptr;
    int64_t node = -1;
    int metric = -1;
    int64_t device = 0;
    // The series of one device and metric come together (in the order read), a node metric's devices in id order.
    auto key() const { return std::make_tuple(gpu != nullptr, node, metric, reinterpret_cast<uintptr_t>(gpu), device); }
};

// Where a series goes: a GPU metric's means, or a node metric (-1 for neither).
std::map<int64_t, SlotValues>* gpuTarget(Accumulated& acc, const store::DeviceInfo& d, const std::string& metric)
{
    if (d.kind != "gpu") return nullptr;
    if (isMetric(metric, "gpu.util")) return &acc.util;
    if (isMetric(metric, "gpu.sm_active")) return &acc.sm;
    if (isMetric(metric, "gpu.tensor_active")) return &acc.tensor;
    if (isMetric(metric, "gpu.comm_busy")) return &acc.comm;
    if (isMetric(metric, "gpu.sm_clock")) return &acc.clock;
    if (isMetric(metric, "gpu.power")) return &acc.power;
    if (isMetric(metric, "gpu.power_limit")) return &acc.limit;
    if (isMetric(metric, "gpu.power_limit_enforced")) return &acc.enforcedLimit;
    if (isMetric(metric, "gpu.temp")) return &acc.temp;
    return nullptr;
}

int nodeMetricOf(const store::DeviceInfo& d, const std::string& metric)
{
    if (isMetric(metric, "trace.collective_busy")) return Collective;
    if (isMetric(metric, "disk.write")) return DiskWrite;
    if (isMetric(metric, "disk.read")) return DiskRead;
    // Virtual interfaces (loopback, bridges, veth: marked by the importers) carry a host's traffic to itself, not the
    // interconnect's.
    if (isMetric(metric, "net.tx") && d.kind != "ib" && !isVirtual(d)) return NetTx;
    if (isMetric(metric, "net.rx") && d.kind != "ib" && !isVirtual(d)) return NetRx;
    if (isMetric(metric, "cpu.util")) return Cpu;
    if (isMetric(metric, "ib.tx")) return IbTx;
    if (isMetric(metric, "ib.rx")) return IbRx;
    return -1;
}

// Reads one series into the accumulators: capacities as medians, reason bits OR-ed, the trainer's points kept as
// they are; rates and utilizations are queued for the grid (loadGridSeries).
Status accumulateSeries(store::RunReader& reader, const store::SeriesInfo& s, const store::DeviceInfo& d,
                        const TimeGrid& grid, Accumulated& acc, std::vector<GridSeries>& onGrid)
{
    std::map<int64_t, SlotValues>* target = gpuTarget(acc, d, s.metric);
    // The node metrics are only looked for where no GPU metric matched (gpu.* names never match them).
    const int metric = target ? -1 : nodeMetricOf(d, s.metric);
    if (!target && metric < 0 && (isMetric(s.metric, "ib.capacity") || isMetric(s.metric, "net.capacity"))) {
        RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readPoints(s.id, {}));
        std::vector<double> values;
        values.reserve(points.size());
        for (const store::Point& pt : points)
            values.push_back(pt.value);
        const double median = quantile(std::move(values), 0.5);
        if (std::isfinite(median) && median > 0)
            (isMetric(s.metric, "ib.capacity") ? acc.ibCapacity : acc.nicCapacity)[s.nodeId] += median;
        return okStatus();
    }
    const uint64_t reasonBit = d.kind == "gpu" ? clockEventBit(s.metric) : 0;
    const bool reasonMask = d.kind == "gpu" && isMetric(s.metric, "gpu.clock_event_reasons");
    const bool trainer =
        isMetric(s.metric, "train.step_time") || isMetric(s.metric, "train.loss") || isMetric(s.metric, "train.step");
    if (!target && metric < 0 && !reasonBit && !reasonMask && !trainer) return okStatus();
    if (!reasonBit && !reasonMask && !trainer) {
        onGrid.push_back(GridSeries{s.id, target, target ? -1 : s.nodeId, metric, d.id});
        return okStatus();
    }
    RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readPoints(s.id, {}));
    if (reasonBit || reasonMask) {
        orReasons(points, grid, reasonBit, acc.reasons[d.id]);
    } else if (trainer) {
        std::vector<store::Point> present;
        for (const store::Point& p : points)
            if (!p.missing && std::isfinite(p.value)) present.push_back(p);
        auto& kept = isMetric(s.metric, "train.step_time") ? acc.stepTimes[s.nodeId]
                     : isMetric(s.metric, "train.step")    ? acc.stepNumbers[s.nodeId]
                                                           : acc.losses[s.nodeId];
        if (present.size() > kept.size()) kept = std::move(present);
    }
    return okStatus();
}

// Reads the queued series onto the grid one device and metric at a time: their per-slot sums and counts become the
// means at once (several series of one metric and device average per slot), GPU metrics kept per device, node
// metrics added into the node's total (devices in id order). Only the means outlive a device's accumulation.
Status loadGridSeries(store::RunReader& reader, std::vector<GridSeries> onGrid, const TimeGrid& grid, Accumulated& acc)
{
    std::stable_sort(onGrid.begin(), onGrid.end(),
                     [](const GridSeries& a, const GridSeries& b) { return a.key() < b.key(); });
    std::vector<double> sum;
    std::vector<int> count;
    for (size_t i = 0; i < onGrid.size();) {
        const GridSeries& first = onGrid[i];
        sum.clear();
        count.clear();
        for (; i < onGrid.size() && onGrid[i].key() == first.key(); ++i) {
            RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readPoints(onGrid[i].seriesId, {}));
            accumulate(points, grid, sum, count);
        }
        meansInPlace(sum, count);
        if (first.gpu) {
            (*first.gpu)[first.device] = SlotValues(sum);
            continue;
        }
        NodeTotal& t = acc.nodeTotals[{first.node, first.metric}];
        if (t.total.empty()) t.total.assign(grid.size, std::numeric_limits<double>::quiet_NaN());
        for (size_t j = 0; j < sum.size(); ++j)
            if (std::isfinite(sum[j])) t.total[j] = std::isfinite(t.total[j]) ? t.total[j] + sum[j] : sum[j];
        ++t.devices;
    }
    return okStatus();
}

GpuMetrics gpuMetrics(const store::DeviceInfo& d, const std::string& node, Accumulated& acc)
{
    // Each GPU's means move into its metrics (every GPU is read once).
    auto take = [&](auto& from) {
        using Values = typename std::remove_reference_t<decltype(from)>::mapped_type;
        const auto it = from.find(d.id);
        return it == from.end() ? Values{} : std::move(it->second);
    };
    GpuMetrics g;
    g.node = node;
    g.gpu = d.name;
    g.util = take(acc.util);
    g.smActive = take(acc.sm);
    g.tensorActive = take(acc.tensor);
    g.commBusy = take(acc.comm); // ranks sharing a GPU: their mean
    g.smClock = take(acc.clock);
    g.power = take(acc.power);
    g.powerLimit = acc.enforcedLimit.count(d.id) ? take(acc.enforcedLimit) : take(acc.limit);
    g.temp = take(acc.temp);
    g.clockEventReasons = take(acc.reasons);
    return g;
}

// The interconnect's capacity per direction and where it came from: the link_capacity import option, else the IB
// ports' or NICs' reported rates.
void linkCapacityOf(NodeMetrics& m, const store::NodeInfo& n, const std::vector<store::DeviceInfo>& devices,
                    Accumulated& acc)
{
    for (const auto& d : devices)
        if (d.nodeId == n.id && d.kind == "host")
            for (const auto& [key, value] : d.attributes)
                if (key == "link_capacity_bytes_per_s") {
                    bool ok = false;
                    const double c = QString::fromStdString(value).toDouble(&ok);
                    if (ok && c > 0) {
                        m.linkCapacity = c;
                        m.linkCapacitySource = "the link_capacity import option";
                    }
                }
    if (!std::isfinite(m.linkCapacity) && m.linkIsInfiniBand && acc.ibCapacity.count(n.id)) {
        m.linkCapacity = acc.ibCapacity[n.id];
        m.linkCapacitySource = "ib.capacity";
    } else if (!std::isfinite(m.linkCapacity) && !m.linkIsInfiniBand && acc.nicCapacity.count(n.id)) {
        m.linkCapacity = acc.nicCapacity[n.id];
        m.linkCapacitySource = "net.capacity";
    }
}

NodeMetrics nodeMetrics(const store::NodeInfo& n, const std::vector<store::DeviceInfo>& devices, Accumulated& acc)
{
    NodeMetrics m;
    m.node = n.name;
    // Rates add up over the node's devices (a slot counts when any device has a sample in it: loadGridSeries).
    auto total = [&](int metric) { // each total is taken once
        const auto it = acc.nodeTotals.find({n.id, metric});
        return it == acc.nodeTotals.end() ? std::vector<double>{} : std::move(it->second.total);
    };
    m.diskWrite = total(DiskWrite);
    m.diskRead = total(DiskRead);
    m.netTx = total(NetTx);
    m.netRx = total(NetRx);
    m.cpuUtil = total(Cpu);
    m.collectiveBusy = total(Collective);
    const bool ib = acc.nodeTotals.count({n.id, IbTx}) || acc.nodeTotals.count({n.id, IbRx});
    m.linkIsInfiniBand = ib;
    m.linkTx = ib ? SlotValues(total(IbTx)) : m.netTx;
    m.linkRx = ib ? SlotValues(total(IbRx)) : m.netRx;
    const std::array<int, 2> linkMetrics = ib ? std::array<int, 2>{IbTx, IbRx} : std::array<int, 2>{NetTx, NetRx};
    for (int metric : linkMetrics)
        if (const auto it = acc.nodeTotals.find({n.id, metric}); it != acc.nodeTotals.end())
            m.linkPorts = std::max(m.linkPorts, it->second.devices);
    linkCapacityOf(m, n, devices, acc);
    if (acc.stepTimes.count(n.id)) m.stepTimes = acc.stepTimes[n.id];
    if (acc.losses.count(n.id)) m.losses = acc.losses[n.id];
    if (acc.stepNumbers.count(n.id)) m.stepNumbers = acc.stepNumbers[n.id];
    return m;
}

} // namespace

Expected<RunMetrics> loadRunMetrics(store::RunDatabase& db, int64_t gridNs)
{
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto nodes, reader.nodes());
    RUNLENS_ASSIGN_OR_RETURN(auto devices, reader.devices());
    RUNLENS_ASSIGN_OR_RETURN(auto series, reader.series());
    RunMetrics out;
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    for (const auto& s : series)
        if (s.firstNs && s.lastNs) {
            first = std::min(first, *s.firstNs);
            last = std::max(last, *s.lastNs);
        }
    if (first > last) return out;
    out.grid.startNs = first;
    out.grid.stepNs = std::max<int64_t>(gridNs, 1'000'000);
    out.grid.size = static_cast<size_t>((last - first) / out.grid.stepNs) + 1;
    std::map<int64_t, std::string> nodeName;
    for (const auto& n : nodes)
        nodeName[n.id] = n.name;
    std::map<int64_t, const store::DeviceInfo*> device;
    for (const auto& d : devices)
        device[d.id] = &d;
    Accumulated acc;
    std::vector<GridSeries> onGrid;
    for (const auto& s : series) {
        const auto d = device.find(s.deviceId);
        if (d == device.end()) continue;
        RUNLENS_TRY(accumulateSeries(reader, s, *d->second, out.grid, acc, onGrid));
    }
    RUNLENS_TRY(loadGridSeries(reader, std::move(onGrid), out.grid, acc));
    for (const auto& d : devices)
        if (d.kind == "gpu" && acc.util.count(d.id)) out.gpus.push_back(gpuMetrics(d, nodeName[d.nodeId], acc));
    for (const auto& n : nodes)
        out.nodes.push_back(nodeMetrics(n, devices, acc));
    return out;
}

} // namespace runlens::analysis
