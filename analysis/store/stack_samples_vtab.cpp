#include "analysis/store/stack_samples_vtab.h"

#include "analysis/store/saturating.h"
#include "analysis/store/stack_codec.h"
#include "analysis/store/vtab_support.h"

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

struct StackSamples
{
    static constexpr const char* kSchema = "CREATE TABLE x(node TEXT, process TEXT, thread TEXT, ts_ns INTEGER, "
                                           "callsite_id INTEGER, sample_count INTEGER, weight REAL, "
                                           "thread_id INTEGER, import_id INTEGER)";

    struct Group
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
    struct Bounds
    {
    };

    static int bestIndex(sqlite3_index_info* info)
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

    static GroupQuery groupQuery(int idxNum, int argc, sqlite3_value** argv, Bounds&)
    {
        GroupQuery q{"SELECT t.id, n.name, t.process, t.name, n.clock_offset_ns FROM thread t JOIN node n ON "
                     "n.id = t.node_id",
                     {}};
        if (idxNum == 1 && argc > 0) {
            q.sql += " WHERE t.id = ?";
            q.args.push_back(argv[0]);
        }
        q.sql += " ORDER BY t.id";
        return q;
    }

    static Group groupFromRow(const Statement& st)
    {
        return {st.int64(0), st.text(1), st.text(2), st.text(3), st.int64(4)};
    }

    // The thread's timed samples in time order, then its untimed stacks.
    static Status loadRows(sqlite3* db, const Group& t, const Bounds&, std::vector<Row>& rows)
    {
        RUNLENS_ASSIGN_OR_RETURN(
            auto chunks,
            Statement::prepare(db, "SELECT import_id, data FROM stack_chunk WHERE thread_id = ? ORDER BY first_ns"));
        chunks.bind(1, t.id);
        RUNLENS_TRY(chunks.forEachRow([&](const Statement& row) -> Status {
            auto samples = decodeStackSamples(row.blob(1), row.blobSize(1));
            if (!samples)
                return makeError(samples.error().code, fmt::format("thread {}: {}", t.id, samples.error().message));
            for (const StackSample& s : *samples)
                rows.push_back({saturatingAdd(s.tsNs, t.offset), s.callsiteId, s.count, row.int64(0), s.weight});
            return okStatus();
        }));
        std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return *a.ts < *b.ts; });
        RUNLENS_ASSIGN_OR_RETURN(auto untimed,
                                 Statement::prepare(db, "SELECT callsite_id, sample_count, weight, import_id FROM "
                                                        "stack_sample WHERE thread_id = ? ORDER BY id"));
        untimed.bind(1, t.id);
        return untimed.forEachRow([&](const Statement& row) {
            rows.push_back({std::nullopt, row.int64(0), row.int64(1), row.int64(3), row.real(2)});
        });
    }

    static ColumnValue column(const Group& t, const Row& r, int col)
    {
        switch (col) {
        case kNode:
            return &t.node;
        case kProcess:
            return &t.process;
        case kThread:
            return &t.name;
        case kTs:
            return r.ts ? ColumnValue(*r.ts) : ColumnValue();
        case kCallsite:
            return r.callsite;
        case kCount:
            return r.count;
        case kWeight:
            return r.weight;
        case kThreadId:
            return t.id;
        case kImportId:
            return r.importId;
        default:
            return {};
        }
    }
};

} // namespace

Status registerStackSamples(sqlite3* db)
{
    return TableFunction<StackSamples>::registerIn(db, "stack_samples");
}

} // namespace runlens::store
