#include "importers/common/metric_map.h"

#include <array>
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

} // namespace

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

} // namespace runlens::importers
