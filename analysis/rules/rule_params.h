#pragma once

// The named parameters of the diagnosis rules (docs/design.md §5): every threshold has a name ("ckpt_gap.overlap"),
// a default, a unit and a sentence saying what it does (all in resources/rules/defaults.params, compiled in), and
// can be overridden per run or from the command line ("ckpt_gap.overlap=0.6").

#include "analysis/store/error.h"

#include <map>
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

    double get(const std::string& name) const; // Q_ASSERTs a known name; 0 for unknown ones in release builds
    // "name=value": an unknown name or a value that is not a number is an error naming both.
    Status set(const std::string& assignment);
    const std::vector<RuleParam>& all() const { return m_params; }

private:
    void add(std::string name, double value, std::string unit, std::string doc);
    std::vector<RuleParam> m_params;
    std::map<std::string, size_t> m_index;
};

} // namespace runlens::analysis
