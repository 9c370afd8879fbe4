// Timeline data: lane groups and their order, lines named by their source, lanes handed over as each is ready,
// missing data as gaps at every zoom, per-pixel min/max against a brute-force reduction of the stored points for
// random windows (pyramid, chunk cache and raw points), and cancellation. Every run is generated here through
// store::RunWriter.

#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"
#include "analysis/timeline/timeline_lod.h"
#include "analysis/timeline/timeline_source.h"
#include "tests/test_support.h"
#include "tests/timeline_support.h"

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <mutex>
#include <random>
#include <set>

using namespace runlens;
using namespace runlens::test;
using namespace runlens::timeline;

namespace {

const LaneSpec* findLane(const std::vector<LaneSpec>& lanes, const std::string& id)
{
    for (const LaneSpec& l : lanes)
        if (l.id == id) return &l;
    return nullptr;
}

int64_t keyNs(double seconds)
{
    const double whole = std::floor(seconds);
    return static_cast<int64_t>(whole) * kSecond + std::llround((seconds - whole) * 1e9);
}

bool near(double a, double b)
{
    return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b));
}

} // namespace

class TestTimeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void lanes();
    void severalSourcesNamed();
    void lanesHandedOverWhenReady();
    void gaps();
    void levelOfDetail();
    void cancel();

private:
    QTemporaryDir m_dir;
};

void TestTimeline::lanes()
{
    const std::string path = writeRun(m_dir, "lanes.runlens", [](store::RunWriter& w) {
        for (int n = 0; n < 2; ++n) {
            auto node = w.node(fmt::format("node{}", n), "option", "UTC");
            if (!node) return false;
            for (int g = 0; g < 2; ++g) {
                auto gpu = w.device(*node, "gpu", std::to_string(g));
                if (!gpu) return false;
                for (const char* m : {"gpu.sm_active", "gpu.util", "gpu.pcie_tx"})
                    if (!appendSeries(w, *gpu, m, "%", 100, kSecond, [](int64_t i) { return double(i % 7); }))
                        return false;
            }
            auto host = w.device(*node, "host", "");
            auto nic = w.device(*node, "net", "ib0");
            if (!host || !nic) return false;
            if (!appendSeries(w, *host, "cpu.util", "%", 100, kSecond, [](int64_t) { return 20.0; }) ||
                !appendSeries(w, *nic, "net.tx", "B/s", 100, kSecond, [](int64_t) { return 1e9; }) ||
                !appendSeries(w, *host, "custom.queue_depth", "items", 100, kSecond, [](int64_t) { return 3.0; }))
                return false;
        }
        return true;
    });
    QVERIFY(!path.empty());
    Opened run = openRun(path);
    QVERIFY(run.source);
    QCOMPARE(run.catalog->nodes.size(), size_t(2));
    QCOMPARE(run.catalog->firstNs, kStart);
    QCOMPARE(run.catalog->lastNs, kStart + 99 * kSecond);

    const auto specs = laneSpecs(*run.catalog);
    QStringList ids;
    for (const LaneSpec& l : specs)
        ids << QString::fromStdString(l.id);
    QCOMPARE(ids, test::strs({"gpu_util", "net", "cpu", "metric:custom.queue_depth", "metric:gpu.pcie_tx"}));
    const LaneSpec& util = specs[0];
    QCOMPARE(util.metrics.size(), size_t(2)); // gpu.gr_active is absent from this run
    QCOMPARE(util.metrics[0].metric, std::string("gpu.util"));
    QCOMPARE(util.metrics[1].metric, std::string("gpu.sm_active"));
    QCOMPARE(util.metrics[1].scale, 100.0);
    QVERIFY(util.shownByDefault);
    const LaneSpec* custom = findLane(specs, "metric:custom.queue_depth");
    QVERIFY(custom);
    QVERIFY(!custom->shownByDefault);
    QCOMPARE(custom->unit, std::string("items"));

    // Node, device, then metric in the lane's order.
    const auto ids0 = laneSeries(*run.catalog, util);
    QCOMPARE(ids0.size(), size_t(8));
    QStringList order;
    for (int64_t id : ids0) {
        const store::SeriesInfo* s = run.catalog->findSeries(id);
        QVERIFY(s);
        order << QString::fromStdString(fmt::format("{}/{}/{}", run.catalog->nodeIndex(s->nodeId),
                                                    run.catalog->device(s->deviceId)->name, s->metric));
    }
    QCOMPARE(order, test::strs({"0/0/gpu.util", "0/0/gpu.sm_active", "0/1/gpu.util", "0/1/gpu.sm_active",
                                "1/0/gpu.util", "1/0/gpu.sm_active", "1/1/gpu.util", "1/1/gpu.sm_active"}));

    TimelineRequest req;
    req.fromNs = run.catalog->firstNs;
    req.toNs = run.catalog->lastNs;
    req.pixels = 400;
    req.lanes = {util};
    req.hiddenSeries = {ids0[3]};
    auto frame = run.source->fetch(req);
    QVERIFY_OK(frame);
    QCOMPARE((*frame)->lanes.size(), size_t(1));
    const LaneFrame& lf = (*frame)->lanes[0];
    QCOMPARE(lf.lines.size(), size_t(7));
    QVERIFY(lf.envelopes.empty());
    for (const TimelineLine& l : lf.lines)
        QVERIFY(l.seriesId != ids0[3]);
    // Lines by metric (the lane's order), each in node and device order.
    QCOMPARE(lf.lines[0].label, std::string("node0 gpu0 GPU utilization"));
    QCOMPARE(lf.lines[1].deviceOrdinal, 1);
    QCOMPARE(lf.lines[2].nodeIndex, 1);
    QCOMPARE(lf.lines[4].label, std::string("node0 gpu0 SM active"));
    QCOMPARE(lf.lines[5].label, std::string("node1 gpu0 SM active"));
    QVERIFY(lf.lines[4].raw);
    QCOMPARE(lf.lines[4].values[3], 300.0); // 3 × 100 (ratio as percent)
    QCOMPARE(lf.hi, 600.0);
}

void TestTimeline::severalSourcesNamed()
{
    // GPU utilization of each GPU from two tools (two imports): each line names its source, and an envelope of
    // them counts GPUs and series apart.
    const std::string path = m_dir.filePath(QStringLiteral("sources.runlens")).toStdString();
    {
        auto db = store::RunDatabase::open(path, store::OpenMode::Create);
        QVERIFY_OK(db);
        auto tx = (*db)->transaction();
        QVERIFY_OK(tx);
        store::RunWriter w(**db);
        for (const char* format : {"nvidia-smi-query-csv", "prometheus-text"}) {
            store::ImportRecord rec;
            rec.path = format;
            rec.contentHash = format;
            rec.format = format;
            QVERIFY(w.beginImport(rec));
            QVERIFY(forEachGpu(w, 3, 2, [&](int, int g, int64_t gpu) {
                return appendSeries(w, gpu, "gpu.util", "%", 100, kSecond, [&](int64_t) { return 50.0 + g; });
            }));
            store::ImportTotals totals;
            totals.contentHash = format;
            QVERIFY(w.finishImport(totals, store::Diagnostics()));
        }
        QVERIFY_OK(tx->commit());
    }
    Opened run = openRun(path);
    QVERIFY(run.source);
    for (const int envelopeAbove : {100, 8}) {
        TimelineRequest req = wholeRunRequest(run, 400);
        req.envelopeAbove = envelopeAbove;
        auto frame = run.source->fetch(req);
        QVERIFY_OK(frame);
        const LaneFrame& lf = (*frame)->lanes.at(0);
        if (envelopeAbove == 100) { // 12 lines, every label once
            QCOMPARE(lf.lines.size(), size_t(12));
            std::set<std::string> labels;
            for (const TimelineLine& l : lf.lines)
                labels.insert(l.label);
            QCOMPARE(labels.size(), size_t(12));
            QVERIFY(labels.count("node1 gpu0 GPU utilization (nvidia-smi-query-csv)"));
            QVERIFY(labels.count("node1 gpu0 GPU utilization (prometheus-text)"));
        } else {
            QCOMPARE(lf.envelopes.size(), size_t(1));
            QCOMPARE(lf.envelopes[0].members, 12);
            QCOMPARE(lf.envelopes[0].devices, 6);
            QCOMPARE(lf.envelopes[0].label, std::string("GPU utilization, 6 GPUs (12 series from 2 sources)"));
        }
    }
}

void TestTimeline::lanesHandedOverWhenReady()
{
    // Four lanes, two of them envelopes: each lane is handed to the callback once, before fetch returns, equal to
    // the lane in the returned frame.
    const std::string path = writeRun(m_dir, "ready.runlens", [](store::RunWriter& w) {
        for (int n = 0; n < 4; ++n) {
            auto node = w.node(fmt::format("node{}", n), "option", "UTC");
            if (!node) return false;
            for (int g = 0; g < 12; ++g) {
                auto gpu = w.device(*node, "gpu", std::to_string(g));
                if (!gpu) return false;
                if (!appendSeries(w, *gpu, "gpu.util", "%", 3000, kSecond,
                                  [&](int64_t i) { return double((i + g) % 90); }) ||
                    !appendSeries(w, *gpu, "gpu.power", "W", 3000, kSecond,
                                  [&](int64_t i) { return 300.0 + (i * n) % 40; }))
                    return false;
            }
            auto host = w.device(*node, "host", "");
            if (!host ||
                !appendSeries(w, *host, "cpu.util", "%", 3000, kSecond, [&](int64_t i) { return double(i % 50); }))
                return false;
        }
        return true;
    });
    QVERIFY(!path.empty());
    Opened run = openRun(path);
    QVERIFY(run.source);
    TimelineRequest req = wholeRunRequest(run, 700);
    QCOMPARE(req.lanes.size(), size_t(3));
    std::mutex mutex;
    std::vector<std::pair<size_t, LaneFrame>> handed;
    auto frame = run.source->fetch(req, nullptr, [&](size_t li, const LaneFrame& lf) {
        std::lock_guard<std::mutex> lock(mutex);
        handed.emplace_back(li, lf);
    });
    QVERIFY_OK(frame);
    QCOMPARE(handed.size(), req.lanes.size());
    std::sort(handed.begin(), handed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    int envelopes = 0;
    for (size_t li = 0; li < handed.size(); ++li) {
        QCOMPARE(handed[li].first, li);
        const LaneFrame& a = handed[li].second;
        const LaneFrame& b = (*frame)->lanes[li];
        QCOMPARE(a.laneId, req.lanes[li].id);
        QCOMPARE(a.laneId, b.laneId);
        QCOMPARE(a.lines.size(), b.lines.size());
        for (size_t k = 0; k < a.lines.size(); ++k) {
            QCOMPARE(a.lines[k].seriesId, b.lines[k].seriesId);
            QCOMPARE(a.lines[k].keys.size(), b.lines[k].keys.size());
        }
        QCOMPARE(a.envelopes.size(), b.envelopes.size());
        for (size_t e = 0; e < a.envelopes.size(); ++e) {
            QCOMPARE(a.envelopes[e].members, 48);
            QVERIFY(a.envelopes[e].lo == b.envelopes[e].lo && a.envelopes[e].hi == b.envelopes[e].hi);
            ++envelopes;
        }
        QVERIFY(a.hasData);
    }
    QCOMPARE(envelopes, 2);
}

void TestTimeline::gaps()
{
    // 28 h at 1 s with a 10-minute hole (no points) at 10 h and 2 minutes of explicit missing points at 20 h.
    const int64_t count = int64_t{28} * 3600;
    const int64_t holeFrom = kStart + int64_t{10} * 3600 * kSecond, holeTo = holeFrom + 600 * kSecond;
    const int64_t missFrom = kStart + int64_t{20} * 3600 * kSecond, missTo = missFrom + 120 * kSecond;
    const std::string path = writeRun(m_dir, "gaps.runlens", [&](store::RunWriter& w) {
        auto node = w.node("node0", "option", "UTC");
        auto gpu = node ? w.device(*node, "gpu", "0") : node;
        if (!gpu) return false;
        return appendSeries(
            w, *gpu, "gpu.power", "W", count, kSecond,
            [&](int64_t i) {
                const int64_t ts = kStart + i * kSecond;
                return ts >= missFrom && ts < missTo ? std::nan("") : 300.0 + double(i % 50);
            },
            holeFrom, holeTo);
    });
    QVERIFY(!path.empty());
    Opened run = openRun(path);
    QVERIFY(run.source);
    TimelineRequest req;
    req.pixels = 1600;
    req.lanes = laneSpecs(*run.catalog);
    struct Window
    {
        int64_t from, to, gapFrom, gapTo;
        const char* what;
    };
    const std::vector<Window> windows{
        {run.catalog->firstNs, run.catalog->lastNs, holeFrom, holeTo, "hole, whole run"},
        {run.catalog->firstNs, run.catalog->lastNs, missFrom, missTo, "missing points, whole run"},
        {holeFrom - 3600 * kSecond, holeTo + 3600 * kSecond, holeFrom, holeTo, "hole, 2 h"},
        {holeFrom - 300 * kSecond, holeTo + 300 * kSecond, holeFrom, holeTo, "hole, 20 min"},
        {missFrom - 600 * kSecond, missTo + 600 * kSecond, missFrom, missTo, "missing points, 22 min"},
        {missFrom - 60 * kSecond, missTo + 60 * kSecond, missFrom, missTo, "missing points, 4 min"},
    };
    for (const Window& win : windows) {
        req.fromNs = win.from;
        req.toNs = win.to;
        auto frame = run.source->fetch(req);
        QVERIFY_OK(frame);
        QCOMPARE((*frame)->lanes[0].lines.size(), size_t(1));
        const TimelineLine& line = (*frame)->lanes[0].lines[0];
        // A finite value may sit inside the gap by at most one display bucket plus the level misalignment.
        const int64_t margin = (win.to - win.from) / req.pixels + line.lodNs + kSecond;
        bool nanInside = false;
        for (size_t i = 0; i < line.keys.size(); ++i) {
            const int64_t k = keyNs(line.keys[i]);
            if (k < win.gapFrom - margin || k > win.gapTo + margin) continue;
            if (std::isnan(line.values[i])) {
                nanInside = true;
                continue;
            }
            QVERIFY2(k <= win.gapFrom + margin || k >= win.gapTo - margin, win.what);
            QVERIFY2(line.values[i] >= 300 && line.values[i] <= 349, win.what); // never an interpolated value
        }
        QVERIFY2(nanInside, win.what);
        QVERIFY2(line.keys.size() <= size_t(2 * req.pixels), win.what);
    }
}

void TestTimeline::levelOfDetail()
{
    // Noise in [0, 100] at 1 s for 28 h with one sample of 1000.
    const int64_t count = int64_t{28} * 3600;
    const int64_t spikeAt = kStart + 47'123 * kSecond;
    const std::string path = writeRun(m_dir, "lod.runlens", [&](store::RunWriter& w) {
        auto node = w.node("node0", "option", "UTC");
        auto gpu = node ? w.device(*node, "gpu", "0") : node;
        if (!gpu) return false;
        std::mt19937_64 rng(3);
        return appendSeries(w, *gpu, "gpu.temp", "°C", count, kSecond, [&](int64_t i) {
            return kStart + i * kSecond == spikeAt ? 1000.0 : double(rng() % 1001) / 10.0;
        });
    });
    QVERIFY(!path.empty());
    Opened run = openRun(path);
    QVERIFY(run.source);
    auto db = store::RunDatabase::open(path, store::OpenMode::ReadOnly);
    QVERIFY_OK(db);
    store::RunReader reader(**db);
    const int64_t id = run.catalog->series[0].id;

    std::mt19937_64 rng(11);
    const int64_t first = run.catalog->firstNs, last = run.catalog->lastNs;
    int raws = 0, fromPoints = 0, levels = 0, coarser = 0;
    for (int k = 0; k < 40; ++k) {
        TimelineRequest req;
        req.lanes = laneSpecs(*run.catalog);
        req.pixels = 100 + static_cast<int>(rng() % 1900);
        const int64_t span =
            std::max<int64_t>(60 * kSecond, static_cast<int64_t>(rng() % uint64_t(last - first)) >> (rng() % 10));
        // Half the windows hold the spike.
        const int64_t from = k % 2 ? spikeAt - static_cast<int64_t>(rng() % uint64_t(span))
                                   : first + static_cast<int64_t>(rng() % uint64_t(last - first));
        req.fromNs = from;
        req.toNs = from + span;
        auto frame = run.source->fetch(req);
        QVERIFY_OK(frame);
        const TimelineLine& line = (*frame)->lanes[0].lines[0];
        const std::string what =
            fmt::format("window {} s at {} px, level {} s", span / kSecond, req.pixels, line.lodNs / kSecond);
        QVERIFY2(line.keys.size() <= size_t(2 * req.pixels), what.c_str());
        auto points = reader.readPoints(id, {req.fromNs, req.toNs});
        QVERIFY_OK(points);
        const bool spikeShown = spikeAt >= req.fromNs + line.lodNs && spikeAt <= req.toNs;
        const double shownMax = [&] {
            double m = -1;
            for (double v : line.values)
                if (!std::isnan(v)) m = std::max(m, v);
            return m;
        }();
        if (spikeShown) QVERIFY2(near(shownMax, 1000.0), what.c_str());
        if (line.raw) {
            ++raws;
            QCOMPARE(line.keys.size(), points->size());
            for (size_t i = 0; i < points->size(); ++i)
                QVERIFY(near(line.values[i], (*points)[i].value));
            continue;
        }
        (line.lodNs > 0 ? levels : fromPoints) += 1;
        coarser += line.buckets < req.pixels ? 1 : 0;
        // Brute force: a point at t counts in the display bucket holding floor(t / w) · w (w = the level width;
        // t itself when the line came from the points), so it may move up to one level width earlier (and points up
        // to w after the window's end may count in its last bucket): the tolerance of the pyramid's aligned
        // buckets. Values compare within 1e-6 relative (the pyramid keeps floats).
        auto brute = reader.readPoints(id, {req.fromNs - line.lodNs, req.toNs + line.lodNs});
        QVERIFY_OK(brute);
        const int grid = line.buckets; // pixels, or fewer when the finest level is up to two pixels wide
        QVERIFY2(grid > 0 && grid <= req.pixels && grid * 2 >= req.pixels - 1, what.c_str());
        std::vector<double> mn(size_t(grid), INFINITY), mx(size_t(grid), -INFINITY);
        for (const store::Point& p : *brute) {
            const int64_t t = line.lodNs > 0 ? p.tsNs / line.lodNs * line.lodNs : p.tsNs;
            const int b = bucketOf(t, req.fromNs, req.toNs, grid);
            if (b < 0) continue;
            mn[size_t(b)] = std::min(mn[size_t(b)], p.value);
            mx[size_t(b)] = std::max(mx[size_t(b)], p.value);
        }
        std::vector<double> smn(size_t(grid), INFINITY), smx(size_t(grid), -INFINITY);
        for (size_t i = 0; i < line.keys.size(); ++i) {
            if (std::isnan(line.values[i])) continue;
            const int b = bucketOf(keyNs(line.keys[i]), req.fromNs, req.toNs, grid);
            QVERIFY2(b >= 0, what.c_str());
            smn[size_t(b)] = std::min(smn[size_t(b)], line.values[i]);
            smx[size_t(b)] = std::max(smx[size_t(b)], line.values[i]);
        }
        for (int b = 0; b < grid; ++b) {
            if (std::isinf(mn[size_t(b)])) {
                QVERIFY2(std::isinf(smn[size_t(b)]), what.c_str());
                continue;
            }
            QVERIFY2(near(smn[size_t(b)], mn[size_t(b)]) && near(smx[size_t(b)], mx[size_t(b)]),
                     (what + fmt::format(", bucket {}: {}..{} shown, {}..{} stored", b, smn[size_t(b)], smx[size_t(b)],
                                         mn[size_t(b)], mx[size_t(b)]))
                         .c_str());
        }
    }
    // Every path was taken: raw points, per-pixel buckets of the points, pyramid levels.
    QVERIFY(raws >= 3);
    QVERIFY(fromPoints >= 3);
    QVERIFY(levels >= 3);
    QVERIFY(coarser >= 1);
}

void TestTimeline::cancel()
{
    const std::string path = writeRun(m_dir, "cancel.runlens", [](store::RunWriter& w) {
        auto node = w.node("node0", "option", "UTC");
        auto gpu = node ? w.device(*node, "gpu", "0") : node;
        return gpu && appendSeries(w, *gpu, "gpu.util", "%", 1000, kSecond, [](int64_t) { return 50.0; });
    });
    QVERIFY(!path.empty());
    Opened run = openRun(path);
    QVERIFY(run.source);
    TimelineRequest req = wholeRunRequest(run, 1000);
    std::atomic<bool> cancelled{true};
    auto frame = run.source->fetch(req, &cancelled);
    QVERIFY(!frame.ok());
    QCOMPARE(frame.error().code, ErrorCode::Cancelled);
    cancelled = false;
    QVERIFY_OK(run.source->fetch(req, &cancelled));
}

QTEST_GUILESS_MAIN(TestTimeline)
#include "tst_timeline.moc"
