#pragma once

// Thin RAII helpers over the sqlite3 C API. Every return code is checked; failures become Errors. The header does
// not include <sqlite3.h>: SQLite is the store's own business (only its .cpp files and tests see it).

#include "analysis/store/error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

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
    ~Statement();

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

    // Steps through the rows, calling onRow(*this) on each; onRow returns nothing, or a Status whose error ends the
    // query and is returned. The statement is reset afterwards, whatever happened, so it can be bound again.
    template <typename OnRow> Status forEachRow(OnRow&& onRow);
    // The rows, each made into a T by fromRow(*this).
    template <typename T, typename FromRow> Expected<std::vector<T>> collect(FromRow&& fromRow);

    int64_t int64(int col) const;
    double real(int col) const;
    bool isNull(int col) const;
    std::string text(int col) const;
    const void* blob(int col) const;
    size_t blobSize(int col) const;
    sqlite3_stmt* get() const { return m_stmt; }

private:
    Statement(sqlite3* db, sqlite3_stmt* s) : m_db(db), m_stmt(s) {}
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_stmt = nullptr;
};

Status execSql(sqlite3* db, const char* sql);

template <typename OnRow> Status Statement::forEachRow(OnRow&& onRow)
{
    Status result = okStatus();
    for (;;) {
        auto row = step();
        if (!row) {
            result = row.error();
            break;
        }
        if (!*row) break;
        if constexpr (std::is_void_v<std::invoke_result_t<OnRow&, const Statement&>>) {
            onRow(std::as_const(*this));
        } else if (Status s = onRow(std::as_const(*this)); !s) {
            result = std::move(s);
            break;
        }
    }
    reset();
    return result;
}

template <typename T, typename FromRow> Expected<std::vector<T>> Statement::collect(FromRow&& fromRow)
{
    std::vector<T> out;
    RUNLENS_TRY(forEachRow([&](const Statement& row) { out.push_back(fromRow(row)); }));
    return out;
}

} // namespace runlens::store
