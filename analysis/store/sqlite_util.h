#pragma once

// Thin RAII helpers over the sqlite3 C API. Every return code is checked; failures become Errors.

#include "analysis/store/error.h"

#include <cstdint>
#include <sqlite3.h>
#include <string>
#include <string_view>

namespace runlens::store {

Error sqliteError(sqlite3* db, std::string_view what);

class Statement
{
public:
    Statement() = default;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement(Statement&& o) noexcept : m_db(o.m_db), m_stmt(o.m_stmt) { o.m_stmt = nullptr; }
    Statement& operator=(Statement&& o) noexcept;
    ~Statement() { sqlite3_finalize(m_stmt); }

    static Expected<Statement> prepare(sqlite3* db, std::string_view sql);

    Statement& bind(int i, int64_t v);
    Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
    Statement& bind(int i, double v);
    Statement& bind(int i, std::string_view v);
    Statement& bindBlob(int i, const void* data, size_t size);
    Statement& bindNull(int i);

    // SQLITE_ROW → true, SQLITE_DONE → false, anything else → Error.
    Expected<bool> step();
    // Runs to completion (for INSERT/UPDATE); resets for reuse.
    Status exec();
    void reset();

    int64_t int64(int col) const { return sqlite3_column_int64(m_stmt, col); }
    double real(int col) const { return sqlite3_column_double(m_stmt, col); }
    bool isNull(int col) const { return sqlite3_column_type(m_stmt, col) == SQLITE_NULL; }
    std::string text(int col) const;
    const void* blob(int col) const { return sqlite3_column_blob(m_stmt, col); }
    size_t blobSize(int col) const { return static_cast<size_t>(sqlite3_column_bytes(m_stmt, col)); }
    sqlite3_stmt* get() const { return m_stmt; }

private:
    Statement(sqlite3* db, sqlite3_stmt* s) : m_db(db), m_stmt(s) {}
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_stmt = nullptr;
};

Status execSql(sqlite3* db, const char* sql);

} // namespace runlens::store
