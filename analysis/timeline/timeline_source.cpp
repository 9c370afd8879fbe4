#include "analysis/timeline/timeline_source.h"

#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/timeline/chunk_cache.h"
#include "analysis/timeline/timeline_envelope.h"
#include "analysis/timeline/timeline_lod.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace runlens::timeline {
namespace {

constexpr int kConnections = 2;
// Decoded chunks kept for the next window: a 3.5 h window of 400 series at 1 s is about 120 MB of points (the
// widest window read from the chunks rather than the pyramid), so a pan by a quarter decodes only the new quarter.
constexpr size_t kChunkCacheBytes = size_t{192} << 20;

struct Connection
{
    std::unique_ptr<store::RunDatabase> db;
    std::unique_ptr<store::RunReader> reader;
};

// One series of the request, reduced.
struct SeriesJob
{
    const store::SeriesInfo* series = nullptr;
    double scale = 1;
    bool envelopeMember = false;
    // Results
    std::vector<ReducedBucket> buckets; // envelope members only
    std::vector<double> keys, values;
    int64_t lodNs = 0;
    int lineBuckets = 0;
    bool raw = false;
};

// Buckets of a coarser grid over the same window, on the grid of `buckets`: each takes the coarse bucket its start
// falls in; a bucket that takes the same coarse bucket as the one before is marked `repeat`.
std::vector<ReducedBucket> regrid(const std::vector<ReducedBucket>& coarse, int64_t fromNs, int64_t toNs, int buckets)
{
    std::vector<ReducedBucket> out(static_cast<size_t>(buckets));
    const int n = static_cast<int>(coarse.size());
    const std::vector<int64_t>& fine = bucketBoundaries(fromNs, toNs, buckets); // both stay valid: two grids
    const std::vector<int64_t>& coarseBounds = bucketBoundaries(fromNs, toNs, n);
    int j = 0, last = -1;
    for (int i = 0; i < buckets; ++i) {
        const int64_t start = fine[static_cast<size_t>(i)];
        while (j + 1 < n && coarseBounds[static_cast<size_t>(j) + 1] <= start)
            ++j;
        out[static_cast<size_t>(i)] = coarse[static_cast<size_t>(j)];
        out[static_cast<size_t>(i)].repeat = i > 0 && j == last;
        last = j;
    }
    return out;
}

std::string deviceLabel(const store::DeviceInfo* d)
{
    if (!d) return "?";
    if (d->name.empty()) return d->kind;
    const bool numeric =
        !d->name.empty() && std::all_of(d->name.begin(), d->name.end(), [](char c) { return c >= '0' && c <= '9'; });
    return numeric ? d->kind + d->name : d->name;
}

} // namespace

struct TimelineSource::Impl
{
    std::shared_ptr<const RunCatalog> catalog;
    Connection connections[kConnections];
    std::unordered_map<int64_t, const store::SeriesInfo*> seriesById;
    std::unordered_map<int64_t, int> deviceOrdinal;

    std::mutex cacheMutex;
    std::unordered_map<int64_t, std::shared_ptr<const SeriesPyramid>> pyramids;
    ChunkCache chunks{kChunkCacheBytes};

    Expected<std::shared_ptr<const SeriesPyramid>> pyramid(store::RunReader& reader, const store::SeriesInfo& s,
                                                           bool& built);
    Status reduce(store::RunReader& reader, SeriesJob& job, const TimelineRequest& r, bool& built);
};

Expected<std::shared_ptr<const SeriesPyramid>> TimelineSource::Impl::pyramid(store::RunReader& reader,
                                                                             const store::SeriesInfo& s, bool& built)
{
    {
        std::lock_guard<std::mutex> lock(cacheMutex);
        if (auto it = pyramids.find(s.id); it != pyramids.end()) return it->second;
    }
    // Built outside the lock: the other connection goes on with its own series meanwhile.
    // One chunk at a time (the chunk list is kept for the later reads of windows).
    RUNLENS_ASSIGN_OR_RETURN(auto refs, chunks.refs(reader, s.id));
    PyramidBuilder builder(typicalIntervalNs(s.points, s.firstNs.value_or(0), s.lastNs.value_or(0)),
                           s.firstNs.value_or(0), s.lastNs.value_or(-1));
    for (const store::ChunkRef& ref : *refs) {
        if (ref.count == ref.missing) continue;
        RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readChunk(s.id, ref));
        builder.add(points);
    }
    auto p = std::make_shared<const SeriesPyramid>(builder.finish());
    built = true;
    std::lock_guard<std::mutex> lock(cacheMutex);
    return pyramids.emplace(s.id, std::move(p)).first->second;
}

Status TimelineSource::Impl::reduce(store::RunReader& reader, SeriesJob& job, const TimelineRequest& r, bool& built)
{
    const store::SeriesInfo& s = *job.series;
    if (!s.firstNs || !s.lastNs || *s.lastNs < r.fromNs || *s.firstNs > r.toNs) {
        if (job.envelopeMember) job.buckets.assign(static_cast<size_t>(r.pixels), ReducedBucket{});
        return okStatus();
    }
    const int64_t interval = typicalIntervalNs(s.points, *s.firstNs, *s.lastNs);
    const int64_t displayWidth = (r.toNs - r.fromNs + 1) / r.pixels;
    // Points expected in the window, from the series' density (a regular series: exact to a point or two).
    const double span = static_cast<double>(*s.lastNs - *s.firstNs) + static_cast<double>(interval);
    const double overlap = static_cast<double>(std::min(r.toNs, *s.lastNs) - std::max(r.fromNs, *s.firstNs)) +
                           static_cast<double>(interval);
    const double estimate = static_cast<double>(s.points) * std::clamp(overlap / span, 0.0, 1.0);
    const size_t rawLimit = 2 * static_cast<size_t>(r.pixels);

    // The pyramid only once a window is wide enough for it (a run of a few hours may never need one).
    if (estimate > static_cast<double>(rawLimit) && pyramidBaseWidthNs(interval) <= 2 * displayWidth) {
        RUNLENS_ASSIGN_OR_RETURN(auto p, pyramid(reader, s, built));
        if (const PyramidLevel* level = p->levelFor(displayWidth)) {
            job.buckets = reduceLevel(*level, r.fromNs, r.toNs, r.pixels);
            job.lodNs = level->widthNs;
            job.lineBuckets = r.pixels;
            appendBucketLine(job.buckets, r.fromNs, r.toNs, job.scale, job.keys, job.values);
            if (!job.envelopeMember) job.buckets.clear();
            return okStatus();
        }
        // The finest level is up to twice a pixel wide: still better than decoding every point of the window. The
        // line gets one bucket per level width (fewer than pixels, so none is without a level bucket); an envelope
        // member's pixels take the bucket they start in.
        if (!p->levels.empty() && p->levels.front().widthNs <= 2 * displayWidth) {
            const PyramidLevel& finest = p->levels.front();
            const int coarse = static_cast<int>(std::max<int64_t>(1, (r.toNs - r.fromNs + 1) / finest.widthNs));
            const std::vector<ReducedBucket> buckets = reduceLevel(finest, r.fromNs, r.toNs, coarse);
            job.lodNs = finest.widthNs;
            job.lineBuckets = coarse;
            appendBucketLine(buckets, r.fromNs, r.toNs, job.scale, job.keys, job.values);
            if (job.envelopeMember) job.buckets = regrid(buckets, r.fromNs, r.toNs, r.pixels);
            return okStatus();
        }
    }
    // Few points, or a window narrower than the finest level: from the points themselves.
    RUNLENS_ASSIGN_OR_RETURN(auto window, chunks.window(reader, s.id, {r.fromNs, r.toNs}));
    job.lineBuckets = r.pixels;
    if (window.count() <= rawLimit || !window.inOrder) {
        const std::vector<store::Point> points = window.points();
        if (points.size() <= rawLimit) {
            job.raw = true;
            appendRawLine(points, interval, job.scale, job.keys, job.values);
            // Fewer points than pixels: an envelope member's pixels would mostly be empty (drawn as gaps), so its
            // values go into buckets of about two points each, which the pixels then take.
            if (job.envelopeMember) {
                const int coarse =
                    static_cast<int>(std::clamp<size_t>(points.size() / 2, 1, static_cast<size_t>(r.pixels)));
                job.buckets = regrid(reducePoints(points, r.fromNs, r.toNs, coarse), r.fromNs, r.toNs, r.pixels);
            }
            return okStatus();
        }
        job.buckets = reducePoints(points, r.fromNs, r.toNs, r.pixels);
    } else {
        job.buckets = reduceSpans(window.spans, r.fromNs, r.toNs, r.pixels);
    }
    appendBucketLine(job.buckets, r.fromNs, r.toNs, job.scale, job.keys, job.values);
    if (!job.envelopeMember) job.buckets.clear();
    return okStatus();
}

TimelineSource::TimelineSource(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

TimelineSource::~TimelineSource() = default;

Expected<std::unique_ptr<TimelineSource>> TimelineSource::open(const std::string& path,
                                                               std::shared_ptr<const RunCatalog> catalog)
{
    if (!catalog) return makeError(ErrorCode::Usage, "a timeline source needs the run catalogue");
    auto impl = std::make_unique<Impl>();
    for (Connection& c : impl->connections) {
        RUNLENS_ASSIGN_OR_RETURN(auto db, store::RunDatabase::open(path, store::OpenMode::ReadOnly));
        c.db = std::move(db);
        c.reader = std::make_unique<store::RunReader>(*c.db);
    }
    for (const store::SeriesInfo& s : catalog->series)
        impl->seriesById[s.id] = &s;
    // Ordinal of each device among its node's devices of the same kind, in the catalogue's device order.
    std::map<std::pair<int64_t, std::string>, int> next;
    for (const store::DeviceInfo& d : catalog->devices)
        impl->deviceOrdinal[d.id] = next[{d.nodeId, d.kind}]++;
    impl->catalog = std::move(catalog);
    return std::unique_ptr<TimelineSource>(new TimelineSource(std::move(impl)));
}

const RunCatalog& TimelineSource::catalog() const
{
    return *m_impl->catalog;
}

size_t TimelineSource::cacheBytes() const
{
    std::lock_guard<std::mutex> lock(m_impl->cacheMutex);
    size_t n = 0;
    for (const auto& [id, p] : m_impl->pyramids)
        n += p->bytes();
    return n + m_impl->chunks.bytes();
}

namespace {

// A lane's series job indices per metric, in the lane's metric order.
using MetricJobs = std::vector<std::pair<std::string, std::vector<size_t>>>;

// Envelopes are computed in two halves each, so that both threads share a lane of many series.
constexpr size_t kParts = 2;

struct LaneEnvelope
{
    size_t metric = 0; // index into the lane's MetricJobs
    EnvelopeInput input;
    EnvelopeResult result;
};

struct LaneWork
{
    MetricJobs byMetric;
    std::vector<LaneEnvelope> envelopes;
    std::atomic<size_t> seriesLeft{0}, partsLeft{0};
};

struct Task
{
    size_t lane = 0;
    bool envelope = false;
    size_t index = 0; // series job, or envelope × kParts + part
};

} // namespace

class TimelineSource::Fetch
{
public:
    Fetch(Impl& d, const TimelineRequest& request, const std::atomic<bool>* cancel, const LaneReady& laneReady)
        : d(d), cat(*d.catalog), request(request), cancel(cancel), laneReady(laneReady), lanes(request.lanes.size())
    {
    }

    Expected<std::shared_ptr<const TimelineFrame>> run();

private:
    bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
    void planSeries();
    void planTasks();
    LaneEnvelope planEnvelope(size_t li, size_t mi, const std::vector<size_t>& members);
    void runTasks(int connection);
    TimelineLine makeLine(SeriesJob& job, const LaneSpec& lane, size_t mi);
    void assembleEnvelope(size_t li, size_t mi, LaneEnvelope& le);
    void assemble(size_t li);

    Impl& d;
    const RunCatalog& cat;
    const TimelineRequest& request;
    const std::atomic<bool>* cancel;
    const LaneReady& laneReady;

    std::vector<SeriesJob> jobs;
    std::vector<LaneWork> lanes; // per lane
    // A device with several series of one metric (nvidia-smi and an exporter both give utilization): each line
    // then names its source, and an envelope counts devices and sources apart.
    std::map<std::pair<int64_t, std::string>, int> seriesPerDeviceMetric;
    std::vector<Task> tasks;
    std::shared_ptr<TimelineFrame> frame = std::make_shared<TimelineFrame>();

    std::atomic<size_t> nextTask{0};
    std::atomic<bool> failed{false};
    std::atomic<int> built{0};
    std::optional<Error> errors[kConnections];
};

// Which series each lane shows, and which metric groups become envelopes.
void TimelineSource::Fetch::planSeries()
{
    const std::unordered_set<int64_t> hidden(request.hiddenSeries.begin(), request.hiddenSeries.end());
    for (size_t li = 0; li < request.lanes.size(); ++li) {
        const LaneSpec& lane = request.lanes[li];
        MetricJobs& byMetric = lanes[li].byMetric;
        for (const LaneMetric& m : lane.metrics)
            byMetric.emplace_back(m.metric, std::vector<size_t>());
        for (int64_t id : laneSeries(cat, lane)) {
            if (hidden.count(id)) continue;
            const auto it = d.seriesById.find(id);
            if (it == d.seriesById.end()) continue;
            for (size_t mi = 0; mi < lane.metrics.size(); ++mi) {
                if (lane.metrics[mi].metric != it->second->metric) continue;
                byMetric[mi].second.push_back(jobs.size());
                SeriesJob job;
                job.series = it->second;
                job.scale = lane.metrics[mi].scale;
                jobs.push_back(std::move(job));
                break;
            }
        }
        for (auto& [metric, members] : byMetric)
            for (size_t j : members)
                ++seriesPerDeviceMetric[{jobs[j].series->deviceId, metric}];
        for (auto& [metric, members] : byMetric)
            if (static_cast<int>(members.size()) > request.envelopeAbove)
                for (size_t j : members)
                    jobs[j].envelopeMember = true;
    }
}

LaneEnvelope TimelineSource::Fetch::planEnvelope(size_t li, size_t mi, const std::vector<size_t>& members)
{
    LaneEnvelope le;
    le.metric = mi;
    le.input.fromNs = request.fromNs;
    le.input.toNs = request.toNs;
    le.input.scale = request.lanes[li].metrics[mi].scale;
    for (size_t j : members) {
        const store::SeriesInfo& s = *jobs[j].series;
        le.input.members.push_back(&jobs[j].buckets);
        if (s.minValue) le.input.valueLo = std::min(le.input.valueLo, *s.minValue * le.input.scale);
        if (s.maxValue) le.input.valueHi = std::max(le.input.valueHi, *s.maxValue * le.input.scale);
    }
    le.result = prepareEnvelope(le.input, static_cast<size_t>(request.pixels), kParts); // each has `pixels` buckets
    return le;
}

// Tasks in lane order: a lane's series reductions, then its envelopes in two halves each. Both threads (one per
// connection) take tasks in turn; a lane is assembled, and handed to `laneReady`, by the thread that finishes its
// last task, so the caller can draw the first lanes while the later ones are still reduced.
void TimelineSource::Fetch::planTasks()
{
    for (size_t li = 0; li < request.lanes.size(); ++li) {
        LaneWork& lw = lanes[li];
        size_t series = 0;
        for (size_t mi = 0; mi < lw.byMetric.size(); ++mi) {
            const auto& members = lw.byMetric[mi].second;
            for (size_t j : members)
                tasks.push_back({li, false, j});
            series += members.size();
            if (static_cast<int>(members.size()) > request.envelopeAbove)
                lw.envelopes.push_back(planEnvelope(li, mi, members));
        }
        lw.seriesLeft = series;
        lw.partsLeft = lw.envelopes.size() * kParts;
        for (size_t e = 0; e < lw.envelopes.size() * kParts; ++e)
            tasks.push_back({li, true, e});
    }
}

TimelineLine TimelineSource::Fetch::makeLine(SeriesJob& job, const LaneSpec& lane, size_t mi)
{
    TimelineLine line;
    const store::SeriesInfo& s = *job.series;
    line.seriesId = s.id;
    line.nodeIndex = cat.nodeIndex(s.nodeId);
    if (auto it = d.deviceOrdinal.find(s.deviceId); it != d.deviceOrdinal.end()) line.deviceOrdinal = it->second;
    const std::string node = line.nodeIndex >= 0 ? cat.nodes[static_cast<size_t>(line.nodeIndex)].name : "?";
    line.label = fmt::format("{} {} {}", node, deviceLabel(cat.device(s.deviceId)), lane.metrics[mi].label);
    // Read with find: both threads assemble lanes, and operator[] may insert.
    if (const auto it = seriesPerDeviceMetric.find({s.deviceId, s.metric});
        it != seriesPerDeviceMetric.end() && it->second > 1)
        line.label += fmt::format(" ({})", s.source.empty() ? s.rawName : s.source);
    line.metric = s.metric;
    line.keys = std::move(job.keys);
    line.values = std::move(job.values);
    line.lodNs = job.lodNs;
    line.buckets = job.lineBuckets;
    line.raw = job.raw;
    return line;
}

// A finished envelope into its lane, with its label and its outliers as lines of their own.
void TimelineSource::Fetch::assembleEnvelope(size_t li, size_t mi, LaneEnvelope& le)
{
    const LaneSpec& lane = request.lanes[li];
    const auto& [metric, members] = lanes[li].byMetric[mi];
    LaneFrame& lf = frame->lanes[li];
    finishEnvelope(le.input, le.result);
    EnvelopeResult& env = le.result;
    const store::DeviceInfo* dev = cat.device(jobs[members.front()].series->deviceId);
    const std::string kind = dev && dev->kind == "gpu" ? "GPUs" : dev ? dev->kind + " devices" : "series";
    env.envelope.metric = metric;
    std::set<int64_t> devices;
    std::set<std::string> sources;
    for (size_t j : members) {
        devices.insert(jobs[j].series->deviceId);
        sources.insert(jobs[j].series->source);
    }
    env.envelope.devices = static_cast<int>(devices.size());
    env.envelope.label = devices.size() == members.size()
                             ? fmt::format("{}, {} {}", lane.metrics[mi].label, members.size(), kind)
                             : fmt::format("{}, {} {} ({} series from {} sources)", lane.metrics[mi].label,
                                           devices.size(), kind, members.size(), sources.size());
    lf.envelopes.push_back(std::move(env.envelope));
    int taken = 0;
    for (const EnvelopeOutlier& o : env.outliers) {
        if (taken++ >= request.maxOutliers) break;
        TimelineLine line = makeLine(jobs[members[o.member]], lane, mi);
        line.outlier = true;
        line.outlierSigma = o.sigma;
        line.outlierDeviation = o.deviation;
        lf.lines.push_back(std::move(line));
    }
}

// A lane whose tasks are all done: its lines and envelopes, the value range of what is shown, handed to laneReady.
void TimelineSource::Fetch::assemble(size_t li)
{
    const LaneSpec& lane = request.lanes[li];
    LaneFrame& lf = frame->lanes[li];
    lf.laneId = lane.id;
    size_t nextEnvelope = 0;
    for (size_t mi = 0; mi < lanes[li].byMetric.size(); ++mi) {
        const auto& members = lanes[li].byMetric[mi].second;
        if (members.empty()) continue;
        if (static_cast<int>(members.size()) <= request.envelopeAbove) {
            for (size_t j : members)
                lf.lines.push_back(makeLine(jobs[j], lane, mi));
            continue;
        }
        assembleEnvelope(li, mi, lanes[li].envelopes[nextEnvelope++]);
    }
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    auto extend = [&](const std::vector<double>& v) {
        for (double x : v)
            if (std::isfinite(x)) {
                lo = std::min(lo, x);
                hi = std::max(hi, x);
            }
    };
    for (const TimelineLine& l : lf.lines)
        extend(l.values);
    for (const TimelineEnvelope& e : lf.envelopes) {
        extend(e.lo);
        extend(e.hi);
    }
    lf.hasData = lo <= hi;
    if (lf.hasData) {
        lf.lo = lo;
        lf.hi = hi;
    }
    if (laneReady) laneReady(li, lf);
}

// One thread's share: takes tasks in turn until none is left, one fails or the fetch is cancelled.
void TimelineSource::Fetch::runTasks(int c)
{
    store::RunReader& reader = *d.connections[c].reader;
    for (;;) {
        if (failed.load() || cancelled()) return;
        const size_t t = nextTask.fetch_add(1);
        if (t >= tasks.size()) return;
        const Task& task = tasks[t];
        LaneWork& lw = lanes[task.lane];
        if (!task.envelope) {
            bool b = false;
            Status st = d.reduce(reader, jobs[task.index], request, b);
            if (b) built.fetch_add(1);
            if (!st) {
                errors[c] = st.error();
                failed.store(true);
                return;
            }
            if (lw.seriesLeft.fetch_sub(1) == 1 && lw.envelopes.empty()) assemble(task.lane);
            continue;
        }
        // An envelope needs every member reduced: the other thread may still be on the lane's last series.
        while (lw.seriesLeft.load() > 0) {
            if (failed.load() || cancelled()) return;
            std::this_thread::yield();
        }
        LaneEnvelope& le = lw.envelopes[task.index / kParts];
        const size_t part = task.index % kParts;
        const size_t buckets = le.result.envelope.keys.size();
        computeEnvelopePart(le.input, part, buckets * part / kParts, buckets * (part + 1) / kParts, le.result);
        if (lw.partsLeft.fetch_sub(1) == 1) assemble(task.lane);
    }
}

Expected<std::shared_ptr<const TimelineFrame>> TimelineSource::Fetch::run()
{
    const auto t0 = std::chrono::steady_clock::now();
    planSeries();
    planTasks();
    frame->generation = request.generation;
    frame->fromNs = request.fromNs;
    frame->toNs = request.toNs;
    frame->pixels = request.pixels;
    frame->seriesRead = static_cast<int>(jobs.size());
    frame->lanes.resize(request.lanes.size());
    if (tasks.size() > 1) {
        std::thread second(&Fetch::runTasks, this, 1);
        runTasks(0);
        second.join();
    } else {
        runTasks(0);
    }
    if (cancelled()) return makeError(ErrorCode::Cancelled, "timeline fetch cancelled");
    for (const auto& e : errors)
        if (e) return *e;
    // Lanes without any series (nothing to reduce) are assembled here.
    for (size_t li = 0; li < request.lanes.size(); ++li)
        if (lanes[li].seriesLeft.load() == 0 && lanes[li].envelopes.empty() && frame->lanes[li].laneId.empty())
            assemble(li);
    frame->pyramidsBuilt = built.load();
    frame->fetchMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return std::shared_ptr<const TimelineFrame>(std::move(frame));
}

Expected<std::shared_ptr<const TimelineFrame>>
TimelineSource::fetch(const TimelineRequest& request, const std::atomic<bool>* cancel, const LaneReady& laneReady)
{
    if (request.pixels <= 0) return makeError(ErrorCode::Usage, "a timeline fetch needs at least one pixel");
    if (request.toNs < request.fromNs) return makeError(ErrorCode::Usage, "empty time window");
    return Fetch(*m_impl, request, cancel, laneReady).run();
}

} // namespace runlens::timeline
