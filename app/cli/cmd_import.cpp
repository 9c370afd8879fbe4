#include "analysis/store/run_database.h"
#include "app/cli/cli.h"
#include "app/cli/mfu_args.h"
#include "app/jobs/import_job.h"
#include "importers/import_session.h"

#include <QCommandLineParser>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <fmt/format.h>

namespace runlens::app {
namespace {

constexpr const char* kSummary = "Import log files into a run database. Each file is one transaction: a file that "
                                 "fails leaves the database as it was; a file imported before is skipped.";

std::atomic<bool> g_cancel{false};

extern "C" void onInterrupt(int)
{
    g_cancel.store(true);
}

std::string humanCount(int64_t n)
{
    const std::string digits = std::to_string(n < 0 ? -n : n);
    std::string s = n < 0 ? "-" : "";
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
        s += digits[i];
    }
    return s;
}

// A progress line on stderr, redrawn at most ten times a second, only when stderr is a terminal.
class ProgressLine
{
public:
    explicit ProgressLine(bool enabled) : m_enabled(enabled) {}
    void update(const std::string& name, uint64_t done, uint64_t total)
    {
        if (!m_enabled) return;
        const auto now = std::chrono::steady_clock::now();
        if (now - m_last < std::chrono::milliseconds(100)) return;
        m_last = now;
        const double pct = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0;
        fmt::print(stderr, "\r\033[K{}: {:.0f}% of {:.1f} MB", name, pct, static_cast<double>(total) / 1e6);
        m_drawn = true;
    }
    void clear()
    {
        if (m_drawn) fmt::print(stderr, "\r\033[K");
        m_drawn = false;
    }

private:
    bool m_enabled;
    bool m_drawn = false;
    std::chrono::steady_clock::time_point m_last{};
};

// One file's line (quiet: only what went wrong) and its first problems, capped so a bad file does not flood the
// terminal: those that dropped input first, then notices (unmapped names, estimated times...).
void printFileResult(const importers::PlannedFile& file, const importers::FileResult& r, bool quiet)
{
    const std::string format = file.importer ? std::string(file.importer->format()) : std::string("?");
    switch (r.outcome) {
    case importers::FileOutcome::Imported: {
        if (quiet) break;
        const std::string what = r.samples > 0 ? fmt::format("{} samples", humanCount(r.samples))
                                               : fmt::format("{} points", humanCount(r.points));
        const int64_t lost = r.diagnostics.dataLoss(), notices = r.diagnostics.total() - lost;
        fmt::print("{}: {} → node {} ({}): {} rows, {}, {} problem{} with data loss, {} notice{}, {:.0f} ms\n",
                   file.displayPath, format, file.node, file.nodeSource, humanCount(r.rowsRead), what, lost,
                   lost == 1 ? "" : "s", notices, notices == 1 ? "" : "s", r.durationMs);
        for (size_t i = 1; i < r.notes.size(); ++i)
            fmt::print("    {}\n", r.notes[i]);
        break;
    }
    case importers::FileOutcome::AlreadyImported:
        fmt::print("{}: already imported (import #{}, same content); nothing changed\n", file.displayPath, r.importId);
        break;
    case importers::FileOutcome::NotRecognised:
        fmt::print(stderr, "{}: skipped: {}\n", file.displayPath, file.problem);
        break;
    case importers::FileOutcome::Cancelled:
        fmt::print(stderr, "{}: cancelled; nothing of this file was stored\n", file.displayPath);
        break;
    case importers::FileOutcome::Failed:
        fmt::print(stderr, "{}\n    nothing of this file was stored\n", r.error ? r.error->toString() : "failed");
        break;
    }
    std::fflush(stdout);
    constexpr size_t kShown = 10;
    std::vector<const store::DiagnosticEntry*> ordered;
    for (const store::DiagnosticEntry& e : r.diagnostics.entries())
        ordered.push_back(&e);
    auto lossy = [&](const store::DiagnosticEntry* e) { return r.diagnostics.counts().at(e->kind).dataLoss; };
    std::stable_partition(ordered.begin(), ordered.end(), lossy);
    for (size_t i = 0; i < ordered.size() && i < kShown; ++i)
        fmt::print(stderr, "{}: {}: {}\n", ordered[i]->where.toString(), ordered[i]->kind, ordered[i]->message);
    if (r.diagnostics.total() > static_cast<int64_t>(kShown)) {
        std::string counts;
        for (const auto& [kind, c] : r.diagnostics.counts())
            counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", c.count, kind);
        fmt::print(stderr, "    ... {} problems in all ({}); see `runlens info`\n", r.diagnostics.total(), counts);
    }
    std::fflush(stderr);
}

} // namespace

// After an import: the offsets given, then (two or more nodes) the others estimated, a line per node estimated.
static int importClocks(const std::string& dbPath, const std::vector<ClockAssignment>& offsets)
{
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadWrite);
    if (!db) {
        if (offsets.empty()) return kExitOk; // nothing was imported
        printError(db.error().toString());
        return kExitFailure;
    }
    if (!offsets.empty())
        if (const int rc = setClockOffsets(**db, offsets); rc != kExitOk) return rc;
    // (nothing to estimate in a run of one node; in a large run only the nodes the import changed)
    return estimateClocks(**db, false, analysis::ClockScope::Changed);
}

int importPaths(const ImportRequest& request)
{
    auto plan = importers::planImport(request.paths, request.options);
    if (!plan) {
        printError(plan.error().toString());
        return plan.error().code == ErrorCode::Usage ? kExitUsage : kExitFailure;
    }

    g_cancel = false;
    std::signal(SIGINT, onInterrupt);
    ProgressLine progressLine(stderrIsTerminal());
    ImportJobCallbacks callbacks;
    callbacks.progress = [&](uint64_t done, uint64_t total, size_t index) {
        if (index < plan->size()) progressLine.update((*plan)[index].displayPath, done, total);
    };
    callbacks.fileDone = [&](const importers::PlannedFile& file, const importers::FileResult& r) {
        progressLine.clear();
        std::fflush(stdout); // keep this file's lines together when stdout and stderr go to one place
        printFileResult(file, r, request.quiet);
    };
    const ImportJobResult job = runImport(request.dbPath, *plan, request.options, callbacks, &g_cancel);
    std::signal(SIGINT, SIG_DFL);
    if (job.error) {
        printError(job.error->toString());
        return kExitFailure;
    }

    fmt::print("{} file{}: {} imported, {} already imported, {} failed, {} not recognised; {} points, {} stack "
               "samples, {} problems ({} with data loss, {} notices) → {}\n",
               plan->size(), plan->size() == 1 ? "" : "s", job.imported, job.alreadyImported, job.failed,
               job.notRecognised, humanCount(job.points), humanCount(job.samples), job.problems, job.dataLoss,
               job.problems - job.dataLoss, request.dbPath);
    if (job.placedLater > 0)
        fmt::print("{} source{} imported earlier without a place in time now aligned with this data\n", job.placedLater,
                   job.placedLater == 1 ? "" : "s");
    if (job.cancelled || job.failed > 0) return kExitFailure;
    if (request.strict && (job.dataLoss > 0 || job.notRecognised > 0)) {
        printError("--strict: input was dropped (see the problems above)");
        return kExitFailure;
    }
    // A file named explicitly that is not recognised is a failure; inside a folder it is only reported.
    for (const importers::PlannedFile& f : *plan)
        for (const std::string& p : request.paths)
            if (!f.importer && f.path == p) return kExitFailure;
    return kExitOk;
}

int cmdImport(const QStringList& args)
{
    QCommandLineParser parser;
    const QCommandLineOption output({QStringLiteral("o"), QStringLiteral("output")},
                                    QStringLiteral("Run database to create or add to (.runlens)."),
                                    QStringLiteral("RUN"));
    const QCommandLineOption format(QStringLiteral("format"),
                                    QStringLiteral("Read every input as this format instead of detecting it."),
                                    QStringLiteral("FORMAT"));
    const QCommandLineOption node(QStringLiteral("node"),
                                  QStringLiteral("Node (host) the inputs belong to; default: a host label in the "
                                                 "data, else the folder or file name."),
                                  QStringLiteral("NAME"));
    const QCommandLineOption rankMap(QStringLiteral("rank-map"),
                                     QStringLiteral("Nodes of ranks, for per-rank stacks and traces whose folder does "
                                                    "not name their node: 0-7=node01,8-15=node02."),
                                     QStringLiteral("RANKS=NODE,..."));
    const QCommandLineOption tz(QStringLiteral("tz"),
                                QStringLiteral("Time zone of naive local timestamps (IANA name such as Europe/Berlin, "
                                               "UTC, or +02:00); default: this machine's zone."),
                                QStringLiteral("ZONE"));
    const QCommandLineOption option(QStringLiteral("option"), QStringLiteral("Format option KEY=VALUE (repeatable)."),
                                    QStringLiteral("KEY=VALUE"));
    const QCommandLineOption strict(QStringLiteral("strict"),
                                    QStringLiteral("Fail (exit 1) when any input was dropped or not recognised."));
    const QCommandLineOption formats(QStringLiteral("list-formats"), QStringLiteral("List the known formats."));
    const QCommandLineOption clockOffset(
        QStringLiteral("clock-offset"),
        QStringLiteral("A node's clock offset NODE=OFFSET (+1.25s, -300ms), set after importing (repeatable). With two "
                       "or more nodes the others are estimated (see runlens clock)."),
        QStringLiteral("NODE=OFFSET"));
    parser.addOptions({output, format, node, rankMap, tz, option, strict, formats, clockOffset});
    addMfuOptions(parser);
    parser.addPositionalArgument(QStringLiteral("paths"), QStringLiteral("Files or folders (searched recursively)."),
                                 QStringLiteral("PATH..."));
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    if (parser.isSet(formats)) {
        for (const importers::Importer* i : importers::allImporters())
            fmt::print("{:<24} {}\n", i->format(), i->description());
        return kExitOk;
    }
    if (!parser.isSet(output) || parser.positionalArguments().isEmpty()) {
        printError("import needs -o RUN.runlens and at least one PATH (see runlens import --help)");
        return kExitUsage;
    }
    ImportRequest request;
    request.dbPath = parser.value(output).toStdString();
    for (const QString& p : parser.positionalArguments())
        request.paths.push_back(p.toStdString());
    request.options.format = parser.value(format).toStdString();
    request.options.node = parser.value(node).toStdString();
    request.options.timeZone = parser.value(tz).toStdString();
    for (const QString& kv : parser.values(option)) {
        const qsizetype eq = kv.indexOf(QLatin1Char('='));
        if (eq <= 0) {
            printError(fmt::format("--option needs KEY=VALUE, got \"{}\"", kv.toStdString()));
            return kExitUsage;
        }
        request.options.extra[kv.left(eq).toStdString()] = kv.mid(eq + 1).toStdString();
    }
    if (parser.isSet(rankMap)) request.options.extra["rank_map"] = parser.value(rankMap).toStdString();
    request.strict = parser.isSet(strict);
    std::vector<ClockAssignment> offsets;
    for (const QString& kv : parser.values(clockOffset)) {
        auto a = parseClockAssignment(kv.toStdString());
        if (!a) {
            printError(
                fmt::format("--clock-offset needs NODE=OFFSET such as node3=+1.25s, got \"{}\"", kv.toStdString()));
            return kExitUsage;
        }
        offsets.push_back(*a);
    }
    auto mfuChanges = mfuSettingChanges(parser);
    if (!mfuChanges) {
        printError(mfuChanges.error().message);
        return kExitUsage;
    }
    const int rc = importPaths(request);
    if (rc == kExitUsage) return rc;
    const int clocks = importClocks(request.dbPath, offsets);
    if (!mfuChanges->empty()) {
        auto db = store::RunDatabase::open(request.dbPath, store::OpenMode::ReadWrite);
        Status kept = db ? keepMfuSettings(**db, *mfuChanges) : Status(db.error());
        if (!kept) {
            printError(kept.error().toString());
            return kExitFailure;
        }
    }
    return rc != kExitOk ? rc : clocks;
}

} // namespace runlens::app
