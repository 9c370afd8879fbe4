#include "analysis/mfu/mfu.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/saturating.h"
#include "analysis/store/stack_reader.h"
#include "analysis/store/trace_reader.h"
#include "app/cli/cli.h"
#include "app/cli/mfu_args.h"

#include <QCommandLineParser>
#include <fmt/format.h>
#include <map>

namespace runlens::app {
namespace {

std::string utcTime(std::optional<int64_t> ns)
{
    if (!ns) return "-";
    const int64_t s = *ns >= 0 ? *ns / 1'000'000'000 : -((-*ns + 999'999'999) / 1'000'000'000);
    const int64_t ms = (*ns - s * 1'000'000'000) / 1'000'000;
    // civil_from_days (H. Hinnant)
    int64_t z = (s >= 0 ? s : s - 86399) / 86400;
    const int64_t secOfDay = s - z * 86400;
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}Z", y, m, d, secOfDay / 3600, secOfDay / 60 % 60,
                       secOfDay % 60, ms);
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

} // namespace

int cmdInfo(const QStringList& args)
{
    QCommandLineParser parser;
    const QCommandLineOption problems(QStringLiteral("problems"),
                                      QStringLiteral("Stored problems to show per import (default 5)."),
                                      QStringLiteral("N"), QStringLiteral("5"));
    parser.addOption(problems);
    const QCommandLineOption listPeaks(QStringLiteral("list-gpu-peaks"),
                                       QStringLiteral("List the built-in GPU peak table (dense TFLOP/s) and exit."));
    parser.addOption(listPeaks);
    for (const QCommandLineOption& o : mfuOptions())
        parser.addOption(o);
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
    if (auto done = parseCommandLine(parser, args,
                                     "Show what a run database holds. The model and GPU options are kept in the run "
                                     "for its MFU."))
        return *done;
    if (parser.isSet(listPeaks)) {
        fmt::print("{:<10} {:>8} {:>8} {:>8}  {:<18} {}\n", "GPU", "BF16", "FP16", "FP8", "MATCHES", "SOURCE");
        const auto cell = [](const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("-"); };
        for (const analysis::GpuPeak& p : analysis::gpuPeaks()) {
            std::string words;
            for (const std::string& w : p.match)
                words += (words.empty() ? "" : " + ") + w;
            fmt::print("{:<10} {:>8} {:>8} {:>8}  {:<18} {}\n", p.model, cell(p.bf16), cell(p.fp16), cell(p.fp8), words,
                       p.source);
        }
        return kExitOk;
    }
    auto changes = mfuSettingChanges(parser);
    if (!changes) {
        printError(changes.error().message);
        return kExitUsage;
    }
    if (parser.positionalArguments().size() != 1) {
        printError("info needs exactly one RUN (see runlens info --help)");
        return kExitUsage;
    }
    const std::string path = parser.positionalArguments().front().toStdString();
    auto db = store::RunDatabase::open(path, changes->empty() ? store::OpenMode::ReadOnly : store::OpenMode::ReadWrite);
    if (!db) {
        printError(db.error().toString());
        return kExitFailure;
    }
    if (Status s = keepMfuSettings(**db, *changes); !s) {
        printError(s.error().toString());
        return kExitFailure;
    }
    store::RunReader reader(**db);
    auto nodes = reader.nodes();
    auto devices = reader.devices();
    auto series = reader.series();
    auto imports = reader.imports();
    for (const Error* e : {nodes ? nullptr : &nodes.error(), devices ? nullptr : &devices.error(),
                           series ? nullptr : &series.error(), imports ? nullptr : &imports.error()}) {
        if (e) {
            printError(e->toString());
            return kExitFailure;
        }
    }

    std::map<int64_t, const store::NodeInfo*> nodeById;
    for (const auto& n : *nodes)
        nodeById[n.id] = &n;
    std::map<int64_t, const store::DeviceInfo*> deviceById;
    for (const auto& d : *devices)
        deviceById[d.id] = &d;

    fmt::print("Run {}\n\n", path);
    fmt::print("Nodes ({})\n", nodes->size());
    for (const auto& n : *nodes) {
        int nDevices = 0;
        for (const auto& d : *devices)
            nDevices += d.nodeId == n.id ? 1 : 0;
        fmt::print("  {:<24} {} device{}, named from {}{}{}\n", n.name, nDevices, nDevices == 1 ? "" : "s",
                   n.nameSource, n.timeZone.empty() ? "" : ", time zone " + n.timeZone,
                   n.clockOffsetNs ? fmt::format(", clock offset {} ns", n.clockOffsetNs) : "");
    }
    if (nodes->size() > 1) {
        fmt::print("\n");
        printClocks(*nodes);
    }

    fmt::print("\nDevices ({})\n", devices->size());
    for (const auto& d : *devices) {
        std::string about;
        for (const auto& [key, v] : d.attributes)
            about += fmt::format("{}{}={}", about.empty() ? "" : ", ", key, v);
        fmt::print("  {:<24} {:<8} {}\n", nodeById.count(d.nodeId) ? nodeById[d.nodeId]->name : "?",
                   d.name.empty() ? d.kind : d.kind + ":" + d.name, about);
    }

    auto mfu = analysis::runMfu(**db);
    if (!mfu) {
        printError(mfu.error().toString());
        return kExitFailure;
    }
    fmt::print("\n{}\n", analysis::mfuLine(*mfu));

    fmt::print("\nSeries ({})\n", series->size());
    if (!series->empty())
        fmt::print("  {:<16} {:<12} {:<28} {:<7} {:>9} {:>8} {:<25} {:<25} {:>12} {:>12} {:>12}  {}\n", "NODE",
                   "DEVICE", "METRIC", "UNIT", "POINTS", "MISSING", "FIRST", "LAST", "MIN", "MEAN", "MAX", "SOURCE");
    for (const auto& s : *series) {
        const store::DeviceInfo* d = deviceById[s.deviceId];
        const std::string device = d ? (d->name.empty() ? d->kind : d->kind + ":" + d->name) : "?";
        const std::optional<double> mean =
            s.points > s.missingPoints ? std::optional<double>(s.sum / static_cast<double>(s.points - s.missingPoints))
                                       : std::nullopt;
        const std::string metric = s.labels.empty() ? s.metric : fmt::format("{}{{{}}}", s.metric, s.labels);
        fmt::print("  {:<16} {:<12} {:<28} {:<7} {:>9} {:>8} {:<25} {:<25} {:>12} {:>12} {:>12}  {}\n",
                   nodeById.count(s.nodeId) ? nodeById[s.nodeId]->name : "?", device, metric,
                   s.unit.empty() ? "-" : s.unit, s.points, s.missingPoints, utcTime(s.firstNs), utcTime(s.lastNs),
                   value(s.minValue), value(mean), value(s.maxValue), s.source);
    }

    // Per node: processes and threads with their timed samples (and time range) and untimed stacks.
    store::StackReader stacks(**db);
    auto stackThreads = stacks.threads();
    if (!stackThreads) {
        printError(stackThreads.error().toString());
        return kExitFailure;
    }
    int64_t totalSamples = 0;
    for (const auto& t : *stackThreads)
        totalSamples += t.timedSamples + t.untimedSamples;
    fmt::print("\nStack samples ({} in {} thread{})\n", totalSamples, stackThreads->size(),
               stackThreads->size() == 1 ? "" : "s");
    std::string lastNode = "\x01";
    for (const auto& t : *stackThreads) {
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

    if (Status s = printTraceSlices(**db, *nodes); !s) {
        printError(s.error().toString());
        return kExitFailure;
    }

    const int shown = parser.value(problems).toInt();
    fmt::print("\nImports ({})\n", imports->size());
    for (const auto& i : *imports) {
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
        auto counts = reader.diagnosticCounts(i.id);
        auto entries = reader.diagnostics(i.id, shown);
        if (!counts || !entries) {
            printError((counts ? entries.error() : counts.error()).toString());
            return kExitFailure;
        }
        std::string byKind;
        for (const auto& [kind, n] : *counts)
            byKind += fmt::format("{}{} {}", byKind.empty() ? "" : ", ", n, kind);
        fmt::print("      problems: {}\n", byKind);
        for (const auto& e : *entries)
            fmt::print("      {}: {}: {}\n", e.where.toString(), e.kind, e.message);
    }
    return kExitOk;
}

} // namespace runlens::app
