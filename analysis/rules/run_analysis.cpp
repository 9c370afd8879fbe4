#include "analysis/rules/run_analysis.h"

#include "analysis/rules/ckpt_gap_rule.h"
#include "analysis/rules/comm_bound_rule.h"
#include "analysis/rules/hang_rule.h"
#include "analysis/rules/input_stall_rule.h"
#include "analysis/rules/low_sm_eff_rule.h"
#include "analysis/rules/phase_slices.h"
#include "analysis/store/trace_reader.h"

#include <algorithm>

namespace runlens::analysis {

int severityRank(const std::string& severity)
{
    return severity == "critical" ? 0 : severity == "warn" ? 1 : 2;
}

Expected<RunAnalysis> analyzeRun(store::RunDatabase& db, const RuleParams& params, const AnalysisProgress& progress,
                                 const std::atomic<bool>* cancel)
{
    RunAnalysis out;
    out.params = params;
    out.rules = {"HANG", "COMM_BOUND", "INPUT_STALL", "CKPT_GAP", "LOW_SM_EFF"};
    const int total = static_cast<int>(out.rules.size()) + 1;
    int done = 0;
    const auto step = [&](const std::string& what) -> Status {
        if (cancel && cancel->load()) return makeError(ErrorCode::Cancelled, "analysis cancelled");
        if (progress) progress(done++, total, what);
        return okStatus();
    };
    if (Status s = step("metrics"); !s) return s.error();
    auto metrics = loadRunMetrics(db, static_cast<int64_t>(params.get("rules.grid_s") * 1e9));
    if (!metrics) return metrics.error();
    out.wallS = metrics->grid.seconds();
    out.startNs = metrics->grid.startNs;
    out.endNs = metrics->grid.slotStart(metrics->grid.size);
    out.gpus = metrics->gpus.size();
    out.nodes = metrics->nodes.size();
    if (metrics->gpus.empty()) out.missing.push_back("no GPU metrics: no rule can judge the GPUs");
    else if (std::none_of(metrics->gpus.begin(), metrics->gpus.end(), [](const GpuMetrics& g) { return !g.smActive.empty(); }))
        out.missing.push_back("no SM activity (DCGM 1002 or nvidia-smi dmon --gpm-metrics): the utilization illusion cannot "
                              "be told and stalls are judged on utilization alone");

    if (Status s = step("HANG"); !s) return s.error();
    std::vector<Finding> findings = hangRule(*metrics, params);

    auto classifier = PhaseClassifier::builtIn();
    if (!classifier) return classifier.error();
    FlameSource stacks(db, std::make_shared<PhaseClassifier>(std::move(*classifier)));
    const double evidenceS = params.get("rules.evidence_s");
    auto phases = phaseSlices(stacks, metrics->grid, metrics->grid.slotsPerSlice(evidenceS), cancel);
    if (!phases) return phases.error();
    if (auto threads = stacks.threads({}); threads && std::none_of(threads->begin(), threads->end(), [](const auto& t) {
                                                 return t.timedSamples > 0;
                                             }))
        out.missing.push_back("no timed stack samples: causes are judged from metrics and traces only");
    store::TraceReader traces(db);

    if (Status s = step("COMM_BOUND"); !s) return s.error();
    auto comm = commBoundRule(*metrics, stacks, *phases, &traces, params, findings);
    if (!comm) return comm.error();
    if (Status s = step("INPUT_STALL"); !s) return s.error();
    auto input = inputStallRule(*metrics, stacks, *phases, params);
    if (!input) return input.error();
    for (auto& f : *comm)
        findings.push_back(std::move(f));
    for (auto& f : *input)
        findings.push_back(std::move(f));
    if (Status s = step("CKPT_GAP"); !s) return s.error();
    for (auto& f : checkpointGapRule(*metrics, params))
        findings.push_back(std::move(f));
    if (Status s = step("LOW_SM_EFF"); !s) return s.error();
    for (auto& f : lowSmEfficiencyRule(*metrics, params, findings)) // last: it needs the others
        findings.push_back(std::move(f));
    if (progress) progress(total, total, "done");

    // Primary findings first (a contributing one is explained by another), then by severity and impact.
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
        if (a.primary != b.primary) return a.primary;
        const int ra = severityRank(a.severity), rb = severityRank(b.severity);
        return ra != rb ? ra < rb : a.impact > b.impact;
    });
    out.findings = std::move(findings);
    return out;
}

} // namespace runlens::analysis
