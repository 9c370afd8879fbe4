#pragma once

// The named parameters of the diagnosis rules (docs/design.md §5): every threshold has a name ("ckpt_gap.overlap"),
// a default, a unit and a sentence saying what it does (all in resources/rules/defaults.params, compiled in), and
// can be overridden per run or from the command line ("ckpt_gap.overlap=0.6"). Each rule reads its parameters once,
// into a struct of its own (CkptGapParams, ThrottleParams, …; the shared ones in CommonParams), before any loop.

#include "analysis/store/error.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace runlens::analysis {

struct RuleParam
{
    std::string name; // rule.parameter
    double value = 0;
    double defaultValue = 0;
    std::string unit;
    std::string doc;
};

class RuleParams
{
public:
    // Every rule's parameters at their defaults (resources/rules/defaults.params).
    static RuleParams defaults();

    // The value of a parameter. A name that is not in defaults.params is a programming error (a typo in a rule's
    // parameter struct), not an input problem: get() prints the name to stderr and calls std::abort(), in every
    // build type, rather than let a rule judge the run on a made-up 0.
    double get(const std::string& name) const;
    // A parameter that counts (samples, steps, events, reads): get() truncated toward zero (clamped to int).
    int getCount(const std::string& name) const;
    // "name=value": an unknown name or a value that is not a number is an error naming both.
    Status set(const std::string& assignment);
    const std::vector<RuleParam>& all() const { return m_params; }

    // For tests: from now on this object and its copies remember every name get() reads (readNames()), so that a
    // parameter no rule reads is found. Not for concurrent use while recording.
    void recordReads();
    std::set<std::string> readNames() const;

private:
    void add(std::string name, double value, std::string unit, std::string doc);
    std::vector<RuleParam> m_params;
    std::map<std::string, size_t> m_index;
    std::shared_ptr<std::set<std::string>> m_reads; // null unless recording
};

// The parameters the rules share, read once: the grid, the steady state, episodes and evidence slices (rules.*),
// what a stalled GPU is (stall.*), and where a stall's edges are looked for (bounds.*).
struct CommonParams
{
    double gridS = 0;                 // rules.grid_s
    double warmupUtil = 0;            // rules.warmup_util (%)
    double warmupHoldS = 0;           // rules.warmup_hold_s
    int episodeGapSamples = 0;        // rules.episode_gap_samples
    double evidenceS = 0;             // rules.evidence_s
    double stallSmFraction = 0;       // stall.sm_fraction
    double stallBaselineQuantile = 0; // stall.baseline_quantile
    double stallUtilMax = 0;          // stall.util_max (%)
    double boundsSearchS = 0;         // bounds.search_s
    double boundsJoinGapS = 0;        // bounds.join_gap_s

    static CommonParams from(const RuleParams& p);
};

// A rule's severity cut-offs (<rule>.warn, <rule>.critical): the share of the wall time a finding costs (its impact)
// from which it is a warning, and from which it is critical.
struct SeverityCuts
{
    double warn = 0;
    double critical = 0;

    static SeverityCuts from(const RuleParams& p, const std::string& rule);
    // "critical", "warn" or "info" for a finding of this impact.
    const char* of(double impact) const { return impact >= critical ? "critical" : impact >= warn ? "warn" : "info"; }
};

// When a rule's events are periodic (<rule>.periodic_min_events, <rule>.periodic_max_cv): at least this many, and
// the intervals between their starts varying by at most this coefficient of variation.
struct PeriodicCuts
{
    int minEvents = 0;
    double maxCv = 0;

    static PeriodicCuts from(const RuleParams& p, const std::string& rule);
    // Whether this many events whose intervals vary by cv are periodic.
    bool holds(size_t events, double cv) const { return static_cast<double>(events) >= minEvents && cv <= maxCv; }
};

} // namespace runlens::analysis
