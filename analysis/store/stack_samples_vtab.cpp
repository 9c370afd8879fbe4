#include "analysis/store/stack_samples_vtab.h"

#include "analysis/store/saturating.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/store/stack_codec.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <sqlite3.h>
#include <string>
#include <vector>

namespace runlens::store {
namespace {

enum Column
{
    kNode,
    kProcess,
    kThread,
    kTs,
    kCallsite,
    kCount,
    kWeight,
    kThreadId,
    kImportId
};

struct VTab
{
    sqlite3_vtab base{};
    sqlite3* db = nullptr;
};

struct ThreadRef
{
    int64_t id = 0;
    std::string node, process, name;
    int64_t offset = 0;
};

struct Row
{
    std::optional<int64_t> ts;
    int64_t callsite = 0, count = 0, importId = 0;
    double weight = 0;
};

struct Cursor
{
    sqlite3_vtab_cursor base{};
    std::vector<ThreadRef> threads;
    size_t threadIndex = 0;
    std::vector<Row> rows;
    size_t rowIndex = 0;
    int64_t rowid = 0;
};

int xConnect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**)
{
    const int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(node TEXT, process TEXT, thread TEXT, ts_ns INTEGER, "
                                            "callsite_id INTEGER, sample_count INTEGER, weight REAL, "
                                            "thread_id INTEGER, import_id INTEGER)");
    if (rc != SQLITE_OK) return rc;
    auto* v = new VTab;
    v->db = db;
    *out = &v->base;
    return SQLITE_OK;
}

int xDisconnect(sqlite3_vtab* v)
{
    delete reinterpret_cast<VTab*>(v);
    return SQLITE_OK;
}

int xBestIndex(sqlite3_vtab*, sqlite3_index_info* info)
{
    info->idxNum = 0;
    info->estimatedCost = 1e9;
    for (int i = 0; i < info->nConstraint; ++i) {
        const auto& c = info->aConstraint[i];
        if (c.usable && c.op == SQLITE_INDEX_CONSTRAINT_EQ && c.iColumn == kThreadId) {
            info->aConstraintUsage[i].argvIndex = 1;
            info->aConstraintUsage[i].omit = 1;
            info->idxNum = 1;
            info->estimatedCost = 1e4;
            break;
        }
    }
    return SQLITE_OK;
}

int xOpen(sqlite3_vtab*, sqlite3_vtab_cursor** out)
{
    *out = &(new Cursor)->base;
    return SQLITE_OK;
}

int xClose(sqlite3_vtab_cursor* c)
{
    delete reinterpret_cast<Cursor*>(c);
    return SQLITE_OK;
}

int setError(sqlite3_vtab_cursor* c, const std::string& message)
{
    sqlite3_free(c->pVtab->zErrMsg);
    c->pVtab->zErrMsg = sqlite3_mprintf("%s", message.c_str());
    return SQLITE_ERROR;
}

// Loads the rows of the current thread, moving on past threads without samples.
int loadThread(Cursor& cur, sqlite3* db, sqlite3_vtab_cursor* base)
{
    for (; cur.threadIndex < cur.threads.size(); ++cur.threadIndex) {
        const ThreadRef& t = cur.threads[cur.threadIndex];
        cur.rows.clear();
        cur.rowIndex = 0;
        auto chunks =
            Statement::prepare(db, "SELECT import_id, data FROM stack_chunk WHERE thread_id = ? ORDER BY first_ns");
        if (!chunks) return setError(base, chunks.error().message);
        chunks->bind(1, t.id);
        for (;;) {
            auto row = chunks->step();
            if (!row) return setError(base, row.error().message);
            if (!*row) break;
            auto samples = decodeStackSamples(chunks->blob(1), chunks->blobSize(1));
            if (!samples) return setError(base, fmt::format("thread {}: {}", t.id, samples.error().message));
            for (const StackSample& s : *samples)
                cur.rows.push_back(
                    {saturatingAdd(s.tsNs, t.offset), s.callsiteId, s.count, chunks->int64(0), s.weight});
        }
        std::stable_sort(cur.rows.begin(), cur.rows.end(), [](const Row& a, const Row& b) { return *a.ts < *b.ts; });
        auto untimed = Statement::prepare(
            db,
            "SELECT callsite_id, sample_count, weight, import_id FROM stack_sample WHERE thread_id = ? ORDER BY id");
        if (!untimed) return setError(base, untimed.error().message);
        untimed->bind(1, t.id);
        for (;;) {
            auto row = untimed->step();
            if (!row) return setError(base, row.error().message);
            if (!*row) break;
            cur.rows.push_back(
                {std::nullopt, untimed->int64(0), untimed->int64(1), untimed->int64(3), untimed->real(2)});
        }
        if (!cur.rows.empty()) return SQLITE_OK;
    }
    return SQLITE_OK;
}

int xFilter(sqlite3_vtab_cursor* base, int idxNum, const char*, int argc, sqlite3_value** argv)
{
    auto& cur = *reinterpret_cast<Cursor*>(base);
    auto* vtab = reinterpret_cast<VTab*>(base->pVtab);
    cur.threads.clear();
    cur.threadIndex = 0;
    cur.rows.clear();
    cur.rowIndex = 0;
    cur.rowid = 0;
    std::string sql = "SELECT t.id, n.name, t.process, t.name, n.clock_offset_ns FROM thread t JOIN node n ON "
                      "n.id = t.node_id";
    if (idxNum == 1 && argc > 0) sql += " WHERE t.id = ?";
    sql += " ORDER BY t.id";
    auto st = Statement::prepare(vtab->db, sql);
    if (!st) return setError(base, st.error().message);
    if (idxNum == 1 && argc > 0) sqlite3_bind_value(st->get(), 1, argv[0]);
    for (;;) {
        auto row = st->step();
        if (!row) return setError(base, row.error().message);
        if (!*row) break;
        cur.threads.push_back({st->int64(0), st->text(1), st->text(2), st->text(3), st->int64(4)});
    }
    return loadThread(cur, vtab->db, base);
}

int xNext(sqlite3_vtab_cursor* base)
{
    auto& cur = *reinterpret_cast<Cursor*>(base);
    ++cur.rowid;
    if (++cur.rowIndex < cur.rows.size()) return SQLITE_OK;
    ++cur.threadIndex;
    return loadThread(cur, reinterpret_cast<VTab*>(base->pVtab)->db, base);
}

int xEof(sqlite3_vtab_cursor* base)
{
    const auto& cur = *reinterpret_cast<Cursor*>(base);
    return cur.threadIndex >= cur.threads.size() ? 1 : 0;
}

int xColumn(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int col)
{
    const auto& cur = *reinterpret_cast<Cursor*>(base);
    const ThreadRef& t = cur.threads[cur.threadIndex];
    const Row& r = cur.rows[cur.rowIndex];
    switch (col) {
    case kNode:
        sqlite3_result_text(ctx, t.node.c_str(), -1, SQLITE_TRANSIENT);
        break;
    case kProcess:
        sqlite3_result_text(ctx, t.process.c_str(), -1, SQLITE_TRANSIENT);
        break;
    case kThread:
        sqlite3_result_text(ctx, t.name.c_str(), -1, SQLITE_TRANSIENT);
        break;
    case kTs:
        if (r.ts)
            sqlite3_result_int64(ctx, *r.ts);
        else
            sqlite3_result_null(ctx);
        break;
    case kCallsite:
        sqlite3_result_int64(ctx, r.callsite);
        break;
    case kCount:
        sqlite3_result_int64(ctx, r.count);
        break;
    case kWeight:
        sqlite3_result_double(ctx, r.weight);
        break;
    case kThreadId:
        sqlite3_result_int64(ctx, t.id);
        break;
    case kImportId:
        sqlite3_result_int64(ctx, r.importId);
        break;
    default:
        sqlite3_result_null(ctx);
    }
    return SQLITE_OK;
}

int xRowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid)
{
    *rowid = reinterpret_cast<Cursor*>(base)->rowid;
    return SQLITE_OK;
}

const sqlite3_module kModule = {
    /* iVersion */ 0,
    /* xCreate */ nullptr, // eponymous-only
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

} // namespace

Status registerStackSamples(sqlite3* db)
{
    if (sqlite3_create_module(db, "stack_samples", &kModule, nullptr) != SQLITE_OK)
        return sqliteError(db, "cannot register stack_samples");
    return okStatus();
}

} // namespace runlens::store
