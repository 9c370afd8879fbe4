#pragma once

// sysstat `sadf -d` / `sadf -dh` semicolon CSV (docs/formats.md §8), and the routing of sysstat activity sections
// to series that `sar` text shares (SysstatRouter).
//
// sadf -d: each activity section has its own header `# hostname;interval;timestamp;<columns>`, rows are
// `host;interval;timestamp;<values>`. Timestamps: `YYYY-MM-DD HH:MM:SS UTC` (default), local time with a zone
// abbreviation (`-T`/`-t`, read in --tz), or epoch seconds (`-U`). Restart records `host;-1;ts;LINUX-RESTART\t(N
// CPU)` and comments `host;-1;ts;COM text` are counted as diagnostics. Numbers are printed in the locale of the
// sadf run: one file uses either decimal points or decimal commas, detected from the first fraction seen.
// sadf -dh puts all activities of one interval on one line; groups marked `[...]` repeat per item (CPU, IFACE,
// DEV ...). Repeated groups are split by their item keys where that is unambiguous (the CPU group, or the last
// repeated group of the line); columns past a group whose width cannot be known are counted as skipped_columns.
// The hostname column names the node of each row (--node wins).

#include "importers/importer.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace runlens::importers {

class SadfImporter final : public Importer
{
public:
    std::string_view format() const override { return "sadf-csv"; }
    std::string_view description() const override
    {
        return "sysstat sadf -d / -dh semicolon CSV (UTC, local or epoch times; restart records; decimal commas)";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

// Routes the rows of sysstat activity sections (from sadf -d / -dh or sar text) to series:
//  - CPU (%idle): cpu.util = 100 - %idle (%), on cpu "" for CPU -1 / all and on cpu:<n> per CPU;
//  - network (IFACE;rxpck/s...): net.rx / net.tx (bytes/s) from rxkB/s, txkB/s, on nic:<iface>, "virtual"=1 on lo,
//    docker, veth, virbr...;
//  - disks (DEV): disk.read / disk.write (bytes/s) from rkB/s, wkB/s (or rd_sec/s, wr_sec/s sectors of 512 bytes),
//    disk.busy (ratio) from %util, on disk:<dev>, "partition"=1 on partitions and dm/loop volumes;
//  - memory: host.mem_available from kbavail (from kbmemfree when sysstat has no kbavail), host.mem_free,
//    host.mem_cached, host.mem_dirty (bytes); load: host.load1 from ldavg-1;
//  - every other numeric column as sar.<section>.<column> (sar.cpu.%iowait, sar.net-dev.rxpck/s), values as
//    printed; one unmapped_metric diagnostic per column. Sections keyed by something that is not a device (TTY,
//    BAT, FILESYSTEM, FCHOST, sensors, interrupts) go on the host, or the CPU, with labels `<key>=<value>`.
//    Text columns (battery status) and the USB inventory section are not imported; the notes say so.
// sysstat's kB are KiB (1024 bytes).
class SysstatRouter
{
public:
    explicit SysstatRouter(ImportContext& context);
    ~SysstatRouter();
    SysstatRouter(const SysstatRouter&) = delete;
    SysstatRouter& operator=(const SysstatRouter&) = delete;

    // A section by its column names as printed (after hostname;interval;timestamp, or after the time in sar
    // text); the same names give the same id. firstColumn is the 1-based column of columns[0] in the line.
    int section(std::span<const std::string_view> columns, int64_t firstColumn);
    // Whether the width of a section varies (per-CPU interrupts, `INTR;CPU*`).
    bool variableWidth(int section) const;
    // The first column of the section starts a repeated item of this kind ("CPU", "IFACE", ... or "").
    std::string_view keyName(int section) const;

    // One row of a section: values in column order; firstColumn is the 1-based column of values[0] in the line.
    Status row(int section, int64_t nodeId, int64_t tsNs, std::span<const std::string_view> values,
               int64_t firstColumn);
    // The timestamp of the previous row of a section (to place a repeated local hour), if any.
    std::optional<int64_t> lastTs(int section) const;

    // Writes the notes (number convention, skipped sections and text columns). Call once at the end.
    void finish();

    // Whether a header column name starts a new activity section (for splitting sadf -dh and sar text headers).
    static bool startsSection(std::string_view column);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace runlens::importers
