#include "importers/common/metric_map.h"

#include "analysis/store/run_writer.h"

#include <array>
#include <fmt/format.h>
#include <string>

namespace runlens::importers {
namespace {

struct NvsmiEntry
{
    std::string_view property;
    MetricMapping mapping;
};

// nvidia-smi --help-query-gpu names. Units as printed in CSV headers; temperatures print no unit (°C).
constexpr std::array kNvsmi{
    NvsmiEntry{"utilization.gpu", {"gpu.util", "%", "%"}},
    NvsmiEntry{"utilization.memory", {"gpu.mem_util", "%", "%"}},
    NvsmiEntry{"utilization.encoder", {"gpu.enc_util", "%", "%"}},
    NvsmiEntry{"utilization.decoder", {"gpu.dec_util", "%", "%"}},
    NvsmiEntry{"utilization.jpeg", {"gpu.jpg_util", "%", "%"}},
    NvsmiEntry{"utilization.ofa", {"gpu.ofa_util", "%", "%"}},
    NvsmiEntry{"memory.used", {"gpu.mem_used", "bytes", "MiB"}},
    NvsmiEntry{"memory.total", {"gpu.mem_total", "bytes", "MiB"}},
    NvsmiEntry{"memory.free", {"gpu.mem_free", "bytes", "MiB"}},
    NvsmiEntry{"memory.reserved", {"gpu.mem_reserved", "bytes", "MiB"}},
    NvsmiEntry{"power.draw", {"gpu.power", "W", "W"}},
    NvsmiEntry{"power.draw.average", {"gpu.power", "W", "W"}},
    NvsmiEntry{"power.draw.instant", {"gpu.power_instant", "W", "W"}},
    NvsmiEntry{"power.limit", {"gpu.power_limit", "W", "W"}},
    NvsmiEntry{"enforced.power.limit", {"gpu.power_limit_enforced", "W", "W"}},
    NvsmiEntry{"power.max_limit", {"gpu.power_limit_max", "W", "W"}},
    NvsmiEntry{"clocks.sm", {"gpu.sm_clock", "Hz", "MHz"}},
    NvsmiEntry{"clocks.current.sm", {"gpu.sm_clock", "Hz", "MHz"}},
    NvsmiEntry{"clocks.mem", {"gpu.mem_clock", "Hz", "MHz"}},
    NvsmiEntry{"clocks.current.memory", {"gpu.mem_clock", "Hz", "MHz"}},
    NvsmiEntry{"clocks.gr", {"gpu.gr_clock", "Hz", "MHz"}},
    NvsmiEntry{"clocks.current.graphics", {"gpu.gr_clock", "Hz", "MHz"}},
    NvsmiEntry{"clocks.video", {"gpu.video_clock", "Hz", "MHz"}},
    NvsmiEntry{"clocks.current.video", {"gpu.video_clock", "Hz", "MHz"}},
    NvsmiEntry{"clocks.max.sm", {"gpu.sm_clock_max", "Hz", "MHz"}},
    NvsmiEntry{"clocks.max.graphics", {"gpu.gr_clock_max", "Hz", "MHz"}},
    NvsmiEntry{"clocks.max.memory", {"gpu.mem_clock_max", "Hz", "MHz"}},
    NvsmiEntry{"temperature.gpu", {"gpu.temp", "C", "C"}},
    NvsmiEntry{"temperature.memory", {"gpu.mem_temp", "C", "C"}},
    NvsmiEntry{"fan.speed", {"gpu.fan", "%", "%"}},
    NvsmiEntry{"pstate", {"gpu.pstate", "", ""}},
    NvsmiEntry{"pcie.link.gen.current", {"gpu.pcie_gen", "", ""}},
    NvsmiEntry{"pcie.link.gen.gpucurrent", {"gpu.pcie_gen", "", ""}},
    NvsmiEntry{"pcie.link.width.current", {"gpu.pcie_width", "", ""}},
    NvsmiEntry{"clocks_event_reasons.active", {"gpu.clock_event_reasons", "", ""}},
    NvsmiEntry{"clocks_event_reasons.gpu_idle", {"gpu.clock_event.gpu_idle", "", ""}},
    NvsmiEntry{"clocks_event_reasons.applications_clocks_setting", {"gpu.clock_event.app_clocks", "", ""}},
    NvsmiEntry{"clocks_event_reasons.sw_power_cap", {"gpu.clock_event.sw_power_cap", "", ""}},
    NvsmiEntry{"clocks_event_reasons.hw_slowdown", {"gpu.clock_event.hw_slowdown", "", ""}},
    NvsmiEntry{"clocks_event_reasons.hw_thermal_slowdown", {"gpu.clock_event.hw_thermal_slowdown", "", ""}},
    NvsmiEntry{"clocks_event_reasons.hw_power_brake_slowdown", {"gpu.clock_event.hw_power_brake", "", ""}},
    NvsmiEntry{"clocks_event_reasons.sw_thermal_slowdown", {"gpu.clock_event.sw_thermal_slowdown", "", ""}},
    NvsmiEntry{"clocks_event_reasons.sync_boost", {"gpu.clock_event.sync_boost", "", ""}},
    NvsmiEntry{"clocks_event_reasons_counters.sw_power_cap", {"gpu.clock_event_time.sw_power_cap", "s", "us"}},
    NvsmiEntry{"clocks_event_reasons_counters.hw_slowdown", {"gpu.clock_event_time.hw_slowdown", "s", "us"}},
    NvsmiEntry{"clocks_event_reasons_counters.hw_thermal_slowdown",
               {"gpu.clock_event_time.hw_thermal_slowdown", "s", "us"}},
    NvsmiEntry{"clocks_event_reasons_counters.hw_power_brake_slowdown",
               {"gpu.clock_event_time.hw_power_brake", "s", "us"}},
    NvsmiEntry{"clocks_event_reasons_counters.sw_thermal_slowdown",
               {"gpu.clock_event_time.sw_thermal_slowdown", "s", "us"}},
    NvsmiEntry{"clocks_event_reasons_counters.sync_boost", {"gpu.clock_event_time.sync_boost", "s", "us"}},
    NvsmiEntry{"ecc.errors.corrected.volatile.total", {"gpu.ecc_corrected_volatile", "", ""}},
    NvsmiEntry{"ecc.errors.uncorrected.volatile.total", {"gpu.ecc_uncorrected_volatile", "", ""}},
    NvsmiEntry{"ecc.errors.corrected.aggregate.total", {"gpu.ecc_corrected_aggregate", "", ""}},
    NvsmiEntry{"ecc.errors.uncorrected.aggregate.total", {"gpu.ecc_uncorrected_aggregate", "", ""}},
    NvsmiEntry{"encoder.stats.sessioncount", {"gpu.enc_sessions", "", ""}},
    NvsmiEntry{"encoder.stats.averagefps", {"gpu.enc_fps", "", ""}},
    NvsmiEntry{"encoder.stats.averagelatency", {"gpu.enc_latency", "s", "us"}},
};

constexpr std::array<std::string_view, 34> kNvsmiAttributes{"name",
                                                            "gpu_name",
                                                            "uuid",
                                                            "gpu_uuid",
                                                            "serial",
                                                            "gpu_serial",
                                                            "pci.bus_id",
                                                            "gpu_bus_id",
                                                            "pci.bus",
                                                            "pci.device",
                                                            "pci.domain",
                                                            "pci.device_id",
                                                            "pci.sub_device_id",
                                                            "driver_version",
                                                            "vbios_version",
                                                            "count",
                                                            "compute_mode",
                                                            "display_mode",
                                                            "display_active",
                                                            "persistence_mode",
                                                            "accounting.mode",
                                                            "accounting.buffer_size",
                                                            "mig.mode.current",
                                                            "mig.mode.pending",
                                                            "gom.current",
                                                            "gom.pending",
                                                            "inforom.img",
                                                            "inforom.oem",
                                                            "inforom.ecc",
                                                            "inforom.pwr",
                                                            "compute_cap",
                                                            "addressing_mode",
                                                            "pcie.link.gen.max",
                                                            "pcie.link.width.max"};

struct SourceEntry
{
    std::string_view name;
    SourceMetric metric;
};

constexpr auto G = ValueKind::Gauge;
constexpr auto C = ValueKind::Counter;

// nvidia-smi dmon -s pucvmet and --gpm-metrics. "MB" in dmon is MiB (frame buffer) and MB/s for PCIe.
constexpr SourceEntry kDmon[] = {
    {"pwr", {"gpu.power", "W", "W", G, "gpu"}},
    {"gtemp", {"gpu.temp", "C", "C", G, "gpu"}},
    {"mtemp", {"gpu.mem_temp", "C", "C", G, "gpu"}},
    {"sm", {"gpu.util", "%", "%", G, "gpu"}}, // NVML utilization.gpu, not SM activity
    {"mem", {"gpu.mem_util", "%", "%", G, "gpu"}},
    {"enc", {"gpu.enc_util", "%", "%", G, "gpu"}},
    {"dec", {"gpu.dec_util", "%", "%", G, "gpu"}},
    {"jpg", {"gpu.jpg_util", "%", "%", G, "gpu"}},
    {"ofa", {"gpu.ofa_util", "%", "%", G, "gpu"}},
    {"mclk", {"gpu.mem_clock", "Hz", "MHz", G, "gpu"}},
    {"pclk", {"gpu.sm_clock", "Hz", "MHz", G, "gpu"}},
    {"pviol", {"gpu.power_violation", "%", "%", G, "gpu"}},
    {"tviol", {"gpu.thermal_violation", "", "", G, "gpu"}},
    {"fb", {"gpu.mem_used", "bytes", "MiB", G, "gpu"}},
    {"bar1", {"gpu.bar1_used", "bytes", "MiB", G, "gpu"}},
    {"ccpm", {"gpu.ccpm_used", "bytes", "MiB", G, "gpu"}},
    {"sbecc", {"gpu.ecc_single_bit", "", "", G, "gpu"}},
    {"dbecc", {"gpu.ecc_double_bit", "", "", G, "gpu"}},
    {"pci", {"gpu.pcie_replays", "", "", G, "gpu"}},
    {"rxpci", {"gpu.pcie_rx", "bytes/s", "MB/s", G, "gpu"}},
    {"txpci", {"gpu.pcie_tx", "bytes/s", "MB/s", G, "gpu"}},
    // GPM (Hopper and newer): percentages of the sample period, stored as 0-1 ratios like DCGM.
    {"gract", {"gpu.gr_active", "ratio", "GPM:%", G, "gpu"}},
    {"smutil", {"gpu.sm_active", "ratio", "GPM:%", G, "gpu"}},
    {"smocc", {"gpu.sm_occupancy", "ratio", "GPM:%", G, "gpu"}},
    {"intutil", {"gpu.int_active", "ratio", "GPM:%", G, "gpu"}},
    {"mmaact", {"gpu.tensor_active", "ratio", "GPM:%", G, "gpu"}},
    {"dram", {"gpu.dram_active", "ratio", "GPM:%", G, "gpu"}},
    {"fp64", {"gpu.fp64_active", "ratio", "GPM:%", G, "gpu"}},
    {"fp32", {"gpu.fp32_active", "ratio", "GPM:%", G, "gpu"}},
    {"fp16", {"gpu.fp16_active", "ratio", "GPM:%", G, "gpu"}},
    {"pcitx", {"gpu.pcie_tx", "bytes/s", "GPM:MiB/s", G, "gpu"}},
    {"pcirx", {"gpu.pcie_rx", "bytes/s", "GPM:MiB/s", G, "gpu"}},
    {"nvltx", {"gpu.nvlink_tx", "bytes/s", "GPM:MiB/s", G, "gpu"}},
    {"nvlrx", {"gpu.nvlink_rx", "bytes/s", "GPM:MiB/s", G, "gpu"}},
};

// DCGM fields: dcgm-exporter names (old and *_RATIO names) and dcgmi dmon tags. docs/formats.md §3-4.
constexpr SourceEntry kDcgm[] = {
    {"DCGM_FI_DEV_GPU_UTIL", {"gpu.util", "%", "%", G, "gpu"}},
    {"DCGM_FI_DEV_GPU_UTIL_RATIO", {"gpu.util", "%", "%", G, "gpu"}},
    {"GPUTL", {"gpu.util", "%", "%", G, "gpu"}},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", {"gpu.mem_util", "%", "%", G, "gpu"}},
    {"MCUTL", {"gpu.mem_util", "%", "%", G, "gpu"}},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", {"gpu.gr_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", {"gpu.gr_active", "ratio", "ratio", G, "gpu"}},
    {"GRACT", {"gpu.gr_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_SM_ACTIVE", {"gpu.sm_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_SM_UTIL_RATIO", {"gpu.sm_active", "ratio", "ratio", G, "gpu"}},
    {"SMACT", {"gpu.sm_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_SM_OCCUPANCY", {"gpu.sm_occupancy", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_SM_OCCUPANCY_RATIO", {"gpu.sm_occupancy", "ratio", "ratio", G, "gpu"}},
    {"SMOCC", {"gpu.sm_occupancy", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", {"gpu.tensor_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_TENSOR_UTIL_RATIO", {"gpu.tensor_active", "ratio", "ratio", G, "gpu"}},
    {"TENSO", {"gpu.tensor_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_DRAM_ACTIVE", {"gpu.dram_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_DRAM_UTIL_RATIO", {"gpu.dram_active", "ratio", "ratio", G, "gpu"}},
    {"DRAMA", {"gpu.dram_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", {"gpu.fp64_active", "ratio", "ratio", G, "gpu"}},
    {"FP64A", {"gpu.fp64_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", {"gpu.fp32_active", "ratio", "ratio", G, "gpu"}},
    {"FP32A", {"gpu.fp32_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", {"gpu.fp16_active", "ratio", "ratio", G, "gpu"}},
    {"FP16A", {"gpu.fp16_active", "ratio", "ratio", G, "gpu"}},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", {"gpu.pcie_tx", "bytes/s", "B/s", G, "gpu"}},
    {"PCITX", {"gpu.pcie_tx", "bytes/s", "B/s", G, "gpu"}},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", {"gpu.pcie_rx", "bytes/s", "B/s", G, "gpu"}},
    {"PCIRX", {"gpu.pcie_rx", "bytes/s", "B/s", G, "gpu"}},
    {"DCGM_FI_PROF_NVLINK_TX_BYTES", {"gpu.nvlink_tx", "bytes/s", "B/s", G, "gpu"}},
    {"NVLTX", {"gpu.nvlink_tx", "bytes/s", "B/s", G, "gpu"}},
    {"DCGM_FI_PROF_NVLINK_RX_BYTES", {"gpu.nvlink_rx", "bytes/s", "B/s", G, "gpu"}},
    {"NVLRX", {"gpu.nvlink_rx", "bytes/s", "B/s", G, "gpu"}},
    {"DCGM_FI_DEV_GPU_TEMP", {"gpu.temp", "C", "C", G, "gpu"}},
    {"TMPTR", {"gpu.temp", "C", "C", G, "gpu"}},
    {"DCGM_FI_DEV_MEMORY_TEMP", {"gpu.mem_temp", "C", "C", G, "gpu"}},
    {"MMTMP", {"gpu.mem_temp", "C", "C", G, "gpu"}},
    {"DCGM_FI_DEV_POWER_USAGE", {"gpu.power", "W", "W", G, "gpu"}},
    {"DCGM_FI_DEV_BOARD_POWER_WATTS", {"gpu.power", "W", "W", G, "gpu"}},
    {"POWER", {"gpu.power", "W", "W", G, "gpu"}},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", {"gpu.energy_power", "W", "mJ", C, "gpu"}},
    {"TOTEC", {"gpu.energy_power", "W", "mJ", C, "gpu"}},
    {"DCGM_FI_DEV_SM_CLOCK", {"gpu.sm_clock", "Hz", "MHz", G, "gpu"}},
    {"SMCLK", {"gpu.sm_clock", "Hz", "MHz", G, "gpu"}},
    {"DCGM_FI_DEV_MEM_CLOCK", {"gpu.mem_clock", "Hz", "MHz", G, "gpu"}},
    {"MMCLK", {"gpu.mem_clock", "Hz", "MHz", G, "gpu"}},
    {"DCGM_FI_DEV_FB_TOTAL", {"gpu.mem_total", "bytes", "MiB", G, "gpu"}},
    {"FBTTL", {"gpu.mem_total", "bytes", "MiB", G, "gpu"}},
    {"DCGM_FI_DEV_FB_FREE", {"gpu.mem_free", "bytes", "MiB", G, "gpu"}},
    {"FBFRE", {"gpu.mem_free", "bytes", "MiB", G, "gpu"}},
    {"DCGM_FI_DEV_FB_USED", {"gpu.mem_used", "bytes", "MiB", G, "gpu"}},
    {"FBUSD", {"gpu.mem_used", "bytes", "MiB", G, "gpu"}},
    {"DCGM_FI_DEV_FB_RESERVED", {"gpu.mem_reserved", "bytes", "MiB", G, "gpu"}},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", {"gpu.clock_event_reasons", "", "", G, "gpu"}},
    {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", {"gpu.clock_event_reasons", "", "", G, "gpu"}},
    {"DCGM_FI_DEV_XID_ERRORS", {"gpu.xid", "", "", G, "gpu"}},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", {"gpu.pcie_replay_rate", "1/s", "", C, "gpu"}},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", {"gpu.nvlink_total", "", "", C, "gpu"}},
    {"DCGM_FI_DEV_ENC_UTIL", {"gpu.enc_util", "%", "%", G, "gpu"}},
    {"DCGM_FI_DEV_DEC_UTIL", {"gpu.dec_util", "%", "%", G, "gpu"}},
    {"DCGM_FI_DEV_POWER_VIOLATION", {"gpu.power_violation_time", "ratio", "us", C, "gpu"}},
    {"DCGM_FI_DEV_THERMAL_VIOLATION", {"gpu.thermal_violation_time", "ratio", "us", C, "gpu"}},
};

// node_exporter (docs/formats.md §5). Counters become rates per second.
constexpr SourceEntry kNodeExporter[] = {
    {"node_cpu_seconds_total", {"cpu.util", "%", "s", C, "cpu"}},
    {"node_network_receive_bytes_total", {"net.rx", "bytes/s", "bytes", C, "nic"}},
    {"node_network_transmit_bytes_total", {"net.tx", "bytes/s", "bytes", C, "nic"}},
    {"node_network_speed_bytes", {"net.capacity", "bytes/s", "B/s", G, "nic"}},
    {"node_infiniband_port_data_received_bytes_total", {"ib.rx", "bytes/s", "bytes", C, "ib"}},
    {"node_infiniband_port_data_transmitted_bytes_total", {"ib.tx", "bytes/s", "bytes", C, "ib"}},
    // The legacy (32-bit) counters count the same traffic as port_data_*: kept apart so neither hides the other.
    {"node_infiniband_legacy_data_received_bytes_total", {"ib.rx_legacy", "bytes/s", "bytes", C, "ib"}},
    {"node_infiniband_legacy_data_transmitted_bytes_total", {"ib.tx_legacy", "bytes/s", "bytes", C, "ib"}},
    {"node_infiniband_rate_bytes_per_second", {"ib.capacity", "bytes/s", "B/s", G, "ib"}},
    {"node_disk_read_bytes_total", {"disk.read", "bytes/s", "bytes", C, "disk"}},
    {"node_disk_written_bytes_total", {"disk.write", "bytes/s", "bytes", C, "disk"}},
    {"node_disk_io_time_seconds_total", {"disk.busy", "ratio", "s", C, "disk"}},
    {"node_memory_MemAvailable_bytes", {"host.mem_available", "bytes", "bytes", G, "host"}},
    {"node_memory_MemTotal_bytes", {"host.mem_total", "bytes", "bytes", G, "host"}},
    {"node_memory_MemFree_bytes", {"host.mem_free", "bytes", "bytes", G, "host"}},
    {"node_memory_Dirty_bytes", {"host.mem_dirty", "bytes", "bytes", G, "host"}},
    {"node_memory_Writeback_bytes", {"host.mem_writeback", "bytes", "bytes", G, "host"}},
    {"node_memory_Cached_bytes", {"host.mem_cached", "bytes", "bytes", G, "host"}},
    {"node_load1", {"host.load1", "", "", G, "host"}},
};

// sysstat (sadf -d, sar): section|column. kB are KiB; the older rd_sec/s count 512-byte sectors.
constexpr SourceEntry kSysstat[] = {
    {"net-dev|rxkB/s", {"net.rx", "bytes/s", "KiB/s", G, "nic"}},
    {"net-dev|txkB/s", {"net.tx", "bytes/s", "KiB/s", G, "nic"}},
    {"net-dev|rxbyt/s", {"net.rx", "bytes/s", "B/s", G, "nic"}},
    {"net-dev|txbyt/s", {"net.tx", "bytes/s", "B/s", G, "nic"}},
    {"disk|rkB/s", {"disk.read", "bytes/s", "KiB/s", G, "disk"}},
    {"disk|wkB/s", {"disk.write", "bytes/s", "KiB/s", G, "disk"}},
    {"disk|rd_sec/s", {"disk.read", "bytes/s", "sectors/s", G, "disk"}},
    {"disk|wr_sec/s", {"disk.write", "bytes/s", "sectors/s", G, "disk"}},
    {"disk|%util", {"disk.busy", "ratio", "%", G, "disk"}},
    {"memory|kbavail", {"host.mem_available", "bytes", "KiB", G, "host"}},
    {"memory|kbmemfree", {"host.mem_free", "bytes", "KiB", G, "host"}},
    {"memory|kbcached", {"host.mem_cached", "bytes", "KiB", G, "host"}},
    {"memory|kbdirty", {"host.mem_dirty", "bytes", "KiB", G, "host"}},
    {"queue|ldavg-1", {"host.load1", "", "", G, "host"}},
};

// Canonical metrics that no collector table above names (trainer logs).
constexpr std::pair<std::string_view, std::string_view> kOtherCanonical[] = {
    {"train.step_time", "s"},
    {"train.loss", ""},
    {"train.tokens_per_s", "1/s"},
    {"cpu.util", "%"},
    {"host.mem_total", "bytes"},
    {"train.step", ""},
    {"train.eval_loss", ""},
    {"train.lr", ""},
    {"train.grad_norm", ""},
    {"train.samples_per_s", "1/s"},
    {"train.tflops_per_gpu", "TFLOP/s"},
};

std::optional<SourceMetric> find(const SourceEntry* begin, const SourceEntry* end, std::string_view name)
{
    for (const SourceEntry* e = begin; e != end; ++e)
        if (e->name == name) return e->metric;
    return std::nullopt;
}

} // namespace

std::optional<SourceMetric> dmonMetric(std::string_view column)
{
    return find(std::begin(kDmon), std::end(kDmon), column);
}

std::optional<SourceMetric> dcgmMetric(std::string_view nameOrTag)
{
    return find(std::begin(kDcgm), std::end(kDcgm), nameOrTag);
}

std::optional<SourceMetric> nodeExporterMetric(std::string_view family)
{
    return find(std::begin(kNodeExporter), std::end(kNodeExporter), family);
}

std::optional<SourceMetric> sysstatMetric(std::string_view section, std::string_view column)
{
    char key[128];
    if (section.size() + column.size() + 1 >= sizeof key) return std::nullopt;
    const size_t n = fmt::format_to_n(key, sizeof key, "{}|{}", section, column).size;
    return find(std::begin(kSysstat), std::end(kSysstat), std::string_view(key, n));
}

std::optional<std::string_view> canonicalUnit(std::string_view metric)
{
    for (const auto& [name, unit] : kOtherCanonical)
        if (name == metric) return unit;
    for (const NvsmiEntry& e : kNvsmi)
        if (e.mapping.metric == metric) return e.mapping.unit;
    for (const auto& range :
         {std::pair{std::begin(kDmon), std::end(kDmon)}, std::pair{std::begin(kDcgm), std::end(kDcgm)},
          std::pair{std::begin(kNodeExporter), std::end(kNodeExporter)},
          std::pair{std::begin(kSysstat), std::end(kSysstat)}})
        for (const SourceEntry* e = range.first; e != range.second; ++e)
            if (e->metric.metric == metric) return e->metric.unit;
    return std::nullopt;
}

bool isVirtualInterface(std::string_view name)
{
    for (std::string_view prefix : {"lo", "docker", "veth", "virbr", "br-", "cali", "flannel", "cni", "ifb", "tun",
                                    "tap", "kube-", "vxlan", "dummy"})
        if (name == "lo" || (prefix != "lo" && name.starts_with(prefix))) return true;
    return false;
}

bool isDiskPartition(std::string_view name)
{
    if (name.starts_with("dm-") || name.starts_with("loop") || name.starts_with("ram") || name.starts_with("zram"))
        return true;
    // nvme0n1p1, mmcblk0p1: a "p" and digits after a digit; sda1, vda2, xvda1: letters then digits.
    const size_t lastNonDigit = name.find_last_not_of("0123456789");
    if (lastNonDigit == std::string_view::npos || lastNonDigit + 1 == name.size()) return false;
    if (name.starts_with("nvme") || name.starts_with("mmcblk"))
        return name[lastNonDigit] == 'p' && lastNonDigit > 0 && name[lastNonDigit - 1] >= '0' &&
               name[lastNonDigit - 1] <= '9';
    return name.starts_with("sd") || name.starts_with("vd") || name.starts_with("xvd") || name.starts_with("hd");
}

Expected<int64_t> flaggedDevice(store::RunWriter& writer, int64_t nodeId, std::string_view kind, std::string_view name)
{
    RUNLENS_ASSIGN_OR_RETURN(const int64_t id, writer.device(nodeId, kind, name));
    if (kind == "nic" && isVirtualInterface(name)) RUNLENS_TRY(writer.setDeviceAttribute(id, "virtual", "1"));
    if (kind == "disk" && isDiskPartition(name)) RUNLENS_TRY(writer.setDeviceAttribute(id, "partition", "1"));
    return id;
}

std::optional<MetricMapping> nvsmiMetric(std::string_view property)
{
    std::string p(property);
    // Renamed in newer drivers; the old names remain valid.
    if (p.rfind("clocks_throttle_reasons", 0) == 0) p.replace(0, 23, "clocks_event_reasons");
    for (const NvsmiEntry& e : kNvsmi)
        if (e.property == p) return e.mapping;
    return std::nullopt;
}

bool nvsmiIsAttribute(std::string_view property)
{
    for (std::string_view a : kNvsmiAttributes)
        if (a == property) return true;
    return false;
}

std::optional<double> unitFactor(std::string_view source, std::string_view canonical)
{
    if (source == canonical) return 1.0;
    struct Conversion
    {
        std::string_view from, to;
        double factor;
    };
    static constexpr Conversion kConversions[] = {
        {"%", "ratio", 0.01},
        {"GPM:%", "ratio", 0.01},
        {"GPM:%", "%", 1.0},
        {"ratio", "%", 100.0},
        {"GPM:MiB/s", "bytes/s", 1048576.0},
        {"MiB/s", "bytes/s", 1048576.0},
        {"KiB/s", "bytes/s", 1024.0},
        {"sectors/s", "bytes/s", 512.0},
        {"GB/s", "bytes/s", 1e9},
        {"GiB/s", "bytes/s", 1073741824.0},
        {"MB/s", "bytes/s", 1e6},
        {"kB/s", "bytes/s", 1e3},
        {"KB/s", "bytes/s", 1e3},
        {"B/s", "bytes/s", 1.0},
        {"bytes", "bytes/s", 1.0}, // a byte counter's rate
        {"sectors", "bytes/s", 512.0},
        {"mJ", "W", 1e-3}, // an energy counter's rate
        {"J", "W", 1.0},
        {"s", "ratio", 1.0}, // busy seconds per second

        {"MiB", "bytes", 1048576.0},
        {"KiB", "bytes", 1024.0},
        {"GiB", "bytes", 1073741824.0},
        {"B", "bytes", 1.0},
        {"MB", "bytes", 1e6},
        {"KB", "bytes", 1e3},
        {"GB", "bytes", 1e9},
        {"MHz", "Hz", 1e6},
        {"GHz", "Hz", 1e9},
        {"kHz", "Hz", 1e3},
        {"us", "s", 1e-6},
        {"ms", "s", 1e-3},
        {"ns", "s", 1e-9},
        {"mW", "W", 1e-3},
        {"kW", "W", 1e3},
        {"°C", "C", 1.0},
        {"degC", "C", 1.0},
        {"C", "C", 1.0},
    };
    for (const Conversion& c : kConversions)
        if (c.from == source && c.to == canonical) return c.factor;
    return std::nullopt;
}

bool implausibleValue(std::string_view canonicalUnit, double value)
{
    if (canonicalUnit == "%") return value < -5 || value > 105;
    if (canonicalUnit == "ratio") return value < -0.05 || value > 1.05;
    return false;
}

} // namespace runlens::importers
