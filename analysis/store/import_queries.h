#pragma once

// The questions the import pipeline and the command line ask a run outside RunWriter and RunReader: where an
// import's points lie against the rest of the run, how it was placed in time, which imports wait to be placed, the
// next import's id, and when the run starts. SQL stays in the store: callers see values.

#include "analysis/store/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace runlens::store {

class RunDatabase;

// The time span of one import's points and of every other import's points (ns, before clock offsets).
struct ImportSpan
{
    int64_t firstNs = 0, lastNs = 0;
    int64_t othersFirstNs = 0, othersLastNs = 0;
};
// Empty when the import or the rest of the run has no points.
Expected<std::optional<ImportSpan>> importSpan(RunDatabase& db, int64_t importId);

// How an import was placed in time (import.anchor: '', option, aligned, unanchored); '' for an unknown id.
Expected<std::string> importAnchor(RunDatabase& db, int64_t importId);

// An import that could not be placed in time, as it was planned.
struct UnanchoredImport
{
    std::string path;
    std::string format;
    std::string node;
    std::string nodeSource;
};
// The unanchored imports with ids below beforeImportId, oldest first.
Expected<std::vector<UnanchoredImport>> unanchoredImports(RunDatabase& db, int64_t beforeImportId);

// The id the next import will get (imports from it on are the next job's).
Expected<int64_t> nextImportId(RunDatabase& db);

// The run's first time (ns, clock offsets applied) over its series and timed stacks; empty for an empty run.
Expected<std::optional<int64_t>> runStartNs(RunDatabase& db);

} // namespace runlens::store
