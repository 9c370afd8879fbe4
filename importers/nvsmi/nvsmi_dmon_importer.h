#pragma once

// `nvidia-smi dmon` text (any -s groups, -o D/T/DT, --gpm-metrics GPM columns). docs/formats.md §2.
//
// Time: with -o DT the Date and Time columns are naive local time in the node's zone. With -o T only, the date
// comes from the option date=YYYY-MM-DD (the date of the first row), else from the file's modification time
// (an estimate); a time going back by more than 12 h is midnight. Without time columns, rows are numbered by
// interval (a new interval starts when a GPU index repeats) and placed from the option start= (ISO 8601 local
// time, with Z or ±hh:mm, or epoch seconds) every interval= seconds (default 1, dmon's -d); without start= the
// last interval is placed at the file's modification time (an estimate). Estimates are stated in the import
// notes and by one estimated_time diagnostic.

#include "importers/importer.h"

namespace runlens::importers {

class NvsmiDmonImporter final : public Importer
{
public:
    std::string_view format() const override { return "nvidia-smi-dmon"; }
    std::string_view description() const override
    {
        return "nvidia-smi dmon text (any -s groups, -o D/T/DT, --gpm-metrics; options start=, interval=, date=)";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
