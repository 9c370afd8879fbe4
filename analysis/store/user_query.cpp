#include "analysis/store/user_query.h"

#include "analysis/store/run_database.h"
#include "analysis/store/series_points_vtab.h"
#include "analysis/store/sqlite_util.h"

#include <cstdio>
#include <fmt/format.h>
#include <sqlite3.h>

namespace runlens::store {
namespace {

int denyAttach(void*, int action, const char*, const char*, const char*, const char*)
{
    return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

int checkCancel(void* p)
{
    const auto* cancel = static_cast<const std::atomic<bool>*>(p);
    return cancel && cancel->load(std::memory_order_relaxed) ? 1 : 0;
}

std::string valueText(sqlite3_stmt* st, int col)
{
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER:
        return std::to_string(sqlite3_column_int64(st, col));
    case SQLITE_FLOAT:
        return fmt::format("{}", sqlite3_column_double(st, col)); // shortest round-trip form
    case SQLITE_BLOB: {
        const auto* b = static_cast<const unsigned char*>(sqlite3_column_blob(st, col));
        const int n = sqlite3_column_bytes(st, col);
        std::string s = "\\x";
        for (int i = 0; i < n; ++i)
            s += fmt::format("{:02x}", b[i]);
        return s;
    }
    case SQLITE_NULL:
        return {};
    default: {
        const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
        return t ? std::string(t, static_cast<size_t>(sqlite3_column_bytes(st, col))) : std::string();
    }
    }
}

} // namespace

std::string csvField(const std::string& value)
{
    if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
    std::string s = "\"";
    for (char c : value) {
        if (c == '"') s += '"';
        s += c;
    }
    s += '"';
    return s;
}

std::string csvLine(const std::vector<std::string>& fields)
{
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) line += ',';
        line += csvField(fields[i]);
    }
    return line;
}

Expected<int64_t> runUserQuery(const std::string& dbPath, const std::string& sql,
                               const std::function<void(const std::vector<std::string>&)>& onHeader,
                               const std::function<void(const QueryRow&)>& onRow, const QueryOptions& options)
{
    // Opening through RunDatabase checks that this is a run database of a version we read.
    RUNLENS_ASSIGN_OR_RETURN(auto db, RunDatabase::open(dbPath, OpenMode::ReadOnly));
    sqlite3* h = db->handle();
    RUNLENS_TRY(execSql(h, "PRAGMA query_only = 1"));
    sqlite3_set_authorizer(h, denyAttach, nullptr);
    if (options.cancel) sqlite3_progress_handler(h, 1000, checkCancel, const_cast<std::atomic<bool>*>(options.cancel));

    int64_t rows = 0;
    const char* tail = sql.c_str();
    const char* end = tail + sql.size();
    while (tail < end) {
        sqlite3_stmt* raw = nullptr;
        const char* next = nullptr;
        if (sqlite3_prepare_v2(h, tail, static_cast<int>(end - tail), &raw, &next) != SQLITE_OK) {
            Error e = makeError(ErrorCode::Usage, fmt::format("SQL error: {}", sqlite3_errmsg(h)));
            sqlite3_finalize(raw);
            return e;
        }
        tail = next;
        if (!raw) continue; // whitespace or a comment
        std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> st(raw, sqlite3_finalize);
        const int cols = sqlite3_column_count(raw);
        if (cols > 0 && onHeader) {
            std::vector<std::string> names;
            names.reserve(cols);
            for (int c = 0; c < cols; ++c)
                names.emplace_back(sqlite3_column_name(raw, c));
            onHeader(names);
        }
        for (;;) {
            const int rc = sqlite3_step(raw);
            if (rc == SQLITE_DONE) break;
            if (rc != SQLITE_ROW) {
                if (rc == SQLITE_INTERRUPT) return makeError(ErrorCode::Cancelled, "query interrupted");
                return makeError(ErrorCode::Usage, fmt::format("SQL error: {}", sqlite3_errmsg(h)));
            }
            QueryRow row;
            row.values.reserve(cols);
            for (int c = 0; c < cols; ++c) {
                row.isNull.push_back(sqlite3_column_type(raw, c) == SQLITE_NULL);
                row.values.push_back(valueText(raw, c));
            }
            ++rows;
            if (onRow) onRow(row);
        }
    }
    return rows;
}

} // namespace runlens::store
