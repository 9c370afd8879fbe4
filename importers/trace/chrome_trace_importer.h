#pragma once

// Chrome Trace Event format files, as written by the PyTorch profiler (Kineto) and others (py-spy
// chrometrace, Chrome): slices on CPU and GPU tracks per rank, with busy series derived from them.
// docs/formats.md §13.

#include "importers/importer.h"

namespace runlens::importers {

class ChromeTraceImporter final : public Importer
{
public:
    std::string_view format() const override { return "chrome-trace"; }
    std::string_view description() const override
    {
        return "Chrome Trace Event JSON (PyTorch profiler / Kineto traces): CPU ops, kernels, collectives";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
