#include "analysis/store/import_queries.h"

#include "analysis/store/run_database.h"
#include "analysis/store/sqlite_util.h"

namespace runlens::store {

Expected<std::optional<ImportSpan>> importSpan(RunDatabase& db, int64_t importId)
{
    RUNLENS_ASSIGN_OR_RETURN(Statement st,
                             Statement::prepare(db.handle(),
                                                "SELECT (SELECT min(first_ns) FROM point_chunk WHERE import_id = ?1), "
                                                "(SELECT max(last_ns) FROM point_chunk WHERE import_id = ?1), "
                                                "(SELECT min(first_ns) FROM point_chunk WHERE import_id != ?1), "
                                                "(SELECT max(last_ns) FROM point_chunk WHERE import_id != ?1)"));
    st.bind(1, importId);
    RUNLENS_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row || st.isNull(0) || st.isNull(2)) return std::optional<ImportSpan>();
    return std::optional<ImportSpan>(ImportSpan{st.int64(0), st.int64(1), st.int64(2), st.int64(3)});
}

Expected<std::string> importAnchor(RunDatabase& db, int64_t importId)
{
    RUNLENS_ASSIGN_OR_RETURN(Statement st, Statement::prepare(db.handle(), "SELECT anchor FROM import WHERE id = ?"));
    st.bind(1, importId);
    RUNLENS_ASSIGN_OR_RETURN(bool row, st.step());
    return row ? st.text(0) : std::string();
}

Expected<std::vector<UnanchoredImport>> unanchoredImports(RunDatabase& db, int64_t beforeImportId)
{
    RUNLENS_ASSIGN_OR_RETURN(Statement st,
                             Statement::prepare(db.handle(), "SELECT i.path, i.format, n.name, n.name_source FROM "
                                                             "import i JOIN node n ON n.id = i.node_id WHERE i.anchor "
                                                             "= 'unanchored' AND i.id < ? ORDER BY i.id"));
    st.bind(1, beforeImportId);
    return st.collect<UnanchoredImport>([](const Statement& row) {
        return UnanchoredImport{row.text(0), row.text(1), row.text(2), row.text(3)};
    });
}

Expected<int64_t> nextImportId(RunDatabase& db)
{
    RUNLENS_ASSIGN_OR_RETURN(Statement st,
                             Statement::prepare(db.handle(), "SELECT coalesce(max(id), 0) + 1 FROM import"));
    RUNLENS_ASSIGN_OR_RETURN(bool row, st.step());
    return row ? st.int64(0) : int64_t(1);
}

Expected<std::optional<int64_t>> runStartNs(RunDatabase& db)
{
    RUNLENS_ASSIGN_OR_RETURN(
        Statement st,
        Statement::prepare(db.handle(),
                           "SELECT min(t) FROM (SELECT min(s.first_ns + n.clock_offset_ns) AS t FROM series s JOIN "
                           "device d ON d.id = s.device_id JOIN node n ON n.id = d.node_id UNION ALL SELECT "
                           "min(c.first_ns + n.clock_offset_ns) FROM stack_chunk c JOIN thread t ON t.id = c.thread_id "
                           "JOIN node n ON n.id = t.node_id)"));
    RUNLENS_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row || st.isNull(0)) return std::optional<int64_t>();
    return std::optional<int64_t>(st.int64(0));
}

} // namespace runlens::store
