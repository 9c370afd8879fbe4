#pragma once

// sysstat `sar` text output (docs/formats.md §8): a banner `Linux <kernel> (<host>) \t<date> \t<arch>\t(N CPU)`, then
// blank-line separated sections, each a header line `<time> <columns...>` and rows `<time> <values...>`.
// Times are naive local times of day (`HH:MM:SS`, or `HH:MM:SS AM|PM` in 12-hour locales), read in --tz on the
// banner's date (MM/DD/YY or MM/DD/YYYY as printed in the C and en_US locales, YYYY-MM-DD with S_TIME_FORMAT=ISO,
// DD.MM.YYYY); a time of day earlier than the previous one by more than 3 hours is taken as the next day.
// `Average:`/`Summary:` rows are skipped; `LINUX RESTART` lines are restart_record diagnostics. The banner's host
// names the node; a file with several banners (concatenated days or hosts) is read banner by banner. Columns are
// routed like sadf -d (SysstatRouter: cpu.util, net.rx/tx, disk.read/write/busy, host.mem_*, sar.<section>.*).

#include "importers/importer.h"

namespace runlens::importers {

class SarTextImporter final : public Importer
{
public:
    std::string_view format() const override { return "sar-text"; }
    std::string_view description() const override
    {
        return "sysstat sar text output (banner with host and date; sections of HH:MM:SS rows, AM/PM; -A)";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
