#include "importers/trace/chrome_trace_importer.h"

#include "analysis/store/trace_writer.h"
#include "importers/common/text_fields.h"
#include "importers/common/untimed.h"
#include "importers/common/whole_input.h"
#include "importers/diagnostic_kinds.h"
#include "importers/trace/chrome_trace_parse.h"
#include "importers/trace/trace_busy.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <limits>
#include <map>
#ifdef __linux__
#include <sys/mman.h>
#endif

namespace runlens::importers {
namespace {

using store::TraceCategory;
using trace::ParsedTrace;

constexpr int64_t kEpochNs = 1'000'000'000'000'000'000; // 2001-09-09: a ts past it (as ns) is an epoch time
constexpr int64_t kCheckpointEvery = 16384;

// A large buffer filled once: transparent huge pages spare most of its page faults (which otherwise cost a
// good part of the import). Advice only: when it is not taken, nothing changes.
void adviseHugePages(const char* data, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t skip = (kHuge - reinterpret_cast<uintptr_t>(data) % kHuge) % kHuge; // to the first whole page
    const size_t whole = size > skip ? (size - skip) & ~(kHuge - 1) : 0;
    if (whole > 0) madvise(const_cast<char*>(data + skip), whole, MADV_HUGEPAGE);
#else
    (void)data;
    (void)size;
#endif
}

// How a trace's own ts become epoch nanoseconds.
struct Clock
{
    int64_t offsetNs = 0;
    bool epochOnly = false; // ts are epoch µs: a slice whose ts is not one is dropped
    std::string note;
};

// Kineto since 2024 counts ts from baseTimeNanoseconds; older traces write epoch µs. Anything else (py-spy's
// chrometrace counts from its own start) is placed only by start=, the wall time of the first event: a trace
// is never stored at a made-up time.
Expected<Clock> traceClock(const ParsedTrace& t, std::optional<int64_t> startNs, const std::string& display)
{
    if (t.baseTimeNs)
        return Clock{*t.baseTimeNs, false,
                     fmt::format("times: baseTimeNanoseconds {} + ts{}", *t.baseTimeNs,
                                 startNs ? " (start= ignored: the trace has its own clock)" : "")};
    if (t.slices.empty()) return Clock{0, false, "times: none (no slices)"};
    size_t epoch = 0;
    int64_t first = std::numeric_limits<int64_t>::max();
    for (const trace::Slice& s : t.slices) {
        epoch += s.tsNs >= kEpochNs ? 1 : 0;
        first = std::min(first, s.tsNs);
    }
    if (epoch * 2 > t.slices.size())
        return Clock{0, true,
                     fmt::format("times: ts read as epoch microseconds (no baseTimeNanoseconds){}",
                                 startNs ? "; start= ignored: the trace has its own clock" : "")};
    if (startNs)
        return Clock{*startNs - first, false,
                     fmt::format("times: ts relative (first event at {:.3f} µs), placed by start= at {}",
                                 static_cast<double>(first) / 1e3, untimed::utcText(*startNs))};
    return makeError(ErrorCode::Format,
                     fmt::format("the trace's times are relative (first event at ts {:.3f} µs, no "
                                 "baseTimeNanoseconds, not epoch microseconds): give --option start=TIME, the wall "
                                 "time of its first event (epoch seconds or ISO 8601), to place it",
                                 static_cast<double>(first) / 1e3),
                     {display});
}

std::string categoryCounts(const std::array<int64_t, store::kTraceCategoryCount>& counts)
{
    std::string out;
    for (int c = 0; c < store::kTraceCategoryCount; ++c)
        if (counts[c] > 0)
            out += fmt::format("{}{} {}", out.empty() ? "" : ", ",
                               store::traceCategoryName(static_cast<TraceCategory>(c)), counts[c]);
    return out.empty() ? "none" : out;
}

class TraceStore
{
public:
    TraceStore(ImportContext& ctx, ParsedTrace& t) : m_ctx(ctx), m_t(t), m_writer(ctx.writer) {}
    Status write(const Clock& clock, int64_t binNs);

private:
    Expected<int64_t> gpu(int64_t index);
    Expected<int64_t> track(uint32_t index);

    ImportContext& m_ctx;
    ParsedTrace& m_t;
    store::TraceWriter m_writer;
    std::map<int64_t, int64_t> m_gpus; // index → device id
    std::vector<int64_t> m_tracks;     // ids, 0 = not written yet
    trace::BusyIntervals m_busy;
    int64_t m_gpuTracksWithoutDevice = 0;
};

Expected<int64_t> TraceStore::gpu(int64_t index)
{
    if (auto it = m_gpus.find(index); it != m_gpus.end()) return it->second;
    auto id = m_ctx.writer.device(m_ctx.nodeId, "gpu", std::to_string(index));
    if (id) m_gpus.emplace(index, *id);
    return id;
}

Expected<int64_t> TraceStore::track(uint32_t index)
{
    if (m_tracks[index] != 0) return m_tracks[index];
    const trace::Track& t = m_t.tracks[index];
    std::optional<int64_t> device;
    if (t.gpu && t.device) {
        RUNLENS_ASSIGN_OR_RETURN(auto id, gpu(*t.device));
        device = id;
        m_busy.kernels[*t.device];
    }
    m_busy.collectiveSeries |= !t.gpu;
    m_gpuTracksWithoutDevice += t.gpu && !t.device ? 1 : 0;
    auto id = m_writer.track(m_ctx.nodeId, m_t.rank.value_or(-1), t.gpu ? "gpu" : "cpu", t.pid, t.tid, t.name, device);
    if (id) m_tracks[index] = *id;
    return id;
}

Status TraceStore::write(const Clock& clock, int64_t binNs)
{
    const std::string& display = m_ctx.lines.input().displayName();
    for (const trace::DeviceProperties& d : m_t.devices) {
        RUNLENS_ASSIGN_OR_RETURN(auto id, gpu(d.id));
        std::vector<std::pair<const char*, std::string>> attrs;
        if (!d.name.empty()) attrs.emplace_back("name", d.name);
        if (d.totalMemoryBytes) attrs.emplace_back("total_memory_bytes", std::to_string(*d.totalMemoryBytes));
        if (d.smCount) attrs.emplace_back("sm_count", std::to_string(*d.smCount));
        if (d.computeMajor && d.computeMinor)
            attrs.emplace_back("compute_capability", fmt::format("{}.{}", *d.computeMajor, *d.computeMinor));
        for (const auto& [key, value] : attrs)
            if (Status s = m_ctx.writer.setDeviceAttribute(id, key, value); !s) return s;
    }

    // In track and time order: the (track_id, ts_ns) index grows at its end.
    std::sort(m_t.slices.begin(), m_t.slices.end(), [](const trace::Slice& a, const trace::Slice& b) {
        return a.track != b.track ? a.track < b.track : a.tsNs < b.tsNs;
    });
    m_tracks.assign(m_t.tracks.size(), 0);
    std::vector<int64_t> names(m_t.names.size(), 0);
    std::array<int64_t, store::kTraceCategoryCount> perCategory{};
    int64_t spanStart = std::numeric_limits<int64_t>::max(), spanEnd = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < m_t.slices.size(); ++i) {
        const trace::Slice& s = m_t.slices[i];
        int64_t ts = 0, end = 0;
        if ((clock.epochOnly && s.tsNs < kEpochNs) || __builtin_add_overflow(s.tsNs, clock.offsetNs, &ts) ||
            __builtin_add_overflow(ts, s.durNs, &end)) {
            m_ctx.diagnostics.report(diag::kBadTimestamp, {display},
                                     fmt::format("\"{}\": ts {:.3f} µs is not an epoch time like the rest of the "
                                                 "trace, skipped",
                                                 clip(m_t.names[s.name]), static_cast<double>(s.tsNs) / 1e3));
            continue;
        }
        RUNLENS_ASSIGN_OR_RETURN(auto track, this->track(s.track));
        if (names[s.name] == 0) {
            RUNLENS_ASSIGN_OR_RETURN(auto id, m_writer.name(m_t.names[s.name]));
            names[s.name] = id;
        }
        RUNLENS_TRY(m_writer.slice(track, s.category, names[s.name], ts, s.durNs, s.correlation));
        ++perCategory[static_cast<size_t>(s.category)];
        spanStart = std::min(spanStart, ts);
        spanEnd = std::max(spanEnd, end);
        const trace::Track& t = m_t.tracks[s.track];
        if ((s.category == TraceCategory::Kernel || s.category == TraceCategory::CommKernel) && t.gpu && t.device) {
            m_busy.kernels[*t.device].push_back({ts, end});
            if (s.category == TraceCategory::CommKernel) m_busy.comm[*t.device].push_back({ts, end});
        } else if (s.category == TraceCategory::Collective) {
            m_busy.collectives.push_back({ts, end});
        }
        if ((i + 1) % kCheckpointEvery == 0)
            if (Status st = m_ctx.checkpoint(); !st) return st;
    }
    RUNLENS_TRY(m_writer.finish());

    std::vector<std::string>& notes = m_ctx.notes;
    if (m_t.rank)
        notes.push_back(fmt::format("rank {}{}{} (distributedInfo)", *m_t.rank,
                                    m_t.worldSize ? fmt::format(" of world size {}", *m_t.worldSize) : "",
                                    m_t.backend.empty() ? "" : ", backend " + m_t.backend));
    else
        notes.emplace_back(m_t.distributedInfo ? "distributedInfo without a readable rank: rank unknown, stored as -1"
                                               : "no distributedInfo: rank unknown, stored as -1");
    notes.push_back(clock.note);
    const auto written = std::count_if(m_tracks.begin(), m_tracks.end(), [](int64_t id) { return id != 0; });
    notes.push_back(fmt::format("{} slices on {} track{} ({} complete, {} B/E pairs, {} instants): {}",
                                m_writer.slicesWritten(), written, written == 1 ? "" : "s", m_t.complete,
                                m_t.durationPairs, m_t.instants, categoryCounts(perCategory)));
    if (!m_t.otherCategories.empty()) {
        std::string other;
        for (const auto& [cat, n] : m_t.otherCategories)
            other += fmt::format("{}{} {}", other.empty() ? "" : ", ", cat, n);
        notes.push_back("stored as category other: " + other);
    }
    if (m_t.flows > 0)
        notes.push_back(fmt::format("{} flow events (s/t/f: CPU launch → GPU activity links) counted, not stored; "
                                    "slices keep args.correlation",
                                    m_t.flows));
    if (m_t.counters > 0) notes.push_back(fmt::format("{} counter events (ph C) not imported", m_t.counters));
    if (m_t.unclosedArray) notes.emplace_back("the event array has no closing ] (the format allows it)");
    if (m_gpuTracksWithoutDevice > 0)
        notes.push_back(fmt::format("{} GPU tracks without a device index (no args.device, pid not a number): not "
                                    "in the busy series",
                                    m_gpuTracksWithoutDevice));
    if (spanEnd <= spanStart) return okStatus();
    // A trace with no collective at all, of no known rank, is not one of a distributed job: no collective series.
    m_busy.collectiveSeries &= m_t.rank.has_value() || !m_busy.collectives.empty();
    m_busy.spanStartNs = spanStart;
    m_busy.spanEndNs = spanEnd;
    return trace::writeBusySeries(m_ctx, m_busy, m_t.rank.value_or(-1), binNs);
}

} // namespace

int ChromeTraceImporter::sniff(const SniffInput& input) const
{
    std::string_view h = input.head;
    if (h.starts_with("\xef\xbb\xbf")) h.remove_prefix(3);
    const size_t first = h.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return 0;
    h.remove_prefix(first);
    const auto has = [&](std::string_view s) { return h.find(s) != std::string_view::npos; };
    const auto hasKey = [&](std::string_view key) { // "key" followed by optional blanks and a colon
        for (size_t at = h.find(key); at != std::string_view::npos; at = h.find(key, at + 1)) {
            const size_t next = h.find_first_not_of(" \t\r\n", at + key.size());
            if (next != std::string_view::npos && h[next] == ':') return true;
        }
        return false;
    };
    if (h.front() == '{') {
        if (hasKey("\"traceEvents\"")) return 95;
        if (hasKey("\"schemaVersion\"") && (has("\"deviceProperties\"") || has("\"distributedInfo\""))) return 70;
        return 0;
    }
    if (h.front() != '[') return 0;
    const size_t element = h.find_first_not_of(" \t\r\n", 1);
    if (element == std::string_view::npos || h[element] != '{') return 0;
    return hasKey("\"ph\"") && hasKey("\"ts\"") ? 90 : 0;
}

Status ChromeTraceImporter::run(ImportContext& ctx) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(ctx.options.timeZone));
    RUNLENS_ASSIGN_OR_RETURN(auto placement, untimed::readPlacement(ctx.options, tz, 1'000'000'000, 0));
    RUNLENS_ASSIGN_OR_RETURN(auto binNs, trace::busyIntervalNs(ctx.options));

    // Pieces of the trace are parsed one at a time: no format limit beyond the cap.
    RUNLENS_ASSIGN_OR_RETURN(auto maxBytes, maxDocumentBytes(ctx.options, std::numeric_limits<uint64_t>::max()));

    InputStream& in = ctx.lines.input();
    std::string text;
    for (bool firstBlock = true;; firstBlock = false) {
        RUNLENS_ASSIGN_OR_RETURN(auto block, in.nextBlock());
        if (block.empty()) break;
        RUNLENS_TRY(documentFits(in, text.size(), block.size(), maxBytes));
        if (firstBlock) { // the decoded size: known for plain text, a guess for compressed input
            text.reserve(std::min(in.rawSize() * (in.compression() == Compression::None ? 1 : 4), maxBytes.maxBytes));
            adviseHugePages(text.data(), text.capacity());
        }
        text.append(block);
    }
    ParsedTrace t;
    RUNLENS_TRY(trace::parseChromeTrace(text, ctx, t));
    text = std::string(); // the parse copied what it keeps
    auto clock = traceClock(t, placement.startNs, in.displayName());
    if (!clock) return clock.error();
    TraceStore store(ctx, t);
    return store.write(*clock, binNs);
}

} // namespace runlens::importers
