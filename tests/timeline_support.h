#pragma once

// Helpers shared by the timeline data tests (tst_timeline, tst_timeline_envelope): a run generated through
// store::RunWriter, series of computed points, many GPUs over several nodes, the run opened as a timeline source,
// and the display bucket holding a time.

#include "analysis/store/run_writer.h"
#include "analysis/timeline/run_catalog.h"
#include "analysis/timeline/timeline_source.h"

#include <QTemporaryDir>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace runlens::test {

inline constexpr int64_t kSecond = 1'000'000'000;
inline constexpr int64_t kStart = 1'790'000'000'000'000'000;

using Fill = std::function<bool(store::RunWriter&)>;

// The run database dir/name holding one import (format "test") whose data fill writes; its path, or "" when any
// step failed.
std::string writeRun(const QTemporaryDir& dir, const std::string& name, const Fill& fill);

// count points every step from kStart; value(i) returns NaN for a missing point.
bool appendSeries(store::RunWriter& w, int64_t device, const char* metric, const char* unit, int64_t count,
                  int64_t step, const std::function<double(int64_t)>& value, int64_t skipFrom = -1,
                  int64_t skipTo = -1);

// Nodes "node0"… with GPUs "0"…; fn(node, gpu, device id) writes each GPU's series.
bool forEachGpu(store::RunWriter& w, int nodes, int gpus, const std::function<bool(int, int, int64_t)>& fn);

// A run's catalog and timeline source (both null when the run cannot be opened).
struct Opened
{
    std::shared_ptr<const timeline::RunCatalog> catalog;
    std::unique_ptr<timeline::TimelineSource> source;
};

Opened openRun(const std::string& path);

// A request for the whole of an opened run, `pixels` wide, with every lane of its catalog (laneSpecs).
timeline::TimelineRequest wholeRunRequest(const Opened& run, int pixels);

// The display bucket holding time t (boundaries as timeline_lod.h), or -1 outside the window.
int bucketOf(int64_t t, int64_t from, int64_t to, int buckets);

} // namespace runlens::test
