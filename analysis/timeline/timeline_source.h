#pragma once

// Timeline data for the GUI and the reports: for a window and a pixel width, every requested lane's series
// reduced to at most two points per pixel (the min and max of each pixel's bucket, in time order), so spikes
// and dips never vanish at any zoom. Missing data is a gap (NaN), never interpolated. Where a lane shows more
// than `envelopeAbove` series of one metric, they are drawn as an envelope (min / median / max across the
// series per pixel) with the series that stand out (a lasting deviation from the others) drawn individually.
//
// A TimelineSource owns its own database connections and an in-memory level-of-detail cache per series
// (built from the chunks on first use); use it from one thread at a time (the GUI runs it on a worker).

#include "analysis/store/error.h"
#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace runlens::timeline {

struct TimelineRequest
{
    uint64_t generation = 0; // echoed in the frame, so stale results can be dropped
    int64_t fromNs = 0;
    int64_t toNs = 0;  // inclusive
    int pixels = 1000; // plot width; buckets = pixels
    std::vector<LaneSpec> lanes;
    std::vector<int64_t> hiddenSeries; // series unchecked in the run browser
    int envelopeAbove = 8;             // more series than this of one metric in a lane: an envelope
    int maxOutliers = 4;               // per envelope, the strongest outliers drawn individually
};

struct TimelineLine
{
    int64_t seriesId = 0;
    int nodeIndex = -1;    // RunCatalog::nodes index: the colour
    int deviceOrdinal = 0; // position of the device among its node's devices of the same kind (lightness)
    std::string label;     // "node1 gpu3 SM active"
    std::string metric;
    std::vector<double> keys;    // epoch seconds
    std::vector<double> values;  // shown values (scaled); NaN = gap
    bool outlier = false;        // drawn on top of an envelope
    double outlierSigma = 0;     // its lasting deviation from the members' median, in spreads (timeline_envelope.h)
    double outlierDeviation = 0; // the same in the lane's unit (scaled); both signed
    int64_t lodNs = 0;           // width of the cached level the line was reduced from; 0: exact (from the points)
    bool raw = false;            // the points themselves (few enough in the window), not per-pixel min/max
    int buckets = 0; // when not raw: the equal buckets over the window the line has min/max of (pixels, or fewer
                     // when the finest cached level is up to 2 pixels wide)
};

struct TimelineEnvelope
{
    std::string metric;
    std::string label;                  // "GPU utilization, 32 GPUs"
    int members = 0;                    // series
    int devices = 0;                    // distinct devices among them (fewer when a device has several sources)
    std::vector<double> keys;           // bucket centres, epoch seconds
    std::vector<double> lo, median, hi; // NaN where no member has data
};

struct LaneFrame
{
    std::string laneId;
    std::vector<TimelineLine> lines; // individual series (all of them, or the outliers of an envelope)
    std::vector<TimelineEnvelope> envelopes;
    double lo = 0, hi = 0; // value range of what is shown (for the axis)
    bool hasData = false;
};

struct TimelineFrame
{
    uint64_t generation = 0;
    int64_t fromNs = 0, toNs = 0;
    int pixels = 0;
    std::vector<LaneFrame> lanes; // in request order
    double fetchMs = 0;
    int seriesRead = 0;    // series reduced for this frame
    int pyramidsBuilt = 0; // level-of-detail caches built by this fetch
};

class TimelineSource
{
public:
    ~TimelineSource();
    static Expected<std::unique_ptr<TimelineSource>> open(const std::string& path,
                                                          std::shared_ptr<const RunCatalog> catalog);

    // Called on a fetch thread as soon as each lane is complete (lanes come roughly in request order), before
    // fetch returns the whole frame: the caller can draw the first lanes while the others are reduced.
    using LaneReady = std::function<void(size_t laneIndex, const LaneFrame& lane)>;
    Expected<std::shared_ptr<const TimelineFrame>>
    fetch(const TimelineRequest& request, const std::atomic<bool>* cancel = nullptr, const LaneReady& laneReady = {});
    const RunCatalog& catalog() const;
    size_t cacheBytes() const; // the level-of-detail pyramids and decoded chunks held (at most 64 MB of chunks)

private:
    struct Impl;
    class Fetch; // one fetch's plan, its tasks and the frame they fill
    explicit TimelineSource(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace runlens::timeline
