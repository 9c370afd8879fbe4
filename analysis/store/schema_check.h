#pragma once

// Checking that a run database holds what RunLens creates and nothing else, before anything reads it. A run file
// may come from anywhere; SQLite runs whatever its schema says (a view is a query, a trigger runs on every write),
// so a view that recurses forever, a trigger or a virtual table in someone else's file would run inside RunLens.
// The expected objects are taken from schema.sql itself (created once in a database in memory), so the check
// cannot drift from the schema.

#include "analysis/store/error.h"

struct sqlite3;

namespace runlens::store {

// Refuses what no RunLens version creates: any trigger, any virtual table, and any object whose name the current
// schema lacks or gives to another kind of object. Reads only sqlite_master: safe on a file of an earlier schema
// version before it is upgraded.
Status checkNoForeignObjects(sqlite3* db);

// The exact check for a file of the current schema version: checkNoForeignObjects, then every table with the same
// columns (name, type, NOT NULL, default, primary key, generated) in the same order and the same kind (rowid,
// WITHOUT ROWID, STRICT), every index on the same table with the same columns, and every view with the same
// statement (comments and line breaks aside); none missing.
Status checkSchema(sqlite3* db);

} // namespace runlens::store
