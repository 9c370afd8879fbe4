#pragma once

// The headless `runlens` subcommands. Each returns the process exit code: 0 ok, 1 failure, 2 usage.

#include "analysis/clock/clock_estimate.h"
#include "analysis/store/error.h"
#include "importers/importer.h"

#include <QCommandLineParser>
#include <QStringList>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace runlens::store {
class RunDatabase;
struct NodeInfo;
} // namespace runlens::store

namespace runlens::app {

enum ExitCode
{
    kExitOk = 0,
    kExitFailure = 1,
    kExitUsage = 2
};

// Shows a run in the main window and returns the exit code when the window closes; given by the GUI path of
// main() to the subcommands that can end in the window (demo). Empty when headless.
using ShowRun = std::function<int(const std::string& dbPath)>;

int runCli(const QStringList& args, const ShowRun& showRun = {}); // args[0] is the program name

int cmdImport(const QStringList& args);
int cmdInfo(const QStringList& args);
int cmdQuery(const QStringList& args);
int cmdDemo(const QStringList& args, const ShowRun& showRun = {});
int cmdFlame(const QStringList& args);
int cmdAnalyze(const QStringList& args);
int cmdReport(const QStringList& args); // needs a QApplication (offscreen when headless)
int cmdClock(const QStringList& args);
int cmdCompare(const QStringList& args);

// Node clock offsets (cmd_clock.cpp), shared by clock, import and info.
struct ClockAssignment
{
    std::string node;
    int64_t offsetNs = 0;
};
std::optional<ClockAssignment> parseClockAssignment(const std::string& text); // "node3=+1.25s"
// The Clocks table: node, offset, ±, source.
void printClocks(const std::vector<store::NodeInfo>& nodes);
// Sets user offsets (source user, ± 0) in one transaction, a line each; an unknown node is a usage error.
int setClockOffsets(store::RunDatabase& db, const std::vector<ClockAssignment>& assignments);
// Estimates the offsets and stores them (user-set ones kept unless force), a line per node estimated (scope
// Changed: the nodes an import changed, see analysis/clock/clock_estimate.h).
int estimateClocks(store::RunDatabase& db, bool force, analysis::ClockScope scope = analysis::ClockScope::All);

// Parses a subcommand's arguments. Returns an exit code when the command is done (help printed: 0,
// bad arguments: 2), or nullopt to go on.
std::optional<int> parseCommandLine(QCommandLineParser& parser, const QStringList& args, const char* summary);

// Imports paths into dbPath, printing one line per file and the problems found; used by import and demo.
struct ImportRequest
{
    std::string dbPath;
    std::vector<std::string> paths;
    importers::ImportOptions options;
    bool strict = false;
    bool quiet = false; // no per-file table (demo)
};
int importPaths(const ImportRequest& request);

// An option's values, each a comma list ("--node a,b --node c"), as one list of trimmed items.
std::vector<std::string> splitList(const QStringList& values);

// Shared by subcommands: print "runlens: message" to stderr.
void printError(const std::string& message);
// Prints the error and gives the exit code it means: kExitUsage for a Usage error, kExitFailure for any other.
int exitFor(const Error& error);
// Whether stderr is a terminal (progress lines are drawn only then).
bool stderrIsTerminal();

} // namespace runlens::app
