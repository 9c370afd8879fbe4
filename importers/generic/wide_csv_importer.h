#pragma once

// "wide-csv": a hand-made CSV log with one row per sample and one column per measurement, e.g.
//   elapsed_sec,gpu_util_pct,mem_used_mb      or      timestamp,memory.used,utilization.gpu
//   0.08,0,472                                        1764189075,1,0
// The last resort of detection (sniff at most 40): every specific importer wins over it. Not the long
// generic format (metrics-csv, generic_importer.h). docs/formats.md §20 (and §7 for Grafana exports).
//
// Time column: the first one named timestamp, time, ts, datetime, date or epoch, or starting with elapsed,
//   time_ or seconds (case-insensitive). None → not this format (forced: a fatal error at line 1).
// Times: a naive local date-time (YYYY-MM-DD or YYYY/MM/DD, then HH:MM:SS[.f]) read in --tz; ISO 8601 with Z
//   or an offset; an epoch number (>= 1e8; unit by magnitude: s, ms, us, ns); or, for an elapsed* column or
//   numbers below 1e8, seconds after a start: the start= option (epoch seconds or ISO 8601), else the file's
//   modification time minus the last elapsed value (an estimate, stated in the notes and one estimated_time
//   diagnostic).
// Other columns: numeric → a raw series csv.<column> on the node's host device, unit ""; a column whose first
//   non-empty value is not a number is not imported (one unmapped_column diagnostic). Empty cells and N/A are
//   missing points; NaN / inf are missing with nan_value; other non-numbers are bad_number, stored as missing.
// Rows: a wrong field count drops the row; a quoted cell broken by a line break ("26.11\n0") drops the row
//   (one quoted_newline diagnostic at its first line: the value is ambiguous); "12.5" quoted on one line is
//   read as 12.5; an earlier time than the previous row is backwards_time (row dropped).

#include "importers/importer.h"

namespace runlens::importers {

class WideCsvImporter final : public Importer
{
public:
    std::string_view format() const override { return "wide-csv"; }
    std::string_view description() const override
    {
        return "hand-made wide CSV: a time column (timestamp, time, elapsed_sec, ...) and one column per measurement";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
