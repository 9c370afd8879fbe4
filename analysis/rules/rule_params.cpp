#include "analysis/rules/rule_params.h"

#include <QtGlobal>
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <string_view>

namespace runlens::analysis {

void RuleParams::add(std::string name, double value, std::string unit, std::string doc)
{
    m_index[name] = m_params.size();
    m_params.push_back({std::move(name), value, value, std::move(unit), std::move(doc)});
}

namespace detail {
std::string_view embeddedRuleDefaults(); // resources/rules/defaults.params, generated
}

RuleParams RuleParams::defaults()
{
    // One parameter a line: name, value, unit ("-" for none), what it does; '#' starts a comment line. The file
    // is part of the program: a line it cannot read is a programming error.
    RuleParams p;
    std::string_view text = detail::embeddedRuleDefaults();
    while (!text.empty()) {
        const size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
        auto token = [&line] {
            while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
                line.remove_prefix(1);
            const size_t end = line.find_first_of(" \t");
            const std::string_view t = line.substr(0, end);
            line = end == std::string_view::npos ? std::string_view() : line.substr(end);
            return t;
        };
        const std::string_view name = token();
        if (name.empty() || name.front() == '#') continue;
        const std::string_view value = token(), unit = token();
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        double v = 0;
        const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        Q_ASSERT(ec == std::errc() && ptr == value.data() + value.size());
        (void)ptr;
        (void)ec;
        p.add(std::string(name), v, unit == "-" ? std::string() : std::string(unit), std::string(line));
    }
    return p;
}

double RuleParams::get(const std::string& name) const
{
    const auto it = m_index.find(name);
    if (it == m_index.end()) {
        fmt::print(stderr,
                   "runlens: no rule parameter \"{}\" in resources/rules/defaults.params (a programming error)\n",
                   name);
        std::fflush(stderr);
        std::abort();
    }
    if (m_reads) m_reads->insert(name);
    return m_params[it->second].value;
}

int RuleParams::getCount(const std::string& name) const
{
    return static_cast<int>(std::clamp(get(name), static_cast<double>(INT_MIN), static_cast<double>(INT_MAX)));
}

void RuleParams::recordReads()
{
    if (!m_reads) m_reads = std::make_shared<std::set<std::string>>();
}

std::set<std::string> RuleParams::readNames() const
{
    return m_reads ? *m_reads : std::set<std::string>();
}

Status RuleParams::set(const std::string& assignment)
{
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos)
        return makeError(ErrorCode::Usage, fmt::format("--param {}: expected rule.name=value", assignment));
    const std::string name = assignment.substr(0, eq), text = assignment.substr(eq + 1);
    const auto it = m_index.find(name);
    if (it == m_index.end())
        return makeError(
            ErrorCode::Usage,
            fmt::format("--param {}: no rule parameter \"{}\" (runlens analyze --list-params)", assignment, name));
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
        return makeError(ErrorCode::Usage, fmt::format("--param {}: \"{}\" is not a number", assignment, text));
    m_params[it->second].value = v;
    return okStatus();
}

CommonParams CommonParams::from(const RuleParams& p)
{
    CommonParams c;
    c.gridS = p.get("rules.grid_s");
    c.warmupUtil = p.get("rules.warmup_util");
    c.warmupHoldS = p.get("rules.warmup_hold_s");
    c.episodeGapSamples = p.getCount("rules.episode_gap_samples");
    c.evidenceS = p.get("rules.evidence_s");
    c.stallSmFraction = p.get("stall.sm_fraction");
    c.stallBaselineQuantile = p.get("stall.baseline_quantile");
    c.stallUtilMax = p.get("stall.util_max");
    c.boundsSearchS = p.get("bounds.search_s");
    c.boundsJoinGapS = p.get("bounds.join_gap_s");
    return c;
}

SeverityCuts SeverityCuts::from(const RuleParams& p, const std::string& rule)
{
    SeverityCuts cuts;
    cuts.warn = p.get(rule + ".warn");
    cuts.critical = p.get(rule + ".critical");
    return cuts;
}

PeriodicCuts PeriodicCuts::from(const RuleParams& p, const std::string& rule)
{
    PeriodicCuts cuts;
    cuts.minEvents = p.getCount(rule + ".periodic_min_events");
    cuts.maxCv = p.get(rule + ".periodic_max_cv");
    return cuts;
}

} // namespace runlens::analysis
