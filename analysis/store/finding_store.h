#pragma once

// The run's last analysis, kept in the run database (tables analysis and finding): written as a whole,
// replacing the previous one, and read back for the GUI and reports. The findings are JSON objects here; the
// rules' types (analysis/rules) convert.

#include "analysis/store/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace runlens::store {

class RunDatabase;

struct StoredFinding
{
    std::string rule, severity, title;
    double confidence = 0, impact = 0, savingS = 0;
    bool primary = true;
    std::optional<int64_t> startNs, endNs;
    std::string json; // the whole finding
};

struct StoredStep
{
    std::string node, source;
    int64_t startNs = 0;
    double seconds = 0;
};

struct StoredAnalysis
{
    int64_t ranAtNs = 0;
    std::string programVersion;
    std::string rulesJson = "[]", parametersJson = "{}", overridesJson = "{}", summaryJson = "{}";
    std::vector<StoredFinding> findings; // in report order
    std::vector<StoredStep> steps;       // by node, in time order
};

// Replaces the stored analysis in one transaction.
Status replaceAnalysis(RunDatabase& db, const StoredAnalysis& analysis);
// The stored analysis, or nullopt when the run has not been analysed.
Expected<std::optional<StoredAnalysis>> loadAnalysis(RunDatabase& db);

} // namespace runlens::store
