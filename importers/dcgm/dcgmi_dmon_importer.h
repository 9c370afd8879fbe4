#pragma once

// `dcgmi dmon -e <fieldIds> [-d ms]` text: field tags, N/A, headers repeated, entities GPU / GPU-I / GPU-CI /
// GPU n LINK k / Switch / vGPU. docs/formats.md §3.
//
// dcgmi prints no timestamps: rows are numbered by interval (a new interval starts when an entity repeats) and
// placed from the option start= (ISO 8601 local time, with Z or ±hh:mm, or epoch seconds) every interval=
// (default 1000 ms, dcgmi's -d; "500ms", "2s", a bare number is milliseconds). Without start= the last interval
// is placed at the file's modification time, an estimate stated in the notes and by one estimated_time
// diagnostic. A wall clock a wrapper printed before each line (awk strftime: "2026-01-15 10:00:01 GPU 0 ...",
// also in [brackets] or as epoch seconds) is used as the time instead.
//
// Devices: GPU n → gpu:n; GPU-I n → gpu-i:n; GPU-CI n → gpu-ci:n; GPU n LINK k → nvlink:n/k; Switch n / SW n →
// nvswitch:n; SW n LINK k → nvswitch-link:n/k; vGPU n → vgpu:n. DCGM blank sentinels are stored as missing
// (sentinel_value); TOTEC (energy, mJ) is stored as its rate in W from the second sample on.

#include "importers/importer.h"

namespace runlens::importers {

class DcgmiDmonImporter final : public Importer
{
public:
    std::string_view format() const override { return "dcgmi-dmon"; }
    std::string_view description() const override
    {
        return "dcgmi dmon -e text (field tags, N/A, repeated headers; options start=, interval=)";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
