#include "analysis/store/schema_check.h"

#include "analysis/store/run_database.h"
#include "analysis/store/sqlite_util.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <sqlite3.h>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::store {
namespace {

constexpr std::string_view kUntrusted = "not a RunLens file this version can trust: ";

struct MasterRow
{
    std::string type; // table, index, view, trigger
    std::string name;
    std::string table; // tbl_name: the table an index or trigger belongs to
    std::string sql;   // empty for the indexes of UNIQUE and PRIMARY KEY constraints
};

// One column of a table or an index: its name (for messages) and everything SQLite reports about it.
struct Column
{
    std::string name;
    std::string detail;
};

struct Shape
{
    std::string type;
    std::string table;
    // A table: its kind (table or virtual), WITHOUT ROWID and STRICT. An index: UNIQUE, its origin (CREATE INDEX,
    // a UNIQUE or PRIMARY KEY constraint) and whether it is partial. A view: its statement, normalised.
    std::string attributes;
    std::vector<Column> columns; // of a table or an index, in order
};
using SchemaShape = std::map<std::string, Shape>;

Error untrusted(const std::string& what)
{
    return makeError(ErrorCode::Format, fmt::format("{}{}", kUntrusted, what));
}

// Copies a quoted token ('text', "name", `name`, [name]) starting at `i`; returns the index after it.
size_t quotedEnd(std::string_view sql, size_t i)
{
    const char close = sql[i] == '[' ? ']' : sql[i];
    for (size_t j = i + 1;;) {
        j = sql.find(close, j);
        if (j == std::string_view::npos) return sql.size();
        if (close != ']' && j + 1 < sql.size() && sql[j + 1] == close) { // a doubled quote inside the token
            j += 2;
            continue;
        }
        return j + 1;
    }
}

// The statement without comments and with every run of white space outside quotes made one space: a view that
// schema.sql creates (with its comments) and one an upgrade re-created (comments stripped) compare equal.
std::string normalisedSql(std::string_view sql)
{
    std::string out;
    bool space = false;
    for (size_t i = 0; i < sql.size();) {
        const char c = sql[i];
        const char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
        if (c == '-' && next == '-') {
            i = std::min(sql.find('\n', i), sql.size());
            space = true;
        } else if (c == '/' && next == '*') {
            const size_t end = sql.find("*/", i + 2);
            i = end == std::string_view::npos ? sql.size() : end + 2;
            space = true;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
            space = true;
        } else {
            if (space && !out.empty()) out += ' ';
            space = false;
            const size_t end = c == '\'' || c == '"' || c == '`' || c == '[' ? quotedEnd(sql, i) : i + 1;
            out.append(sql.substr(i, end - i));
            i = end;
        }
    }
    return out;
}

bool isVirtualTable(const MasterRow& row)
{
    if (row.type != "table") return false;
    std::string head = normalisedSql(row.sql).substr(0, 15);
    std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::toupper(c); });
    return head == "CREATE VIRTUAL ";
}

// "table node", "virtual table docs", "trigger t".
std::string objectName(const MasterRow& row)
{
    return fmt::format("{} {}", isVirtualTable(row) ? "virtual table" : row.type, row.name);
}

Expected<std::vector<MasterRow>> readMaster(sqlite3* db)
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(db, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"));
    return st.collect<MasterRow>([](const Statement& row) {
        return MasterRow{row.text(0), row.text(1), row.text(2), row.text(3)};
    });
}

// The rows of a pragma query, one Column each: the first result column is the name, all of them the detail
// (NULL told apart from text).
Expected<std::vector<Column>> pragmaRows(sqlite3* db, std::string_view sql, const std::string& arg1,
                                         const std::string& arg2 = {})
{
    RUNLENS_ASSIGN_OR_RETURN(auto st, Statement::prepare(db, sql));
    st.bind(1, std::string_view(arg1));
    if (sqlite3_bind_parameter_count(st.get()) > 1) st.bind(2, std::string_view(arg2));
    const int columns = sqlite3_column_count(st.get());
    return st.collect<Column>([&](const Statement& row) {
        Column c{row.text(0), {}};
        for (int i = 1; i < columns; ++i)
            c.detail += row.isNull(i) ? std::string("|null") : "|'" + row.text(i) + "'";
        return c;
    });
}

// The attributes are a single row's detail.
Expected<std::string> pragmaAttributes(sqlite3* db, std::string_view sql, const std::string& arg1,
                                       const std::string& arg2 = {})
{
    RUNLENS_ASSIGN_OR_RETURN(auto rows, pragmaRows(db, sql, arg1, arg2));
    return rows.size() == 1 ? rows.front().detail : std::string("|none");
}

Expected<Shape> describe(sqlite3* db, const MasterRow& row)
{
    Shape shape{row.type, row.table, {}, {}};
    if (row.type == "view") {
        shape.attributes = normalisedSql(row.sql);
        return shape;
    }
    Expected<std::string> attributes =
        row.type == "table"
            ? pragmaAttributes(db, "SELECT name, type, wr, strict FROM pragma_table_list(?1)", row.name)
            : pragmaAttributes(db,
                               "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?1) WHERE name = ?2",
                               row.table, row.name);
    if (!attributes) return attributes.error();
    shape.attributes = *attributes;
    auto columns =
        row.type == "table"
            ? pragmaRows(db,
                         "SELECT name, cid, type, \"notnull\", dflt_value, pk, hidden "
                         "FROM pragma_table_xinfo(?1)",
                         row.name)
            : pragmaRows(db, "SELECT name, seqno, cid, \"desc\", coll, key FROM pragma_index_xinfo(?1)", row.name);
    if (!columns) return columns.error();
    shape.columns = std::move(*columns);
    return shape;
}

Expected<SchemaShape> describeAll(sqlite3* db, const std::vector<MasterRow>& rows)
{
    SchemaShape shapes;
    for (const MasterRow& row : rows) {
        RUNLENS_ASSIGN_OR_RETURN(auto shape, describe(db, row));
        shapes.emplace(row.name, std::move(shape));
    }
    return shapes;
}

Expected<SchemaShape> buildExpectedShape()
{
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
    if (rc != SQLITE_OK) return sqliteError(raw, "cannot open a database in memory");
    RUNLENS_TRY(execSql(raw, schemaSql()));
    RUNLENS_ASSIGN_OR_RETURN(auto rows, readMaster(raw));
    return describeAll(raw, rows);
}

// What schema.sql creates, worked out once.
const Expected<SchemaShape>& expectedShape()
{
    static const Expected<SchemaShape> shape = buildExpectedShape();
    return shape;
}

// Triggers and virtual tables are named first: a virtual table brings shadow tables of other names with it.
Status checkRows(const std::vector<MasterRow>& rows, const SchemaShape& expected)
{
    for (const MasterRow& row : rows)
        if (row.type == "trigger" || isVirtualTable(row))
            return untrusted(fmt::format("{} is not one RunLens creates", objectName(row)));
    for (const MasterRow& row : rows) {
        const auto it = expected.find(row.name);
        if (it == expected.end() || it->second.type != row.type)
            return untrusted(fmt::format("{} is not one RunLens creates", objectName(row)));
    }
    return okStatus();
}

bool hasColumn(const std::vector<Column>& columns, const std::string& name)
{
    return std::any_of(columns.begin(), columns.end(), [&](const Column& c) { return c.name == name; });
}

Status compareColumns(const std::string& what, const std::vector<Column>& want, const std::vector<Column>& have)
{
    for (const Column& c : want)
        if (!hasColumn(have, c.name)) return untrusted(fmt::format("{} lacks column {}", what, c.name));
    for (const Column& c : have)
        if (!hasColumn(want, c.name))
            return untrusted(fmt::format("{} has a column {}, which RunLens does not create", what, c.name));
    for (size_t i = 0; i < want.size(); ++i)
        if (want[i].name != have[i].name || want[i].detail != have[i].detail)
            return untrusted(fmt::format("column {} of {} differs from the one RunLens creates", have[i].name, what));
    return okStatus();
}

Status compareShape(const std::string& name, const Shape& want, const Shape& have)
{
    const std::string what = fmt::format("{} {}", want.type, name);
    if (want.type == "table") {
        RUNLENS_TRY(compareColumns(what, want.columns, have.columns));
    } else if (want.columns.size() != have.columns.size() ||
               !std::equal(want.columns.begin(), want.columns.end(), have.columns.begin(),
                           [](const Column& a, const Column& b) { return a.name == b.name && a.detail == b.detail; })) {
        return untrusted(fmt::format("{} differs from the one RunLens creates", what));
    }
    if (want.table != have.table || want.attributes != have.attributes)
        return untrusted(fmt::format("{} differs from the one RunLens creates", what));
    return okStatus();
}

} // namespace

Status checkNoForeignObjects(sqlite3* db)
{
    const Expected<SchemaShape>& expected = expectedShape();
    if (!expected) return expected.error();
    RUNLENS_ASSIGN_OR_RETURN(auto rows, readMaster(db));
    return checkRows(rows, expected.value());
}

Status checkSchema(sqlite3* db)
{
    const Expected<SchemaShape>& expected = expectedShape();
    if (!expected) return expected.error();
    RUNLENS_ASSIGN_OR_RETURN(auto rows, readMaster(db));
    RUNLENS_TRY(checkRows(rows, expected.value()));
    auto have = describeAll(db, rows); // only objects RunLens creates are left: describing them runs nothing
    if (!have) return have.error();
    for (const auto& [name, want] : expected.value()) {
        const auto it = have->find(name);
        if (it == have->end()) return untrusted(fmt::format("{} {} is missing", want.type, name));
        RUNLENS_TRY(compareShape(name, want, it->second));
    }
    return okStatus();
}

} // namespace runlens::store
