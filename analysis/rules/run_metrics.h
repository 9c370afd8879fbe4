#pragma once

// The metrics the rules read, resampled onto one grid over the run: per GPU its utilization and SM activity,
// per node its disk and network rates (summed over devices) and CPU utilization. Several series of one metric
// on one device (nvidia-smi query and dmon both give utilization) are averaged per slot. Clock-event reasons are
// bit masks (NVML's clocks_event_reasons): OR-ed per slot, the per-reason booleans of nvidia-smi folded into them.
// The trainer's step times and losses stay the points they are (one per logged step), not resampled.

#include "analysis/rules/episodes.h"
#include "analysis/rules/slot_values.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace runlens::analysis {

struct GpuMetrics
{
    std::string node, gpu;   // names
    SlotValues util;         // %, NaN: no sample
    SlotValues smActive;     // 0–1; empty when the run has no SM activity for this GPU
    SlotValues tensorActive; // 0–1; empty when not recorded
    SlotValues commBusy;     // 0–1 from profiler traces (NCCL kernels' share of time); empty when untraced
    // Each empty when the run does not have it for this GPU.
    SlotValues smClock;           // Hz
    SlotValues power;             // W
    SlotValues powerLimit;        // W, the enforced limit when recorded, else the configured one
    SlotValues temp;              // °C
    SlotValues clockEventReasons; // NVML clock-event reason bits (kClockEvent…), NaN: unknown
};

// NVML clock-event reason bits (nvmlClocksEventReason…).
inline constexpr uint64_t kClockEventGpuIdle = 0x1;
inline constexpr uint64_t kClockEventAppClocks = 0x2;
inline constexpr uint64_t kClockEventSwPowerCap = 0x4;
inline constexpr uint64_t kClockEventHwSlowdown = 0x8;
inline constexpr uint64_t kClockEventSyncBoost = 0x10;
inline constexpr uint64_t kClockEventSwThermal = 0x20;
inline constexpr uint64_t kClockEventHwThermal = 0x40;
inline constexpr uint64_t kClockEventHwPowerBrake = 0x80;

struct NodeMetrics
{
    std::string node;
    SlotValues diskWrite, diskRead; // B/s over every disk; empty when none
    SlotValues netTx, netRx;        // B/s over every NIC (virtual interfaces left out)
    // The interconnect: InfiniBand ports when the node has them, else its NICs. Rates per direction (B/s), and
    // the capacity per direction (NaN when unknown) with where it came from: the link_capacity import option,
    // ib.capacity (node_exporter's InfiniBand rate) or net.capacity (the NICs' speed).
    SlotValues linkTx, linkRx;
    bool linkIsInfiniBand = false; // the interconnect rates are InfiniBand ports' (traffic to other nodes' ranks)
    size_t linkPorts = 0;          // the ports (or NICs) the interconnect rates add up
    double linkCapacity = std::numeric_limits<double>::quiet_NaN();
    std::string linkCapacitySource;
    SlotValues cpuUtil;        // %
    SlotValues collectiveBusy; // 0–1 from traces (CPU-side collective spans, e.g. gloo:all_reduce)
    // The trainer log: of the node's train.step_time (s) and train.loss series, the one with the most present points
    // (the ranks of a node step together), in time order, missing points left out; empty when the run has none.
    std::vector<store::Point> stepTimes, losses;
    std::vector<store::Point> stepNumbers; // train.step at the logged lines (a line may close several steps)
};

struct RunMetrics
{
    TimeGrid grid;
    std::vector<GpuMetrics> gpus;
    std::vector<NodeMetrics> nodes;
};

Expected<RunMetrics> loadRunMetrics(store::RunDatabase& db, int64_t gridNs);

} // namespace runlens::analysis
