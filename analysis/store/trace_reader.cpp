#include "analysis/store/trace_reader.h"

#include "analysis/store/run_database.h"
#include "analysis/store/saturating.h"
#include "analysis/store/sqlite_util.h"

#include <algorithm>
#include <limits>

namespace runlens::store {

Expected<std::vector<TraceTrackInfo>> TraceReader::tracks()
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto st, Statement::prepare(
                     m_db.handle(),
                     "SELECT t.id, t.node_id, n.name, t.rank, t.kind, t.pid, t.tid, t.name, t.device_id, "
                     "coalesce(d.kind || ':' || d.name, ''), n.clock_offset_ns, t.max_dur_ns "
                     "FROM trace_track t JOIN node n ON n.id = t.node_id LEFT JOIN device d ON d.id = t.device_id "
                     "ORDER BY n.name, t.rank, t.kind, t.pid, t.tid"));
    return st.collect<TraceTrackInfo>([](const Statement& row) {
        TraceTrackInfo t;
        t.id = row.int64(0);
        t.nodeId = row.int64(1);
        t.node = row.text(2);
        t.rank = row.int64(3);
        t.kind = row.text(4);
        t.pid = row.text(5);
        t.tid = row.text(6);
        t.name = row.text(7);
        if (!row.isNull(8)) t.deviceId = row.int64(8);
        t.device = row.text(9);
        t.clockOffsetNs = row.int64(10);
        t.maxDurNs = row.int64(11);
        return t;
    });
}

Expected<std::vector<TraceSummaryRow>> TraceReader::summary()
{
    RUNLENS_ASSIGN_OR_RETURN(auto st,
                             Statement::prepare(m_db.handle(),
                                                "SELECT node, rank, category, slices, total_dur_ns, first_ns, last_ns "
                                                "FROM trace_summary ORDER BY node, rank, category"));
    return st.collect<TraceSummaryRow>([](const Statement& row) {
        return TraceSummaryRow{
            row.text(0),  row.int64(1), traceCategoryFromName(row.text(2)).value_or(TraceCategory::Other),
            row.int64(3), row.int64(4), row.int64(5),
            row.int64(6)};
    });
}

Expected<std::vector<TraceSliceInfo>> TraceReader::slices(TimeWindow window, const TraceFilter& filter)
{
    RUNLENS_ASSIGN_OR_RETURN(auto all, tracks());
    std::string sql = "SELECT s.ts_ns, s.dur_ns, s.category, n.name, s.correlation FROM trace_slice s "
                      "JOIN trace_name n ON n.id = s.name_id WHERE s.track_id = ? AND s.ts_ns BETWEEN ? AND ? "
                      "AND s.ts_ns + s.dur_ns >= ?";
    if (!filter.categories.empty()) {
        sql += " AND s.category IN (";
        for (size_t i = 0; i < filter.categories.size(); ++i)
            sql += i == 0 ? "?" : ",?";
        sql += ")";
    }
    sql += " ORDER BY s.ts_ns";
    RUNLENS_ASSIGN_OR_RETURN(auto st, Statement::prepare(m_db.handle(), sql));

    std::vector<TraceSliceInfo> out;
    for (const TraceTrackInfo& t : all) {
        if ((filter.rank && t.rank != *filter.rank) || (filter.nodeId && t.nodeId != *filter.nodeId) ||
            (filter.trackId && t.id != *filter.trackId))
            continue;
        // Stored times are the node's own clock; a slice overlapping the window starts at most maxDur before it.
        const int64_t from = saturatingSub(window.fromNs, t.clockOffsetNs);
        const int64_t to = saturatingSub(window.toNs, t.clockOffsetNs);
        st.bind(1, t.id).bind(2, saturatingSub(from, t.maxDurNs)).bind(3, to).bind(4, from);
        for (size_t i = 0; i < filter.categories.size(); ++i)
            st.bind(static_cast<int>(5 + i), traceCategoryName(filter.categories[i]));
        RUNLENS_TRY(st.forEachRow([&](const Statement& row) {
            TraceSliceInfo s;
            s.trackId = t.id;
            s.tsNs = saturatingAdd(row.int64(0), t.clockOffsetNs);
            s.durNs = row.int64(1);
            s.category = traceCategoryFromName(row.text(2)).value_or(TraceCategory::Other);
            s.name = row.text(3);
            if (!row.isNull(4)) s.correlation = row.int64(4);
            out.push_back(std::move(s));
        }));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const TraceSliceInfo& a, const TraceSliceInfo& b) { return a.tsNs < b.tsNs; });
    return out;
}

Expected<int64_t> TraceReader::coveredNs(TimeWindow window, const TraceFilter& filter)
{
    RUNLENS_ASSIGN_OR_RETURN(auto found, slices(window, filter));
    // Slices come ordered by start: merge as we go, clipped to the window.
    int64_t covered = 0;
    int64_t runStart = 0, runEnd = 0;
    bool open = false;
    for (const TraceSliceInfo& s : found) {
        const int64_t start = std::max(s.tsNs, window.fromNs);
        const int64_t end = std::min(saturatingAdd(s.tsNs, s.durNs), window.toNs);
        if (end <= start) continue;
        if (open && start <= runEnd) {
            runEnd = std::max(runEnd, end);
            continue;
        }
        if (open) covered += runEnd - runStart;
        runStart = start;
        runEnd = end;
        open = true;
    }
    if (open) covered += runEnd - runStart;
    return covered;
}

} // namespace runlens::store
