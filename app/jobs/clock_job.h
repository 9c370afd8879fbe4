#pragma once

// Estimating the nodes' clock offsets and saying what changed, one line per node: shared by `runlens clock
// --estimate`, `runlens import` and the GUI's import.

#include "analysis/clock/clock_estimate.h"
#include "analysis/store/error.h"

#include <string>
#include <vector>

namespace runlens::store {
class RunDatabase;
}

namespace runlens::app {

// Estimates and stores the offsets (keeping the user's unless force); a line per node ("clock node1: -3.000 s ±10 µs
// from traces: ..."), and one for the nodes not estimated again (scope Changed: after an import). Nothing is
// estimated in a run of fewer than two nodes (no lines).
Expected<std::vector<std::string>> estimateAndDescribeClocks(store::RunDatabase& db, bool force,
                                                             analysis::ClockScope scope = analysis::ClockScope::All);

} // namespace runlens::app
