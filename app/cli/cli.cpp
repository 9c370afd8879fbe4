#include "app/cli/cli.h"

#include <QCoreApplication>
#include <fmt/format.h>
#include <unistd.h>

namespace runlens::app {

namespace {

constexpr const char* kUsage = R"(RunLens: post-mortem workbench for distributed AI training runs.

Usage: runlens <command> [options]
       runlens [RUN.runlens]      open the main window (on a run)
       runlens open RUN.runlens

Commands (headless; no display needed):
  import   Import log files or folders into a run database (.runlens)
  info     Show the nodes, devices, series, stacks and imports of a run
  query    Run read-only SQL on a run and print CSV
  flame    Write a flame graph (folded, SVG or PNG) for a window, nodes and threads
  analyze  Run the diagnosis rules and print the findings (a table, or --json)
  report   Write a report of the findings with figures: a PDF, or PNG pages
  compare  Compare runs (or windows of one run) against a baseline: step time, throughput, activity, rates,
           where the time went and the findings, with a significance test per row
  clock    Show, set or estimate the clock offsets between a run's nodes
  demo     Write a synthetic multi-node run, import it and show it (in the window when there is a
           display, unless --no-gui)

Run "runlens <command> --help" for the options of a command.
Exit codes: 0 ok, 1 failure, 2 usage error.
)";

} // namespace

std::optional<int> parseCommandLine(QCommandLineParser& parser, const QStringList& args, const char* summary)
{
    parser.setApplicationDescription(QString::fromUtf8(summary));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    parser.addOption(help);
    if (!parser.parse(args)) {
        printError(parser.errorText().toStdString());
        fmt::print(stderr, "Run \"runlens {} --help\" for usage.\n", args.value(0).toStdString());
        return kExitUsage;
    }
    if (parser.isSet(help)) {
        // Qt names the program as it was started (maybe a path); name the subcommand instead.
        QString text = parser.helpText();
        const qsizetype start = text.indexOf(QStringLiteral("Usage: "));
        if (start >= 0) {
            const qsizetype from = start + 7;
            const qsizetype end = text.indexOf(QLatin1Char(' '), from);
            if (end > from) text.replace(from, end - from, QStringLiteral("runlens ") + args.value(0));
        }
        fmt::print("{}", text.toStdString());
        return kExitOk;
    }
    return std::nullopt;
}

std::vector<std::string> splitList(const QStringList& values)
{
    std::vector<std::string> out;
    for (const QString& v : values)
        for (const QString& part : v.split(QLatin1Char(','), Qt::SkipEmptyParts))
            out.push_back(part.trimmed().toStdString());
    return out;
}

void printError(const std::string& message)
{
    fmt::print(stderr, "runlens: {}\n", message);
}

int exitFor(const Error& error)
{
    printError(error.toString());
    return error.code == ErrorCode::Usage ? kExitUsage : kExitFailure;
}

bool stderrIsTerminal()
{
    return isatty(STDERR_FILENO) == 1;
}

int runCli(const QStringList& args, const ShowRun& showRun)
{
    if (args.size() < 2) {
        fmt::print(stderr, "{}", kUsage);
        return kExitUsage;
    }
    const QString& command = args.at(1);
    QStringList rest = args.mid(1); // the subcommand takes the program-name slot
    if (command == QLatin1String("--help") || command == QLatin1String("-h") || command == QLatin1String("help")) {
        fmt::print("{}", kUsage);
        return kExitOk;
    }
    if (command == QLatin1String("--version")) {
        fmt::print("runlens {}\n", RUNLENS_VERSION);
        return kExitOk;
    }
    if (command == QLatin1String("import")) return cmdImport(rest);
    if (command == QLatin1String("info")) return cmdInfo(rest);
    if (command == QLatin1String("query")) return cmdQuery(rest);
    if (command == QLatin1String("demo")) return cmdDemo(rest, showRun);
    if (command == QLatin1String("flame")) return cmdFlame(rest);
    if (command == QLatin1String("analyze")) return cmdAnalyze(rest);
    if (command == QLatin1String("report")) return cmdReport(rest);
    if (command == QLatin1String("clock")) return cmdClock(rest);
    if (command == QLatin1String("compare")) return cmdCompare(rest);
    printError(fmt::format("unknown command \"{}\"", command.toStdString()));
    fmt::print(stderr, "{}", kUsage);
    return kExitUsage;
}

} // namespace runlens::app
