#include "analysis/timeline/timeline_source.h"

#include "analysis/store/run_database.h"
#include "analysis/timeline/series_reduction.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace runlens::timeline {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr int kWorkers = 2;        // database connections, one thread each
constexpr double kOutlierK = 6;    // robust deviations from the median that make a member an outlier
constexpr double kOutlierFloor = 0.03; // of the envelope's value range: the smallest deviation that counts

struct Worker
{
    std::unique_ptr<store::RunDatabase> db;
    std::unique_ptr<store::RunReader> reader;
};

int64_t intervalOf(const store::SeriesInfo& s)
{
    if (s.points < 2 || !s.firstNs || !s.lastNs || *s.lastNs <= *s.firstNs) return 1'000'000'000;
    return std::max<int64_t>(1, (*s.lastNs - *s.firstNs) / (s.points - 1));
}

// Points of the series expected in [from, to], from its density.
double expectedPoints(const store::SeriesInfo& s, int64_t from, int64_t to)
{
    if (!s.firstNs || !s.lastNs) return 0;
    const int64_t lo = std::max(from, *s.firstNs), hi = std::min(to, *s.lastNs);
    if (hi < lo) return 0;
    if (*s.lastNs == *s.firstNs) return static_cast<double>(s.points);
    return static_cast<double>(s.points) * static_cast<double>(hi - lo) / static_cast<double>(*s.lastNs - *s.firstNs);
}

enum class ItemKind
{
    Line,    // a drawn line at the request's pixels
    Member   // an envelope member: a bucket grid only
};

struct Item
{
    ItemKind kind = ItemKind::Line;
    const store::SeriesInfo* series = nullptr;
    double scale = 1;
    int buckets = 0;
    // results
    std::vector<double> keys, values;
    BucketGrid grid;
};

// The upper median (for an even count the larger middle value): enough for drawing and outlier tests, and one
// partial sort instead of two.
double median(std::vector<double>& v)
{
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
    return v[mid];
}

} // namespace

struct TimelineSource::Impl
{
    std::string path;
    std::shared_ptr<const RunCatalog> catalog;
    std::vector<Worker> workers;
    std::mutex mutex;
    std::unordered_map<int64_t, std::shared_ptr<const SeriesLod>> cache;
    std::unordered_map<int64_t, const store::SeriesInfo*> series;
    std::unordered_map<int64_t, std::string> labels;
    std::unordered_map<int64_t, int> ordinals;

    Expected<std::shared_ptr<const SeriesLod>> lod(Worker& w, const store::SeriesInfo& s);
    Status run(Worker& w, Item& item, int64_t from, int64_t to, int pixels,
               const std::map<int, std::shared_ptr<const std::vector<int64_t>>>& boundaries);
    std::string label(const store::SeriesInfo& s, const LaneSpec& lane) const;
};

Expected<std::shared_ptr<const SeriesLod>> TimelineSource::Impl::lod(Worker& w, const store::SeriesInfo& s)
{
    {
        std::lock_guard lock(mutex);
        auto it = cache.find(s.id);
        if (it != cache.end()) return it->second;
    }
    auto points = w.reader->readPoints(s.id, store::TimeWindow{});
    if (!points) return points.error();
    auto built = buildSeriesLod(std::move(*points), intervalOf(s));
    std::lock_guard lock(mutex);
    cache[s.id] = built;
    return built;
}

// One series over [from, to]: a line (raw points when there are few, else per-pixel min/max) or a member grid.
Status TimelineSource::Impl::run(Worker& w, Item& item, int64_t from, int64_t to, int pixels,
                                 const std::map<int, std::shared_ptr<const std::vector<int64_t>>>& boundaries)
{
    const store::SeriesInfo& s = *item.series;
    const int64_t interval = intervalOf(s);
    const int64_t gap = 3 * interval;
    const double expected = expectedPoints(s, from, to);
    const bool small = s.points <= kRawCachePoints;
    const int64_t bucketNs = (to - from) / std::max(1, item.buckets);
    // The pyramid is built when it can answer (buckets of at least 4 points) or the series is small anyway.
    const bool useLod = small || bucketNs >= 4 * interval;
    std::shared_ptr<const SeriesLod> cached;
    if (useLod) {
        auto l = lod(w, s);
        if (!l) return l.error();
        cached = *l;
    }
    auto windowPoints = [&]() -> Expected<std::vector<store::Point>> {
        if (cached && cached->raw) return cached->points; // a copy of a small vector
        return w.reader->readPoints(s.id, store::TimeWindow{from, to});
    };
    if (item.kind == ItemKind::Line && expected <= 2.0 * pixels) {
        auto pts = windowPoints();
        if (!pts) return pts.error();
        pointsToLine(*pts, from, to, item.scale, gap, item.keys, item.values);
        return okStatus();
    }
    auto b = boundaries.find(item.buckets);
    item.grid = BucketGrid(from, to, item.buckets, b != boundaries.end() ? b->second : nullptr);
    if (!cached || !reduceFromLod(*cached, item.grid)) {
        auto pts = windowPoints();
        if (!pts) return pts.error();
        reducePoints(*pts, item.grid);
    }
    if (item.kind == ItemKind::Line) gridToLine(item.grid, item.scale, gap, item.keys, item.values);
    return okStatus();
}

std::string TimelineSource::Impl::label(const store::SeriesInfo& s, const LaneSpec& lane) const
{
    std::string metric = s.metric;
    for (const auto& m : lane.metrics)
        if (m.metric == s.metric && !m.label.empty()) metric = m.label;
    auto it = labels.find(s.id);
    std::string out = (it != labels.end() ? it->second : std::string()) + " " + metric;
    if (!s.labels.empty()) out += " {" + s.labels + "}";
    // The same metric of one device from two sources (a 250 ms query log beside a 1 s dmon log) is told apart.
    for (const auto& other : catalog->series)
        if (other.id != s.id && other.deviceId == s.deviceId && other.metric == s.metric && other.labels == s.labels) {
            out += " [" + s.source + "]";
            break;
        }
    return out;
}

TimelineSource::TimelineSource(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
TimelineSource::~TimelineSource() = default;

const RunCatalog& TimelineSource::catalog() const
{
    return *m_impl->catalog;
}

Expected<std::unique_ptr<TimelineSource>> TimelineSource::open(const std::string& path,
                                                               std::shared_ptr<const RunCatalog> catalog)
{
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->catalog = std::move(catalog);
    for (int i = 0; i < kWorkers; ++i) {
        auto db = store::RunDatabase::open(path, store::OpenMode::ReadOnly);
        if (!db) return db.error();
        Worker w;
        w.db = std::move(*db);
        w.reader = std::make_unique<store::RunReader>(*w.db);
        impl->workers.push_back(std::move(w));
    }
    const RunCatalog& c = *impl->catalog;
    for (const auto& s : c.series)
        impl->series[s.id] = &s;
    std::map<std::pair<int64_t, std::string>, int> perKind;
    for (const auto& d : c.devices) {
        impl->ordinals[d.id] = perKind[{d.nodeId, d.kind}]++;
    }
    for (const auto& s : c.series) {
        const int n = c.nodeIndex(s.nodeId);
        std::string name = n >= 0 ? c.nodes[static_cast<size_t>(n)].name : std::string("?");
        if (const store::DeviceInfo* d = c.device(s.deviceId)) {
            if (d->kind == "gpu") name += " gpu" + d->name;
            else if (!d->name.empty()) name += " " + d->name;
            else if (d->kind != "host") name += " " + d->kind;
        }
        impl->labels[s.id] = name;
    }
    return std::unique_ptr<TimelineSource>(new TimelineSource(std::move(impl)));
}

Expected<std::shared_ptr<const TimelineFrame>> TimelineSource::fetch(const TimelineRequest& request,
                                                                      const std::atomic<bool>* cancel)
{
    const auto t0 = std::chrono::steady_clock::now();
    if (request.toNs < request.fromNs) return makeError(ErrorCode::Usage, "empty time window");
    const int pixels = std::max(1, request.pixels);
    Impl& d = *m_impl;
    const RunCatalog& catalog = *d.catalog;
    std::vector<int64_t> hidden = request.hiddenSeries;
    std::sort(hidden.begin(), hidden.end());

    // Plan: per lane and metric, lines or an envelope of members.
    struct Group
    {
        size_t lane;
        std::string metric;
        double scale;
        std::vector<size_t> items;
        bool envelope;
    };
    std::vector<Item> items;
    std::vector<Group> groups;
    for (size_t li = 0; li < request.lanes.size(); ++li) {
        const LaneSpec& lane = request.lanes[li];
        const std::vector<int64_t> ids = laneSeries(catalog, lane);
        for (const LaneMetric& m : lane.metrics) {
            std::vector<const store::SeriesInfo*> members;
            for (int64_t id : ids) {
                const store::SeriesInfo* s = d.series.at(id);
                if (s->metric == m.metric && !std::binary_search(hidden.begin(), hidden.end(), id)) members.push_back(s);
            }
            if (members.empty()) continue;
            Group g{li, m.metric, m.scale, {}, static_cast<int>(members.size()) > request.envelopeAbove};
            double densest = 0;
            for (const auto* s : members)
                densest = std::max(densest, expectedPoints(*s, request.fromNs, request.toNs));
            // Envelope buckets: two pixels each (a band needs no finer steps, and its min and max keep every dip),
            // fewer when the members have fewer points than that.
            const int envelopeBuckets = std::clamp(static_cast<int>(densest / 2), 1, std::max(1, pixels / 2));
            for (const auto* s : members) {
                Item it;
                it.kind = g.envelope ? ItemKind::Member : ItemKind::Line;
                it.series = s;
                it.scale = m.scale;
                it.buckets = g.envelope ? envelopeBuckets : pixels;
                g.items.push_back(items.size());
                items.push_back(std::move(it));
            }
            groups.push_back(std::move(g));
        }
    }

    // One set of bucket boundaries per grid size, shared by every grid of the request.
    std::map<int, std::shared_ptr<const std::vector<int64_t>>> boundaries;
    boundaries[pixels] = bucketBoundaries(request.fromNs, request.toNs, pixels);
    for (const Item& it : items)
        if (!boundaries.count(it.buckets)) boundaries[it.buckets] = bucketBoundaries(request.fromNs, request.toNs, it.buckets);

    // Run the items on the workers (this thread is worker 0).
    auto runAll = [&](std::vector<size_t> todo) -> Status {
        std::atomic<size_t> next{0};
        std::mutex errorMutex;
        std::optional<Error> error;
        auto loop = [&](Worker& w) {
            for (;;) {
                const size_t k = next.fetch_add(1);
                if (k >= todo.size()) return;
                if (cancel && cancel->load()) {
                    std::lock_guard lock(errorMutex);
                    if (!error) error = makeError(ErrorCode::Cancelled, "cancelled");
                    return;
                }
                Status st = d.run(w, items[todo[k]], request.fromNs, request.toNs, pixels, boundaries);
                if (!st) {
                    std::lock_guard lock(errorMutex);
                    if (!error) error = st.error();
                    return;
                }
            }
        };
        std::vector<std::thread> threads;
        for (size_t i = 1; i < d.workers.size() && todo.size() > 1; ++i)
            threads.emplace_back(loop, std::ref(d.workers[i]));
        loop(d.workers[0]);
        for (auto& t : threads)
            t.join();
        if (error) return *error;
        return okStatus();
    };
    std::vector<size_t> all(items.size());
    for (size_t i = 0; i < items.size(); ++i)
        all[i] = i;
    if (Status st = runAll(all); !st) return st.error();

    auto frame = std::make_shared<TimelineFrame>();
    frame->generation = request.generation;
    frame->fromNs = request.fromNs;
    frame->toNs = request.toNs;
    frame->pixels = pixels;
    frame->lanes.resize(request.lanes.size());
    for (size_t li = 0; li < request.lanes.size(); ++li)
        frame->lanes[li].laneId = request.lanes[li].id;

    auto makeLine = [&](const Item& it, const LaneSpec& lane) {
        TimelineLine line;
        line.seriesId = it.series->id;
        line.nodeIndex = catalog.nodeIndex(it.series->nodeId);
        auto o = d.ordinals.find(it.series->deviceId);
        line.deviceOrdinal = o != d.ordinals.end() ? o->second : 0;
        line.label = d.label(*it.series, lane);
        line.metric = it.series->metric;
        line.keys = it.keys;
        line.values = it.values;
        return line;
    };

    std::vector<size_t> outlierItems; // items re-run as lines
    std::vector<std::pair<size_t, double>> outlierOf; // (item, score)
    // Envelopes are independent of each other: computed on both workers' threads.
    struct EnvelopeResult
    {
        TimelineEnvelope env;
        std::vector<std::pair<double, size_t>> scored; // outlier score, item
    };
    std::vector<size_t> envelopeGroups;
    for (size_t gi = 0; gi < groups.size(); ++gi)
        if (groups[gi].envelope) envelopeGroups.push_back(gi);
    std::vector<EnvelopeResult> results(groups.size());
    auto computeEnvelope = [&](const Group& g, EnvelopeResult& result) {
        const LaneSpec& lane = request.lanes[g.lane];
        TimelineEnvelope& env = result.env;
        std::vector<std::pair<double, size_t>>& scored = result.scored;
        const BucketGrid& shape = items[g.items.front()].grid;
        env.metric = g.metric;
        env.members = static_cast<int>(g.items.size());
        for (const auto& m : lane.metrics)
            if (m.metric == g.metric) env.label = m.label;
        env.label += ", " + std::to_string(env.members) + " series";
        const auto n = static_cast<size_t>(shape.buckets);
        env.keys.resize(n);
        env.lo.assign(n, kNan);
        env.median.assign(n, kNan);
        env.hi.assign(n, kNan);
        std::vector<double> mins, maxs, means, spreads;
        std::vector<double> medMin(n, kNan), medMax(n, kNan), madMin(n, 0), madMax(n, 0), spread(n, 0);
        double rangeLo = INFINITY, rangeHi = -INFINITY;
        for (size_t b = 0; b < n; ++b) {
            const int64_t start = shape.bucketStart(static_cast<int>(b));
            const int64_t end = shape.bucketStart(static_cast<int>(b + 1));
            env.keys[b] = static_cast<double>(start + (end - start) / 2) * 1e-9;
            mins.clear();
            maxs.clear();
            means.clear();
            spreads.clear();
            for (size_t k : g.items) {
                const BucketGrid& gr = items[k].grid;
                if (gr.count[b] == 0) continue;
                mins.push_back(gr.mn[b]);
                maxs.push_back(gr.mx[b]);
                means.push_back(gr.sum[b] / static_cast<double>(gr.count[b]));
                spreads.push_back(gr.mx[b] - gr.mn[b]);
            }
            if (mins.empty()) continue;
            env.lo[b] = *std::min_element(mins.begin(), mins.end()) * g.scale;
            env.hi[b] = *std::max_element(maxs.begin(), maxs.end()) * g.scale;
            env.median[b] = median(means) * g.scale;
            rangeLo = std::min(rangeLo, env.lo[b]);
            rangeHi = std::max(rangeHi, env.hi[b]);
            if (mins.size() < 4) continue; // too few to call one of them an outlier
            medMin[b] = median(mins);
            medMax[b] = median(maxs);
            for (double& v : mins)
                v = std::abs(v - medMin[b]);
            for (double& v : maxs)
                v = std::abs(v - medMax[b]);
            // The yardstick: how much the members' extremes differ (GPUs at different steady levels are not
            // outliers) or how much a member varies within the bucket (noise), whichever is larger; flat data falls
            // back to the floor below.
            spread[b] = median(spreads);
            madMin[b] = std::max(1.4826 * median(mins), spread[b]);
            madMax[b] = std::max(1.4826 * median(maxs), spread[b]);
        }
        // Outliers: members whose bucket min (max) lies far below (above) the members' median min (max).
        const double floor = kOutlierFloor * std::max(1e-12, (rangeHi - rangeLo) / g.scale);
        for (size_t k : g.items) {
            const BucketGrid& gr = items[k].grid;
            double score = 0;
            for (size_t b = 0; b < n; ++b) {
                if (gr.count[b] == 0 || std::isnan(medMin[b])) continue;
                score = std::max(score, (medMin[b] - gr.mn[b]) / std::max(madMin[b], floor));
                score = std::max(score, (gr.mx[b] - medMax[b]) / std::max(madMax[b], floor));
            }
            if (score > kOutlierK) scored.push_back({score, k});
        }
    };
    {
        std::atomic<size_t> next{0};
        auto loop = [&] {
            for (size_t k; (k = next.fetch_add(1)) < envelopeGroups.size();)
                computeEnvelope(groups[envelopeGroups[k]], results[envelopeGroups[k]]);
        };
        std::thread helper;
        if (envelopeGroups.size() > 1) helper = std::thread(loop);
        loop();
        if (helper.joinable()) helper.join();
    }
    for (size_t gi = 0; gi < groups.size(); ++gi) {
        const Group& g = groups[gi];
        const LaneSpec& lane = request.lanes[g.lane];
        LaneFrame& lf = frame->lanes[g.lane];
        if (!g.envelope) {
            for (size_t k : g.items)
                lf.lines.push_back(makeLine(items[k], lane));
            continue;
        }
        TimelineEnvelope& env = results[gi].env;
        std::vector<std::pair<double, size_t>>& scored = results[gi].scored;
        std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        for (size_t i = 0; i < scored.size() && static_cast<int>(i) < request.maxOutliers; ++i) {
            Item& it = items[scored[i].second];
            it.kind = ItemKind::Line;
            it.buckets = pixels;
            outlierItems.push_back(scored[i].second);
            outlierOf.push_back({scored[i].second, scored[i].first});
        }
        lf.envelopes.push_back(std::move(env));
    }
    if (!outlierItems.empty()) {
        if (Status st = runAll(outlierItems); !st) return st.error();
        for (const Group& g : groups)
            for (size_t k : g.items)
                for (const auto& [item, score] : outlierOf)
                    if (item == k) {
                        TimelineLine line = makeLine(items[k], request.lanes[g.lane]);
                        line.outlier = true;
                        line.outlierScore = score;
                        frame->lanes[g.lane].lines.push_back(std::move(line));
                    }
    }
    for (LaneFrame& lf : frame->lanes) {
        double lo = INFINITY, hi = -INFINITY;
        auto widen = [&](const std::vector<double>& v) {
            for (double x : v)
                if (std::isfinite(x)) {
                    lo = std::min(lo, x);
                    hi = std::max(hi, x);
                }
        };
        for (const auto& l : lf.lines)
            widen(l.values);
        for (const auto& e : lf.envelopes) {
            widen(e.lo);
            widen(e.hi);
        }
        lf.hasData = lo <= hi;
        lf.lo = lf.hasData ? lo : 0;
        lf.hi = lf.hasData ? hi : 0;
    }
    frame->fetchMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    return std::shared_ptr<const TimelineFrame>(std::move(frame));
}

} // namespace runlens::timeline
