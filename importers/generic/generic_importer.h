#pragma once

// Generic long metrics: CSV or JSON lines with ts, node, device, metric, value, unit (README).

#include "importers/importer.h"

namespace runlens::importers {

class GenericMetricsImporter final : public Importer
{
public:
    std::string_view format() const override { return "metrics-csv"; }
    std::string_view description() const override { return "Generic long metrics: CSV or JSON lines with ts, node, device, metric, value, unit (README)."; }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
