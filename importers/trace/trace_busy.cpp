#include "importers/trace/trace_busy.h"

#include "importers/common/text_fields.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace runlens::importers::trace {
namespace {

constexpr int64_t kDefaultBinNs = 10'000'000;
constexpr int64_t kMaxBins = 5'000'000; // per series: a trace whose span needs more is not binned

int64_t floorDiv(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::string binText(int64_t ns)
{
    if (ns % 1'000'000'000 == 0) return fmt::format("{} s", ns / 1'000'000'000);
    if (ns % 1'000'000 == 0) return fmt::format("{} ms", ns / 1'000'000);
    if (ns % 1'000 == 0) return fmt::format("{} µs", ns / 1'000);
    return fmt::format("{} ns", ns);
}

} // namespace

BusyBins busyFraction(std::vector<Interval> intervals, int64_t spanStartNs, int64_t spanEndNs, int64_t binNs)
{
    BusyBins out;
    out.binNs = binNs;
    if (spanEndNs <= spanStartNs || binNs <= 0) return out;
    out.firstNs = floorDiv(spanStartNs, binNs) * binNs;
    const int64_t bins = floorDiv(spanEndNs - 1 - out.firstNs, binNs) + 1;
    std::vector<int64_t> covered(static_cast<size_t>(bins), 0);
    std::sort(intervals.begin(), intervals.end(),
              [](const Interval& a, const Interval& b) { return a.startNs < b.startNs; });
    auto addRun = [&](int64_t start, int64_t end) {
        start = std::max(start, spanStartNs);
        end = std::min(end, spanEndNs);
        for (int64_t b = floorDiv(start - out.firstNs, binNs); start < end; ++b) {
            const int64_t binEnd = out.firstNs + (b + 1) * binNs;
            const int64_t stop = std::min(end, binEnd);
            covered[static_cast<size_t>(b)] += stop - start;
            start = stop;
        }
    };
    bool open = false;
    int64_t runStart = 0, runEnd = 0;
    for (const Interval& i : intervals) {
        if (i.endNs <= i.startNs) continue;
        if (open && i.startNs <= runEnd) {
            runEnd = std::max(runEnd, i.endNs);
            continue;
        }
        if (open) addRun(runStart, runEnd);
        runStart = i.startNs;
        runEnd = i.endNs;
        open = true;
    }
    if (open) addRun(runStart, runEnd);
    out.values.resize(covered.size());
    for (size_t b = 0; b < covered.size(); ++b) {
        const int64_t binStart = out.firstNs + static_cast<int64_t>(b) * binNs;
        const int64_t observed = std::min(spanEndNs, binStart + binNs) - std::max(spanStartNs, binStart);
        const double f = observed > 0 ? static_cast<double>(covered[b]) / static_cast<double>(observed) : 0.0;
        out.values[b] = std::round(std::clamp(f, 0.0, 1.0) * 1e6) / 1e6;
    }
    return out;
}

Expected<int64_t> busyIntervalNs(const ImportOptions& options)
{
    auto it = options.extra.find("busy_interval");
    if (it == options.extra.end()) return kDefaultBinNs;
    std::string_view v = trim(it->second);
    double scale = 1e6;
    for (const auto& [suffix, ns] : {std::pair{"ns", 1.0}, std::pair{"us", 1e3}, std::pair{"\xc2\xb5s", 1e3},
                                     std::pair{"ms", 1e6}, std::pair{"s", 1e9}}) {
        const std::string_view sv(suffix);
        if (v.size() > sv.size() && v.ends_with(sv)) {
            scale = ns;
            v = trim(v.substr(0, v.size() - sv.size()));
            break;
        }
    }
    auto n = parseNumber(v);
    if (!n || !std::isfinite(*n) || *n * scale < 1e3 || *n * scale > 3.6e12)
        return makeError(ErrorCode::Usage, fmt::format("busy_interval={}: expected a time from 1us to 1h such as "
                                                       "10ms, 1s or 500us (a bare number counts ms)",
                                                       clip(it->second)));
    return static_cast<int64_t>(std::llround(*n * scale));
}

Status writeBusySeries(ImportContext& ctx, const BusyIntervals& busy, int64_t rank, int64_t binNs)
{
    if (busy.spanEndNs <= busy.spanStartNs) return okStatus();
    const int64_t bins = (busy.spanEndNs - busy.spanStartNs) / binNs + 2;
    if (bins > kMaxBins) {
        ctx.notes.push_back(fmt::format("no busy series: the trace spans {:.0f} s, {} bins of {} (give a wider "
                                        "busy_interval=)",
                                        static_cast<double>(busy.spanEndNs - busy.spanStartNs) / 1e9, bins,
                                        binText(binNs)));
        return okStatus();
    }
    const std::string labels = fmt::format("rank={}", rank);
    auto write = [&](int64_t deviceId, std::string_view metric, std::string_view rawName,
                     const std::vector<Interval>& intervals) -> Status {
        RUNLENS_ASSIGN_OR_RETURN(auto sink, ctx.writer.series(deviceId, metric, "ratio", rawName, labels));
        const BusyBins b = busyFraction(intervals, busy.spanStartNs, busy.spanEndNs, binNs);
        for (size_t i = 0; i < b.values.size(); ++i) {
            sink->append(b.firstNs + static_cast<int64_t>(i) * binNs, b.values[i]);
            RUNLENS_TRY(ctx.writer.flushIfNeeded(*sink));
        }
        return okStatus();
    };
    std::vector<std::string> gpus;
    for (const auto& [index, kernels] : busy.kernels) {
        RUNLENS_ASSIGN_OR_RETURN(auto device, ctx.writer.device(ctx.nodeId, "gpu", std::to_string(index)));
        RUNLENS_TRY(write(device, "gpu.kernel_busy", "union of kernel slices", kernels));
        const auto comm = busy.comm.find(index);
        static const std::vector<Interval> kNone;
        RUNLENS_TRY(write(device, "gpu.comm_busy", "union of NCCL/RCCL kernel slices",
                          comm == busy.comm.end() ? kNone : comm->second));
        gpus.push_back(fmt::format("gpu:{}", index));
    }
    std::string what;
    if (!gpus.empty()) what = fmt::format("gpu.kernel_busy and gpu.comm_busy for {}", fmt::join(gpus, ", "));
    if (busy.collectiveSeries) {
        auto host = ctx.writer.device(ctx.nodeId, "host", "");
        if (!host) return host.error();
        RUNLENS_TRY(write(*host, "trace.collective_busy", "union of CPU collective slices", busy.collectives));
        what += fmt::format("{}trace.collective_busy on the host", what.empty() ? "" : ", ");
    }
    if (!what.empty())
        ctx.notes.push_back(fmt::format("busy series ({} bins, labels {}): {}", binText(binNs), labels, what));
    return okStatus();
}

} // namespace runlens::importers::trace
