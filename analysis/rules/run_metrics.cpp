#include "analysis/rules/run_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace runlens::analysis {

namespace {

// Series of a metric, with or without labels ("gpu.util", "gpu.util{rank=0}").
bool isMetric(const std::string& name, const char* metric)
{
    const size_t n = std::char_traits<char>::length(metric);
    return name.compare(0, n, metric) == 0 && (name.size() == n || name[n] == '{');
}

} // namespace

Expected<RunMetrics> loadRunMetrics(store::RunDatabase& db, int64_t gridNs)
{
    store::RunReader reader(db);
    auto nodes = reader.nodes();
    if (!nodes) return nodes.error();
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
    for (const auto& n : *nodes)
        nodeName[n.id] = n.name;
    std::map<int64_t, const store::DeviceInfo*> device;
    for (const auto& d : *devices)
        device[d.id] = &d;
    struct Acc
    {
        std::vector<double> sum;
        std::vector<int> count;
    };
    std::map<int64_t, Acc> util, sm, comm;                            // by GPU device
    std::map<std::pair<int64_t, int>, std::map<int64_t, Acc>> nodeAcc; // (node, metric) -> device -> acc
    enum { DiskWrite, DiskRead, NetTx, NetRx, Cpu, Collective };
    for (const auto& s : *series) {
        const store::DeviceInfo* d = device.count(s.deviceId) ? device[s.deviceId] : nullptr;
        if (!d) continue;
        std::map<int64_t, Acc>* target = nullptr;
        int metric = -1;
        if (d->kind == "gpu" && isMetric(s.metric, "gpu.util")) target = &util;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.sm_active")) target = &sm;
        else if (d->kind == "gpu" && isMetric(s.metric, "gpu.comm_busy")) target = &comm;
        else if (isMetric(s.metric, "trace.collective_busy")) metric = Collective;
        else if (isMetric(s.metric, "disk.write")) metric = DiskWrite;
        else if (isMetric(s.metric, "disk.read")) metric = DiskRead;
        else if (isMetric(s.metric, "net.tx") && d->kind != "ib") metric = NetTx;
        else if (isMetric(s.metric, "net.rx") && d->kind != "ib") metric = NetRx;
        else if (isMetric(s.metric, "cpu.util")) metric = Cpu;
        if (!target && metric < 0) continue;
        auto points = reader.readPoints(s.id, {});
        if (!points) return points.error();
        Acc& acc = target ? (*target)[d->id] : nodeAcc[{s.nodeId, metric}][d->id];
        accumulate(*points, out.grid, acc.sum, acc.count);
    }
    for (const auto& d : *devices) {
        if (d.kind != "gpu" || !util.count(d.id)) continue;
        GpuMetrics g;
        g.node = nodeName[d.nodeId];
        g.gpu = d.name;
        g.util = means(util[d.id].sum, util[d.id].count);
        if (sm.count(d.id)) g.smActive = means(sm[d.id].sum, sm[d.id].count);
        if (comm.count(d.id)) g.commBusy = means(comm[d.id].sum, comm[d.id].count); // ranks sharing a GPU: their mean
        out.gpus.push_back(std::move(g));
    }
    for (const auto& n : *nodes) {
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
        out.nodes.push_back(std::move(m));
    }
    return out;
}

} // namespace runlens::analysis
