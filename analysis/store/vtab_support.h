#pragma once

// The SQLite side of the store's table-valued functions (eponymous virtual tables such as `series_points` and
// `stack_samples`). A scan walks groups (a series, a thread) in order; each group's rows are loaded when the scan
// reaches it, and groups without rows are passed over. The table itself is described by a Spec:
//
//   static constexpr const char* kSchema;   // "CREATE TABLE x(...)": the columns
//   struct Group;                           // what one row of the group query names
//   struct Row;                             // one row of the table within a group
//   struct Bounds;                          // what the filter narrows within each group (default: no bounds)
//   static int bestIndex(sqlite3_index_info* info);
//   static GroupQuery groupQuery(int idxNum, int argc, sqlite3_value** argv, Bounds& bounds);
//   static Group groupFromRow(const Statement& row);
//   static Status loadRows(sqlite3* db, const Group& group, const Bounds& bounds, std::vector<Row>& rows);
//   static ColumnValue column(const Group& group, const Row& row, int col);
//
// Errors of a Spec become the virtual table's error message. Only the store's sources include this header: it
// needs <sqlite3.h>.

#include "analysis/store/error.h"
#include "analysis/store/sqlite_util.h"

#include <cstdint>
#include <sqlite3.h>
#include <string>
#include <variant>
#include <vector>

namespace runlens::store {

// The query listing a scan's groups, with the values its parameters are bound to (in order).
struct GroupQuery
{
    std::string sql;
    std::vector<sqlite3_value*> args;
};

// One column's value in the current row: NULL, an integer, a real, or a text (the Spec's own string, copied).
using ColumnValue = std::variant<std::monostate, int64_t, double, const std::string*>;

template <typename Spec> class TableFunction
{
public:
    // Makes the function available as `name` in every statement of db.
    static Status registerIn(sqlite3* db, const char* name)
    {
        if (sqlite3_create_module(db, name, &kModule, nullptr) != SQLITE_OK)
            return sqliteError(db, std::string("cannot register ") + name);
        return okStatus();
    }

private:
    using Group = typename Spec::Group;
    using Row = typename Spec::Row;

    struct Table
    {
        sqlite3_vtab base{};
        sqlite3* db = nullptr;
    };

    struct Cursor
    {
        sqlite3_vtab_cursor base{};
        std::vector<Group> groups;
        size_t groupIndex = 0;
        std::vector<Row> rows;
        size_t rowIndex = 0;
        typename Spec::Bounds bounds{};
        int64_t rowid = 0;
    };

    static Cursor& cursorOf(sqlite3_vtab_cursor* base) { return *reinterpret_cast<Cursor*>(base); }
    static sqlite3* dbOf(sqlite3_vtab_cursor* base) { return reinterpret_cast<Table*>(base->pVtab)->db; }

    static int setError(sqlite3_vtab_cursor* base, const Error& error)
    {
        sqlite3_free(base->pVtab->zErrMsg);
        base->pVtab->zErrMsg = sqlite3_mprintf("%s", error.message.c_str());
        return SQLITE_ERROR;
    }

    static int xConnect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**)
    {
        const int rc = sqlite3_declare_vtab(db, Spec::kSchema);
        if (rc != SQLITE_OK) return rc;
        auto* table = new Table;
        table->db = db;
        *out = &table->base;
        return SQLITE_OK;
    }

    static int xDisconnect(sqlite3_vtab* table)
    {
        delete reinterpret_cast<Table*>(table);
        return SQLITE_OK;
    }

    static int xBestIndex(sqlite3_vtab*, sqlite3_index_info* info) { return Spec::bestIndex(info); }

    static int xOpen(sqlite3_vtab*, sqlite3_vtab_cursor** out)
    {
        *out = &(new Cursor)->base;
        return SQLITE_OK;
    }

    static int xClose(sqlite3_vtab_cursor* base)
    {
        delete &cursorOf(base);
        return SQLITE_OK;
    }

    // Loads the rows of the current group, moving on past groups without rows.
    static int loadGroup(sqlite3_vtab_cursor* base)
    {
        Cursor& cur = cursorOf(base);
        for (; cur.groupIndex < cur.groups.size(); ++cur.groupIndex) {
            cur.rows.clear();
            cur.rowIndex = 0;
            if (Status s = Spec::loadRows(dbOf(base), cur.groups[cur.groupIndex], cur.bounds, cur.rows); !s)
                return setError(base, s.error());
            if (!cur.rows.empty()) return SQLITE_OK;
        }
        return SQLITE_OK;
    }

    static int xFilter(sqlite3_vtab_cursor* base, int idxNum, const char*, int argc, sqlite3_value** argv)
    {
        Cursor& cur = cursorOf(base);
        cur.groups.clear();
        cur.groupIndex = 0;
        cur.rows.clear();
        cur.rowIndex = 0;
        cur.bounds = {};
        cur.rowid = 0;
        const GroupQuery query = Spec::groupQuery(idxNum, argc, argv, cur.bounds);
        auto st = Statement::prepare(dbOf(base), query.sql);
        if (!st) return setError(base, st.error());
        for (size_t i = 0; i < query.args.size(); ++i)
            sqlite3_bind_value(st->get(), static_cast<int>(i + 1), query.args[i]);
        auto groups = st->template collect<Group>(Spec::groupFromRow);
        if (!groups) return setError(base, groups.error());
        cur.groups = std::move(*groups);
        return loadGroup(base);
    }

    static int xNext(sqlite3_vtab_cursor* base)
    {
        Cursor& cur = cursorOf(base);
        ++cur.rowid;
        if (++cur.rowIndex < cur.rows.size()) return SQLITE_OK;
        ++cur.groupIndex;
        return loadGroup(base);
    }

    static int xEof(sqlite3_vtab_cursor* base)
    {
        const Cursor& cur = cursorOf(base);
        return cur.groupIndex >= cur.groups.size() ? 1 : 0;
    }

    static int xColumn(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int col)
    {
        const Cursor& cur = cursorOf(base);
        const ColumnValue value = Spec::column(cur.groups[cur.groupIndex], cur.rows[cur.rowIndex], col);
        if (const auto* i = std::get_if<int64_t>(&value))
            sqlite3_result_int64(ctx, *i);
        else if (const auto* d = std::get_if<double>(&value))
            sqlite3_result_double(ctx, *d);
        else if (const auto* text = std::get_if<const std::string*>(&value))
            sqlite3_result_text(ctx, (*text)->c_str(), -1, SQLITE_TRANSIENT);
        else
            sqlite3_result_null(ctx);
        return SQLITE_OK;
    }

    static int xRowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid)
    {
        *rowid = cursorOf(base).rowid;
        return SQLITE_OK;
    }

    static constexpr sqlite3_module kModule = {
        /* iVersion */ 0,
        /* xCreate */ nullptr, // eponymous-only: exists in every run database without CREATE VIRTUAL TABLE
        xConnect,
        xBestIndex,
        xDisconnect,
        /* xDestroy */ nullptr,
        xOpen,
        xClose,
        xFilter,
        xNext,
        xEof,
        xColumn,
        xRowid,
        /* xUpdate */ nullptr,
        /* xBegin */ nullptr,
        /* xSync */ nullptr,
        /* xCommit */ nullptr,
        /* xRollback */ nullptr,
        /* xFindFunction */ nullptr,
        /* xRename */ nullptr,
        /* xSavepoint */ nullptr,
        /* xRelease */ nullptr,
        /* xRollbackTo */ nullptr,
        /* xShadowName */ nullptr};
};

} // namespace runlens::store
