#pragma once

// Brendan Gregg folded ("collapsed") stacks, including py-spy raw output: `root;frame;...;leaf COUNT`.
// docs/formats.md §9 and §11.

#include "importers/importer.h"

namespace runlens::importers {

class FoldedImporter final : public Importer
{
public:
    std::string_view format() const override { return "folded"; }
    std::string_view description() const override
    {
        return "folded stacks (flamegraph.pl collapsed, py-spy raw): frame;frame;leaf count";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
