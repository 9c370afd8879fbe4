#pragma once

// A fixture run imported and analysed in-process, the way `runlens import --tz UTC -o RUN.runlens FOLDER` and
// `runlens analyze` do it, with its truth read beside it.

#include "analysis/rules/run_analysis.h"
#include "tests/truth_support.h"

#include <QString>
#include <string>
#include <vector>

namespace runlens::test {

struct FixtureRun
{
    std::string id;
    bool present = false;
    std::string error; // the import or the analysis failed
    std::string importSummary;
    std::vector<std::string> truthImportable; // files of truth/ that `runlens import FOLDER` would import
    Truth truth;
    analysis::RunAnalysis analysis;
};

// Imports every file of folder into a new run at dbPath (import --tz UTC), estimates the clocks and analyses it with
// the default parameters; importSummary, when given, receives the import's summary.
Expected<analysis::RunAnalysis> importAndAnalyseFolder(const std::string& folder, const std::string& dbPath,
                                                       std::string* importSummary = nullptr);

// Imports fixtures/id (a copy without its truth/ folder), estimates the clocks and analyses it with the default
// parameters; present is false when the folder is absent.
FixtureRun importAndAnalyse(const QString& fixtures, const std::string& id);

} // namespace runlens::test
