#pragma once

// Upgrading a run database written by an earlier schema version, in place and in one transaction:
// tables and indexes of the current schema that the file lacks are created, the views are re-created,
// and data whose layout changed is moved (version 1 kept timed stack samples one row each in stack_sample;
// they move into stack_chunk and stack_bucket).

#include "analysis/store/error.h"

struct sqlite3;

namespace runlens::store {

Status upgradeSchema(sqlite3* db, int fromVersion);

} // namespace runlens::store
