#pragma once

// Generated runs with training steps, shared by the step, THROTTLE and STRAGGLER tests: GPU series per node and GPU
// (and optional trainer-log step times) written through the store, and a model of steps in continuous time whose
// nodes compute, wait at the collective and stall for checkpoints.

#include "analysis/rules/run_metrics.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "tests/rules_support.h"
#include "tests/test_support.h"

#include <QTemporaryDir>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace runlens::test::steps {

using namespace runlens::analysis;
using rules::kSecond;
using rules::kStart;

// A deterministic normal deviate per (stream, index): the same run generated twice is the same run.
inline double gauss(uint64_t stream, uint64_t index)
{
    auto mix = [](uint64_t x) {
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
    };
    const uint64_t a = mix(stream * 0x100000001b3ULL + index), b = mix(a);
    const double u1 = (static_cast<double>(a >> 11) + 0.5) / 9007199254740992.0,
                 u2 = static_cast<double>(b >> 11) / 9007199254740992.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

// A generated run: `nodes` nodes with `gpus` GPUs each, one point a second per GPU series (NaN: no point), and
// per node optional trainer-log step times (end of the step, seconds), all moved by offsetNs.
struct Synthetic
{
    struct Series
    {
        const char* metric;
        const char* unit;
        std::function<double(int node, int gpu, int64_t s)> value;
    };
    int nodes = 1, gpus = 2;
    int64_t seconds = 1800;
    int64_t offsetNs = 0;
    std::vector<Series> series;
    std::function<std::vector<std::pair<double, double>>(int node)> stepLog;
};

inline std::unique_ptr<store::RunDatabase> writeRun(const QTemporaryDir& dir, const Synthetic& run)
{
    rules::SyntheticImport synthetic(dir, QStringLiteral("r.runlens"));
    if (!synthetic) return nullptr;
    store::RunWriter& w = synthetic.writer();
    for (int n = 0; n < run.nodes; ++n) {
        auto node = w.node("node" + std::to_string(n), "option", "UTC");
        if (!node) return nullptr;
        for (int g = 0; g < run.gpus; ++g) {
            auto gpu = w.device(*node, "gpu", std::to_string(g));
            if (!gpu) return nullptr;
            for (const Synthetic::Series& s : run.series) {
                auto sink = w.series(*gpu, s.metric, s.unit, s.metric);
                if (!sink) return nullptr;
                for (int64_t t = 0; t < run.seconds; ++t) {
                    const double v = s.value(n, g, t);
                    if (std::isnan(v)) continue;
                    (*sink)->append(kStart + run.offsetNs + t * kSecond, v);
                    if (!w.flushIfNeeded(**sink)) return nullptr;
                }
            }
        }
        if (run.stepLog) {
            auto host = w.device(*node, "host", "");
            if (!host) return nullptr;
            auto sink = w.series(*host, "train.step_time", "s", "step_time");
            if (!sink) return nullptr;
            for (const auto& [end, seconds] : run.stepLog(n))
                (*sink)->append(kStart + run.offsetNs + std::llround(end * 1e9), seconds);
        }
    }
    return synthetic.finish();
}

// Training steps in continuous time: step k starts at start[k]; each node computes for compute(node, k) seconds,
// then waits at the collective until the last node arrives, plus the collective itself (commS). Every
// checkpointEvery steps the GPUs stall for checkpointS first.
struct StepModel
{
    double computeS = 7, commS = 3;
    int checkpointEvery = 0;
    double checkpointS = 0;
    std::function<double(int node, int64_t k)> extra; // seconds a node computes beyond computeS in step k
    std::vector<double> starts, stallStarts;

    void build(int nodes, double seconds)
    {
        starts.clear();
        stallStarts.clear();
        double t = 0;
        for (int64_t k = 0; t < seconds; ++k) {
            if (checkpointEvery > 0 && k > 0 && k % checkpointEvery == 0) {
                stallStarts.push_back(t);
                t += checkpointS;
            }
            starts.push_back(t);
            double longest = 0;
            for (int n = 0; n < nodes; ++n)
                longest = std::max(longest, compute(n, k));
            t += longest + commS;
        }
    }
    double compute(int node, int64_t k) const { return computeS + (extra ? extra(node, k) : 0.0); }
    // SM activity at time t: 0.7 computing, 0.1 waiting, 0 in a checkpoint stall.
    double activity(int node, double t) const
    {
        for (double s : stallStarts)
            if (t >= s && t < s + checkpointS) return 0.0;
        const auto it = std::upper_bound(starts.begin(), starts.end(), t);
        if (it == starts.begin()) return 0.0;
        const auto k = static_cast<int64_t>(it - starts.begin()) - 1;
        return t - starts[static_cast<size_t>(k)] < compute(node, k) ? 0.7 : 0.1;
    }
    // The mean over the second [s, s + 1), as an averaging sampler reports it.
    double slotMean(int node, int64_t s) const
    {
        constexpr int kSub = 100;
        double sum = 0;
        for (int i = 0; i < kSub; ++i)
            sum += activity(node, static_cast<double>(s) + (i + 0.5) / kSub);
        return sum / kSub;
    }
    // The trainer log of the steps: each step's end and duration, in seconds.
    std::vector<std::pair<double, double>> trainerLog() const
    {
        std::vector<std::pair<double, double>> log;
        for (size_t k = 0; k + 1 < starts.size(); ++k)
            log.emplace_back(starts[k + 1], starts[k + 1] - starts[k]);
        return log;
    }
};

inline Expected<RunMetrics> metricsOf(store::RunDatabase& db)
{
    return loadRunMetrics(db, static_cast<int64_t>(RuleParams::defaults().get("rules.grid_s") * 1e9));
}

// The one step series computeStepTimes (default parameters) finds in a generated run (null: it could not be
// written), found from `source`, into out; the test fails (QTest::currentTestFailed) when the run's metrics cannot
// be read or there is not exactly one.
inline void oneStepSeries(store::RunDatabase* db, const char* source, StepTimes& out)
{
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    const auto steps = computeStepTimes(*m, RuleParams::defaults());
    QCOMPARE(steps.size(), size_t(1));
    out = steps[0];
    QCOMPARE(out.source, std::string(source));
}

// A straggler run: `nodes` × 2 GPUs, 10 s steps (7 s compute, 3 s collective); `late(node, k)` adds seconds of
// compute to a node in step k; `jitterS` adds normal jitter to every node's compute.
struct StragglerCase
{
    int nodes = 4;
    double jitterS = 0.05;
    std::function<double(int node, int64_t k)> late;
    bool stepLog = false;
};

inline StepModel stragglerModel(const StragglerCase& c, double seconds)
{
    StepModel model;
    auto late = c.late;
    const double jitter = c.jitterS;
    model.extra = [=](int n, int64_t k) {
        return std::abs(jitter * gauss(300 + n, static_cast<uint64_t>(k))) + (late ? late(n, k) : 0.0);
    };
    model.build(c.nodes, seconds);
    return model;
}

inline Synthetic stragglerRun(const StragglerCase& c, const std::shared_ptr<StepModel>& model)
{
    Synthetic run;
    run.nodes = c.nodes;
    run.gpus = 2;
    run.seconds = 1800;
    run.series = {
        {"gpu.util", "%", [](int, int, int64_t) { return 99.0; }},
        {"gpu.sm_active", "ratio",
         [model](int n, int g, int64_t s) { return model->slotMean(n, s) + 0.01 * gauss(400 + n * 2 + g, s); }},
    };
    if (c.stepLog) run.stepLog = [model](int) { return model->trainerLog(); };
    return run;
}

} // namespace runlens::test::steps
