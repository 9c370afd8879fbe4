#pragma once

// Generic long metrics: one value per record, for any source RunLens has no importer of its own for
// (docs/formats.md §19).
// Format id "metrics-csv"; the same importer reads CSV and JSON lines, told apart by the first character of
// the first line that is not blank or a '#' comment ('{' = JSON lines).
//
// CSV: a header line names the columns, in any order (names are case-insensitive):
//   ts       required  the time of the value (see Times); `timestamp` and `time` are accepted too
//   metric   required  a canonical name (gpu.util, gpu.mem_used, net.rx, disk.write, cpu.util, host.mem_available,
//                      train.loss, ...) or any other name, kept as it is (one unmapped_metric diagnostic per name)
//   value    required  a number; empty, null, -, N/A → a missing point; NaN or inf → a missing point and a
//                      nan_value diagnostic; anything else → bad_number, stored as missing with its raw text
//   node     optional  the host the value belongs to; one file may hold many nodes; empty → the file's node
//                      (--node, else the node of the first row, else the folder or file name)
//   device   optional  kind:name with kind gpu, nic, ib, disk or cpu: gpu:0, nic:eth0, ib:mlx5_0:1,
//                      disk:nvme0n1, cpu:3; `cpu` alone is all CPUs, `host` or empty the host itself; another
//                      kind (fan:2) goes on the host with a label device=fan:2
//   unit     optional  the unit of the value (%, MiB, kB/s, W, MHz, ...)
//   any other column is a label of the series.
//   Separator ',' (';' or TAB when the header has no comma); cells may be quoted "..." with "" for a quote.
//   Blank lines and lines starting with '#' are skipped.
// JSON lines: one object per line with the same keys, e.g.
//   {"ts": "2026-01-15T10:00:00.250Z", "node": "n1", "device": "gpu:0", "metric": "gpu.util", "value": 87.5,
//    "unit": "%"}
//   ts is a string or an epoch number; value a number, a numeric string, true/false (1/0) or null (missing).
//   Other keys with a string, number or true/false value are labels, and so are the keys of an object under
//   "labels"; other nested values are ignored (a note says so).
// Labels: `name=value` pairs sorted by name, joined by ','; a series is one node, device, metric and labels.
// Times: ISO 8601 with Z or an offset (2026-01-15T10:00:00Z, 2026-01-15 10:00:00.5+02:00, +0200, +02);
//   a naive local date-time (2026-01-15 10:00:00, also with '/' between the date parts), read in --tz; or a
//   Unix epoch number whose unit follows from its magnitude: below 1e11 seconds, below 1e14 milliseconds,
//   below 1e17 microseconds, else nanoseconds (fractions allowed).
// Units: a canonical metric is stored in its canonical unit (% for gpu.util and cpu.util, bytes, bytes/s, W,
//   Hz, C, s, ratio for 0-1 activities); the value is converted from the row's unit (MiB → bytes, kB/s →
//   bytes/s ×1000, KiB/s ×1024, MHz → Hz, ratio → %, % → ratio); a row without a unit is taken to be in the
//   canonical unit; a unit that cannot be converted is unknown_unit and the point is stored as missing.
//   Another metric keeps the unit of its first row; later rows in another unit are converted to it when the
//   conversion is known, else unknown_unit.
// CSV rows after the header are read and parsed in blocks on a thread of their own (generic_blocks.h) while the
// rows before are stored; diagnostics keep their file:line.
// Each series goes forward in time: an earlier time is backwards_time, the same time duplicate_sample (the
// first value is kept); both drop the row.

#include "importers/importer.h"

namespace runlens::importers {

class GenericMetricsImporter final : public Importer
{
public:
    std::string_view format() const override { return "metrics-csv"; }
    std::string_view description() const override
    {
        return "generic long metrics: CSV or JSON lines with ts, node, device, metric, value, unit. docs/formats.md "
               "§19.";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;

    // The text of each block of CSV lines parsed ahead on a second thread (about 4 MiB; the rows stored are the
    // same whatever the size). Tests make it small to cut a file into many blocks. Returns the size before.
    static size_t setCsvBlockBytes(size_t bytes);
};

} // namespace runlens::importers
