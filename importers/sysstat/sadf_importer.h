#pragma once

// sysstat sadf -d / -dh semicolon CSV (UTC, local, epoch; restart records; decimal commas). FORMATS.md §8.

#include "importers/importer.h"

namespace runlens::importers {

class SadfImporter final : public Importer
{
public:
    std::string_view format() const override { return "sadf-csv"; }
    std::string_view description() const override { return "sysstat sadf -d / -dh semicolon CSV (UTC, local, epoch; restart records; decimal commas). FORMATS.md §8."; }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
