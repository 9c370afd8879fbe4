#pragma once

// Time arguments shared by every command that takes a window (flame, later analyze and report):
//   ISO 8601 ("2026-11-29T08:42:02.5Z", "2026-11-29 08:42:02+01:00"; without a zone: UTC),
//   epoch seconds with a fraction ("1795941742.93"), or an offset from the run's start ("+90s", "+1h30m",
//   "+500ms", "+2.5min"; units ns, us, ms, s, m/min, h).

#include "analysis/store/error.h"
#include "analysis/store/run_reader.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace runlens::app {

Expected<int64_t> parseTimeArgument(std::string_view text, std::optional<int64_t> runStartNs);

// The window of --from/--to (either may be empty: unbounded on that side). Usage errors name the option.
Expected<store::TimeWindow> parseWindow(const std::string& from, const std::string& to,
                                        std::optional<int64_t> runStartNs);

// "FROM..TO" (either side may be empty), each side as parseTimeArgument reads it or a UTC time of day
// ("08:42:53.5", on the day of the run's start). Usage errors name the option ("--window-a: …").
Expected<store::TimeWindow> parseWindowRange(const std::string& option, const std::string& text,
                                             std::optional<int64_t> runStartNs);

// The earliest time of anything in the run (series points and timed stack samples), if any.
std::optional<int64_t> runStartNs(store::RunDatabase& db);

} // namespace runlens::app
