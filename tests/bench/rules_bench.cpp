#include "tests/bench/rules_bench.h"

#include "tests/bench/process_run.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <vector>

namespace fs = std::filesystem;

namespace runlens::bench {

namespace {

// Peak RSS targets of runlens analyze on the zero3 run: memory about flat in the run's hours.
constexpr double kAnalyzeRssTargetMb = 400;    // at 28 h
constexpr double kAnalyzeRssTargetMb56h = 450; // at 56 h

// The zero3 demo written and imported into dir/name; the run database's path, empty on failure.
std::string writeZero3(const std::string& dir, const std::string& name, const std::string& hours)
{
    const std::string out = (fs::path(dir) / name).string();
    const ProcessRun demo =
        runProcess({RUNLENS_BINARY, "demo", "--scenario", "zero3", "--hours", hours, "--no-gui", "-o", out});
    if (demo.exitCode != 0) {
        fmt::print(stderr, "runlens demo failed (exit {})\n", demo.exitCode);
        return {};
    }
    const std::string db = (fs::path(out) / "demo.runlens").string();
    fmt::print(
        "written, imported, analysed and its report drawn (the headless demo) in {:.1f} s ({:.0f} MB run database)\n",
        demo.seconds, static_cast<double>(fs::file_size(db)) / 1e6);
    return db;
}

// analyze on the same run twice as long (56 h): its peak RSS against 28 h's, to show memory does not follow hours.
bool benchAnalyzeAt56h(const std::string& dir, double rss28Mb)
{
    fmt::print("\nThe same at 56 h (runlens demo --scenario zero3 --hours 56)\n");
    const std::string db = writeZero3(dir, "zero3-56h", "56");
    if (db.empty()) return false;
    const ProcessRun run = runProcess({RUNLENS_BINARY, "analyze", db});
    if (run.exitCode != 0) {
        fmt::print(stderr, "runlens analyze failed (exit {})\n", run.exitCode);
        return false;
    }
    fmt::print("\n| {:<44} | {:>10} | {:>8} | {:<10} |\n", "measure", "RunLens", "ratio", "target");
    fmt::print("|{:-<46}|{:-<12}|{:-<10}|{:-<12}|\n", "", "", "", "");
    fmt::print("| {:<44} | {:>10.2f} | {:>8} | {:<10} |\n", "runlens analyze wall time at 56 h (s)", run.seconds, "",
               "");
    fmt::print("| {:<44} | {:>10.0f} | {:>7.2f}× | {:<10} |\n", "peak RSS of runlens analyze at 56 h (MB)",
               run.peakRssMb, kAnalyzeRssTargetMb56h / run.peakRssMb, "≤ 450 MB");
    fmt::print("| {:<44} | {:>10.2f} | {:>8} | {:<10} |\n", "peak RSS 56 h ÷ 28 h", run.peakRssMb / rss28Mb, "",
               "≈ 1 (flat)");
    fmt::print("target {}\n", run.peakRssMb <= kAnalyzeRssTargetMb56h ? "met" : "NOT met");
    std::error_code ignored;
    fs::remove_all(fs::path(db).parent_path(), ignored); // 6 GB of inputs
    return true;
}

} // namespace

bool benchRules(const std::string& dir, bool quick)
{
    const std::string hours = quick ? "1" : "28";
    fmt::print("\nDiagnosis rules: runlens demo --scenario zero3 (4 nodes × 8 GPUs, {} h at 1 s, stacks at 1 Hz)\n",
               hours);
    const std::string db = writeZero3(dir, "zero3", hours);
    if (db.empty()) return false;
    std::vector<ProcessRun> runs;
    for (int i = 0; i < (quick ? 1 : 3); ++i) {
        runs.push_back(runProcess({RUNLENS_BINARY, "analyze", db}));
        if (runs.back().exitCode != 0) {
            fmt::print(stderr, "runlens analyze failed (exit {})\n", runs.back().exitCode);
            return false;
        }
    }
    std::sort(runs.begin(), runs.end(), [](const ProcessRun& a, const ProcessRun& b) { return a.seconds < b.seconds; });
    const ProcessRun& median = runs[runs.size() / 2];
    fmt::print("\n| {:<44} | {:>10} | {:>8} | {:<10} |\n", "measure", "RunLens", "ratio", "target");
    fmt::print("|{:-<46}|{:-<12}|{:-<10}|{:-<12}|\n", "", "", "", "");
    fmt::print("| {:<44} | {:>10.2f} | {:>7.2f}× | {:<10} |\n", "all rules, runlens analyze wall time (s)",
               median.seconds, 10.0 / median.seconds, "≤ 10 s");
    fmt::print("| {:<44} | {:>10.0f} | {:>7.2f}× | {:<10} |\n", "peak RSS of runlens analyze (MB)", median.peakRssMb,
               kAnalyzeRssTargetMb / median.peakRssMb, "≤ 400 MB");
    fmt::print("median of {} run{}; ratio: target ÷ RunLens, > 1 is better{}\n", runs.size(),
               runs.size() == 1 ? "" : "s",
               quick ? "; quick mode: 1 h of the run, the targets apply to the full 28 h (runlens_bench --rules)" : "");
    if (!quick)
        fmt::print("targets {}\n", median.seconds <= 10 && median.peakRssMb <= kAnalyzeRssTargetMb ? "met" : "NOT met");

    // The full report of the same run: analysed for it (--analyze, even though the demo kept its findings;
    // nothing stored: every round does the whole job), key metrics, figures, drawn into a PDF.
    fmt::print("\nReport: runlens report --analyze on the same run (analysis, figures, PDF)\n");
    std::vector<ProcessRun> reports;
    const std::string pdf = (fs::path(dir) / "report.pdf").string();
    for (int i = 0; i < (quick ? 1 : 3); ++i) {
        reports.push_back(runProcess({RUNLENS_BINARY, "report", "--analyze", db, "-o", pdf}));
        if (reports.back().exitCode != 0) {
            fmt::print(stderr, "runlens report failed (exit {})\n", reports.back().exitCode);
            return false;
        }
    }
    std::sort(reports.begin(), reports.end(),
              [](const ProcessRun& a, const ProcessRun& b) { return a.seconds < b.seconds; });
    const ProcessRun& mid = reports[reports.size() / 2];
    fmt::print("\n| {:<44} | {:>10} | {:>8} | {:<10} |\n", "measure", "RunLens", "ratio", "target");
    fmt::print("|{:-<46}|{:-<12}|{:-<10}|{:-<12}|\n", "", "", "", "");
    fmt::print("| {:<44} | {:>10.2f} | {:>7.2f}× | {:<10} |\n", "full report, runlens report wall time (s)",
               mid.seconds, 15.0 / mid.seconds, "≤ 15 s");
    fmt::print("| {:<44} | {:>10.0f} | {:>8} | {:<10} |\n", "peak RSS of runlens report (MB)", mid.peakRssMb, "", "");
    fmt::print("| {:<44} | {:>10.2f} | {:>8} | {:<10} |\n", "PDF size (MB)",
               static_cast<double>(fs::file_size(pdf)) / 1e6, "", "");
    fmt::print("median of {} run{}; ratio: target ÷ RunLens, > 1 is better{}\n", reports.size(),
               reports.size() == 1 ? "" : "s",
               quick ? "; quick mode: 1 h of the run, the target applies to the full 28 h (runlens_bench --rules)"
                     : "");
    if (!quick) fmt::print("target {}\n", mid.seconds <= 15 ? "met" : "NOT met");
    return quick || benchAnalyzeAt56h(dir, median.peakRssMb);
}

} // namespace runlens::bench
