#include "tests/bench/seed_run.h"

#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <random>
#include <vector>

namespace runlens::bench {

namespace {
constexpr int64_t kStartNs = 1'793'606'400'000'000'000; // 2026-11-02 08:00 UTC
constexpr int64_t kCheckpointEveryS = 1800;
constexpr int64_t kCheckpointS = 120;

struct Metric
{
    const char* name;
    const char* unit;
};
} // namespace

long long writeSeedRun(const std::string& path, const SeedRun& spec)
{
    auto fail = [](const Error& e) {
        fmt::print(stderr, "seed run: {}\n", e.toString());
        return -1LL;
    };
    auto db = store::RunDatabase::open(path, store::OpenMode::Create);
    if (!db) return fail(db.error());
    store::RunWriter w(**db);
    auto tx = (*db)->transaction();
    if (!tx) return fail(tx.error());
    store::ImportRecord rec;
    rec.path = "seed-run";
    rec.contentHash = "seed-run";
    rec.format = "bench";
    if (auto st = w.beginImport(rec); !st) return fail(st.error());
    const int64_t steps = static_cast<int64_t>(spec.hours * 3600'000.0 / spec.intervalMs);
    const int64_t stepNs = int64_t(spec.intervalMs) * 1'000'000;
    std::mt19937_64 rng(42);
    std::normal_distribution<double> noise(0, 1);
    long long points = 0;
    auto inCheckpoint = [&](int64_t i) {
        return (i * spec.intervalMs / 1000) % kCheckpointEveryS >= kCheckpointEveryS - kCheckpointS;
    };
    auto writeSeries = [&](int64_t deviceId, const char* metric, const char* unit, auto&& value) -> Status {
        RUNLENS_ASSIGN_OR_RETURN(auto sink, w.series(deviceId, metric, unit, metric));
        for (int64_t i = 0; i < steps; ++i) {
            sink->append(kStartNs + i * stepNs, value(i));
            RUNLENS_TRY(w.flushIfNeeded(*sink));
        }
        points += steps;
        return okStatus();
    };
    for (int n = 0; n < spec.nodes; ++n) {
        auto node = w.node(fmt::format("node{}", n), "option", "UTC");
        if (!node) return fail(node.error());
        for (int g = 0; g < spec.gpusPerNode; ++g) {
            auto dev = w.device(*node, "gpu", std::to_string(g));
            if (!dev) return fail(dev.error());
            const bool planted = n == spec.nodes / 2 && g == spec.gpusPerNode / 2 + 1;
            const int64_t dipAt = steps / 2 + 17;
            auto util = [&](int64_t i) {
                if (planted && i >= dipAt && i < dipAt + 5000 / spec.intervalMs) return 0.0;
                return inCheckpoint(i) ? 2.0 + std::abs(noise(rng)) : std::min(100.0, 99.0 + 0.5 * noise(rng));
            };
            auto ratio = [&](double mean, double sd) {
                return [&, mean, sd](int64_t i) {
                    return inCheckpoint(i) ? 0.01 : std::clamp(mean + sd * noise(rng), 0.0, 1.0);
                };
            };
            const std::pair<const char*, const char*> names[] = {{"gpu.util", "%"},
                                                                 {"gpu.sm_active", "ratio"},
                                                                 {"gpu.tensor_active", "ratio"},
                                                                 {"gpu.dram_active", "ratio"},
                                                                 {"gpu.power", "W"},
                                                                 {"gpu.sm_clock", "Hz"},
                                                                 {"gpu.temp", "C"},
                                                                 {"gpu.mem_used", "bytes"}};
            for (const auto& [metric, unit] : names) {
                Status st = okStatus();
                const std::string m = metric;
                if (m == "gpu.util")
                    st = writeSeries(*dev, metric, unit, util);
                else if (m == "gpu.sm_active")
                    st = writeSeries(*dev, metric, unit, ratio(0.21, 0.03));
                else if (m == "gpu.tensor_active")
                    st = writeSeries(*dev, metric, unit, ratio(0.08, 0.02));
                else if (m == "gpu.dram_active")
                    st = writeSeries(*dev, metric, unit, ratio(0.14, 0.03));
                else if (m == "gpu.power")
                    st = writeSeries(*dev, metric, unit, [&](int64_t i) {
                        return inCheckpoint(i) ? 90 + 3 * noise(rng) : 310 + 15 * noise(rng);
                    });
                else if (m == "gpu.sm_clock")
                    st = writeSeries(*dev, metric, unit, [&](int64_t i) {
                        return inCheckpoint(i) ? 1.98e9 : 1.98e9 - 1.5e7 * std::abs(noise(rng));
                    });
                else if (m == "gpu.temp")
                    st = writeSeries(*dev, metric, unit,
                                     [&](int64_t i) { return std::round(inCheckpoint(i) ? 45 : 58 + noise(rng)); });
                else
                    st = writeSeries(*dev, metric, unit, [&](int64_t) { return 7.1e10 + g * 1e8; });
                if (!st) return fail(st.error());
            }
        }
        for (int link = 0; link < 2; ++link) {
            auto nic = w.device(*node, "nic", fmt::format("ib{}", link));
            if (!nic) return fail(nic.error());
            for (const char* metric : {"net.tx", "net.rx"})
                if (auto st =
                        writeSeries(*nic, metric, "bytes/s",
                                    [&](int64_t i) { return inCheckpoint(i) ? 1e7 : 6.0e9 * (1 + 0.05 * noise(rng)); });
                    !st)
                    return fail(st.error());
        }
        auto disk = w.device(*node, "disk", "nvme0n1");
        auto cpu = w.device(*node, "cpu", "");
        auto host = w.device(*node, "host", "");
        if (!disk || !cpu || !host) return fail(makeError(ErrorCode::Database, "cannot create devices"));
        Status st = writeSeries(*disk, "disk.write", "bytes/s", [&](int64_t i) {
            return n == 0 && inCheckpoint(i) ? 2.2e9 * (1 + 0.1 * noise(rng)) : 2e6;
        });
        if (st)
            st = writeSeries(*disk, "disk.read", "bytes/s",
                             [&](int64_t) { return 5e7 * (1 + 0.2 * std::abs(noise(rng))); });
        if (st)
            st = writeSeries(*cpu, "cpu.util", "%",
                             [&](int64_t i) { return inCheckpoint(i) ? 12 : 35 + 3 * noise(rng); });
        if (st)
            st =
                writeSeries(*host, "host.mem_available", "bytes", [&](int64_t i) { return 1.2e12 - (i % 7200) * 1e6; });
        if (!st) return fail(st.error());
    }
    store::ImportTotals totals;
    totals.contentHash = rec.contentHash;
    totals.points = points;
    if (auto st = w.finishImport(totals, store::Diagnostics()); !st) return fail(st.error());
    if (auto st = tx->commit(); !st) return fail(st.error());
    return points;
}

} // namespace runlens::bench
