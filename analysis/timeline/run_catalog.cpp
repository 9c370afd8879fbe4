#include "analysis/timeline/run_catalog.h"

#include "analysis/store/run_database.h"

#include <algorithm>
#include <limits>

namespace runlens::timeline {

int RunCatalog::nodeIndex(int64_t nodeId) const
{
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].id == nodeId) return static_cast<int>(i);
    return -1;
}

const store::DeviceInfo* RunCatalog::device(int64_t deviceId) const
{
    for (const auto& d : devices)
        if (d.id == deviceId) return &d;
    return nullptr;
}

const store::SeriesInfo* RunCatalog::findSeries(int64_t seriesId) const
{
    for (const auto& s : series)
        if (s.id == seriesId) return &s;
    return nullptr;
}

int64_t RunCatalog::problemCount() const
{
    int64_t n = 0;
    for (const auto& i : imports)
        n += i.import.diagnostics;
    return n;
}

Expected<std::shared_ptr<const RunCatalog>> loadRunCatalog(const std::string& path, int diagnosticsPerImport)
{
    auto db = store::RunDatabase::open(path, store::OpenMode::ReadOnly);
    if (!db) return db.error();
    store::RunReader reader(**db);
    auto out = std::make_shared<RunCatalog>();
    out->path = path;
    auto nodes = reader.nodes();
    if (!nodes) return nodes.error();
    out->nodes = std::move(*nodes);
    auto devices = reader.devices();
    if (!devices) return devices.error();
    out->devices = std::move(*devices);
    auto series = reader.series();
    if (!series) return series.error();
    out->series = std::move(*series);
    auto threads = reader.stackThreads();
    if (!threads) return threads.error();
    out->stackThreads = std::move(*threads);
    auto imports = reader.imports();
    if (!imports) return imports.error();
    for (store::ImportInfo& info : *imports) {
        ImportProblems p;
        if (info.diagnostics > 0) {
            auto counts = reader.diagnosticCounts(info.id);
            if (!counts) return counts.error();
            p.counts = std::move(*counts);
            auto first = reader.diagnostics(info.id, diagnosticsPerImport);
            if (!first) return first.error();
            p.first = std::move(*first);
        }
        p.import = std::move(info);
        out->imports.push_back(std::move(p));
    }

    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    for (const auto& s : out->series) {
        if (s.firstNs) first = std::min(first, *s.firstNs);
        if (s.lastNs) last = std::max(last, *s.lastNs);
    }
    store::StackReader stacks(**db);
    auto timed = stacks.threads();
    if (!timed) return timed.error();
    for (const auto& t : *timed) {
        if (t.firstNs) first = std::min(first, *t.firstNs);
        if (t.lastNs) last = std::max(last, *t.lastNs);
    }
    if (first <= last) {
        out->firstNs = first;
        out->lastNs = last;
    }
    return std::shared_ptr<const RunCatalog>(std::move(out));
}

} // namespace runlens::timeline
