#include "analysis/store/run_database.h"
#include "app/cli/cli.h"
#include "app/cli/mfu_args.h"
#include "app/demo/demo_run.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <filesystem>
#include <fmt/format.h>

namespace runlens::app {
namespace {

Status keepDemoModel(const std::string& dbPath, const DemoSpec& spec)
{
    RUNLENS_ASSIGN_OR_RETURN(auto db, store::RunDatabase::open(dbPath, store::OpenMode::ReadWrite));
    return keepMfuSettings(*db, demoModelSettings(spec));
}

} // namespace

int cmdDemo(const QStringList& args, const ShowRun& showRun)
{
    QCommandLineParser parser;
    const QCommandLineOption scenario(
        QStringLiteral("scenario"),
        QStringLiteral(
            "The run to write: default (2 nodes × 8 GPUs, 30 min, 10.6 s steps), zero3 (the reference "
            "case: DeepSpeed ZeRO-3 on 4 nodes × 8 GPUs for 28 h at 50 s a step, GPU utilization 99 % but SM "
            "activity 0.21, 6 GB/s per 200 Gb/s InfiniBand port, a checkpoint every 2 h; about 3 GB of inputs, "
            "a few minutes) or zero3-tuned (the same after tuning ZeRO-3: 40 s a step, SM activity 0.28, "
            "7.5 GiB/s per port). --nodes, --gpus, --hours and --stack-rate change a scenario."),
        QStringLiteral("NAME"), QStringLiteral("default"));
    const QCommandLineOption nodes(QStringLiteral("nodes"), QStringLiteral("Nodes (default 2; zero3: 4)."),
                                   QStringLiteral("N"));
    const QCommandLineOption gpus(QStringLiteral("gpus"), QStringLiteral("GPUs per node (default 8)."),
                                  QStringLiteral("G"));
    const QCommandLineOption hours(QStringLiteral("hours"),
                                   QStringLiteral("Length of the run (default 0.5; zero3: 28, zero3-tuned: 22.4)."),
                                   QStringLiteral("H"));
    const QCommandLineOption seed(QStringLiteral("seed"), QStringLiteral("Random seed (default 42)."),
                                  QStringLiteral("SEED"), QStringLiteral("42"));
    const QCommandLineOption stackRate(QStringLiteral("stack-rate"),
                                       QStringLiteral("Stack samples per second and thread, as py-spy --rate "
                                                      "(default 10; zero3: 1)."),
                                       QStringLiteral("HZ"));
    const QCommandLineOption output({QStringLiteral("o"), QStringLiteral("output")},
                                    QStringLiteral("Folder to write the run into (default: runlens-demo in the "
                                                   "temporary folder). Its demo.runlens is replaced."),
                                    QStringLiteral("DIR"));
    const QCommandLineOption noGui(QStringLiteral("no-gui"),
                                   QStringLiteral("Print the summary instead of opening the window (the default "
                                                  "when there is no display)."));
    parser.addOptions({scenario, nodes, gpus, hours, seed, stackRate, output, noGui});
    if (auto done = parseCommandLine(
            parser, args,
            "Write a synthetic multi-node training run in real formats (nvidia-smi CSV and "
            "exporter scrapes per node, py-spy speedscope stack samples and PyTorch "
            "profiler traces per rank, rank 0's LLaMA-Factory trainer log), import it, keep "
            "the model it trains (Llama 4 Scout, 17e9 active parameters) for the MFU and "
            "show what it holds. The run is "
            "communication-bound with periodic checkpoint stalls. With a display it opens the run in the "
            "window."))
        return *done;

    auto chosen = demoScenario(parser.value(scenario).toStdString());
    if (!chosen) {
        printError(chosen.error().message);
        return kExitUsage;
    }
    DemoSpec spec = *chosen;
    bool okNodes = true, okGpus = true, okHours = true, okSeed = false, okRate = true;
    if (parser.isSet(nodes)) spec.nodes = parser.value(nodes).toInt(&okNodes);
    if (parser.isSet(gpus)) spec.gpusPerNode = parser.value(gpus).toInt(&okGpus);
    if (parser.isSet(hours)) spec.hours = parser.value(hours).toDouble(&okHours);
    spec.seed = parser.value(seed).toULongLong(&okSeed);
    if (parser.isSet(stackRate)) spec.stackRateHz = parser.value(stackRate).toInt(&okRate);
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

    fmt::print("Writing a demo run ({}): {} nodes × {} GPUs, {} h, {} s steps, metrics at 1 s, stacks at {} Hz, seed "
               "{} → {}\n",
               spec.scenario, spec.nodes, spec.gpusPerNode, spec.hours, spec.stepS, spec.stackRateHz, spec.seed,
               inputs);
    auto files = writeDemoRun(spec, inputs);
    if (!files) {
        printError(files.error().toString());
        return kExitFailure;
    }
    // The trainer log on its own, after the GPU metrics, with the start the demo knows (start= is an option of the
    // whole import).
    ImportRequest request;
    request.dbPath = dbPath;
    request.options.timeZone = "UTC";           // the demo writes its naive timestamps in UTC
    request.quiet = spec.scenario == "default"; // a long scenario shows its files as they are imported
    ImportRequest trainerLog = request;
    for (const std::string& f : *files)
        (std::filesystem::path(f).filename() == kDemoTrainerLogName ? trainerLog : request).paths.push_back(f);
    trainerLog.options.extra["start"] = demoTrainerLogStart(spec);
    for (const ImportRequest* r : {&request, &trainerLog})
        if (!r->paths.empty())
            if (int rc = importPaths(*r); rc != kExitOk) return rc;
    // The model, so that the MFU is known (the trainer log gives the tokens per second).
    if (Status kept = keepDemoModel(dbPath, spec); !kept) {
        printError(kept.error().toString());
        return kExitFailure;
    }
    if (showRun && !parser.isSet(noGui)) {
        fmt::print("Opening {} in the window (runlens demo --no-gui prints its summary instead)\n", dbPath);
        std::fflush(stdout);
        return showRun(dbPath);
    }
    fmt::print("\n");
    if (int rc = cmdInfo({QStringLiteral("info"), QString::fromStdString(dbPath)}); rc != kExitOk) return rc;
    // Headless, the demo ends in its report: the findings printed and kept, and the PDF beside the run.
    fmt::print("\n");
    std::fflush(stdout);
    if (int rc = cmdAnalyze({QStringLiteral("analyze"), QStringLiteral("--store"), QString::fromStdString(dbPath)});
        rc != kExitOk)
        return rc; // the demo's own run: its findings are kept in it
    const std::string pdf = (std::filesystem::path(dir) / "report.pdf").string();
    if (qobject_cast<QApplication*>(QCoreApplication::instance())) {
        std::fflush(stdout);
        if (int rc = cmdReport({QStringLiteral("report"), QString::fromStdString(dbPath), QStringLiteral("-o"),
                                QString::fromStdString(pdf)});
            rc != kExitOk)
            return rc;
        fmt::print("\nThe report: {}\n", pdf);
    }
    fmt::print("\nNext, for example:\n"
               "  runlens report {0} --format png -o pages   (the report as PNG pages)\n"
               "  runlens query {0} \"SELECT node, device, mean_value FROM series_summary WHERE metric = "
               "'gpu.util'\"\n"
               "  runlens flame {0} --thread pt_autograd -o autograd.svg\n"
               "  runlens flame {0} --from +10m --to +11m --phase comm -o - | sort -k2 -n | tail\n"
               "  runlens query {0} \"SELECT thread, samples, first_ns, last_ns FROM stack_summary\"\n"
               "  runlens query {0} \"SELECT ts_ns, value FROM series_points WHERE metric = 'train.loss' LIMIT 5\"\n"
               "  runlens query {0} \"SELECT node, device, labels, metric, round(mean_value, 3) AS mean FROM "
               "series_summary WHERE metric LIKE '%_busy' ORDER BY node, labels\"\n",
               dbPath);
    return kExitOk;
}

} // namespace runlens::app
