#pragma once

#include "importers/common/time_parse.h"
#include "importers/importer.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::importers {

// Helpers for captures that print no timestamps (nvidia-smi dmon without -o T, dcgmi dmon): the start= and
// interval= options, the file's modification time for estimates, a second reading of the file to count
// intervals first, and whitespace-aligned tables.
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
