#pragma once

// dcgmi dmon -e text (field tags, N/A, repeated headers; no timestamps: start and interval options). FORMATS.md §3.

#include "importers/importer.h"

namespace runlens::importers {

class DcgmiDmonImporter final : public Importer
{
public:
    std::string_view format() const override { return "dcgmi-dmon"; }
    std::string_view description() const override { return "dcgmi dmon -e text (field tags, N/A, repeated headers; no timestamps: start and interval options). FORMATS.md §3."; }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
