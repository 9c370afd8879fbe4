#pragma once

// COMM_BOUND's measurement of the profiled steps (comm_bound_rule.h): the communication share of each node's profiled
// steps, the node's steps that carry it, and the traces' evidence for its findings. Shared by the rule's sources, not
// part of the rules' API.

#include "analysis/rules/comm_bound_rule.h"
#include "analysis/rules/run_metrics.h"
#include "analysis/store/trace_reader.h"

#include <QJsonArray>
#include <QJsonObject>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace runlens::analysis::comm {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An interval [start, end) in ns.
using Interval = std::pair<int64_t, int64_t>;

// One profiled step of one rank.
struct ProfiledStep
{
    int64_t rank = -1;
    int64_t startNs = 0, endNs = 0;
    int64_t exposedNs = 0; // communication on the critical path: in flight while no compute kernel of the rank runs
    // The backward pass (from the autograd engine's first evaluate_function to the end of the collectives started
    // in it) when collectives run inside it, and the exposed communication inside it; 0 otherwise.
    int64_t backwardNs = 0, backwardExposedNs = 0;
};

// A profiling window: consecutive profiled steps (of every rank), which share one communication share. A run
// profiled at several times (before and after a change, in each phase) has one per time, each carried to the
// steps like its own.
struct ProfiledWindow
{
    Interval span;
    double share = kNaN; // Σ exposed / Σ step time over its ranks' steps
    size_t steps = 0;    // the most any rank profiled in it (the ranks profile the same steps)
};

struct NodeProfile
{
    std::vector<ProfiledStep> steps;     // every rank's
    std::vector<ProfiledWindow> windows; // the steps' union over the ranks, in time order
    size_t distinctSteps = 0;            // Σ over the windows
    double share = kNaN;                 // Σ exposed / Σ step time
    double backwardFraction = kNaN; // Σ exposed in backward / Σ backward time; NaN without collectives in backward
};

// The profiled steps of every rank: ProfilerStep#N annotations, else each profiler window ("PyTorch Profiler (N)")
// as one step, else the rank's whole trace.
Expected<std::map<std::string, NodeProfile>> profileNodes(store::TraceReader& traces,
                                                          const std::vector<store::TraceTrackInfo>& tracks);

enum class StepShare : uint8_t
{
    None,
    Measured,     // overlaps a profiled step
    Extrapolated, // outside the profiled steps, with their signature
};

struct StepUnit
{
    int64_t startNs = 0, endNs = 0;
    double seconds = 0, sm = kNaN, cpu = kNaN, net = kNaN;
    StepShare share = StepShare::None;
    double commShare = 0; // the communication share it carries (its profiling window's)
    size_t window = 0;    // which profiling window it carries
};

// A signature component's accepted range: the reference steps' [min, max] widened by the tolerance.
struct Range
{
    bool used = false;
    double lo = kNaN, hi = kNaN;
    bool accepts(double v) const { return !used || !std::isfinite(v) || (v >= lo && v <= hi); }
    QJsonArray json() const { return QJsonArray{lo, hi}; }
};

struct Signature
{
    Range step, sm, cpu, net;
    bool matches(const StepUnit& u) const
    {
        return step.accepts(u.seconds) && sm.accepts(u.sm) && cpu.accepts(u.cpu) && net.accepts(u.net);
    }
    QJsonObject json() const
    {
        QJsonObject o;
        if (step.used) o.insert(QStringLiteral("step_s"), step.json());
        if (sm.used) o.insert(QStringLiteral("sm_active"), sm.json());
        if (cpu.used) o.insert(QStringLiteral("cpu_util_pct"), cpu.json());
        if (net.used) o.insert(QStringLiteral("link_bytes_per_s"), net.json());
        return o;
    }
};

// The node's steps (trainer log or periodicity, as computeStepTimes finds them) with their signature: step time, and
// the node's mean SM activity, CPU utilization and link rate over the slots they cover.
std::vector<StepUnit> stepUnits(const RunMetrics& m, const NodeMetrics& node,
                                const std::vector<const GpuMetrics*>& gpus, const CommBoundParams& q);

// Marks the steps that overlap a profiled window's steps (measured, with its share) and those elsewhere with a
// window's signature (extrapolated, with its share; the window whose step time is nearest when several match); steps
// before the steady state or in a hang keep None. Returns each window's signature (unused: no steps overlap it).
std::vector<Signature> classifySteps(std::vector<StepUnit>& units, const NodeProfile& profile, int64_t steadyNs,
                                     const std::vector<Interval>& hangs, const CommBoundParams& q);

// The evidence: each profiling window with its share, steps and signature (classifySteps').
QJsonArray windowsJson(const NodeProfile& profile, const std::vector<Signature>& signatures);

// The node's top `count` communication kernels and collective spans profiled in the episodes, by total time.
Expected<QJsonArray> topCommKernels(store::TraceReader& traces, const std::vector<store::TraceTrackInfo>& tracks,
                                    const std::vector<FindingEpisode>& episodes, const std::string& node, size_t count);

} // namespace runlens::analysis::comm
