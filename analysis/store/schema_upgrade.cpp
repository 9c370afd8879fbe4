#include "analysis/store/schema_upgrade.h"

#include "analysis/store/run_database.h"
#include "analysis/store/schema_check.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/store/stack_writer.h"

#include <fmt/format.h>
#include <string>
#include <vector>

namespace runlens::store {
namespace {

// The statements of schema.sql, comments removed.
std::vector<std::string> schemaStatements()
{
    std::string text;
    const std::string_view sql = schemaSql();
    size_t pos = 0;
    while (pos < sql.size()) {
        size_t nl = sql.find('\n', pos);
        if (nl == std::string_view::npos) nl = sql.size();
        std::string_view line = sql.substr(pos, nl - pos);
        if (const size_t c = line.find("--"); c != std::string_view::npos) line = line.substr(0, c);
        text.append(line).push_back('\n');
        pos = nl + 1;
    }
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t semi; (semi = text.find(';', start)) != std::string::npos; start = semi + 1) {
        std::string stmt = text.substr(start, semi - start);
        const size_t first = stmt.find_first_not_of(" \t\r\n");
        if (first != std::string::npos) out.push_back(stmt.substr(first));
    }
    return out;
}

// "CREATE TABLE name (" / "CREATE INDEX name ON" / "CREATE VIEW name AS": the kind and the name.
bool createdObject(const std::string& stmt, std::string& kind, std::string& name)
{
    constexpr std::string_view kPrefix = "CREATE ";
    if (stmt.rfind(kPrefix, 0) != 0) return false;
    const size_t kindEnd = stmt.find(' ', kPrefix.size());
    if (kindEnd == std::string::npos) return false;
    kind = stmt.substr(kPrefix.size(), kindEnd - kPrefix.size());
    const size_t nameEnd = stmt.find_first_of(" (\n", kindEnd + 1);
    name = stmt.substr(kindEnd + 1, nameEnd - kindEnd - 1);
    return !name.empty();
}

Expected<bool> exists(sqlite3* db, const std::string& name)
{
    RUNLENS_ASSIGN_OR_RETURN(auto st, Statement::prepare(db, "SELECT 1 FROM sqlite_master WHERE name = ?"));
    st.bind(1, std::string_view(name));
    return st.step();
}

Status moveTimedStackSamples(sqlite3* db)
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto rows,
        Statement::prepare(db, "SELECT import_id, thread_id, ts_ns, callsite_id, sample_count, weight "
                               "FROM stack_sample WHERE ts_ns IS NOT NULL ORDER BY import_id, thread_id, ts_ns"));
    StackChunkWriter writer(db);
    int64_t importId = -1;
    RUNLENS_TRY(rows.forEachRow([&](const Statement& row) -> Status {
        if (row.int64(0) != importId) {
            if (Status s = writer.finish(); !s) return s; // chunks are per import
            importId = row.int64(0);
        }
        const StackSample sample{row.int64(2), row.int64(3), row.int64(4), row.real(5)};
        return writer.add(importId, row.int64(1), sample);
    }));
    RUNLENS_TRY(writer.finish());
    return execSql(db, "DELETE FROM stack_sample WHERE ts_ns IS NOT NULL");
}

} // namespace

Status upgradeSchema(sqlite3* db, int fromVersion)
{
    RUNLENS_ASSIGN_OR_RETURN(Transaction tx, beginTransaction(db));
    // Version 3 replaced the finding table (one window per row) with whole findings; nothing wrote the old one.
    if (fromVersion < 3)
        if (Status s = execSql(db, "DROP TABLE IF EXISTS finding"); !s) return s;
    // Version 5 keeps how each node's clock offset was found and how each untimed source was placed in time.
    if (fromVersion < 5) {
        static const std::pair<const char*, const char*> kAdded[] = {
            {"node", "clock_offset_uncertainty_ns INTEGER"}, {"node", "clock_offset_source TEXT NOT NULL DEFAULT ''"},
            {"import", "anchor TEXT NOT NULL DEFAULT ''"},   {"import", "anchor_start_ns INTEGER"},
            {"import", "anchor_uncertainty_ns INTEGER"},     {"import", "anchor_method TEXT NOT NULL DEFAULT ''"}};
        for (const auto& [table, column] : kAdded) {
            auto there = exists(db, table); // a table that is missing is created whole below
            if (!there) return there.error();
            if (*there)
                if (Status s = execSql(db, fmt::format("ALTER TABLE {} ADD COLUMN {}", table, column).c_str()); !s)
                    return s;
        }
    }
    // Version 6 keeps the settings the user gave for the run (run_setting): a new table, created below.
    const std::vector<std::string> statements = schemaStatements();
    std::vector<std::string> views;
    for (const std::string& stmt : statements) {
        std::string kind, name;
        if (!createdObject(stmt, kind, name)) continue;
        if (kind == "VIEW") {
            RUNLENS_TRY(execSql(db, fmt::format("DROP VIEW IF EXISTS {}", name).c_str()));
            views.push_back(stmt);
            continue;
        }
        RUNLENS_ASSIGN_OR_RETURN(auto there, exists(db, name));
        if (!there)
            if (Status s = execSql(db, stmt.c_str()); !s) return s;
    }
    if (fromVersion < 2)
        if (Status s = moveTimedStackSamples(db); !s) return s;
    for (const std::string& v : views)
        if (Status s = execSql(db, v.c_str()); !s) return s;
    RUNLENS_TRY(execSql(db, fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str()));
    // The upgraded file must be exactly what this version creates; otherwise it stays as it was.
    RUNLENS_TRY(checkSchema(db));
    return tx.commit();
}

} // namespace runlens::store
