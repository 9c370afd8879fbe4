#include "tests/bench/rules_bench.h"

#include "tests/bench/process_run.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <vector>

namespace fs = std::filesystem;

namespace runlens::bench {

bool benchRules(const std::string& dir, bool quick)
{
    const std::string hours = quick ? "1" : "28";
    const std::string out = (fs::path(dir) / "zero3").string();
    fmt::print("\nDiagnosis rules: runlens demo --scenario zero3 (4 nodes × 8 GPUs, {} h at 1 s, stacks at 1 Hz)\n",
               hours);
    const ProcessRun demo =
        runProcess({RUNLENS_BINARY, "demo", "--scenario", "zero3", "--hours", hours, "--no-gui", "-o", out});
    if (demo.exitCode != 0) {
        fmt::print(stderr, "runlens demo failed (exit {})\n", demo.exitCode);
        return false;
    }
    const std::string db = (fs::path(out) / "demo.runlens").string();
    fmt::print(
        "written, imported, analysed and its report drawn (the headless demo) in {:.1f} s ({:.0f} MB run database)\n",
        demo.seconds, static_cast<double>(fs::file_size(db)) / 1e6);
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
               1000.0 / median.peakRssMb, "< 1000 MB");
    fmt::print("median of {} run{}; ratio: target ÷ RunLens, > 1 is better{}\n", runs.size(),
               runs.size() == 1 ? "" : "s",
               quick ? "; quick mode: 1 h of the run, the targets apply to the full 28 h (runlens_bench --rules)" : "");
    if (!quick) fmt::print("targets {}\n", median.seconds <= 10 && median.peakRssMb < 1000 ? "met" : "NOT met");

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
    return true;
}

} // namespace runlens::bench
