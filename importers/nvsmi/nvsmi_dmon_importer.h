#pragma once

// `nvidia-smi dmon` text (any -s groups, -o D/T/DT, --gpm-metrics GPM columns). FORMATS.md §2.
//
// Time: with -o DT the Date and Time columns are naive local time in the node's zone. With -o T only, the date
// comes from the option date=YYYY-MM-DD (the date of the first row), else from the file's modification time
// (an estimate); a time going back by more than 12 h is midnight. Without time columns, rows are numbered by
// interval (a new interval starts when a GPU index repeats) and placed from the option start= (ISO 8601 local
// time, with Z or ±hh:mm, or epoch seconds) every interval= seconds (default 1, dmon's -d); without start= the
// last interval is placed at the file's modification time (an estimate). Estimates are stated in the import
// notes and by one estimated_time diagnostic.

#include "importers/importer.h"

#include <memory>

namespace runlens::importers {

class TimeZoneResolver;

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

// Helpers for captures that print no timestamps (nvidia-smi dmon without -o T, dcgmi dmon), shared with
// DcgmiDmonImporter. They belong in importers/common/ once that folder takes them.
namespace untimed {

// Fields separated by runs of blanks.
void splitWhitespace(std::string_view line, std::vector<std::string_view>& out);
// A value quoted in a message, cut so a huge bad value cannot make a huge diagnostic.
std::string clip(std::string_view v);

// start= (epoch seconds, or ISO 8601 local time in the node's zone, or with Z / ±hh:mm) and interval= ("2s",
// "500ms"; a bare number counts bareUnitNs). Bad values are Usage errors.
struct Placement
{
    std::optional<int64_t> startNs;
    int64_t intervalNs = 0;
};
Expected<Placement> readPlacement(const ImportOptions& options, TimeZoneResolver& tz, int64_t bareUnitNs,
                                  int64_t defaultIntervalNs);
std::optional<int64_t> fileModifiedNs(const std::string& path);
std::string utcText(int64_t ns); // "2026-11-29T08:42:02.000Z"

// The file read a second time (to count intervals before placing them); diagnostics go to a scratch list.
struct SecondReading
{
    std::unique_ptr<InputStream> input;
    std::unique_ptr<LineReader> lines;
    store::Diagnostics scratch;
    Progress cancelOnly;
    std::unique_ptr<ImportContext> context;
};
Expected<std::unique_ptr<SecondReading>> openSecondReading(const ImportContext& ctx);

} // namespace untimed

} // namespace runlens::importers
