#pragma once

// speedscope JSON profiles (py-spy --format speedscope and others): sampled and evented profiles over shared
// frames. docs/formats.md §11 and §12.

#include "importers/importer.h"

namespace runlens::importers {

class SpeedscopeImporter final : public Importer
{
public:
    std::string_view format() const override { return "speedscope"; }
    std::string_view description() const override
    {
        return "speedscope JSON profiles (py-spy --format speedscope): sampled and evented stacks";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
