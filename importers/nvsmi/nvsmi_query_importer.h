#pragma once

// `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] [-l N | -lms N]`. docs/formats.md §1.

#include "importers/importer.h"

namespace runlens::importers {

class NvsmiQueryImporter final : public Importer
{
public:
    std::string_view format() const override { return "nvidia-smi-query-csv"; }
    std::string_view description() const override
    {
        return "nvidia-smi --query-gpu CSV (any property list, -l/-lms blocks, units in header and values)";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
