#include "tests/timeline_support.h"

#include "analysis/store/run_database.h"
#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/timeline_lod.h"

#include <cmath>
#include <fmt/format.h>

namespace runlens::test {

std::string writeRun(const QTemporaryDir& dir, const std::string& name, const Fill& fill)
{
    std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
    auto db = store::RunDatabase::open(path, store::OpenMode::Create);
    if (!db) return {};
    auto tx = (*db)->transaction();
    if (!tx) return {};
    store::RunWriter w(**db);
    store::ImportRecord rec;
    rec.path = name;
    rec.contentHash = name;
    rec.format = "test";
    if (!w.beginImport(rec) || !fill(w)) return {};
    store::ImportTotals totals;
    totals.contentHash = name;
    if (!w.finishImport(totals, store::Diagnostics()) || !tx->commit()) return {};
    return path;
}

bool appendSeries(store::RunWriter& w, int64_t device, const char* metric, const char* unit, int64_t count,
                  int64_t step, const std::function<double(int64_t)>& value, int64_t skipFrom, int64_t skipTo)
{
    auto sink = w.series(device, metric, unit, metric);
    if (!sink) return false;
    for (int64_t i = 0; i < count; ++i) {
        const int64_t ts = kStart + i * step;
        if (ts >= skipFrom && ts < skipTo) continue;
        const double v = value(i);
        if (std::isnan(v))
            (*sink)->appendMissing(ts, "[N/A]");
        else
            (*sink)->append(ts, v);
        if (!w.flushIfNeeded(**sink)) return false;
    }
    return true;
}

bool forEachGpu(store::RunWriter& w, int nodes, int gpus, const std::function<bool(int, int, int64_t)>& fn)
{
    for (int n = 0; n < nodes; ++n) {
        auto node = w.node(fmt::format("node{}", n), "option", "UTC");
        if (!node) return false;
        for (int g = 0; g < gpus; ++g) {
            auto gpu = w.device(*node, "gpu", std::to_string(g));
            if (!gpu || !fn(n, g, *gpu)) return false;
        }
    }
    return true;
}

Opened openRun(const std::string& path)
{
    Opened o;
    auto cat = timeline::loadRunCatalog(path);
    if (!cat) return o;
    o.catalog = *cat;
    auto src = timeline::TimelineSource::open(path, o.catalog);
    if (src) o.source = std::move(*src);
    return o;
}

timeline::TimelineRequest wholeRunRequest(const Opened& run, int pixels)
{
    timeline::TimelineRequest req;
    req.fromNs = run.catalog->firstNs;
    req.toNs = run.catalog->lastNs;
    req.pixels = pixels;
    req.lanes = timeline::laneSpecs(*run.catalog);
    return req;
}

int bucketOf(int64_t t, int64_t from, int64_t to, int buckets)
{
    if (t < from || t > to) return -1;
    int lo = 0, hi = buckets - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (timeline::bucketBoundary(from, to, buckets, mid) <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

} // namespace runlens::test
