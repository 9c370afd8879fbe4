#include "importers/prometheus/prom_series.h"

#include "importers/common/metric_map.h"
#include "importers/diagnostic_kinds.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace runlens::importers {
namespace {

constexpr double kDcgmInt64Blank = 9223372036854775792.0; // 0x7ffffffffffffff0 and above
constexpr double kDcgmFp64Blank = 140737488355328.0;      // 2^47, +1..+3 likewise

bool isDcgmSentinel(double v)
{
    // The int64 blanks all read as 2^63 once a double; a larger value is no blank, only out of range.
    return (v >= kDcgmInt64Blank * (1 - 1e-15) && v <= 0x1p63) || (v >= kDcgmFp64Blank && v < kDcgmFp64Blank + 4);
}

std::string_view label(const PromSeriesId& id, std::string_view name)
{
    for (const PromLabel& l : id.labels)
        if (l.name == name) return l.value;
    return {};
}

bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Labels that identify where a sample came from rather than what it measures.
bool isOriginLabel(std::string_view name)
{
    return name == "instance" || name == "job" || name == "hostname" || name == "Hostname" || name == "__name__";
}

} // namespace

struct PromSeriesRouter::Target
{
    enum class Kind
    {
        Skip,
        Gauge,
        Counter,
        Cpu,
        Raw
    } kind = Kind::Skip;
    store::SeriesSink* sink = nullptr;
    double factor = 1.0;
    CounterRate rate;
    int64_t nodeId = 0;
    std::string mode;   // Cpu: the node_cpu_seconds_total mode
    std::string family; // Skip: for the count
    int64_t lastTs = std::numeric_limits<int64_t>::min();
    int64_t* sinkLastTs = nullptr; // the last time written to the sink, shared by every target feeding it
    bool dcgm = false;
    bool created = false; // an OpenMetrics _created sample (a counter's start time): metadata, not data
};

PromSeriesRouter::PromSeriesRouter(ImportContext& context) : m_ctx(context) {}
PromSeriesRouter::~PromSeriesRouter() = default;

void PromSeriesRouter::setType(std::string_view family, std::string_view type)
{
    m_types[std::string(family)] = std::string(type);
}

Expected<int64_t> PromSeriesRouter::deviceFor(int64_t nodeId, std::string_view kind, std::string_view name)
{
    auto key = std::make_pair(nodeId, fmt::format("{}:{}", kind, name));
    if (auto it = m_devices.find(key); it != m_devices.end()) return it->second;
    RUNLENS_ASSIGN_OR_RETURN(auto id, flaggedDevice(m_ctx.writer, nodeId, kind, name));
    m_devices.emplace(std::move(key), id);
    return id;
}

Expected<PromSeriesRouter::Target*> PromSeriesRouter::resolve(std::string_view key, const PromSeriesId& id)
{
    auto target = std::make_unique<Target>();
    Target& t = *target;
    const std::string_view family = id.family;

    // Histograms, summaries, OpenMetrics _created and info/stateset families are not time series we chart.
    std::string_view base = family;
    for (std::string_view suffix : {"_bucket", "_sum", "_count", "_created", "_gsum", "_gcount", "_info"}) {
        if (endsWith(family, suffix)) {
            base = family.substr(0, family.size() - suffix.size());
            break;
        }
    }
    auto typeOf = [&](std::string_view f) -> std::string_view {
        auto it = m_types.find(f);
        return it == m_types.end() ? std::string_view() : std::string_view(it->second);
    };
    const std::string_view type = typeOf(family).empty() ? typeOf(base) : typeOf(family);
    const bool skip = type == "histogram" || type == "summary" || type == "gaugehistogram" || type == "info" ||
                      type == "stateset" || endsWith(family, "_created") || !label(id, "le").empty() ||
                      !label(id, "quantile").empty();
    if (skip) {
        t.kind = Target::Kind::Skip;
        t.family = std::string(base);
        t.created = endsWith(family, "_created");
        return m_targets.emplace(std::string(key), std::move(target)).first->second.get();
    }

    std::string_view host = label(id, "hostname");
    if (host.empty()) host = label(id, "Hostname");
    if (host.empty()) host = label(id, "instance");
    RUNLENS_ASSIGN_OR_RETURN(auto nodeId, m_ctx.nodeFor(host));
    t.nodeId = nodeId;

    std::string metric, unit, labels;
    const std::string rawName(family);
    int64_t deviceId = 0;
    if (family.substr(0, 8) == "DCGM_FI_") {
        t.dcgm = true;
        std::string gpu(label(id, "gpu"));
        if (gpu.empty()) {
            std::string_view dev = label(id, "device"); // nvidia3
            if (dev.substr(0, 6) == "nvidia") gpu = std::string(dev.substr(6));
        }
        RUNLENS_ASSIGN_OR_RETURN(auto device, deviceFor(t.nodeId, "gpu", gpu.empty() ? "0" : gpu));
        deviceId = device;
        for (std::string_view attr : {"UUID", "modelName", "pci_bus_id"})
            if (auto v = label(id, attr); !v.empty())
                if (Status s = m_ctx.writer.setDeviceAttribute(deviceId, attr, v); !s) return s.error();
        for (std::string_view mig : {"GPU_I_PROFILE", "GPU_I_ID"})
            if (auto v = label(id, mig); !v.empty())
                labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", mig, v);
        if (auto m = dcgmMetric(family)) {
            metric = std::string(m->metric);
            unit = std::string(m->unit);
            t.kind = m->kind == ValueKind::Counter ? Target::Kind::Counter : Target::Kind::Gauge;
            t.factor = unitFactor(m->sourceUnit, m->unit).value_or(1.0);
        } else {
            metric = "dcgm." + rawName;
            t.kind = Target::Kind::Raw;
        }
    } else if (auto m = nodeExporterMetric(family)) {
        if (family == "node_cpu_seconds_total") {
            t.kind = Target::Kind::Cpu;
            t.mode = std::string(label(id, "mode"));
            return m_targets.emplace(std::string(key), std::move(target)).first->second.get();
        }
        std::string name;
        if (m->deviceKind != "host" && m->deviceKind != "cpu") {
            name = std::string(label(id, "device"));
            if (m->deviceKind == "ib" && !label(id, "port").empty()) name += ":" + std::string(label(id, "port"));
        }
        RUNLENS_ASSIGN_OR_RETURN(auto device, deviceFor(t.nodeId, m->deviceKind, name));
        deviceId = device;
        metric = std::string(m->metric);
        unit = std::string(m->unit);
        t.kind = m->kind == ValueKind::Counter ? Target::Kind::Counter : Target::Kind::Gauge;
        t.factor = unitFactor(m->sourceUnit, m->unit).value_or(1.0);
    } else {
        t.kind = Target::Kind::Raw;
        metric = "prom." + rawName;
    }

    if (t.kind == Target::Kind::Raw) {
        if (deviceId == 0) {
            RUNLENS_ASSIGN_OR_RETURN(auto device, deviceFor(t.nodeId, "host", ""));
            deviceId = device;
        }
        std::vector<std::string> kept;
        for (const PromLabel& l : id.labels)
            if (!isOriginLabel(l.name) && !(t.dcgm && (l.name == "gpu" || l.name == "UUID" || l.name == "device" ||
                                                       l.name == "modelName" || l.name == "pci_bus_id")))
                kept.push_back(fmt::format("{}={}", l.name, l.value));
        std::sort(kept.begin(), kept.end());
        labels.clear();
        for (const std::string& k : kept)
            labels += (labels.empty() ? "" : ",") + k;
        if (m_unmapped[rawName]++ == 0)
            report(diag::kUnmappedMetric,
                   fmt::format("{} has no canonical name; kept as {} with its labels", rawName, metric));
    }
    // Two families with one canonical name (DCGM_FI_DEV_POWER_USAGE and ..._BOARD_POWER_WATTS): the first keeps
    // it, the other its own name, so no series gets two values per scrape.
    auto claim = m_claims.try_emplace(std::make_tuple(deviceId, metric, labels), rawName).first;
    if (claim->second != rawName) {
        metric = (t.dcgm ? "dcgm." : "prom.") + rawName;
        if (m_notedFamilies.insert(rawName).second)
            m_ctx.notes.push_back(
                fmt::format("{} kept as {} ({} already gives the canonical series)", rawName, metric, claim->second));
    }
    RUNLENS_ASSIGN_OR_RETURN(auto sink, m_ctx.writer.series(deviceId, metric, unit, rawName, labels));
    t.sink = sink;
    t.sinkLastTs = &m_sinkLastTs.try_emplace(t.sink, std::numeric_limits<int64_t>::min()).first->second;
    return m_targets.emplace(std::string(key), std::move(target)).first->second.get();
}

Status PromSeriesRouter::add(std::string_view key, const std::function<PromSeriesId()>& parse, int64_t tsNs,
                             double value, std::string_view rawValue)
{
    Target* t;
    if (auto it = m_targets.find(key); it != m_targets.end()) {
        t = it->second.get();
    } else {
        RUNLENS_ASSIGN_OR_RETURN(auto r, resolve(key, parse()));
        t = r;
    }
    if (t->kind == Target::Kind::Skip) {
        ++(t->created ? m_created : m_skipped)[t->family];
        return okStatus();
    }
    if (tsNs <= t->lastTs) {
        if (tsNs == t->lastTs)
            report(diag::kDuplicateSample, fmt::format("a second sample of {} at the same time", key));
        else
            report(diag::kBackwardsTime, fmt::format("a sample of {} earlier than the previous one", key));
        return okStatus();
    }
    t->lastTs = tsNs;

    if (t->kind == Target::Kind::Cpu) {
        if (std::isfinite(value)) m_cpu[t->nodeId].add(tsNs, t->mode, value);
        return okStatus();
    }
    if (!std::isfinite(value) || (t->dcgm && isDcgmSentinel(value))) {
        if (std::isinf(value))
            report(diag::kNanValue, fmt::format("{} for {} stored as missing", rawValue, key));
        else if (!std::isnan(value))
            report(diag::kSentinelValue,
                   fmt::format("{} for {} is a DCGM blank value; stored as missing", rawValue, key));
        if (t->kind == Target::Kind::Counter) t->rate.clear();
        if (!claimTime(*t, tsNs, key)) return okStatus();
        t->sink->appendMissing(tsNs, rawValue);
        ++m_stored;
        return m_ctx.writer.flushIfNeeded(*t->sink);
    }
    if (t->kind == Target::Kind::Counter) {
        auto r = t->rate.add(tsNs, value);
        if (!r) return okStatus();
        if (r->afterReset) report(diag::kCounterReset, fmt::format("{} went down (counter restart)", key));
        if (!claimTime(*t, r->tsNs, key)) return okStatus();
        t->sink->append(r->tsNs, r->perSecond * t->factor);
    } else {
        if (!claimTime(*t, tsNs, key)) return okStatus();
        t->sink->append(tsNs, value * t->factor);
    }
    ++m_stored;
    return m_ctx.writer.flushIfNeeded(*t->sink);
}

void PromSeriesRouter::report(const store::DiagnosticKind& kind, const std::string& message)
{
    m_ctx.diagnostics.report(kind, m_where ? m_where() : m_ctx.lines.location(), message);
}

// Series that differ only in labels a canonical series does not keep (a pod name, say) feed one sink: a
// second point at a time the sink already has is reported, not stored twice.
bool PromSeriesRouter::claimTime(Target& t, int64_t tsNs, std::string_view key)
{
    if (tsNs <= *t.sinkLastTs) {
        report(diag::kDuplicateSample,
               fmt::format("{}: its canonical series already has a point at or after this time from another series "
                           "with the same name (labels the canonical series does not keep differ)",
                           key));
        return false;
    }
    *t.sinkLastTs = tsNs;
    return true;
}

Status PromSeriesRouter::finish()
{
    for (auto& [nodeId, cpu] : m_cpu) {
        int64_t resets = 0;
        const auto util = cpu.utilisation(&resets);
        if (resets > 0)
            m_ctx.report(
                diag::kCounterReset, 0,
                fmt::format("node_cpu_seconds_total went down {} time(s) (restart); those intervals skipped", resets));
        if (util.empty()) continue;
        RUNLENS_ASSIGN_OR_RETURN(auto device, deviceFor(nodeId, "cpu", ""));
        RUNLENS_ASSIGN_OR_RETURN(auto sink, m_ctx.writer.series(device, "cpu.util", "%", "node_cpu_seconds_total"));
        for (const auto& u : util) {
            sink->append(u.tsNs, u.percent);
            RUNLENS_TRY(m_ctx.writer.flushIfNeeded(*sink));
        }
        m_stored += static_cast<int64_t>(util.size());
    }
    for (const auto& [family, n] : m_created)
        report(diag::kCreatedSample, fmt::format("{}_created: {} start-time samples not imported", family, n));
    for (const auto& [family, n] : m_skipped)
        report(diag::kSkippedFamily,
               fmt::format("{}: {} samples of a histogram/summary/info family not imported", family, n));
    if (!m_unmapped.empty()) {
        int64_t series = 0;
        for (const auto& [family, n] : m_unmapped)
            series += n;
        m_ctx.notes.push_back(fmt::format("{} series of {} families with no canonical name kept as prom.*/dcgm.*",
                                          series, m_unmapped.size()));
    }
    return okStatus();
}

} // namespace runlens::importers
