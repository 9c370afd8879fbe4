#include "analysis/rules/rule_params.h"

#include <QtGlobal>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace runlens::analysis {

void RuleParams::add(std::string name, double value, std::string unit, std::string doc)
{
    m_index[name] = m_params.size();
    m_params.push_back({std::move(name), value, value, std::move(unit), std::move(doc)});
}

RuleParams RuleParams::defaults()
{
    RuleParams p;
    p.add("rules.grid_s", 1, "s", "the common time grid the metrics are resampled to (mean per slot)");
    p.add("rules.episode_gap_samples", 2, "samples", "flagged samples at most this many slots apart join one episode");
    p.add("stall.sm_fraction", 0.2, "×", "a GPU stalls when its SM activity is at most this fraction of its busy baseline");
    p.add("stall.baseline_quantile", 0.9, "", "the busy baseline: this quantile of the GPU's SM activity over the run");
    p.add("stall.util_max", 10, "%", "without SM activity: a GPU stalls at or below this utilization");
    p.add("ckpt_gap.burst_factor", 5, "×", "a write burst: disk writes at least this many times their median ...");
    p.add("ckpt_gap.burst_min_bytes", 100e6, "B/s", "... and at least this rate");
    p.add("ckpt_gap.burst_min_samples", 2, "samples",
          "... writing at least this many samples' worth at that rate (a cache flush can land in one sample)");
    p.add("ckpt_gap.align_slack_samples", 1, "samples",
          "a burst covers the stall slots this close to it (counter rates and GPU samples are both interval means)");
    p.add("ckpt_gap.overlap", 0.5, "", "a stall is a checkpoint gap when write bursts cover this fraction of it");
    p.add("ckpt_gap.periodic_min_events", 3, "", "periodic: at least this many gaps ...");
    p.add("ckpt_gap.periodic_max_cv", 0.2, "", "... whose intervals vary by at most this coefficient of variation");
    p.add("ckpt_gap.warn", 0.02, "", "warn when the gaps cost at least this fraction of the wall time");
    p.add("ckpt_gap.critical", 0.05, "", "critical from this fraction");
    p.add("rules.evidence_s", 2, "s", "causes are read from the stack samples of slices this long");
    p.add("input_stall.sm_max", 0.5, "", "under-used GPUs: SM activity below this (NVIDIA: < 0.5 is likely ineffective use)");
    p.add("input_stall.util_max", 50, "%", "without SM activity: utilization below this");
    p.add("input_stall.host_share", 0.3, "",
          "an input stall when DataLoader waits and host work are at least this share of the busy samples (as for "
          "COMM_BOUND's communication share)");
    p.add("input_stall.cpu_bound_pct", 90, "%", "cpu_bound when the node's CPU utilization is at least this");
    p.add("comm_bound.sm_max", 0.5, "", "under-used GPUs: SM activity below this");
    p.add("comm_bound.share", 0.3, "", "communication evidence: frames, kernels or collective spans at least this share");
    p.add("low_sm.util_min", 20, "%", "low SM efficiency is judged on busy GPUs: utilization at least this");
    p.add("low_sm.warn_sm", 0.5, "", "warn below this mean SM activity (NVIDIA: < 0.5 likely ineffective use)");
    p.add("low_sm.critical_sm", 0.3, "", "critical below this");
    p.add("low_sm.min_s", 10, "s", "episodes shorter than this are not reported");
    p.add("hang.util_min", 90, "%", "a hung GPU: utilization at least this ...");
    p.add("hang.sm_max", 0.02, "", "... with SM activity at most this ...");
    p.add("hang.min_s", 30, "s", "... for at least this long");
    return p;
}

double RuleParams::get(const std::string& name) const
{
    const auto it = m_index.find(name);
    Q_ASSERT(it != m_index.end());
    return it == m_index.end() ? 0.0 : m_params[it->second].value;
}

Status RuleParams::set(const std::string& assignment)
{
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos)
        return makeError(ErrorCode::Usage, fmt::format("--param {}: expected rule.name=value", assignment));
    const std::string name = assignment.substr(0, eq), text = assignment.substr(eq + 1);
    const auto it = m_index.find(name);
    if (it == m_index.end())
        return makeError(ErrorCode::Usage, fmt::format("--param {}: no rule parameter \"{}\" (runlens analyze --list-params)",
                                                       assignment, name));
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
        return makeError(ErrorCode::Usage, fmt::format("--param {}: \"{}\" is not a number", assignment, text));
    m_params[it->second].value = v;
    return okStatus();
}

} // namespace runlens::analysis
