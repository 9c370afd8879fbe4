#pragma once

// Writes the trace events of one import (Chrome Trace Event / Kineto): tracks, interned slice names and
// slices, in the tables of schema.sql's "Trace events" block. It writes through the RunWriter's database
// and import, inside the import's transaction.

#include "analysis/store/error.h"
#include "analysis/store/sqlite_util.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace runlens::store {

class RunWriter;

// The canonical slice categories, stored by name (trace_slice.category).
enum class TraceCategory : uint8_t
{
    CpuOp,
    UserAnnotation,
    GpuUserAnnotation,
    PythonFunction,
    CudaRuntime,
    CudaDriver,
    Kernel,
    CommKernel, // a kernel of a communication library (NCCL, RCCL)
    Memcpy,
    Memset,
    Collective, // a CPU-side collective span (gloo:all_reduce, nccl:all_reduce, record_param_comms, c10d::...)
    Other,
};
inline constexpr int kTraceCategoryCount = static_cast<int>(TraceCategory::Other) + 1;

std::string_view traceCategoryName(TraceCategory category);           // "cpu_op", "comm_kernel", ...
std::optional<TraceCategory> traceCategoryFromName(std::string_view); // canonical names only

class TraceWriter
{
public:
    explicit TraceWriter(RunWriter& writer);

    // The track of (node, rank, kind, pid, tid), created when new; an empty name or a missing device of an
    // existing track is filled in. kind is "cpu" or "gpu"; deviceId is the gpu:<index> device of a GPU track.
    Expected<int64_t> track(int64_t nodeId, int64_t rank, std::string_view kind, std::string_view pid,
                            std::string_view tid, std::string_view name, std::optional<int64_t> deviceId);
    // The id of an interned slice name.
    Expected<int64_t> name(std::string_view name);
    // Slices are buffered and inserted many rows a statement; finish() writes the rest.
    Status slice(int64_t trackId, TraceCategory category, int64_t nameId, int64_t tsNs, int64_t durNs,
                 std::optional<int64_t> correlation);
    // Writes the buffered slices and records each track's longest slice (for window searches). Call once,
    // after the last slice.
    Status finish();
    int64_t slicesWritten() const { return m_slices; }

private:
    static constexpr size_t kBatchRows = 64;
    struct Row
    {
        int64_t trackId, nameId, tsNs, durNs;
        std::optional<int64_t> correlation;
        TraceCategory category;
    };
    Status prepare();
    // Inserts rows with one statement (the batch statement for kBatchRows rows, else row by row).
    Status insert(const Row* rows, size_t n);

    RunWriter& m_writer;
    bool m_prepared = false;
    Statement m_insTrack, m_insName, m_insSlice, m_insBatch;
    std::vector<Row> m_rows;
    std::unordered_map<std::string, int64_t> m_names;
    std::unordered_map<int64_t, int64_t> m_maxDur; // by track id
    int64_t m_slices = 0;
};

} // namespace runlens::store
