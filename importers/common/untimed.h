#pragma once

#include "importers/common/time_parse.h"
#include "importers/importer.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::importers {

// Captures that print no timestamps (nvidia-smi dmon without -o T, dcgmi dmon): the start= and interval= options,
// the file's modification time for estimates, and a second reading of the file to count intervals first.
namespace untimed {

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

// One reading of a capture by a parser that can also count. When the time must be estimated, a Count pass runs
// first on a second reading: it counts intervals by the same row rules as the Import pass, and writes and reports
// nothing. Diagnostics and notes go through report() and note(), which keep them to the Import pass.
class Reading
{
public:
    enum class Pass
    {
        Count,
        Import
    };

protected:
    Reading(ImportContext& ctx, Pass pass) : m_ctx(ctx), m_pass(pass) {}
    void report(const store::DiagnosticKind& kind, int64_t column, const std::string& message)
    {
        if (m_pass == Pass::Import) m_ctx.report(kind, column, message);
    }
    void note(std::string text)
    {
        if (m_pass == Pass::Import) m_ctx.notes.push_back(std::move(text));
    }

    ImportContext& m_ctx;
    Pass m_pass;
};

} // namespace untimed

} // namespace runlens::importers
