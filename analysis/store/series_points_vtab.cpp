#include "analysis/store/series_points_vtab.h"

#include "analysis/store/chunk_codec.h"
#include "analysis/store/saturating.h"
#include "analysis/store/sqlite_util.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <sqlite3.h>
#include <string>
#include <vector>

namespace runlens::store {
namespace {

enum Column
{
    kNode,
    kDevice,
    kMetric,
    kTs,
    kValue,
    kMissing,
    kToken,
    kSeriesId
};

// idxNum bits: which constraints xFilter receives, in this order.
enum Bits
{
    kNodeEq = 1,
    kDeviceEq = 2,
    kMetricEq = 4,
    kSeriesEq = 8,
    kTsLow = 16,
    kTsHigh = 32
};

struct VTab
{
    sqlite3_vtab base{};
    sqlite3* db = nullptr;
};

struct SeriesRef
{
    int64_t id;
    std::string node, device, metric;
    int64_t offset;
};

struct Cursor
{
    sqlite3_vtab_cursor base{};
    std::vector<SeriesRef> series;
    size_t seriesIndex = 0;
    ChunkPoints points;
    size_t pointIndex = 0;
    int64_t from = std::numeric_limits<int64_t>::min();
    int64_t to = std::numeric_limits<int64_t>::max();
    int64_t rowid = 0;
};

int xConnect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**)
{
    const int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(node TEXT, device TEXT, metric TEXT, ts_ns INTEGER, "
                                            "value REAL, missing INTEGER, token TEXT, series_id INTEGER)");
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
    int bits = 0;
    int slot[6] = {-1, -1, -1, -1, -1, -1};
    for (int i = 0; i < info->nConstraint; ++i) {
        const auto& c = info->aConstraint[i];
        if (!c.usable) continue;
        if (c.op == SQLITE_INDEX_CONSTRAINT_EQ) {
            if (c.iColumn == kNode) slot[0] = i;
            if (c.iColumn == kDevice) slot[1] = i;
            if (c.iColumn == kMetric) slot[2] = i;
            if (c.iColumn == kSeriesId) slot[3] = i;
            if (c.iColumn == kTs) slot[4] = slot[5] = i;
        } else if (c.iColumn == kTs && (c.op == SQLITE_INDEX_CONSTRAINT_GT || c.op == SQLITE_INDEX_CONSTRAINT_GE)) {
            slot[4] = i;
        } else if (c.iColumn == kTs && (c.op == SQLITE_INDEX_CONSTRAINT_LT || c.op == SQLITE_INDEX_CONSTRAINT_LE)) {
            slot[5] = i;
        }
    }
    int arg = 1;
    double cost = 1e9;
    for (int k = 0; k < 6; ++k) {
        if (slot[k] < 0) continue;
        bits |= 1 << k;
        // A ts_ns = x constraint feeds both bounds: pass it twice is not possible, so the high bound reuses it.
        if (k == 5 && slot[5] == slot[4] && (bits & kTsLow)) {
            bits |= 64; // "high bound equals low bound"
            bits &= ~kTsHigh;
            continue;
        }
        info->aConstraintUsage[slot[k]].argvIndex = arg++;
        info->aConstraintUsage[slot[k]].omit = 0; // SQLite checks again; our bounds only narrow the read
        cost /= 10;
    }
    info->idxNum = bits;
    info->estimatedCost = cost;
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

// Loads the points of the current series (and moves on past series without points in the window).
int loadSeries(Cursor& cur, sqlite3* db, sqlite3_vtab_cursor* base)
{
    for (; cur.seriesIndex < cur.series.size(); ++cur.seriesIndex) {
        const SeriesRef& s = cur.series[cur.seriesIndex];
        const int64_t from =
            cur.from == std::numeric_limits<int64_t>::min() ? cur.from : saturatingSub(cur.from, s.offset);
        const int64_t to = cur.to == std::numeric_limits<int64_t>::max() ? cur.to : saturatingSub(cur.to, s.offset);
        auto st = Statement::prepare(db, "SELECT data FROM point_chunk WHERE series_id = ? AND first_ns <= ? AND "
                                         "last_ns >= ? ORDER BY first_ns");
        if (!st) return setError(base, st.error().message);
        st->bind(1, s.id).bind(2, to).bind(3, from);
        cur.points.points.clear();
        cur.points.missingTokens.clear();
        std::vector<std::pair<Point, std::string>> all;
        for (;;) {
            auto row = st->step();
            if (!row) return setError(base, row.error().message);
            if (!*row) break;
            auto chunk = decodeChunk(st->blob(0), st->blobSize(0));
            if (!chunk) return setError(base, fmt::format("series {}: {}", s.id, chunk.error().message));
            size_t m = 0;
            for (const Point& p : chunk->points) {
                std::string token = p.missing ? chunk->missingTokens[m++] : std::string();
                if (p.tsNs < from || p.tsNs > to) continue;
                all.emplace_back(Point{saturatingAdd(p.tsNs, s.offset), p.value, p.missing}, std::move(token));
            }
        }
        std::stable_sort(all.begin(), all.end(),
                         [](const auto& a, const auto& b) { return a.first.tsNs < b.first.tsNs; });
        for (auto& [p, token] : all) {
            cur.points.points.push_back(p);
            cur.points.missingTokens.push_back(std::move(token)); // one per point here (empty when present)
        }
        cur.pointIndex = 0;
        if (!cur.points.points.empty()) return SQLITE_OK;
    }
    return SQLITE_OK;
}

int xFilter(sqlite3_vtab_cursor* base, int idxNum, const char*, int argc, sqlite3_value** argv)
{
    auto& cur = *reinterpret_cast<Cursor*>(base);
    auto* vtab = reinterpret_cast<VTab*>(base->pVtab);
    cur = Cursor{*base, {}, 0, {}, 0, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 0};
    std::string sql = "SELECT s.id, n.name, d.kind || CASE WHEN d.name = '' THEN '' ELSE ':' || d.name END, s.metric, "
                      "n.clock_offset_ns FROM series s JOIN device d ON d.id = s.device_id JOIN node n ON n.id = "
                      "d.node_id WHERE 1";
    int arg = 0;
    std::vector<std::pair<std::string, sqlite3_value*>> binds;
    auto take = [&](int bit, const char* clause) {
        if ((idxNum & bit) && arg < argc) {
            sql += clause;
            binds.emplace_back(clause, argv[arg++]);
        }
    };
    take(kNodeEq, " AND n.name = ?");
    take(kDeviceEq, " AND (d.kind || CASE WHEN d.name = '' THEN '' ELSE ':' || d.name END) = ?");
    take(kMetricEq, " AND s.metric = ?");
    take(kSeriesEq, " AND s.id = ?");
    if ((idxNum & kTsLow) && arg < argc) {
        if (sqlite3_value_numeric_type(argv[arg]) != SQLITE_NULL) {
            cur.from = sqlite3_value_int64(argv[arg]);
            if (idxNum & 64) cur.to = cur.from;
        }
        ++arg;
    }
    if ((idxNum & kTsHigh) && arg < argc) {
        if (sqlite3_value_numeric_type(argv[arg]) != SQLITE_NULL) cur.to = sqlite3_value_int64(argv[arg]);
        ++arg;
    }
    sql += " ORDER BY n.name, d.kind, length(d.name), d.name, s.metric, s.id";
    auto st = Statement::prepare(vtab->db, sql);
    if (!st) return setError(base, st.error().message);
    for (size_t i = 0; i < binds.size(); ++i)
        sqlite3_bind_value(st->get(), static_cast<int>(i + 1), binds[i].second);
    for (;;) {
        auto row = st->step();
        if (!row) return setError(base, row.error().message);
        if (!*row) break;
        cur.series.push_back({st->int64(0), st->text(1), st->text(2), st->text(3), st->int64(4)});
    }
    return loadSeries(cur, vtab->db, base);
}

int xNext(sqlite3_vtab_cursor* base)
{
    auto& cur = *reinterpret_cast<Cursor*>(base);
    ++cur.rowid;
    if (++cur.pointIndex < cur.points.points.size()) return SQLITE_OK;
    ++cur.seriesIndex;
    return loadSeries(cur, reinterpret_cast<VTab*>(base->pVtab)->db, base);
}

int xEof(sqlite3_vtab_cursor* base)
{
    const auto& cur = *reinterpret_cast<Cursor*>(base);
    return cur.seriesIndex >= cur.series.size() ? 1 : 0;
}

int xColumn(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int col)
{
    const auto& cur = *reinterpret_cast<Cursor*>(base);
    const SeriesRef& s = cur.series[cur.seriesIndex];
    const Point& p = cur.points.points[cur.pointIndex];
    switch (col) {
    case kNode:
        sqlite3_result_text(ctx, s.node.c_str(), -1, SQLITE_TRANSIENT);
        break;
    case kDevice:
        sqlite3_result_text(ctx, s.device.c_str(), -1, SQLITE_TRANSIENT);
        break;
    case kMetric:
        sqlite3_result_text(ctx, s.metric.c_str(), -1, SQLITE_TRANSIENT);
        break;
    case kTs:
        sqlite3_result_int64(ctx, p.tsNs);
        break;
    case kValue:
        if (p.missing)
            sqlite3_result_null(ctx);
        else
            sqlite3_result_double(ctx, p.value);
        break;
    case kMissing:
        sqlite3_result_int(ctx, p.missing ? 1 : 0);
        break;
    case kToken: {
        const std::string& t = cur.points.missingTokens[cur.pointIndex];
        if (p.missing)
            sqlite3_result_text(ctx, t.c_str(), -1, SQLITE_TRANSIENT);
        else
            sqlite3_result_null(ctx);
        break;
    }
    case kSeriesId:
        sqlite3_result_int64(ctx, s.id);
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

} // namespace

Status registerSeriesPoints(sqlite3* db)
{
    if (sqlite3_create_module(db, "series_points", &kModule, nullptr) != SQLITE_OK)
        return sqliteError(db, "cannot register series_points");
    return okStatus();
}

} // namespace runlens::store
