#include "tests/bench/scale_bench.h"

#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/stack_reader.h"
#include "app/demo/demo_run.h"
#include "app/demo/demo_stacks.h"
#include "tests/bench/flame_widget_bench.h"
#include "tests/bench/format_bench.h"
#include "tests/bench/process_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <optional>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace runlens::bench {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The targets of the scale mode (the performance issue's, for 128 nodes × 8 GPUs × 24 h).
constexpr double kImportRatioTarget = 3;     // × sqlite3 .import of the same rows
constexpr double kAnalyzeTargetS = 60;       // runlens analyze
constexpr double kAnalyzeRssTargetMb = 2048; // its peak RSS
constexpr double kReportTargetS = 90;        // runlens report
constexpr double kOpenTargetMs = 2000;       // the window's first full-range timeline
constexpr double kWorstStepTargetMs = 100;   // zoom/pan
constexpr double kMedianStepTargetMs = 30;   // zoom/pan
constexpr double kGuiEventTargetMs = 16;     // any GUI-thread event during the steps
constexpr double kFlameWindowTargetMs = 250; // the flame graph of a 1 h window
constexpr int64_t kFlameWindowNs = 3'600'000'000'000;
constexpr int kFlameWindows = 5;

// One node's inputs: the metric files and the stack files for runlens import, the baseline CSV files with the
// table each goes to for sqlite3 .import.
struct NodeInputs
{
    std::vector<std::string> metrics, stacks;
    std::vector<std::pair<std::string, const char*>> baseline;
    int64_t rows = 0, samples = 0, stackSamples = 0;
    int64_t scrapedSamples = 0; // of samples, node_exporter's
};

// The samples of a Prometheus text file as CSV rows (name, labels, value, timestamp) for the baseline; returns the
// rows written, -1 when a file cannot be read or written.
int64_t prometheusAsCsv(const std::string& prom, const std::string& csvPath)
{
    std::ifstream in(prom);
    std::FILE* csv = std::fopen(csvPath.c_str(), "wb");
    if (!in || !csv) {
        if (csv) std::fclose(csv);
        return -1;
    }
    std::string out = "name,labels,value,ts_ms\n", line;
    int64_t rows = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        const size_t open = line.find('{'), close = line.rfind('}');
        if (open == std::string::npos || close == std::string::npos || close < open) continue;
        const size_t gap = line.find(' ', close + 2);
        std::string labels = line.substr(open + 1, close - open - 1);
        for (size_t q = labels.find('"'); q != std::string::npos; q = labels.find('"', q + 2))
            labels.insert(q, 1, '"');
        fmt::format_to(std::back_inserter(out), "{},\"{}\",{},{}\n", std::string_view(line).substr(0, open), labels,
                       std::string_view(line).substr(close + 2, gap - close - 2),
                       gap == std::string::npos ? std::string_view() : std::string_view(line).substr(gap + 1));
        ++rows;
        if (out.size() > (1u << 20)) {
            std::fwrite(out.data(), 1, out.size(), csv);
            out.clear();
        }
    }
    std::fwrite(out.data(), 1, out.size(), csv);
    return std::fclose(csv) == 0 ? rows : -1;
}

// Writes node n's inputs under dir/node<n> (the folder names the node) and their baseline under dir/baseline.
Expected<NodeInputs> writeNodeInputs(const app::DemoSpec& spec, int n, const fs::path& dir)
{
    const fs::path nodeDir = dir / fmt::format("node{}", n), baseDir = dir / "baseline";
    fs::create_directories(nodeDir);
    fs::create_directories(baseDir);
    NodeInputs in;
    const std::string nvsmi = (nodeDir / "nvidia-smi-query.csv").string();
    RUNLENS_TRY(app::writeDemoFile(
        nvsmi,
        [&](std::FILE* f) -> Expected<int64_t> {
            RUNLENS_ASSIGN_OR_RETURN(const int64_t rows, app::writeDemoNvsmiCsv(spec, n, f));
            in.rows += rows;
            in.samples += rows * kNvsmiSamplesPerRow;
            return rows;
        },
        in.metrics));
    in.baseline.emplace_back(nvsmi, "nvsmi"); // CSV already: its own baseline

    const std::string dmon = (nodeDir / "nvidia-smi-dmon.txt").string(), dmonCsv = (baseDir / "dmon.csv").string();
    const int64_t dmonRows = writeDmonNode(dmon, dmonCsv, n, spec.gpusPerNode, static_cast<int64_t>(spec.hours * 3600));
    in.metrics.push_back(dmon);
    in.baseline.emplace_back(dmonCsv, "dmon");
    in.rows += dmonRows;
    in.samples += dmonRows * kDmonSamplesPerRow;

    const std::string prom = (nodeDir / "node-exporter.prom").string(),
                      promCsv = (baseDir / "node-exporter.csv").string();
    RUNLENS_TRY(app::writeDemoFile(
        prom, [&](std::FILE* f) { return app::writeDemoNodeExporter(spec, n, f); }, in.metrics));
    const int64_t promRows = prometheusAsCsv(prom, promCsv);
    if (promRows < 0) return makeError(ErrorCode::Io, fmt::format("cannot write {}", promCsv));
    in.baseline.emplace_back(promCsv, "node_exporter");
    in.rows += promRows;
    in.samples += promRows;
    in.scrapedSamples = promRows;

    for (int g = 0; g < spec.gpusPerNode; ++g) {
        const int rank = n * spec.gpusPerNode + g;
        RUNLENS_TRY(app::writeDemoFile((nodeDir / fmt::format("stacks-rank{}.speedscope.json", rank)).string(),
                                       [&](std::FILE* f) -> Expected<int64_t> {
                                           RUNLENS_ASSIGN_OR_RETURN(const int64_t samples,
                                                                    app::writeDemoSpeedscope(spec, rank, f));
                                           in.stackSamples += samples;
                                           return samples;
                                       },
                                       in.stacks));
    }
    return in;
}

// A sqlite3 script importing the node's baseline CSV files, each into a table made from its header.
void writeBaselineScript(const std::string& script, const NodeInputs& in)
{
    std::FILE* s = std::fopen(script.c_str(), "w");
    if (!s) return;
    fmt::print(s, ".mode csv\n");
    for (const auto& [file, table] : in.baseline)
        fmt::print(s, ".import '{}' {}\n", file, table);
    std::fclose(s);
}

struct ImportTotals
{
    int64_t rows = 0, samples = 0, stackSamples = 0, scrapedSamples = 0;
    int64_t inputBytes = 0; // the largest node's
    double generateS = 0, metricsS = 0, stacksS = 0, baseS = 0;
    double peakRssMb = 0, baseRssMb = 0;
    int64_t baseBytes = 0; // the baseline databases' sizes added
};

int64_t folderBytes(const fs::path& dir)
{
    int64_t bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) bytes += static_cast<int64_t>(e.file_size());
    return bytes;
}

// Imports one node's inputs (metrics and stacks in their own runlens import) and its baseline; false when a child
// failed (the message is printed).
bool importNode(const NodeInputs& in, const std::string& run, const std::string& base, const std::string& script,
                ImportTotals& totals)
{
    const auto importFiles = [&](const std::vector<std::string>& files, const char* what, double& seconds) {
        std::vector<std::string> args{RUNLENS_BINARY, "import", "--tz", "UTC", "-o", run};
        args.insert(args.end(), files.begin(), files.end());
        const ProcessRun r = runProcess(args);
        if (r.exitCode != 0) {
            fmt::print("runlens import of the {} failed (exit {}): runlens import --tz UTC -o {} {} …\n", what,
                       r.exitCode, run, files.front());
            return false;
        }
        seconds += r.seconds;
        totals.peakRssMb = std::max(totals.peakRssMb, r.peakRssMb);
        return true;
    };
    if (!importFiles(in.metrics, "metrics", totals.metricsS) || !importFiles(in.stacks, "stacks", totals.stacksS))
        return false;
    const ProcessRun b = runProcess({"sqlite3", base}, script);
    if (b.exitCode != 0) {
        fmt::print("sqlite3 .import of the baseline failed (exit {})\n", b.exitCode);
        return false;
    }
    totals.baseS += b.seconds;
    totals.baseRssMb = std::max(totals.baseRssMb, b.peakRssMb);
    totals.baseBytes += static_cast<int64_t>(fs::file_size(base));
    fs::remove(base); // a table without an index appends at the same pace whatever it holds
    return true;
}

// Every node written, imported and deleted in turn, with a progress line every few nodes. Each node's baseline goes
// into a database of its own, deleted after it (the whole run's would not fit beside the inputs at full size).
std::optional<ImportTotals> importAll(const app::DemoSpec& spec, const fs::path& dir, const std::string& run,
                                      const std::string& base)
{
    ImportTotals totals;
    const auto t0 = Clock::now();
    const int every = std::max(1, spec.nodes / 16);
    for (int n = 0; n < spec.nodes; ++n) {
        const fs::path inputs = dir / "inputs";
        const auto g0 = Clock::now();
        auto in = writeNodeInputs(spec, n, inputs);
        if (!in) {
            fmt::print("writing node{}'s inputs failed: {}\n", n, in.error().toString());
            return std::nullopt;
        }
        totals.inputBytes = std::max(totals.inputBytes, folderBytes(inputs));
        const std::string script = (dir / "baseline.sql").string();
        writeBaselineScript(script, *in);
        ::sync(); // the inputs written back to disk before anything is timed
        totals.generateS += secondsSince(g0);
        if (!importNode(*in, run, base, script, totals)) return std::nullopt;
        totals.rows += in->rows;
        totals.samples += in->samples;
        totals.stackSamples += in->stackSamples;
        totals.scrapedSamples += in->scrapedSamples;
        fs::remove_all(inputs);
        if ((n + 1) % every == 0 || n + 1 == spec.nodes) {
            const double elapsed = secondsSince(t0);
            fmt::print("  {}/{} nodes imported, {:.0f} s elapsed, about {:.0f} s to go\n", n + 1, spec.nodes, elapsed,
                       elapsed / (n + 1) * (spec.nodes - n - 1));
            std::fflush(stdout);
        }
    }
    return totals;
}

// The work must have been done: every nvidia-smi value and stack sample stored in the run, and the scrapes' series
// (counters become rates and CPU modes a utilization, so not one point per sample line). Prints what differs.
bool storedAll(const std::string& run, const ImportTotals& im)
{
    auto opened = store::RunDatabase::open(run, store::OpenMode::ReadOnly);
    if (!opened) {
        fmt::print("{}\n", opened.error().toString());
        return false;
    }
    int64_t points = 0, samples = 0;
    store::RunReader reader(**opened);
    store::StackReader stacks(**opened);
    auto series = reader.series();
    auto threads = stacks.threads();
    if (!series || !threads) {
        fmt::print("{}\n", (series ? threads.error() : series.error()).toString());
        return false;
    }
    int64_t scraped = 0;
    for (const store::SeriesInfo& s : *series)
        (s.source == "prometheus-text" ? scraped : points) += s.points;
    for (const store::StackThreadInfo& t : *threads)
        samples += t.timedSamples;
    if (points == im.samples - im.scrapedSamples && scraped > 0 && samples == im.stackSamples) return true;
    fmt::print("the run holds {} nvidia-smi points, {} from the scrapes and {} stack samples; {}, some and {} were "
               "written\n",
               points, scraped, samples, im.samples - im.scrapedSamples, im.stackSamples);
    return false;
}

// The rows of the table and the targets not met.
class Table
{
public:
    void header()
    {
        fmt::print("\n| {:<56} | {:>12} | {:>12} | {:>8} | {:<14} |\n", "measure", "RunLens", "sqlite3", "ratio",
                   "target");
        fmt::print("|{:-<58}|{:-<14}|{:-<14}|{:-<10}|{:-<16}|\n", "", "", "", "", "");
    }
    void row(const std::string& what, const std::string& ours, const std::string& theirs = {},
             const std::string& ratio = {}, const std::string& target = {})
    {
        fmt::print("| {:<56} | {:>12} | {:>12} | {:>8} | {:<14} |\n", what, ours, theirs, ratio, target);
        std::fflush(stdout); // rows come minutes apart at full size
    }
    // A row with a ceiling: the ratio is target ÷ RunLens (> 1 is better).
    void atMost(const std::string& what, double value, double target, const char* unit, int decimals)
    {
        row(what, fmt::format("{:.{}f}", value, decimals), {}, fmt::format("{:.2f}×", target / value),
            fmt::format("≤ {:.0f} {}", target, unit));
        if (value > target) missed.push_back(what);
    }
    std::vector<std::string> missed;
};

void printImportRows(Table& t, const ImportTotals& im, double runBytes)
{
    const double oursRowsPerS = static_cast<double>(im.rows) / im.metricsS;
    const double baseRowsPerS = static_cast<double>(im.rows) / im.baseS;
    const double r = oursRowsPerS / baseRowsPerS;
    t.row("metrics import rows/s", fmt::format("{:.0f}", oursRowsPerS), fmt::format("{:.0f}", baseRowsPerS),
          fmt::format("{:.2f}×", r), fmt::format("≥ {:.0f}× sqlite3", kImportRatioTarget));
    if (r < kImportRatioTarget) t.missed.push_back("metrics import against sqlite3");
    t.row("metrics import samples/s", fmt::format("{:.0f}", static_cast<double>(im.samples) / im.metricsS),
          fmt::format("{:.0f}", static_cast<double>(im.samples) / im.baseS));
    t.row("metrics import wall time, all nodes (s)", fmt::format("{:.1f}", im.metricsS),
          fmt::format("{:.1f}", im.baseS), fmt::format("{:.2f}×", im.baseS / im.metricsS));
    t.row("stacks import samples/s", fmt::format("{:.0f}", static_cast<double>(im.stackSamples) / im.stacksS));
    t.row("stacks import wall time, all nodes (s)", fmt::format("{:.1f}", im.stacksS));
    t.row("peak RSS of the imports, max over children (MB)", fmt::format("{:.0f}", im.peakRssMb),
          fmt::format("{:.0f}", im.baseRssMb));
    t.row("database size (MB; sqlite3: per-node files added)", fmt::format("{:.1f}", runBytes / 1e6),
          fmt::format("{:.1f}", static_cast<double>(im.baseBytes) / 1e6));
    t.row("bytes per sample (RunLens: metrics and stacks)",
          fmt::format("{:.2f}", runBytes / static_cast<double>(im.samples + im.stackSamples)),
          fmt::format("{:.2f}", static_cast<double>(im.baseBytes) / static_cast<double>(im.samples)));
}

// runlens analyze and report on the run, as children so their peak RSS is their own.
bool benchAnalysis(Table& t, const std::string& run, const fs::path& dir)
{
    const ProcessRun analyze = runProcess({RUNLENS_BINARY, "analyze", run});
    if (analyze.exitCode != 0) {
        fmt::print("runlens analyze {} failed (exit {})\n", run, analyze.exitCode);
        return false;
    }
    const ProcessRun report = runProcess({RUNLENS_BINARY, "report", run, "-o", (dir / "scale-report.pdf").string()});
    if (report.exitCode != 0) {
        fmt::print("runlens report {} failed (exit {})\n", run, report.exitCode);
        return false;
    }
    t.atMost("runlens analyze wall time (s)", analyze.seconds, kAnalyzeTargetS, "s", 1);
    t.atMost("peak RSS of runlens analyze (MB)", analyze.peakRssMb, kAnalyzeRssTargetMb, "MB", 0);
    t.atMost("runlens report wall time (s)", report.seconds, kReportTargetS, "s", 1);
    t.row("peak RSS of runlens report (MB)", fmt::format("{:.0f}", report.peakRssMb));
    return true;
}

// The timeline walk and the flame graph of 1 h windows, in this process as the window shows them.
bool benchViews(Table& t, TimedApplication& app, const std::string& run, const app::DemoSpec& spec, bool quick)
{
    const std::optional<TimelineFigures> tl = measureTimelineWidget(app, run, quick);
    if (!tl) return false;
    const int64_t firstNs = spec.startUnixS * 1'000'000'000;
    const auto lastNs = firstNs + static_cast<int64_t>(spec.hours * 3600e9);
    const std::optional<FlameWindowFigures> fl =
        measureFlameWindows(run, firstNs, lastNs, kFlameWindowNs, quick ? 2 : kFlameWindows);
    if (!fl) return false;
    t.atMost(fmt::format("timeline: open + first full-range frame, {} lanes (ms)", tl->lanes), tl->openMs,
             kOpenTargetMs, "ms", 0);
    t.atMost(fmt::format("timeline: zoom/pan step, worst of {} (ms)", tl->steps), tl->worstStepMs, kWorstStepTargetMs,
             "ms", 1);
    t.atMost("timeline: zoom/pan step, median (ms)", tl->medianStepMs, kMedianStepTargetMs, "ms", 1);
    t.atMost(fmt::format("timeline: longest GUI-thread event ({} over 16 ms)", tl->slowEvents), tl->longestEventMs,
             kGuiEventTargetMs, "ms", 1);
    t.atMost(fmt::format("flame graph of a 1 h window, worst of {} (ms)", fl->windows), fl->worstMs,
             kFlameWindowTargetMs, "ms", 0);
    t.row("  the first (the run opened with it), median (ms)",
          fmt::format("{:.0f}, {:.0f}", fl->firstMs, fl->medianMs));
    t.row("  samples, tree nodes of the first window", fmt::format("{}, {}", fl->samples, fl->nodes));
    return true;
}

} // namespace

bool benchScale(TimedApplication& app, const std::string& dirName, const ScaleSize& size, bool quick)
{
    auto scenario = app::demoScenario("zero3");
    if (!scenario) return false;
    app::DemoSpec spec = *scenario;
    spec.nodes = size.nodes;
    spec.gpusPerNode = size.gpusPerNode;
    spec.hours = size.hours;
    spec.stackRateHz = 10;
    spec.autogradThreads = 0; // MainThread only: one thread per rank
    const fs::path dir = fs::path(dirName) / "scale";
    fs::create_directories(dir);
    const std::string run = (dir / "scale.runlens").string(), base = (dir / "baseline.sqlite").string();

    fmt::print("\nScale: {} nodes × {} GPUs × {} h: nvidia-smi CSV and dmon GPM at 1 s, node_exporter at 5 s, py-spy "
               "stacks at 10 Hz on 1 thread per rank ({} ranks), written and imported one node at a time\n",
               spec.nodes, spec.gpusPerNode, spec.hours, spec.nodes * spec.gpusPerNode);
    const auto t0 = Clock::now();
    const std::optional<ImportTotals> im = importAll(spec, dir, run, base);
    if (!im || !storedAll(run, *im)) return false;
    Table t;
    fmt::print("\nScale run {} nodes × {} GPUs × {} h: {} metric rows ({} samples), {} stack samples; inputs written "
               "in {:.0f} s (at most {:.0f} MB on disk at once)\n",
               spec.nodes, spec.gpusPerNode, spec.hours, im->rows, im->samples, im->stackSamples, im->generateS,
               static_cast<double>(im->inputBytes) / 1e6);
    t.header();
    printImportRows(t, *im, static_cast<double>(fs::file_size(run)));
    if (!benchAnalysis(t, run, dir) || !benchViews(t, app, run, spec, quick)) return false;
    fmt::print("\nsums over the nodes' imports; ratio: RunLens relative to sqlite3 (rows/s: ours ÷ theirs; time: "
               "theirs ÷ ours) or target ÷ RunLens, > 1 is better. The whole mode took {:.0f} s.\n",
               secondsSince(t0));
    if (quick)
        fmt::print("quick mode: {} nodes × {} GPUs × {} h, too small for rates; the targets apply to 128 × 8 × 24 h "
                   "(runlens_bench --scale)\n",
                   spec.nodes, spec.gpusPerNode, spec.hours);
    else if (t.missed.empty())
        fmt::print("targets met\n");
    else
        fmt::print("targets NOT met: {}\n", fmt::join(t.missed, "; "));
    return true;
}

} // namespace runlens::bench
