// The timeline data layer: lanes by metric group, level-of-detail reductions that keep every spike and never
// exceed two points per pixel, envelopes and outliers, hidden series, cancellation.

#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/run_writer.h"
#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"
#include "analysis/timeline/timeline_source.h"
#include "tests/test_support.h"

#include <QTest>

#include <cmath>
#include <functional>
#include <random>

using namespace runlens;

namespace {

constexpr int64_t kStart = 1'793'606'400'000'000'000;
constexpr int64_t kSec = 1'000'000'000;

struct SeriesDef
{
    std::string node, kind, device, metric, unit;
    int64_t seconds = 0, stepS = 1;
    std::function<double(int64_t)> value;
};

bool writeRun(const std::string& path, const std::vector<SeriesDef>& defs)
{
    auto db = store::RunDatabase::open(path, store::OpenMode::Create);
    if (!db) return false;
    store::RunWriter w(**db);
    if (!(*db)->begin()) return false;
    store::ImportRecord rec;
    rec.path = "generated";
    rec.contentHash = "generated-" + path;
    rec.format = "test";
    if (!w.beginImport(rec)) return false;
    for (const SeriesDef& d : defs) {
        auto node = w.node(d.node, "option", "UTC");
        if (!node) return false;
        auto dev = w.device(*node, d.kind, d.device);
        if (!dev) return false;
        auto sink = w.series(*dev, d.metric, d.unit, d.metric);
        if (!sink) return false;
        for (int64_t s = 0; s < d.seconds; s += d.stepS) {
            (*sink)->append(kStart + s * kSec, d.value(s));
            if (!w.flushIfNeeded(**sink)) return false;
        }
    }
    store::ImportTotals totals;
    totals.contentHash = rec.contentHash;
    return w.finishImport(totals, store::Diagnostics()).ok() && (*db)->commit().ok();
}

struct Opened
{
    std::shared_ptr<const timeline::RunCatalog> catalog;
    std::unique_ptr<timeline::TimelineSource> source;
};

Opened open(const std::string& path)
{
    Opened o;
    auto c = timeline::loadRunCatalog(path);
    if (!c) qFatal("%s", c.error().toString().c_str());
    o.catalog = *c;
    auto s = timeline::TimelineSource::open(path, o.catalog);
    if (!s) qFatal("%s", s.error().toString().c_str());
    o.source = std::move(*s);
    return o;
}

const timeline::LaneSpec* lane(const std::vector<timeline::LaneSpec>& lanes, const std::string& id)
{
    for (const auto& l : lanes)
        if (l.id == id) return &l;
    return nullptr;
}

timeline::TimelineRequest request(const Opened& o, const std::vector<std::string>& laneIds, int64_t from, int64_t to,
                                  int pixels)
{
    timeline::TimelineRequest r;
    r.fromNs = from;
    r.toNs = to;
    r.pixels = pixels;
    const auto all = timeline::laneSpecs(*o.catalog);
    for (const auto& id : laneIds)
        if (const auto* l = lane(all, id)) r.lanes.push_back(*l);
    return r;
}

} // namespace

class TimelineTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void lanesByMetricGroup();
    void reductionMatchesBruteForce();
    void spikeSurvivesEveryZoom();
    void envelopeOutliers_data();
    void envelopeOutliers();
    void hiddenSeriesAndCancel();

private:
    QTemporaryDir m_dir;
};

void TimelineTest::lanesByMetricGroup()
{
    const std::string path = m_dir.filePath(QStringLiteral("lanes.runlens")).toStdString();
    auto flat = [](int64_t) { return 1.0; };
    QVERIFY(writeRun(path, {{"n0", "gpu", "0", "gpu.power", "W", 10, 1, flat},
                            {"n0", "gpu", "0", "gpu.sm_active", "ratio", 10, 1, flat},
                            {"n0", "gpu", "0", "gpu.util", "%", 10, 1, flat},
                            {"n0", "nic", "ib0", "net.rx", "bytes/s", 10, 1, flat},
                            {"n0", "gpu", "0", "gpu.pcie_replay", "", 10, 1, flat},
                            {"n0", "gpu", "0", "gpu.fan", "ratio", 10, 1, flat}}));
    auto o = open(path);
    const auto lanes = timeline::laneSpecs(*o.catalog);
    QStringList ids;
    for (const auto& l : lanes)
        ids << QString::fromStdString(l.id);
    // Canonical order; utilization and SM activity share a lane in percent; ungrouped metrics come last, hidden.
    QCOMPARE(ids, test::strs({"gpu_util", "net", "gpu_power", "metric:gpu.fan", "metric:gpu.pcie_replay"}));
    QCOMPARE(lanes[0].metrics.size(), size_t(2));
    QCOMPARE(lanes[0].metrics[1].metric, std::string("gpu.sm_active"));
    QCOMPARE(lanes[0].metrics[1].scale, 100.0);
    QVERIFY(lanes[0].shownByDefault && !lanes[3].shownByDefault);
    QCOMPARE(lanes[3].unit, std::string("%")); // a ratio shown in percent
    QCOMPARE(timeline::laneSeries(*o.catalog, lanes[0]).size(), size_t(2));
    QCOMPARE(o.catalog->firstNs, kStart);
    QCOMPARE(o.catalog->lastNs, kStart + 9 * kSec);
}

void TimelineTest::reductionMatchesBruteForce()
{
    // 3 days at 1 s of random-walk data: wide windows come from the pyramid, narrow ones from the store.
    const std::string path = m_dir.filePath(QStringLiteral("lod.runlens")).toStdString();
    const int64_t seconds = 3 * 86400;
    std::vector<double> values(static_cast<size_t>(seconds));
    std::mt19937_64 rng(3);
    std::normal_distribution<double> step(0, 1);
    double v = 50;
    for (auto& x : values)
        x = v = std::clamp(v + step(rng), 0.0, 100.0);
    QVERIFY(writeRun(path, {{"n0", "gpu", "0", "gpu.util", "%", seconds, 1, [&](int64_t s) { return values[static_cast<size_t>(s)]; }}}));
    auto o = open(path);
    std::uniform_int_distribution<int64_t> spanDist(600, seconds);
    for (int round = 0; round < 25; ++round) {
        const int64_t span = round == 0 ? seconds - 1 : spanDist(rng);
        const int64_t from = std::uniform_int_distribution<int64_t>(0, seconds - span)(rng);
        const int pixels = 800;
        auto frame = o.source->fetch(request(o, {"gpu_util"}, kStart + from * kSec, kStart + (from + span) * kSec, pixels));
        QVERIFY_OK(frame);
        const auto& line = (*frame)->lanes.at(0).lines.at(0);
        QVERIFY2(line.values.size() <= size_t(2 * pixels), "more than two points per pixel");
        // Each drawn value is the min or max of the samples within one display bucket plus one finest-level bucket
        // (the pyramid assigns a level bucket to the pixel of its start) of the drawn key.
        const double pixelS = static_cast<double>(span) / pixels;
        const double slackS = pixelS + 1;
        for (size_t i = 0; i < line.keys.size(); ++i) {
            if (std::isnan(line.values[i])) QFAIL("a gap in gapless data");
            const double t = line.keys[i] - static_cast<double>(kStart) / 1e9;
            const auto lo = static_cast<int64_t>(std::max(0.0, std::floor(t - pixelS / 2 - slackS)));
            const auto hi = static_cast<int64_t>(std::min(double(seconds - 1), std::ceil(t + pixelS / 2 + slackS)));
            double mn = INFINITY, mx = -INFINITY;
            for (int64_t s = lo; s <= hi; ++s) {
                mn = std::min(mn, values[static_cast<size_t>(s)]);
                mx = std::max(mx, values[static_cast<size_t>(s)]);
            }
            QVERIFY2(line.values[i] >= mn - 1e-3 && line.values[i] <= mx + 1e-3,
                     qPrintable(QStringLiteral("value %1 outside [%2, %3] near t=%4 (span %5 s)")
                                    .arg(line.values[i]).arg(mn).arg(mx).arg(t).arg(span)));
        }
        // Every sample of the window is in some pixel: the drawn extremes reach the window's extremes.
        double wmn = INFINITY, wmx = -INFINITY;
        for (int64_t s = from; s <= from + span; ++s) {
            wmn = std::min(wmn, values[static_cast<size_t>(s)]);
            wmx = std::max(wmx, values[static_cast<size_t>(s)]);
        }
        const auto [dmn, dmx] = std::minmax_element(line.values.begin(), line.values.end());
        QVERIFY2(*dmn <= wmn + 1e-3, "the window's minimum is not drawn");
        QVERIFY2(*dmx >= wmx - 1e-3, "the window's maximum is not drawn");
    }
}

void TimelineTest::spikeSurvivesEveryZoom()
{
    const std::string path = m_dir.filePath(QStringLiteral("spike.runlens")).toStdString();
    const int64_t seconds = 2 * 86400, spikeAt = 86400 + 777;
    QVERIFY(writeRun(path, {{"n0", "gpu", "0", "gpu.power", "W", seconds, 1,
                             [&](int64_t s) { return s == spikeAt ? 900.0 : 300.0; }}}));
    auto o = open(path);
    for (int64_t span = seconds; span >= 60; span /= 3) {
        const int64_t from = std::max<int64_t>(0, spikeAt - span / 3);
        auto frame = o.source->fetch(request(o, {"gpu_power"}, kStart + from * kSec, kStart + (from + span) * kSec, 1200));
        QVERIFY_OK(frame);
        const auto& vals = (*frame)->lanes.at(0).lines.at(0).values;
        QVERIFY2(std::find(vals.begin(), vals.end(), 900.0) != vals.end(), qPrintable(QStringLiteral("spike lost at span %1 s").arg(span)));
        QVERIFY(vals.size() <= 2400);
    }
}

void TimelineTest::envelopeOutliers_data()
{
    QTest::addColumn<bool>("allDip");
    QTest::newRow("one GPU dips") << false;
    QTest::newRow("all GPUs dip together") << true;
}

void TimelineTest::envelopeOutliers()
{
    QFETCH(bool, allDip);
    const std::string path = m_dir.filePath(QStringLiteral("env%1.runlens").arg(allDip)).toStdString();
    const int64_t seconds = 28 * 3600, dipAt = 9 * 3600 + 5;
    std::vector<SeriesDef> defs;
    for (int n = 0; n < 4; ++n)
        for (int g = 0; g < 8; ++g)
            defs.push_back({"node" + std::to_string(n), "gpu", std::to_string(g), "gpu.util", "%", seconds, 5,
                            [=](int64_t s) {
                                const bool dips = allDip || (n == 1 && g == 6);
                                return dips && s >= dipAt && s < dipAt + 5 ? 0.0 : 98.0 + (s / 5 + g) % 2;
                            }});
    QVERIFY(writeRun(path, defs));
    auto o = open(path);
    auto frame = o.source->fetch(request(o, {"gpu_util"}, o.catalog->firstNs, o.catalog->lastNs, 1600));
    QVERIFY_OK(frame);
    const auto& lf = (*frame)->lanes.at(0);
    QCOMPARE(lf.envelopes.size(), size_t(1));
    const auto& env = lf.envelopes[0];
    QCOMPARE(env.members, 32);
    QVERIFY(env.keys.size() <= 1600);
    const double dipKey = static_cast<double>(kStart + dipAt * kSec) / 1e9;
    const auto b = static_cast<size_t>(std::lower_bound(env.keys.begin(), env.keys.end(), dipKey) - env.keys.begin());
    double lowest = INFINITY;
    for (size_t k = b > 0 ? b - 1 : 0; k <= std::min(b + 1, env.keys.size() - 1); ++k)
        lowest = std::min(lowest, env.lo[k]);
    QCOMPARE(lowest, 0.0);
    QVERIFY(env.median[b] > 90 || allDip);
    if (allDip) {
        QVERIFY2(lf.lines.empty(), "GPUs dipping together are not outliers");
    } else {
        QCOMPARE(lf.lines.size(), size_t(1));
        QVERIFY(lf.lines[0].outlier);
        QCOMPARE(lf.lines[0].label, std::string("node1 gpu6 GPU util"));
        QCOMPARE(lf.lines[0].nodeIndex, 1);
        QVERIFY(*std::min_element(lf.lines[0].values.begin(), lf.lines[0].values.end()) == 0.0);
    }
    // At or below the threshold, every series is its own line.
    auto r = request(o, {"gpu_util"}, o.catalog->firstNs, o.catalog->lastNs, 1600);
    r.envelopeAbove = 32;
    auto lines = o.source->fetch(r);
    QVERIFY_OK(lines);
    QCOMPARE((*lines)->lanes[0].lines.size(), size_t(32));
    QVERIFY((*lines)->lanes[0].envelopes.empty());
}

void TimelineTest::hiddenSeriesAndCancel()
{
    const std::string path = m_dir.filePath(QStringLiteral("hidden.runlens")).toStdString();
    auto flat = [](int64_t s) { return double(s % 7); };
    QVERIFY(writeRun(path, {{"n0", "gpu", "0", "gpu.util", "%", 600, 1, flat}, {"n1", "gpu", "0", "gpu.util", "%", 600, 1, flat}}));
    auto o = open(path);
    auto r = request(o, {"gpu_util"}, o.catalog->firstNs, o.catalog->lastNs, 400);
    auto both = o.source->fetch(r);
    QVERIFY_OK(both);
    QCOMPARE((*both)->lanes[0].lines.size(), size_t(2));
    r.hiddenSeries = {(*both)->lanes[0].lines[0].seriesId};
    auto one = o.source->fetch(r);
    QVERIFY_OK(one);
    QCOMPARE((*one)->lanes[0].lines.size(), size_t(1));
    QCOMPARE((*one)->lanes[0].lines[0].seriesId, (*both)->lanes[0].lines[1].seriesId);
    std::atomic<bool> cancel{true};
    auto cancelled = o.source->fetch(r, &cancel);
    QVERIFY(!cancelled);
    QCOMPARE(cancelled.error().code, ErrorCode::Cancelled);
}

QTEST_APPLESS_MAIN(TimelineTest)
#include "tst_timeline.moc"
