#pragma once

// Prometheus text exposition 0.0.4 and OpenMetrics (one scrape or many concatenated; dcgm-exporter, node_exporter). FORMATS.md §4-6.

#include "importers/importer.h"

namespace runlens::importers {

class PromTextImporter final : public Importer
{
public:
    std::string_view format() const override { return "prometheus-text"; }
    std::string_view description() const override { return "Prometheus text exposition 0.0.4 and OpenMetrics (one scrape or many concatenated; dcgm-exporter, node_exporter). FORMATS.md §4-6."; }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
