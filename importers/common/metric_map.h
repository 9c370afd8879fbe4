#pragma once

// The one table that maps source metric names and units to canonical series (DESIGN.md §4).
// Each source format looks its names up here; the raw name is always kept beside the canonical one.

#include <optional>
#include <string_view>

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

// The factor that converts a value in sourceUnit to canonicalUnit, or nullopt when they do not match
// ("MiB" → "bytes" is 1048576, "MHz" → "Hz" is 1e6, "us" → "s" is 1e-6, equal units 1).
std::optional<double> unitFactor(std::string_view sourceUnit, std::string_view canonicalUnit);

} // namespace runlens::importers
