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

void addDemoOptions(QCommandLineParser& parser)
{
    parser.addOption(
        {QStringLiteral("scenario"),
         QStringLiteral("The run to write: default (2 nodes × 8 GPUs, 30 min, 10.6 s steps), zero3 (the reference "
                        "case: DeepSpeed ZeRO-3 on 4 nodes × 8 GPUs for 28 h at 50 s a step, GPU utilization 99 % but "
                        "SM activity 0.21, 6 GB/s per 200 Gb/s InfiniBand port, a checkpoint every 2 h; about 3 GB of "
                        "inputs, a few minutes) or zero3-tuned (the same after tuning ZeRO-3: 40 s a step, SM "
                        "activity 0.28, 7.5 GiB/s per port). --nodes, --gpus, --hours and --stack-rate change a "
                        "scenario."),
         QStringLiteral("NAME"), QStringLiteral("default")});
    parser.addOption({QStringLiteral("nodes"), QStringLiteral("Nodes (default 2; zero3: 4)."), QStringLiteral("N")});
    parser.addOption({QStringLiteral("gpus"), QStringLiteral("GPUs per node (default 8)."), QStringLiteral("G")});
    parser.addOption({QStringLiteral("hours"),
                      QStringLiteral("Length of the run (default 0.5; zero3: 28, zero3-tuned: 22.4)."),
                      QStringLiteral("H")});
    parser.addOption({QStringLiteral("seed"), QStringLiteral("Random seed (default 42)."), QStringLiteral("SEED"),
                      QStringLiteral("42")});
    parser.addOption({QStringLiteral("stack-rate"),
                      QStringLiteral("Stack samples per second and thread, as py-spy --rate "
                                     "(default 10; zero3: 1)."),
                      QStringLiteral("HZ")});
    parser.addOption({{QStringLiteral("o"), QStringLiteral("output")},
                      QStringLiteral("Folder to write the run into (default: runlens-demo in the "
                                     "temporary folder). Its demo.runlens is replaced."),
                      QStringLiteral("DIR")});
    parser.addOption(
        {QStringLiteral("no-gui"), QStringLiteral("Print the summary instead of opening the window (the default "
                                                  "when there is no display).")});
}

// The scenario with the command line's changes, each checked.
Expected<DemoSpec> readDemoSpec(const QCommandLineParser& parser)
{
    const auto value = [&](const char* name) { return parser.value(QString::fromLatin1(name)); };
    const auto isSet = [&](const char* name) { return parser.isSet(QString::fromLatin1(name)); };
    RUNLENS_ASSIGN_OR_RETURN(DemoSpec spec, demoScenario(value("scenario").toStdString()));
    bool okNodes = true, okGpus = true, okHours = true, okSeed = false, okRate = true;
    if (isSet("nodes")) spec.nodes = value("nodes").toInt(&okNodes);
    if (isSet("gpus")) spec.gpusPerNode = value("gpus").toInt(&okGpus);
    if (isSet("hours")) spec.hours = value("hours").toDouble(&okHours);
    spec.seed = value("seed").toULongLong(&okSeed);
    if (isSet("stack-rate")) spec.stackRateHz = value("stack-rate").toInt(&okRate);
    if (!okNodes || !okGpus || !okHours || !okSeed || spec.nodes < 1 || spec.gpusPerNode < 1 || spec.hours <= 0 ||
        spec.nodes > 1024 || spec.gpusPerNode > 64 || spec.hours > 24 * 30)
        return makeError(ErrorCode::Usage,
                         "--nodes, --gpus and --hours need positive numbers (at most 1024 nodes, 64 GPUs, 720 hours)");
    if (!okRate || spec.stackRateHz < 1 || spec.stackRateHz > 1000)
        return makeError(ErrorCode::Usage, "--stack-rate needs a number of samples per second from 1 to 1000");
    return spec;
}

// Writes the demo's input files into dir/inputs and imports them into dbPath (replacing both), then keeps the
// model it trains so that the MFU is known (the trainer log gives the tokens per second). Returns the exit code.
int writeAndImport(const DemoSpec& spec, const std::string& dir, const std::string& dbPath)
{
    const std::string inputs = (std::filesystem::path(dir) / "inputs").string();
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
    if (Status kept = keepDemoModel(dbPath, spec); !kept) {
        printError(kept.error().toString());
        return kExitFailure;
    }
    return kExitOk;
}

// Headless, the demo ends in its report: what the run holds, the findings printed and kept, and the PDF beside
// the run (when the GUI libraries are loaded).
int summarize(const std::string& dir, const std::string& dbPath)
{
    fmt::print("\n");
    if (int rc = cmdInfo({QStringLiteral("info"), QString::fromStdString(dbPath)}); rc != kExitOk) return rc;
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

} // namespace

int cmdDemo(const QStringList& args, const ShowRun& showRun)
{
    QCommandLineParser parser;
    addDemoOptions(parser);
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
    auto spec = readDemoSpec(parser);
    if (!spec) return exitFor(spec.error());
    const std::string dir = parser.isSet(QStringLiteral("output"))
                                ? parser.value(QStringLiteral("output")).toStdString()
                                : QDir::temp().filePath(QStringLiteral("runlens-demo")).toStdString();
    const std::string dbPath = (std::filesystem::path(dir) / "demo.runlens").string();
    if (int rc = writeAndImport(*spec, dir, dbPath); rc != kExitOk) return rc;
    if (showRun && !parser.isSet(QStringLiteral("no-gui"))) {
        fmt::print("Opening {} in the window (runlens demo --no-gui prints its summary instead)\n", dbPath);
        std::fflush(stdout);
        return showRun(dbPath);
    }
    return summarize(dir, dbPath);
}

} // namespace runlens::app
