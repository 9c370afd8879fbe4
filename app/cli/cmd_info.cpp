#include "analysis/mfu/mfu.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/saturating.h"
#include "analysis/store/stack_reader.h"
#include "analysis/store/trace_reader.h"
#include "app/cli/cli.h"
#include "app/cli/mfu_args.h"
#include "importers/common/time_parse.h"

#include <QCommandLineParser>
#include <fmt/format.h>
#include <map>

namespace runlens::app {
namespace {

constexpr const char* kSummary =
    "Show what a run database holds. The model and GPU options are kept in the run for its MFU.";

std::string utcTime(std::optional<int64_t> ns)
{
    if (!ns) return "-";
    const int64_t s = *ns >= 0 ? *ns / 1'000'000'000 : -((-*ns + 999'999'999) / 1'000'000'000);
    const int64_t ms = (*ns - s * 1'000'000'000) / 1'000'000;
    const int64_t days = (s >= 0 ? s : s - 86399) / 86400;
    const int64_t secOfDay = s - days * 86400;
    const importers::CivilDate c = importers::civilFromDays(days);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}Z", c.year, c.month, c.day, secOfDay / 3600,
                       secOfDay / 60 % 60, secOfDay % 60, ms);
}

std::string value(std::optional<double> v)
{
    if (!v) return "-";
    return fmt::format("{:.6g}", *v);
}

// Trace slices per node and rank: how many, the kernels among them, and the span they cover.
Status printTraceSlices(store::RunDatabase& db, const std::vector<store::NodeInfo>& nodes)
{
    store::TraceReader reader(db);
    auto summary = reader.summary();
    auto tracks = reader.tracks();
    if (!summary) return summary.error();
    if (!tracks) return tracks.error();
    struct Rank
    {
        int64_t slices = 0, kernels = 0, comm = 0, collectives = 0;
        std::optional<int64_t> first, last;
    };
    std::map<std::pair<std::string, int64_t>, Rank> ranks;
    int64_t total = 0;
    for (const store::TraceSummaryRow& row : *summary) {
        Rank& r = ranks[{row.node, row.rank}];
        int64_t offset = 0;
        for (const store::NodeInfo& n : nodes)
            offset = n.name == row.node ? n.clockOffsetNs : offset;
        r.slices += row.slices;
        r.kernels += row.category == store::TraceCategory::Kernel ? row.slices : 0;
        r.comm += row.category == store::TraceCategory::CommKernel ? row.slices : 0;
        r.collectives += row.category == store::TraceCategory::Collective ? row.slices : 0;
        const int64_t first = store::saturatingAdd(row.firstNs, offset),
                      last = store::saturatingAdd(row.lastNs, offset);
        r.first = std::min(r.first.value_or(first), first);
        r.last = std::max(r.last.value_or(last), last);
        total += row.slices;
    }
    fmt::print("\nTrace slices ({} on {} track{})\n", total, tracks->size(), tracks->size() == 1 ? "" : "s");
    if (!ranks.empty())
        fmt::print("  {:<16} {:>5} {:>10} {:>9} {:>12} {:>11}  {:<25} {}\n", "NODE", "RANK", "SLICES", "KERNELS",
                   "COMM KERNELS", "COLLECTIVES", "FIRST", "LAST");
    for (const auto& [key, r] : ranks)
        fmt::print("  {:<16} {:>5} {:>10} {:>9} {:>12} {:>11}  {:<25} {}\n", key.first,
                   key.second < 0 ? std::string("?") : std::to_string(key.second), r.slices, r.kernels, r.comm,
                   r.collectives, utcTime(r.first), utcTime(r.last));
    return okStatus();
}

void printGpuPeaks()
{
    fmt::print("{:<10} {:>8} {:>8} {:>8}  {:<18} {}\n", "GPU", "BF16", "FP16", "FP8", "MATCHES", "SOURCE");
    const auto cell = [](const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("-"); };
    for (const analysis::GpuPeak& p : analysis::gpuPeaks()) {
        std::string words;
        for (const std::string& w : p.match)
            words += (words.empty() ? "" : " + ") + w;
        fmt::print("{:<10} {:>8} {:>8} {:>8}  {:<18} {}\n", p.model, cell(p.bf16), cell(p.fp16), cell(p.fp8), words,
                   p.source);
    }
}

// What the run holds, by id.
struct RunContents
{
    std::vector<store::NodeInfo> nodes;
    std::vector<store::DeviceInfo> devices;
    std::map<int64_t, const store::NodeInfo*> nodeById;
    std::map<int64_t, const store::DeviceInfo*> deviceById;

    std::string nodeName(int64_t id) const
    {
        const auto it = nodeById.find(id);
        return it != nodeById.end() ? it->second->name : "?";
    }
};

void printNodesAndDevices(const RunContents& run)
{
    fmt::print("Nodes ({})\n", run.nodes.size());
    for (const auto& n : run.nodes) {
        int nDevices = 0;
        for (const auto& d : run.devices)
            nDevices += d.nodeId == n.id ? 1 : 0;
        fmt::print("  {:<24} {} device{}, named from {}{}{}\n", n.name, nDevices, nDevices == 1 ? "" : "s",
                   n.nameSource, n.timeZone.empty() ? "" : ", time zone " + n.timeZone,
                   n.clockOffsetNs ? fmt::format(", clock offset {} ns", n.clockOffsetNs) : "");
    }
    if (run.nodes.size() > 1) {
        fmt::print("\n");
        printClocks(run.nodes);
    }
    fmt::print("\nDevices ({})\n", run.devices.size());
    for (const auto& d : run.devices) {
        std::string about;
        for (const auto& [key, v] : d.attributes)
            about += fmt::format("{}{}={}", about.empty() ? "" : ", ", key, v);
        fmt::print("  {:<24} {:<8} {}\n", run.nodeName(d.nodeId), d.name.empty() ? d.kind : d.kind + ":" + d.name,
                   about);
    }
}

void printSeries(const RunContents& run, const std::vector<store::SeriesInfo>& series)
{
    fmt::print("\nSeries ({})\n", series.size());
    if (!series.empty())
        fmt::print("  {:<16} {:<12} {:<28} {:<7} {:>9} {:>8} {:<25} {:<25} {:>12} {:>12} {:>12}  {}\n", "NODE",
                   "DEVICE", "METRIC", "UNIT", "POINTS", "MISSING", "FIRST", "LAST", "MIN", "MEAN", "MAX", "SOURCE");
    for (const auto& s : series) {
        const auto d = run.deviceById.find(s.deviceId);
        const std::string device = d == run.deviceById.end() ? "?"
                                   : d->second->name.empty() ? d->second->kind
                                                             : d->second->kind + ":" + d->second->name;
        const std::optional<double> mean =
            s.points > s.missingPoints ? std::optional<double>(s.sum / static_cast<double>(s.points - s.missingPoints))
                                       : std::nullopt;
        const std::string metric = s.labels.empty() ? s.metric : fmt::format("{}{{{}}}", s.metric, s.labels);
        fmt::print("  {:<16} {:<12} {:<28} {:<7} {:>9} {:>8} {:<25} {:<25} {:>12} {:>12} {:>12}  {}\n",
                   run.nodeName(s.nodeId), device, metric, s.unit.empty() ? "-" : s.unit, s.points, s.missingPoints,
                   utcTime(s.firstNs), utcTime(s.lastNs), value(s.minValue), value(mean), value(s.maxValue), s.source);
    }
}

// Per node: processes and threads with their timed samples (and time range) and untimed stacks.
Status printStacks(store::RunDatabase& db)
{
    store::StackReader stacks(db);
    RUNLENS_ASSIGN_OR_RETURN(const auto threads, stacks.threads());
    int64_t totalSamples = 0;
    for (const auto& t : threads)
        totalSamples += t.timedSamples + t.untimedSamples;
    fmt::print("\nStack samples ({} in {} thread{})\n", totalSamples, threads.size(), threads.size() == 1 ? "" : "s");
    std::string lastNode = "\x01";
    for (const auto& t : threads) {
        if (t.timedSamples + t.untimedSamples == 0) continue;
        if (t.node != lastNode) {
            fmt::print("  node {}\n    {:<32} {:<28} {:>10} {:>10} {:<25} {:<25}\n", t.node, "PROCESS", "THREAD",
                       "TIMED", "UNTIMED", "FIRST", "LAST");
            lastNode = t.node;
        }
        const std::string process = t.pid ? fmt::format("{} [{}]", t.process, t.pid) : t.process;
        const std::string thread = t.tid ? fmt::format("{} [{}]", t.name, t.tid) : t.name;
        fmt::print("    {:<32} {:<28} {:>10} {:>10} {:<25} {:<25}\n", process.empty() ? "-" : process,
                   thread.empty() ? "-" : thread, t.timedSamples, t.untimedSamples, utcTime(t.firstNs),
                   utcTime(t.lastNs));
    }
    return okStatus();
}

// Each import with its summary, how its times were placed and its first `shown` problems.
Status printImports(store::RunReader& reader, const std::vector<store::ImportInfo>& imports, int shown)
{
    fmt::print("\nImports ({})\n", imports.size());
    for (const auto& i : imports) {
        fmt::print("  #{} {}\n      {} → node {}: {} rows, {} points, {} samples, {} problem{}{}, {:.0f} ms\n", i.id,
                   i.path, i.format, i.node, i.rows, i.points, i.samples, i.diagnostics, i.diagnostics == 1 ? "" : "s",
                   i.dataLoss ? fmt::format(" ({} with data loss)", i.dataLoss) : "", i.durationMs);
        if (!i.summary.empty()) fmt::print("      {}\n", i.summary);
        if (i.anchor == "aligned" && i.anchorStartNs && i.anchorUncertaintyNs)
            fmt::print("      time: aligned, start {} ± {:.1f} s ({})\n", utcTime(i.anchorStartNs),
                       static_cast<double>(*i.anchorUncertaintyNs) / 1e9, i.anchorMethod);
        else if (i.anchor == "unanchored")
            fmt::print("      time: unanchored, not on the timeline: {}\n", i.anchorMethod);
        if (i.diagnostics == 0) continue;
        RUNLENS_ASSIGN_OR_RETURN(const auto counts, reader.diagnosticCounts(i.id));
        RUNLENS_ASSIGN_OR_RETURN(const auto entries, reader.diagnostics(i.id, shown));
        std::string byKind;
        for (const auto& [kind, n] : counts)
            byKind += fmt::format("{}{} {}", byKind.empty() ? "" : ", ", n, kind);
        fmt::print("      problems: {}\n", byKind);
        for (const auto& e : entries)
            fmt::print("      {}: {}: {}\n", e.where.toString(), e.kind, e.message);
    }
    return okStatus();
}

Status printRun(store::RunDatabase& db, const std::string& path, int shownProblems)
{
    store::RunReader reader(db);
    RunContents run;
    RUNLENS_ASSIGN_OR_RETURN(run.nodes, reader.nodes());
    RUNLENS_ASSIGN_OR_RETURN(run.devices, reader.devices());
    RUNLENS_ASSIGN_OR_RETURN(const auto series, reader.series());
    RUNLENS_ASSIGN_OR_RETURN(const auto imports, reader.imports());
    for (const auto& n : run.nodes)
        run.nodeById[n.id] = &n;
    for (const auto& d : run.devices)
        run.deviceById[d.id] = &d;
    fmt::print("Run {}\n\n", path);
    printNodesAndDevices(run);
    RUNLENS_ASSIGN_OR_RETURN(const auto mfu, analysis::runMfu(db));
    fmt::print("\n{}\n", analysis::mfuLine(mfu));
    printSeries(run, series);
    RUNLENS_TRY(printStacks(db));
    RUNLENS_TRY(printTraceSlices(db, run.nodes));
    return printImports(reader, imports, shownProblems);
}

} // namespace

int cmdInfo(const QStringList& args)
{
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("problems"), QStringLiteral("Stored problems to show per import (default 5)."),
                      QStringLiteral("N"), QStringLiteral("5")});
    parser.addOption({QStringLiteral("list-gpu-peaks"),
                      QStringLiteral("List the built-in GPU peak table (dense TFLOP/s) and exit.")});
    addMfuOptions(parser);
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    if (parser.isSet(QStringLiteral("list-gpu-peaks"))) {
        printGpuPeaks();
        return kExitOk;
    }
    auto changes = mfuSettingChanges(parser);
    if (!changes) return exitFor(changes.error());
    if (parser.positionalArguments().size() != 1) {
        printError("info needs exactly one RUN (see runlens info --help)");
        return kExitUsage;
    }
    const std::string path = parser.positionalArguments().front().toStdString();
    auto db = store::RunDatabase::open(path, changes->empty() ? store::OpenMode::ReadOnly : store::OpenMode::ReadWrite);
    if (!db) return exitFor(db.error());
    if (Status s = keepMfuSettings(**db, *changes); !s) return exitFor(s.error());
    const Status printed = printRun(**db, path, parser.value(QStringLiteral("problems")).toInt());
    return printed ? kExitOk : exitFor(printed.error());
}

} // namespace runlens::app
