#pragma once

// The one table that maps source metric names and units to canonical series (docs/formats.md §1-8 name the
// mappings per source; docs/design.md §4 the data model).
// Each source format looks its names up here; the raw name is always kept beside the canonical one.

#include "analysis/store/error.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace runlens::store {
class RunWriter;
}

namespace runlens::importers {

struct MetricMapping
{
    std::string_view metric;        // canonical name, e.g. "gpu.util"
    std::string_view unit;          // canonical unit, e.g. "%", "bytes", "Hz", "W", "C", "s", "" (ratio/count)
    std::string_view defaultSource; // the source's unit when the input does not print one
};

// nvidia-smi --query-gpu property (lower case, unit suffix removed, old clocks_throttle_reasons.* aliases accepted).
std::optional<MetricMapping> nvsmiMetric(std::string_view property);

// Properties that describe the device rather than measure it (name, uuid, pci.bus_id, driver_version...).
bool nvsmiIsAttribute(std::string_view property);

enum class ValueKind
{
    Gauge,   // the value itself
    Counter, // cumulative since some start: stored as its rate per second, resets handled (CounterRate)
};

// A metric of a collector that names its own devices: nvidia-smi dmon columns, DCGM fields (dcgmi dmon tags
// and dcgm-exporter names), node_exporter families.
struct SourceMetric
{
    std::string_view metric;     // canonical name, e.g. "gpu.sm_active", "net.tx"
    std::string_view unit;       // canonical unit (of the rate, for counters): "ratio" is 0-1, "bytes/s", "%"...
    std::string_view sourceUnit; // unit of the source value (of the counter itself, for counters)
    ValueKind kind = ValueKind::Gauge;
    std::string_view deviceKind; // gpu, nic, ib, disk, cpu, host
};

// nvidia-smi dmon column (lower case as printed: pwr, sm, mclk, fb, rxpci, and the GPM columns gract, smutil,
// smocc, mmaact, dram, ...). The unit row of the file, when present, overrides sourceUnit.
std::optional<SourceMetric> dmonMetric(std::string_view column);

// A DCGM field by its name (DCGM_FI_PROF_SM_ACTIVE, also the newer *_RATIO names) or its dcgmi dmon tag (SMACT).
std::optional<SourceMetric> dcgmMetric(std::string_view nameOrTag);

// A node_exporter family (node_network_transmit_bytes_total, node_cpu_seconds_total, ...). The device is named by
// the family's "device" label (plus ":port" for InfiniBand). node_cpu_seconds_total maps to cpu.util but needs
// CpuSecondsAggregator (all modes of all CPUs together), not a per-series rate.
std::optional<SourceMetric> nodeExporterMetric(std::string_view family);

// A sysstat column (sadf -d / sar) of an activity section as sysstat names it (cpu, disk, net-dev, memory, queue):
// rxkB/s, wkB/s, kbavail, %util, ... sysstat's "kB" are KiB.
std::optional<SourceMetric> sysstatMetric(std::string_view section, std::string_view column);

// The canonical unit of a canonical metric name (gpu.util → "%", net.tx → "bytes/s"), from the tables above and
// the trainer metrics (train.step_time, train.loss, train.tokens_per_s); nullopt for a name that is not canonical.
std::optional<std::string_view> canonicalUnit(std::string_view metric);

// Network interfaces that carry no traffic of their own to the outside (lo, docker0, veth*, ...) and disk
// partitions / device-mapper volumes: kept as devices, flagged so totals over a node do not count them twice.
bool isVirtualInterface(std::string_view name);
bool isDiskPartition(std::string_view name);
// A node's device of that kind and name (RunWriter::device), with the flag stored as its attribute when it is one of
// those: virtual=1 on such a nic, partition=1 on such a disk.
Expected<int64_t> flaggedDevice(store::RunWriter& writer, int64_t nodeId, std::string_view kind, std::string_view name);

// The factor that converts a value in sourceUnit to canonicalUnit, or nullopt when they do not match
// ("MiB" → "bytes" is 1048576, "MHz" → "Hz" is 1e6, "us" → "s" is 1e-6, equal units 1).
std::optional<double> unitFactor(std::string_view sourceUnit, std::string_view canonicalUnit);

// A value that cannot be what its canonical unit says: a utilization above 100 % or a ratio above 1 (beyond 5 %
// of rounding), or a negative one. GPM counters read garbage in their first sample after a restart (gract
// 104131 %): such a value is stored as missing with an implausible_value diagnostic, not drawn.
bool implausibleValue(std::string_view canonicalUnit, double value);

} // namespace runlens::importers
