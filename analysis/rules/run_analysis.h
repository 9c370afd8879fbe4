#pragma once

// The diagnosis of a run: every rule over the store, in order (HANG first: the others leave its time alone;
// LOW_SM_EFF last: it is contributing where another rule explains the same time), the findings sorted primary
// first, then by severity and impact. The GUI, `runlens analyze` and the report all call this.

#include "analysis/rules/finding.h"
#include "analysis/rules/rule_params.h"
#include "analysis/rules/run_metrics.h"
#include "analysis/rules/step_detection.h"
#include "analysis/store/run_database.h"

#include <QJsonObject>
#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace runlens::analysis {

// Where a node's wall time went (the goodput waterfall), in seconds: start-up before its GPUs first worked,
// hung collectives, checkpoint stalls, waiting for input or the host, waiting on communication (the findings'
// estimates), other idle GPU time, and the rest: compute. The parts add up to the wall time.
struct TimeBudget
{
    std::string node;
    double wallS = 0, startupS = 0, hangS = 0, checkpointS = 0, inputS = 0, commWaitS = 0, idleS = 0, computeS = 0;

    // other's seconds of each kind added to these (the node stays this one).
    void addSeconds(const TimeBudget& other)
    {
        wallS += other.wallS;
        startupS += other.startupS;
        hangS += other.hangS;
        checkpointS += other.checkpointS;
        inputS += other.inputS;
        commWaitS += other.commWaitS;
        idleS += other.idleS;
        computeS += other.computeS;
    }
};

QJsonObject
toJson(const TimeBudget& b); // node, wall_s, startup_s, hang_s, checkpoint_s, input_s, comm_wait_s, idle_s, compute_s

// The parts of a node's waterfall that every waterfall (the run's, a compared window's) counts alike:
// the node's GPUs;
std::vector<const GpuMetrics*> gpusOf(const RunMetrics& m, const std::string& node);
// the slots [from, last) a stall-type episode (hang, checkpoint) overlaps, marked covered, each slot not covered
// before adding its seconds to `seconds` (covered slots are not counted again as idle);
void coverEpisode(const TimeGrid& grid, const FindingEpisode& e, size_t from, size_t last,
                  std::vector<uint8_t>& covered, double& seconds);
// and other idle time: a slot where the GPUs' mean utilization is at most utilMax, or none of them has a value.
bool gpusIdleAt(const std::vector<const GpuMetrics*>& gpus, size_t slot, double utilMax);

struct RunAnalysis
{
    std::vector<std::string> rules; // the rules run, in order
    RuleParams params;
    std::vector<Finding> findings;
    double wallS = 0; // the metrics' time range
    int64_t startNs = 0, endNs = 0;
    size_t gpus = 0, nodes = 0;
    std::vector<TimeBudget> budgets;  // per node with GPUs
    std::vector<StepTimes> steps;     // per node, when detected (trainer log or periodicity)
    std::vector<std::string> missing; // inputs the rules would have used and the run lacks ("no stack samples", …)
};

// progress(done, total, rule) is called between rules; cancel stops between and inside them.
using AnalysisProgress = std::function<void(int done, int total, const std::string& rule)>;
Expected<RunAnalysis> analyzeRun(store::RunDatabase& db, const RuleParams& params,
                                 const AnalysisProgress& progress = {}, const std::atomic<bool>* cancel = nullptr);

// Keeps the analysis in the run database (replacing the previous one), with the parameters set for this run
// (overrides: "name" -> value), which the next analysis of the run starts from.
Status storeAnalysis(store::RunDatabase& db, const RunAnalysis& analysis,
                     const std::map<std::string, double>& overrides);
// The run's stored analysis (findings, parameters, when it ran), or nullopt when it has none.
struct StoredRunAnalysis
{
    RunAnalysis analysis;
    std::map<std::string, double> overrides;
    int64_t ranAtNs = 0;
    std::string programVersion;
};
Expected<std::optional<StoredRunAnalysis>> loadStoredAnalysis(store::RunDatabase& db);

// "critical" 0, "warn" 1, "info" 2.
int severityRank(const std::string& severity);

} // namespace runlens::analysis
