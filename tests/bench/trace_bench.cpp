#include "tests/bench/trace_bench.h"

#include "analysis/store/run_database.h"
#include "analysis/store/sqlite_util.h"
#include "app/demo/demo_trace.h"
#include "tests/bench/process_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace runlens::bench {
namespace {

constexpr double kTargetMbPerS = 100.0;

// Writes a trace of `steps` steps; returns the events written (0 on failure).
int64_t writeTrace(const std::string& path, int steps)
{
    app::DemoSpec spec;
    spec.nodes = 1;
    spec.gpusPerNode = 8;
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (!out) return 0;
    auto events = app::writeDemoKinetoTrace(spec, 0, 1, steps, spec.startUnixS * 1'000'000'000 + 120'000'000'000, out);
    const bool closed = std::fclose(out) == 0;
    return events && closed ? *events : 0;
}

// The one number a query returns (-1 when it cannot be read).
int64_t countOf(const std::string& db, const char* sql)
{
    auto opened = store::RunDatabase::open(db, store::OpenMode::ReadOnly);
    if (!opened) return -1;
    auto st = store::Statement::prepare((*opened)->handle(), sql);
    if (!st) return -1;
    auto row = st->step();
    return row && *row ? st->int64(0) : -1;
}

} // namespace

double benchTraceImport(const std::string& dirName, bool quick)
{
    const fs::path dir = fs::path(dirName) / "trace";
    fs::create_directories(dir);
    const std::string path = (dir / "kineto-rank0.json").string();
    // Steps enough for the size wanted, from the size of two.
    if (writeTrace(path, 2) == 0) return 0;
    const double perStep = static_cast<double>(fs::file_size(path)) / 2.0;
    const double wantBytes = quick ? 4e6 : 210e6;
    const int steps = std::max(2, static_cast<int>(wantBytes / perStep) + 1);
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t events = writeTrace(path, steps);
    if (events == 0) return 0;
    ::sync();
    const double mb = static_cast<double>(fs::file_size(path)) / 1e6;
    fmt::print("\nTrace import: one Kineto trace, {} profiled steps, {:.1f} MB, {} events (generated in {:.1f} s)\n\n",
               steps, mb, events, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

    const std::string db = (dir / "trace.runlens").string();
    const int runs = quick ? 1 : 3;
    std::vector<ProcessRun> all;
    for (int i = 0; i < runs; ++i) {
        std::error_code ec;
        fs::remove(db, ec);
        all.push_back(runProcess({RUNLENS_BINARY, "import", "-o", db, path}));
        ::sync();
        if (all.back().exitCode != 0) {
            fmt::print("| chrome-trace | runlens import failed (exit {}) |\n", all.back().exitCode);
            return 0;
        }
    }
    std::sort(all.begin(), all.end(), [](const ProcessRun& a, const ProcessRun& b) { return a.seconds < b.seconds; });
    const ProcessRun& median = all[all.size() / 2];
    // The work must have been done: every event read, slices stored.
    const int64_t read = countOf(db, "SELECT rows_read FROM import"), slices = countOf(db, "SELECT count(*) FROM "
                                                                                           "trace_slice");
    if (read != events || slices <= 0) {
        fmt::print("| chrome-trace | read {} events of {}, stored {} slices |\n", read, events, slices);
        return 0;
    }
    const double mbPerS = mb / median.seconds;
    fmt::print("| {:<14} | {:>8} | {:>10} | {:>10} | {:>10} | {:>12} | {:>7} | {:<22} |\n", "format", "MB", "events",
               "slices", "RunLens s", "MB/s", "RSS MB", "target");
    fmt::print("|{:-<16}|{:-<10}|{:-<12}|{:-<12}|{:-<12}|{:-<14}|{:-<9}|{:-<24}|\n", "", "", "", "", "", "", "", "");
    fmt::print("| {:<14} | {:>8.1f} | {:>10} | {:>10} | {:>10.2f} | {:>12.1f} | {:>7.0f} | {:<22} |\n", "chrome-trace",
               mb, events, slices, median.seconds, mbPerS, median.peakRssMb,
               fmt::format("≥ {:.0f} MB/s{}", kTargetMbPerS,
                           quick                     ? " (full run)"
                           : mbPerS >= kTargetMbPerS ? ": met"
                                                     : ": NOT met"));
    fmt::print("\nimport time: median of {} run{}, including process start and the busy series{}\n", runs,
               runs == 1 ? "" : "s",
               quick ? "; quick mode is too small for a rate, the target is for the full run" : "");
    return mbPerS;
}

} // namespace runlens::bench
