#pragma once

// Settings the user gave for a run (table run_setting), kept so that later commands use them: key → text value.

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

} // namespace runlens::store
