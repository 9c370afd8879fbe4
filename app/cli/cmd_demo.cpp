#include "app/cli/cli.h"
#include "app/demo/demo_run.h"

#include <QCommandLineParser>
#include <QDir>
#include <filesystem>
#include <fmt/format.h>

namespace runlens::app {

int cmdDemo(const QStringList& args, const ShowRun& showRun)
{
    QCommandLineParser parser;
    const QCommandLineOption nodes(QStringLiteral("nodes"), QStringLiteral("Nodes (default 2)."), QStringLiteral("N"),
                                   QStringLiteral("2"));
    const QCommandLineOption gpus(QStringLiteral("gpus"), QStringLiteral("GPUs per node (default 8)."),
                                  QStringLiteral("G"), QStringLiteral("8"));
    const QCommandLineOption hours(QStringLiteral("hours"), QStringLiteral("Length of the run (default 0.5)."),
                                   QStringLiteral("H"), QStringLiteral("0.5"));
    const QCommandLineOption seed(QStringLiteral("seed"), QStringLiteral("Random seed (default 42)."),
                                  QStringLiteral("SEED"), QStringLiteral("42"));
    const QCommandLineOption stackRate(QStringLiteral("stack-rate"),
                                       QStringLiteral("Stack samples per second and thread, as py-spy --rate "
                                                      "(default 10)."),
                                       QStringLiteral("HZ"), QStringLiteral("10"));
    const QCommandLineOption output({QStringLiteral("o"), QStringLiteral("output")},
                                    QStringLiteral("Folder to write the run into (default: runlens-demo in the "
                                                   "temporary folder). Its demo.runlens is replaced."),
                                    QStringLiteral("DIR"));
    const QCommandLineOption noGui(QStringLiteral("no-gui"),
                                   QStringLiteral("Print the summary instead of opening the window (the default "
                                                  "when there is no display)."));
    parser.addOptions({nodes, gpus, hours, seed, stackRate, output, noGui});
    if (auto done = parseCommandLine(parser, args,
                                     "Write a synthetic multi-node training run in real formats (nvidia-smi CSV and "
                                     "exporter scrapes per node, py-spy speedscope stack samples and PyTorch "
                                     "profiler traces per rank), import it and show what it holds. The run is "
                                     "communication-bound with periodic checkpoint stalls. With a display it opens the run in the "
                                     "window."))
        return *done;

    DemoSpec spec;
    bool okNodes = false, okGpus = false, okHours = false, okSeed = false, okRate = false;
    spec.nodes = parser.value(nodes).toInt(&okNodes);
    spec.gpusPerNode = parser.value(gpus).toInt(&okGpus);
    spec.hours = parser.value(hours).toDouble(&okHours);
    spec.seed = parser.value(seed).toULongLong(&okSeed);
    spec.stackRateHz = parser.value(stackRate).toInt(&okRate);
    if (!okNodes || !okGpus || !okHours || !okSeed || spec.nodes < 1 || spec.gpusPerNode < 1 || spec.hours <= 0 ||
        spec.nodes > 1024 || spec.gpusPerNode > 64 || spec.hours > 24 * 30) {
        printError("--nodes, --gpus and --hours need positive numbers (at most 1024 nodes, 64 GPUs, 720 hours)");
        return kExitUsage;
    }
    if (!okRate || spec.stackRateHz < 1 || spec.stackRateHz > 1000) {
        printError("--stack-rate needs a number of samples per second from 1 to 1000");
        return kExitUsage;
    }
    const std::string dir = parser.isSet(output) ? parser.value(output).toStdString()
                                                 : QDir::temp().filePath(QStringLiteral("runlens-demo")).toStdString();
    const std::string inputs = (std::filesystem::path(dir) / "inputs").string();
    const std::string dbPath = (std::filesystem::path(dir) / "demo.runlens").string();
    std::error_code ec;
    std::filesystem::remove_all(inputs, ec);
    std::filesystem::remove(dbPath, ec);

    fmt::print("Writing a demo run: {} nodes × {} GPUs, {} h, metrics at 1 s, stacks at {} Hz, seed {} → {}\n",
               spec.nodes, spec.gpusPerNode, spec.hours, spec.stackRateHz, spec.seed, inputs);
    auto files = writeDemoRun(spec, inputs);
    if (!files) {
        printError(files.error().toString());
        return kExitFailure;
    }
    ImportRequest request;
    request.dbPath = dbPath;
    request.paths = {inputs};
    request.options.timeZone = "UTC"; // the demo writes its naive timestamps in UTC
    request.quiet = true;
    if (int rc = importPaths(request); rc != kExitOk) return rc;
    if (showRun && !parser.isSet(noGui)) {
        fmt::print("Opening {} in the window (runlens demo --no-gui prints its summary instead)\n", dbPath);
        std::fflush(stdout);
        return showRun(dbPath);
    }
    fmt::print("\n");
    if (int rc = cmdInfo({QStringLiteral("info"), QString::fromStdString(dbPath)}); rc != kExitOk) return rc;
    fmt::print("\nNext, for example:\n"
               "  runlens query {0} \"SELECT node, device, mean_value FROM series_summary WHERE metric = "
               "'gpu.util'\"\n"
               "  runlens flame {0} --thread pt_autograd -o autograd.svg\n"
               "  runlens flame {0} --from +10m --to +11m --phase comm -o - | sort -k2 -n | tail\n"
               "  runlens query {0} \"SELECT thread, samples, first_ns, last_ns FROM stack_summary\"\n"
               "  runlens query {0} \"SELECT node, device, labels, metric, round(mean_value, 3) AS mean FROM "
               "series_summary WHERE metric LIKE '%_busy' ORDER BY node, labels\"\n",
               dbPath);
    return kExitOk;
}

} // namespace runlens::app
