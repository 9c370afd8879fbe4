#include "analysis/store/sqlite_util.h"

#include <fmt/format.h>
#include <sqlite3.h>

namespace runlens::store {

Statement::~Statement()
{
    sqlite3_finalize(m_stmt);
}
int64_t Statement::int64(int col) const
{
    return sqlite3_column_int64(m_stmt, col);
}
double Statement::real(int col) const
{
    return sqlite3_column_double(m_stmt, col);
}
bool Statement::isNull(int col) const
{
    return sqlite3_column_type(m_stmt, col) == SQLITE_NULL;
}
const void* Statement::blob(int col) const
{
    return sqlite3_column_blob(m_stmt, col);
}
size_t Statement::blobSize(int col) const
{
    return static_cast<size_t>(sqlite3_column_bytes(m_stmt, col));
}

Error sqliteError(sqlite3* db, std::string_view what)
{
    const char* msg = db ? sqlite3_errmsg(db) : "out of memory";
    return makeError(ErrorCode::Database, fmt::format("{}: {}", what, msg));
}

Statement& Statement::operator=(Statement&& o) noexcept
{
    if (this != &o) {
        sqlite3_finalize(m_stmt);
        m_db = o.m_db;
        m_stmt = o.m_stmt;
        o.m_stmt = nullptr;
    }
    return *this;
}

Expected<Statement> Statement::prepare(sqlite3* db, std::string_view sql)
{
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s, nullptr);
    if (rc != SQLITE_OK) return sqliteError(db, "cannot prepare statement");
    if (!s) return makeError(ErrorCode::Usage, "empty SQL statement");
    return Statement(db, s);
}

// Bind errors (wrong index, out of memory) surface at step() as the statement's error.
Statement& Statement::bind(int i, int64_t v)
{
    sqlite3_bind_int64(m_stmt, i, v);
    return *this;
}
Statement& Statement::bind(int i, double v)
{
    sqlite3_bind_double(m_stmt, i, v);
    return *this;
}
Statement& Statement::bind(int i, std::string_view v)
{
    // A default-constructed view has no data pointer, which SQLite would bind as NULL: bind '' instead.
    sqlite3_bind_text(m_stmt, i, v.data() ? v.data() : "", static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
}
Statement& Statement::bindBlob(int i, const void* data, size_t size)
{
    sqlite3_bind_blob64(m_stmt, i, data, size, SQLITE_TRANSIENT);
    return *this;
}
Statement& Statement::bindNull(int i)
{
    sqlite3_bind_null(m_stmt, i);
    return *this;
}

Expected<bool> Statement::step()
{
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return sqliteError(m_db, "query failed");
}

Status Statement::exec()
{
    auto r = step();
    reset();
    if (!r) return r.error();
    return okStatus();
}

void Statement::reset()
{
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
}

std::string Statement::text(int col) const
{
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, col))) : std::string();
}

Status execSql(sqlite3* db, const char* sql)
{
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        Error e = makeError(ErrorCode::Database, err ? err : "unknown SQLite error");
        sqlite3_free(err);
        return e;
    }
    return okStatus();
}

} // namespace runlens::store
