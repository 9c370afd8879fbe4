#pragma once

// Prometheus HTTP API JSON (/api/v1/query_range matrix, /api/v1/query vector). docs/formats.md §6.

#include "importers/importer.h"

namespace runlens::importers {

class PromJsonImporter final : public Importer
{
public:
    std::string_view format() const override { return "prometheus-json"; }
    std::string_view description() const override
    {
        return "Prometheus HTTP API JSON (/api/v1/query_range matrix, /api/v1/query vector). docs/formats.md §6.";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
