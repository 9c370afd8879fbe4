#pragma once

// Settings of a run (table run_setting), kept so that later commands use them: key → text value. The user's (the
// model and GPU options of the MFU) and what one command keeps for the next (clock.inputs: the inputs the clock
// offsets were last estimated from, analysis/clock/clock_estimate.h).

#include "analysis/store/error.h"

#include <map>
#include <optional>
#include <string>

namespace runlens::store {

class RunDatabase;

// Every setting of the run, by key.
Expected<std::map<std::string, std::string>> loadRunSettings(RunDatabase& db);
// Sets (a value) or clears (nullopt) each key, in one transaction.
Status storeRunSettings(RunDatabase& db, const std::map<std::string, std::optional<std::string>>& changes);
// The same inside the caller's open transaction (committed with the caller's other changes).
Status storeRunSettingsInTransaction(RunDatabase& db, const std::map<std::string, std::optional<std::string>>& changes);

} // namespace runlens::store
