#include "analysis/rules/run_metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <QString>

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

// ORs reason bits into per-slot masks (NaN: no sample yet); a boolean series sets `bit` when its value is ≥ 0.5,
// a mask series (bit 0) contributes its value's bits.
void orReasons(const std::vector<store::Point>& points, const TimeGrid& grid, uint64_t bit, std::vector<double>& mask)
{
    mask.resize(grid.size, std::numeric_limits<double>::quiet_NaN());
    for (const store::Point& p : points) {
        if (p.missing || !std::isfinite(p.value) || p.value < 0) continue;
        const size_t i = grid.slotOf(p.tsNs);
        if (i >= grid.size) continue;
        const uint64_t bits = bit ? (p.value >= 0.5 ? bit : 0) : static_cast<uint64_t>(p.value);
        const uint64_t before = std::isfinite(mask[i]) ? static_cast<uint64_t>(mask[i]) : 0;
        mask[i] = static_cast<double>(before | bits);
    }
}

bool isVirtual(const store::DeviceInfo& d)
{
    return std::any_of(d.attributes.begin(), d.attributes.end(),
                       [](const auto& kv) { return kv.first == "virtual" && kv.second == "1"; });
}

} // namespace

Expected<RunMetrics> loadRunMetrics(store::RunDatabase& db, int64_t gridNs)
{
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto nodes, reader.nodes());
    auto devices = reader.devices();
    if (!devices) return devices.error();
    auto series = reader.series();
    if (!series) return series.error();
    RunMetrics out;
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    for (const auto& s : *series)
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
    for (const auto& d : *devices)
        device[d.id] = &d;
    struct Acc
    {
        std::vector<double> sum;
        std::vector<int> count;
    };
    std::map<int64_t, Acc> util, sm, tensor, comm;                           // by GPU device
    std::map<int64_t, Acc> clock, power, limit, enforcedLimit, temp;  // by GPU device
    std::map<int64_t, std::vector<double>> reasons;                    // by GPU device: OR-ed bit masks
    // The trainer's series per node (the longest one wins).
    std::map<int64_t, std::vector<store::Point>> stepTimes, losses, stepNumbers;
    std::map<std::pair<int64_t, int>, std::map<int64_t, Acc>> nodeAcc; // (node, metric) -> device -> acc
    enum { DiskWrite, DiskRead, NetTx, NetRx, Cpu, Collective, IbTx, IbRx };
    // Capacities: per node, the sum over its IB ports / NICs of each device's median (a rate can renegotiate).
    std::map<int64_t, double> ibCapacity, nicCapacity;
    for (const auto& s : *series) {
        const store::DeviceInfo* d = device.count(s.deviceId) ? device[s.deviceId] : nullptr;
        if (!d) continue;
        std::map<int64_t, Acc>* target = nullptr;
        int metric = -1;
        if (d->kind == "gpu" && isMetric(s.metric, "gpu.util")) target = &util;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.sm_active")) target = &sm;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.tensor_active")) target = &tensor;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.comm_busy")) target = &comm;
        else if (isMetric(s.metric, "trace.collective_busy")) metric = Collective;
        else if (isMetric(s.metric, "disk.write")) metric = DiskWrite;
        else if (isMetric(s.metric, "disk.read")) metric = DiskRead;
        // Virtual interfaces (loopback, bridges, veth: marked by the importers) carry a host's traffic to itself,
        // not the interconnect's.
        else if (isMetric(s.metric, "net.tx") && d->kind != "ib" && !isVirtual(*d)) metric = NetTx;
        else if (isMetric(s.metric, "net.rx") && d->kind != "ib" && !isVirtual(*d)) metric = NetRx;
        else if (isMetric(s.metric, "cpu.util")) metric = Cpu;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.sm_clock")) target = &clock;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.power")) target = &power;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.power_limit")) target = &limit;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.power_limit_enforced")) target = &enforcedLimit;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.temp")) target = &temp;
        else if (isMetric(s.metric, "ib.tx")) metric = IbTx;
        else if (isMetric(s.metric, "ib.rx")) metric = IbRx;
        else if (isMetric(s.metric, "ib.capacity") || isMetric(s.metric, "net.capacity")) {
            RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readPoints(s.id, {}));
            std::vector<double> values;
            for (const store::Point& pt : points)
                values.push_back(pt.value);
            const double median = quantile(std::move(values), 0.5);
            if (std::isfinite(median) && median > 0)
                (isMetric(s.metric, "ib.capacity") ? ibCapacity : nicCapacity)[s.nodeId] += median;
            continue;
        }
        const uint64_t reasonBit = d->kind == "gpu" ? clockEventBit(s.metric) : 0;
        const bool reasonMask = d->kind == "gpu" && isMetric(s.metric, "gpu.clock_event_reasons");
        const bool trainer = isMetric(s.metric, "train.step_time") || isMetric(s.metric, "train.loss") || isMetric(s.metric, "train.step");
        if (!target && metric < 0 && !reasonBit && !reasonMask && !trainer) continue;
        if (reasonBit || reasonMask || trainer) {
            RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readPoints(s.id, {}));
            if (!trainer) {
                orReasons(points, out.grid, reasonBit, reasons[d->id]);
                continue;
            }
            std::vector<store::Point> present;
            for (const store::Point& p : points)
                if (!p.missing && std::isfinite(p.value)) present.push_back(p);
            auto& kept = isMetric(s.metric, "train.step_time") ? stepTimes[s.nodeId]
                         : isMetric(s.metric, "train.step")    ? stepNumbers[s.nodeId]
                                                               : losses[s.nodeId];
            if (present.size() > kept.size()) kept = std::move(present);
            continue;
        }
        RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readPoints(s.id, {}));
        Acc& acc = target ? (*target)[d->id] : nodeAcc[{s.nodeId, metric}][d->id];
        accumulate(points, out.grid, acc.sum, acc.count);
    }
    for (const auto& d : *devices) {
        if (d.kind != "gpu" || !util.count(d.id)) continue;
        GpuMetrics g;
        g.node = nodeName[d.nodeId];
        g.gpu = d.name;
        g.util = means(util[d.id].sum, util[d.id].count);
        if (sm.count(d.id)) g.smActive = means(sm[d.id].sum, sm[d.id].count);
        if (tensor.count(d.id)) g.tensorActive = means(tensor[d.id].sum, tensor[d.id].count);
        if (comm.count(d.id)) g.commBusy = means(comm[d.id].sum, comm[d.id].count); // ranks sharing a GPU: their mean
        if (clock.count(d.id)) g.smClock = means(clock[d.id].sum, clock[d.id].count);
        if (power.count(d.id)) g.power = means(power[d.id].sum, power[d.id].count);
        if (enforcedLimit.count(d.id)) g.powerLimit = means(enforcedLimit[d.id].sum, enforcedLimit[d.id].count);
        else if (limit.count(d.id)) g.powerLimit = means(limit[d.id].sum, limit[d.id].count);
        if (temp.count(d.id)) g.temp = means(temp[d.id].sum, temp[d.id].count);
        if (reasons.count(d.id)) g.clockEventReasons = reasons[d.id];
        out.gpus.push_back(std::move(g));
    }
    for (const auto& n : nodes) {
        NodeMetrics m;
        m.node = n.name;
        // Rates add up over the node's devices (a slot counts when any device has a sample in it).
        auto total = [&](int metric) {
            std::vector<double> v;
            const auto it = nodeAcc.find({n.id, metric});
            if (it == nodeAcc.end()) return v;
            v.assign(out.grid.size, std::numeric_limits<double>::quiet_NaN());
            for (const auto& [dev, acc] : it->second) {
                const std::vector<double> mean = means(acc.sum, acc.count);
                for (size_t i = 0; i < mean.size(); ++i)
                    if (std::isfinite(mean[i])) v[i] = std::isfinite(v[i]) ? v[i] + mean[i] : mean[i];
            }
            return v;
        };
        m.diskWrite = total(DiskWrite);
        m.diskRead = total(DiskRead);
        m.netTx = total(NetTx);
        m.netRx = total(NetRx);
        m.cpuUtil = total(Cpu);
        m.collectiveBusy = total(Collective);
        const bool ib = nodeAcc.count({n.id, IbTx}) || nodeAcc.count({n.id, IbRx});
        m.linkIsInfiniBand = ib;
        m.linkTx = ib ? total(IbTx) : m.netTx;
        m.linkRx = ib ? total(IbRx) : m.netRx;
        const std::array<int, 2> linkMetrics = ib ? std::array<int, 2>{IbTx, IbRx} : std::array<int, 2>{NetTx, NetRx};
        for (int metric : linkMetrics)
            if (const auto it = nodeAcc.find({n.id, metric}); it != nodeAcc.end()) m.linkPorts = std::max(m.linkPorts, it->second.size());
        for (const auto& d : *devices)
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
        if (!std::isfinite(m.linkCapacity) && ib && ibCapacity.count(n.id)) {
            m.linkCapacity = ibCapacity[n.id];
            m.linkCapacitySource = "ib.capacity";
        } else if (!std::isfinite(m.linkCapacity) && !ib && nicCapacity.count(n.id)) {
            m.linkCapacity = nicCapacity[n.id];
            m.linkCapacitySource = "net.capacity";
        }
        if (stepTimes.count(n.id)) m.stepTimes = stepTimes[n.id];
        if (losses.count(n.id)) m.losses = losses[n.id];
        if (stepNumbers.count(n.id)) m.stepNumbers = stepNumbers[n.id];
        out.nodes.push_back(std::move(m));
    }
    return out;
}

} // namespace runlens::analysis
