#include "analysis/store/trace_writer.h"

#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"

#include <algorithm>
#include <array>
#include <sqlite3.h>

namespace runlens::store {
namespace {

constexpr std::array<std::string_view, kTraceCategoryCount> kCategoryNames = {
    "cpu_op",          "user_annotation", "gpu_user_annotation",
    "python_function", "cuda_runtime",    "cuda_driver",
    "kernel",          "comm_kernel",     "memcpy",
    "memset",          "collective",      "other"};

} // namespace

std::string_view traceCategoryName(TraceCategory category)
{
    return kCategoryNames[static_cast<size_t>(category)];
}

std::optional<TraceCategory> traceCategoryFromName(std::string_view name)
{
    const auto it = std::find(kCategoryNames.begin(), kCategoryNames.end(), name);
    if (it == kCategoryNames.end()) return std::nullopt;
    return static_cast<TraceCategory>(it - kCategoryNames.begin());
}

TraceWriter::TraceWriter(RunWriter& writer) : m_writer(writer) {}

Status TraceWriter::prepare()
{
    if (m_prepared) return okStatus();
    sqlite3* h = m_writer.database().handle();
    struct
    {
        Statement* stmt;
        const char* sql;
    } const all[] = {
        {&m_insTrack, "INSERT INTO trace_track(node_id, rank, kind, pid, tid, name, device_id) VALUES (?,?,?,?,?,?,?) "
                      "ON CONFLICT(node_id, rank, kind, pid, tid) DO UPDATE SET "
                      "name = CASE WHEN name = '' THEN excluded.name ELSE name END, "
                      "device_id = coalesce(device_id, excluded.device_id) RETURNING id"},
        {&m_insName,
         "INSERT INTO trace_name(name) VALUES (?) ON CONFLICT(name) DO UPDATE SET name = name RETURNING id"},
        {&m_insSlice, "INSERT INTO trace_slice(track_id, category, name_id, ts_ns, dur_ns, correlation, import_id) "
                      "VALUES (?,?,?,?,?,?,?)"},
    };
    std::string batch = "INSERT INTO trace_slice(track_id, category, name_id, ts_ns, dur_ns, correlation, import_id) "
                        "VALUES (?,?,?,?,?,?,?)";
    for (size_t i = 1; i < kBatchRows; ++i)
        batch += ",(?,?,?,?,?,?,?)";
    RUNLENS_ASSIGN_OR_RETURN(auto batchSt, Statement::prepare(h, batch));
    m_insBatch = std::move(batchSt);
    for (const auto& s : all) {
        auto st = Statement::prepare(h, s.sql);
        if (!st) {
            Error e = st.error();
            if (e.message.find("no such table: trace_") != std::string::npos)
                e.message = "this run database has no trace tables (it was created by an older RunLens): import "
                            "traces into a new run (" +
                            e.message + ")";
            return e;
        }
        *s.stmt = std::move(st.value());
    }
    m_prepared = true;
    return okStatus();
}

Expected<int64_t> TraceWriter::track(int64_t nodeId, int64_t rank, std::string_view kind, std::string_view pid,
                                     std::string_view tid, std::string_view name, std::optional<int64_t> deviceId)
{
    RUNLENS_TRY(prepare());
    m_insTrack.bind(1, nodeId).bind(2, rank).bind(3, kind).bind(4, pid).bind(5, tid).bind(6, name);
    if (deviceId)
        m_insTrack.bind(7, *deviceId);
    else
        m_insTrack.bindNull(7);
    auto row = m_insTrack.step();
    if (!row) return row.error();
    const int64_t id = m_insTrack.int64(0);
    m_insTrack.reset();
    return id;
}

Expected<int64_t> TraceWriter::name(std::string_view name)
{
    if (auto it = m_names.find(std::string(name)); it != m_names.end()) return it->second;
    RUNLENS_TRY(prepare());
    m_insName.bind(1, name);
    auto row = m_insName.step();
    if (!row) return row.error();
    const int64_t id = m_insName.int64(0);
    m_insName.reset();
    m_names.emplace(std::string(name), id);
    return id;
}

Status TraceWriter::slice(int64_t trackId, TraceCategory category, int64_t nameId, int64_t tsNs, int64_t durNs,
                          std::optional<int64_t> correlation)
{
    RUNLENS_TRY(prepare());
    m_rows.push_back({trackId, nameId, tsNs, durNs, correlation, category});
    int64_t& longest = m_maxDur[trackId];
    longest = std::max(longest, durNs);
    ++m_slices;
    if (m_rows.size() < kBatchRows) return okStatus();
    Status s = insert(m_rows.data(), m_rows.size());
    m_rows.clear();
    return s;
}

Status TraceWriter::insert(const Row* rows, size_t n)
{
    Statement& st = n == kBatchRows ? m_insBatch : m_insSlice;
    if (n != kBatchRows && n != 1) {
        for (size_t i = 0; i < n; ++i)
            if (Status s = insert(rows + i, 1); !s) return s;
        return okStatus();
    }
    for (size_t i = 0; i < n; ++i) {
        const Row& r = rows[i];
        const int p = static_cast<int>(i * 7);
        const std::string_view category = traceCategoryName(r.category); // static text: no copy
        st.bind(p + 1, r.trackId);
        sqlite3_bind_text(st.get(), p + 2, category.data(), static_cast<int>(category.size()), SQLITE_STATIC);
        st.bind(p + 3, r.nameId).bind(p + 4, r.tsNs).bind(p + 5, r.durNs);
        if (r.correlation)
            st.bind(p + 6, *r.correlation);
        else
            st.bindNull(p + 6);
        st.bind(p + 7, m_writer.importId());
    }
    return st.exec();
}

Status TraceWriter::finish()
{
    RUNLENS_TRY(insert(m_rows.data(), m_rows.size()));
    m_rows.clear();
    if (m_maxDur.empty()) return okStatus();
    RUNLENS_ASSIGN_OR_RETURN(auto upd,
                             Statement::prepare(m_writer.database().handle(),
                                                "UPDATE trace_track SET max_dur_ns = max(max_dur_ns, ?) WHERE id = ?"));
    for (const auto& [track, longest] : m_maxDur) {
        upd.bind(1, longest).bind(2, track);
        RUNLENS_TRY(upd.exec());
    }
    return okStatus();
}

} // namespace runlens::store
