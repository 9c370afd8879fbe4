#pragma once

// `perf script` text: sample header lines followed by leaf-first frame lines. docs/formats.md §10.

#include "importers/importer.h"

namespace runlens::importers {

class PerfScriptImporter final : public Importer
{
public:
    std::string_view format() const override { return "perf-script"; }
    std::string_view description() const override
    {
        return "perf script text (comm pid/tid [cpu] time: period event: then ip sym (dso) frames)";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
