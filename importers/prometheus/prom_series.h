#pragma once

// Routing of Prometheus samples (from the text exposition or the HTTP API JSON) into canonical series:
//  - dcgm-exporter families (DCGM_FI_*): device gpu:<gpu label>, node from `hostname`/`Hostname`, UUID and
//    modelName as device attributes, DCGM "blank" sentinels stored as missing;
//  - node_exporter families (node_*): device from the `device` label (InfiniBand: device:port), counters as
//    rates per second with resets handled, node_cpu_seconds_total of all CPUs and modes as cpu.util;
//  - anything else kept as `prom.<family>` on the host with its labels, values as they are.
// The node comes from `hostname`/`Hostname`, else `instance` (port dropped); --node wins.

#include "analysis/store/error.h"
#include "importers/common/counters.h"
#include "importers/importer.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace runlens::importers {

struct PromLabel
{
    std::string_view name;
    std::string_view value;
};

struct PromSeriesId
{
    std::string_view family; // the sample's metric name (e.g. node_cpu_seconds_total, DCGM_FI_DEV_GPU_UTIL)
    std::vector<PromLabel> labels;
};

class PromSeriesRouter
{
public:
    explicit PromSeriesRouter(ImportContext& context);
    ~PromSeriesRouter();

    // `# TYPE family type`: histogram and summary samples (_bucket, _sum, _count, quantiles) are then skipped
    // and counted; counters of unknown families are kept as they are.
    void setType(std::string_view family, std::string_view type);

    // One sample. key is any text unique to the series (the text format's `name{labels}`); parse is called
    // only the first time a key is seen. rawValue is the value as written (for missing-value tokens).
    Status add(std::string_view key, const std::function<PromSeriesId()>& parse, int64_t tsNs, double value,
               std::string_view rawValue);

    // Where the current sample is, for diagnostics of formats not read line by line (JSON); by default the
    // current line of the context's reader.
    void setLocator(std::function<SourceLocation()> where) { m_where = std::move(where); }

    // Writes what needs every sample first (cpu.util) and the per-family notes. Call once at the end.
    Status finish();

    int64_t samplesStored() const { return m_stored; }

private:
    struct Target;
    Expected<Target*> resolve(std::string_view key, const PromSeriesId& id);
    Expected<int64_t> deviceFor(int64_t nodeId, std::string_view kind, std::string_view name);
    void report(const store::DiagnosticKind& kind, const std::string& message);
    bool claimTime(Target& t, int64_t tsNs, std::string_view key);

    struct KeyHash
    {
        using is_transparent = void;
        size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };

    ImportContext& m_ctx;
    std::unordered_map<std::string, std::unique_ptr<Target>, KeyHash, std::equal_to<>> m_targets;
    std::unordered_map<store::SeriesSink*, int64_t> m_sinkLastTs; // several source series may feed one sink
    std::function<SourceLocation()> m_where;
    std::map<std::string, std::string, std::less<>> m_types; // family → declared type
    std::map<std::string, int64_t, std::less<>> m_skipped;   // family → samples skipped
    std::map<std::string, int64_t, std::less<>> m_created;   // family → _created samples
    std::set<std::string, std::less<>> m_notedFamilies;
    std::map<std::string, int64_t, std::less<>> m_unmapped;                        // family → series kept raw
    std::map<std::pair<int64_t, std::string>, int64_t> m_devices;                  // (node, kind:name) → device id
    std::map<int64_t, CpuSecondsAggregator> m_cpu;                                 // node → CPU seconds
    std::map<std::tuple<int64_t, std::string, std::string>, std::string> m_claims; // series → family giving it
    int64_t m_stored = 0;
};

} // namespace runlens::importers
