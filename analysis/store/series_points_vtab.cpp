#include "analysis/store/series_points_vtab.h"

#include "analysis/store/chunk_codec.h"
#include "analysis/store/saturating.h"
#include "analysis/store/vtab_support.h"

#include <algorithm>
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
    kTsHigh = 32,
    kTsHighIsLow = 64 // a ts_ns = x constraint: the high bound is the low one
};

// The points of one series within the bounds, in time order, with their missing spellings.
struct PointRow
{
    Point point;
    std::string token; // empty when present
};

struct SeriesPoints
{
    static constexpr const char* kSchema = "CREATE TABLE x(node TEXT, device TEXT, metric TEXT, ts_ns INTEGER, "
                                           "value REAL, missing INTEGER, token TEXT, series_id INTEGER)";

    struct Group
    {
        int64_t id;
        std::string node, device, metric;
        int64_t offset;
    };
    using Row = PointRow;
    struct Bounds
    {
        int64_t from = std::numeric_limits<int64_t>::min();
        int64_t to = std::numeric_limits<int64_t>::max();
    };

    static int bestIndex(sqlite3_index_info* info)
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
                bits |= kTsHighIsLow;
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

    static GroupQuery groupQuery(int idxNum, int argc, sqlite3_value** argv, Bounds& bounds)
    {
        GroupQuery q{"SELECT s.id, n.name, d.kind || CASE WHEN d.name = '' THEN '' ELSE ':' || d.name END, "
                     "s.metric, n.clock_offset_ns FROM series s JOIN device d ON d.id = s.device_id JOIN node n ON "
                     "n.id = d.node_id WHERE 1",
                     {}};
        int arg = 0;
        auto take = [&](int bit, const char* clause) {
            if ((idxNum & bit) && arg < argc) {
                q.sql += clause;
                q.args.push_back(argv[arg++]);
            }
        };
        take(kNodeEq, " AND n.name = ?");
        take(kDeviceEq, " AND (d.kind || CASE WHEN d.name = '' THEN '' ELSE ':' || d.name END) = ?");
        take(kMetricEq, " AND s.metric = ?");
        take(kSeriesEq, " AND s.id = ?");
        if ((idxNum & kTsLow) && arg < argc) {
            if (sqlite3_value_numeric_type(argv[arg]) != SQLITE_NULL) {
                bounds.from = sqlite3_value_int64(argv[arg]);
                if (idxNum & kTsHighIsLow) bounds.to = bounds.from;
            }
            ++arg;
        }
        if ((idxNum & kTsHigh) && arg < argc) {
            if (sqlite3_value_numeric_type(argv[arg]) != SQLITE_NULL) bounds.to = sqlite3_value_int64(argv[arg]);
            ++arg;
        }
        q.sql += " ORDER BY n.name, d.kind, length(d.name), d.name, s.metric, s.id";
        return q;
    }

    static Group groupFromRow(const Statement& st)
    {
        return {st.int64(0), st.text(1), st.text(2), st.text(3), st.int64(4)};
    }

    // The series' points within the bounds (in stored time, the offset taken off), sorted by time.
    static Status loadRows(sqlite3* db, const Group& s, const Bounds& bounds, std::vector<Row>& rows)
    {
        const int64_t from =
            bounds.from == std::numeric_limits<int64_t>::min() ? bounds.from : saturatingSub(bounds.from, s.offset);
        const int64_t to =
            bounds.to == std::numeric_limits<int64_t>::max() ? bounds.to : saturatingSub(bounds.to, s.offset);
        RUNLENS_ASSIGN_OR_RETURN(auto st,
                                 Statement::prepare(db, "SELECT data FROM point_chunk WHERE series_id = ? "
                                                        "AND first_ns <= ? AND last_ns >= ? ORDER BY first_ns"));
        st.bind(1, s.id).bind(2, to).bind(3, from);
        RUNLENS_TRY(st.forEachRow([&](const Statement& row) -> Status {
            auto chunk = decodeChunk(row.blob(0), row.blobSize(0));
            if (!chunk) return makeError(chunk.error().code, fmt::format("series {}: {}", s.id, chunk.error().message));
            size_t m = 0;
            for (const Point& p : chunk->points) {
                std::string token = p.missing ? chunk->missingTokens[m++] : std::string();
                if (p.tsNs < from || p.tsNs > to) continue;
                rows.push_back({Point{saturatingAdd(p.tsNs, s.offset), p.value, p.missing}, std::move(token)});
            }
            return okStatus();
        }));
        std::stable_sort(rows.begin(), rows.end(),
                         [](const Row& a, const Row& b) { return a.point.tsNs < b.point.tsNs; });
        return okStatus();
    }

    static ColumnValue column(const Group& s, const Row& row, int col)
    {
        const Point& p = row.point;
        switch (col) {
        case kNode:
            return &s.node;
        case kDevice:
            return &s.device;
        case kMetric:
            return &s.metric;
        case kTs:
            return p.tsNs;
        case kValue:
            return p.missing ? ColumnValue() : p.value;
        case kMissing:
            return int64_t{p.missing ? 1 : 0};
        case kToken:
            return p.missing ? &row.token : ColumnValue();
        case kSeriesId:
            return s.id;
        default:
            return {};
        }
    }
};

} // namespace

Status registerSeriesPoints(sqlite3* db)
{
    return TableFunction<SeriesPoints>::registerIn(db, "series_points");
}

} // namespace runlens::store
