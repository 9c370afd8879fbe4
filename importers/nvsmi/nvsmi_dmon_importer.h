#pragma once

// nvidia-smi dmon text (any -s groups, -o D/T/DT, --gpm-metrics GPM columns). FORMATS.md §2.

#include "importers/importer.h"

namespace runlens::importers {

class NvsmiDmonImporter final : public Importer
{
public:
    std::string_view format() const override { return "nvidia-smi-dmon"; }
    std::string_view description() const override { return "nvidia-smi dmon text (any -s groups, -o D/T/DT, --gpm-metrics GPM columns). FORMATS.md §2."; }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
