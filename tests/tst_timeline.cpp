// Timeline data: lane groups and their order, envelopes of many GPUs with a planted single-GPU dip (an outlier)
// and a shared dip (none), missing data as gaps at every zoom, per-pixel min/max against a brute-force reduction
// of the stored points for random windows (pyramid, chunk cache and raw points), and cancellation. Every run is
// generated here through store::RunWriter.

#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"
#include "analysis/timeline/timeline_envelope.h"
#include "analysis/timeline/timeline_lod.h"
#include "analysis/timeline/timeline_source.h"
#include "tests/test_support.h"

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>

using namespace runlens;
using namespace runlens::timeline;

namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'790'000'000'000'000'000;

using Fill = std::function<bool(store::RunWriter&)>;

std::string writeRun(const QTemporaryDir& dir, const std::string& name, const Fill& fill)
{
    const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
    auto db = store::RunDatabase::open(path, store::OpenMode::Create);
    if (!db || !(*db)->begin()) return {};
    store::RunWriter w(**db);
    store::ImportRecord rec;
    rec.path = name;
    rec.contentHash = name;
    rec.format = "test";
    if (!w.beginImport(rec) || !fill(w)) return {};
    store::ImportTotals totals;
    totals.contentHash = name;
    if (!w.finishImport(totals, store::Diagnostics()) || !(*db)->commit()) return {};
    return path;
}

// count points every step from kStart; value(i) returns NaN for a missing point.
bool appendSeries(store::RunWriter& w, int64_t device, const char* metric, const char* unit, int64_t count,
                  int64_t step, const std::function<double(int64_t)>& value, int64_t skipFrom = -1, int64_t skipTo = -1)
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

// Nodes "node0"… with GPUs "0"…; fn(node, gpu, device id) writes each GPU's series.
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

struct Opened
{
    std::shared_ptr<const RunCatalog> catalog;
    std::unique_ptr<TimelineSource> source;
};

Opened openRun(const std::string& path)
{
    Opened o;
    auto cat = loadRunCatalog(path);
    if (!cat) return o;
    o.catalog = *cat;
    auto src = TimelineSource::open(path, o.catalog);
    if (src) o.source = std::move(*src);
    return o;
}

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

// The display bucket holding time t (boundaries as timeline_lod.h), or -1 outside the window.
int bucketOf(int64_t t, int64_t from, int64_t to, int buckets)
{
    if (t < from || t > to) return -1;
    int lo = 0, hi = buckets - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (bucketBoundary(from, to, buckets, mid) <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

bool near(double a, double b)
{
    return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b));
}

// The envelope's outliers as the definition in timeline_envelope.h states them, computed plainly: judging cells
// by the start of each bucket in absolute time; per cell each member's mean (a repeated bucket counted once), the
// median and MAD by sorting, every member's deviation in spreads; per member the stretches of consecutive judged cells
// beyond kOutlierK on one side, the one with the largest sum kept when it has at least kOutlierMinCells cells.
std::vector<EnvelopeOutlier> referenceOutliers(const EnvelopeInput& in)
{
    const size_t members = in.members.size();
    const int buckets = static_cast<int>(in.members.front()->size());
    const double range = in.valueHi > in.valueLo ? in.valueHi - in.valueLo : 0.0;
    const int64_t window = in.toNs - in.fromNs;
    const int64_t cellNs = std::min<int64_t>(60 * kSecond, window / 5);
    // cells[c] = first bucket; the member's z per cell (NaN: no data or not judged) and deviation.
    std::vector<int> cells;
    for (int i = 0; i < buckets; ++i) {
        const int64_t start = bucketBoundary(in.fromNs, in.toNs, buckets, i);
        if (i == 0 || start / cellNs != bucketBoundary(in.fromNs, in.toNs, buckets, i - 1) / cellNs) cells.push_back(i);
    }
    cells.push_back(buckets);
    auto medianOf = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        const size_t n = v.size();
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    };
    std::vector<std::vector<double>> z(members), dev(members);
    for (size_t c = 0; c + 1 < cells.size(); ++c) {
        std::vector<double> means(members, NAN), present;
        for (size_t m = 0; m < members; ++m) {
            double sum = 0;
            int64_t count = 0;
            for (int i = cells[c]; i < cells[c + 1]; ++i) {
                if ((*in.members[m])[static_cast<size_t>(i)].repeat) continue;
                sum += (*in.members[m])[static_cast<size_t>(i)].sum;
                count += (*in.members[m])[static_cast<size_t>(i)].count;
            }
            if (count == 0) continue;
            means[m] = sum / static_cast<double>(count) * in.scale;
            present.push_back(means[m]);
        }
        const bool judged = static_cast<int>(present.size()) >= kOutlierMinMembers;
        const double med = judged ? medianOf(present) : 0;
        std::vector<double> absDev;
        for (double v : present)
            absDev.push_back(std::fabs(v - med));
        const double floor = std::max({0.01 * std::fabs(med), 0.005 * range, 1e-12});
        const double spread = judged ? std::max(1.4826 * medianOf(absDev), floor) : 0;
        for (size_t m = 0; m < members; ++m) {
            const bool has = judged && !std::isnan(means[m]);
            z[m].push_back(has ? (means[m] - med) / spread : NAN);
            dev[m].push_back(has ? means[m] - med : NAN);
        }
    }
    std::vector<EnvelopeOutlier> out;
    for (size_t m = 0; m < members; ++m) {
        std::optional<EnvelopeOutlier> best;
        double bestSum = 0;
        size_t c = 0;
        while (c < z[m].size()) {
            if (std::isnan(z[m][c]) || std::fabs(z[m][c]) <= kOutlierK) {
                ++c;
                continue;
            }
            const bool up = z[m][c] > 0;
            double sz = 0, sd = 0;
            int n = 0;
            size_t first = c, last = c;
            for (; c < z[m].size(); ++c) {
                if (std::isnan(z[m][c])) continue;
                if (std::fabs(z[m][c]) <= kOutlierK || (z[m][c] > 0) != up) break;
                sz += z[m][c];
                sd += dev[m][c];
                ++n;
                last = c;
            }
            if (n >= kOutlierMinCells && std::fabs(sz) > std::fabs(bestSum)) {
                bestSum = sz;
                best = EnvelopeOutlier{m, sz / n, sd / n, bucketBoundary(in.fromNs, in.toNs, buckets, cells[first]),
                                       bucketBoundary(in.fromNs, in.toNs, buckets, cells[last + 1])};
            }
        }
        if (best) out.push_back(*best);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return std::fabs(a.sigma) > std::fabs(b.sigma); });
    return out;
}

} // namespace

class TestTimeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void lanes();
    void envelopeOutliers_data();
    void envelopeOutliers();
    void envelopeAgainstReference();
    void outliersStableAcrossZoom();
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

void TestTimeline::envelopeOutliers_data()
{
    QTest::addColumn<bool>("allDip");
    QTest::addColumn<int>("dipSamples");
    QTest::addColumn<bool>("flagged");
    QTest::newRow("one GPU dips for one sample: in the band, not flagged") << false << 1 << false;
    QTest::newRow("one GPU dips for 10 min: flagged") << false << 120 << true;
    QTest::newRow("every GPU dips (a checkpoint)") << true << 120 << false;
}

void TestTimeline::envelopeOutliers()
{
    QFETCH(bool, allDip);
    QFETCH(int, dipSamples);
    QFETCH(bool, flagged);
    const int64_t step = 5 * kSecond, count = 28 * 3600 / 5;
    const int64_t dipAt = kStart + 13 * 3600 * kSecond + 7 * step, dipEnd = dipAt + dipSamples * step; // at 0
    const std::string name = fmt::format("envelope-{}-{}.runlens", allDip, dipSamples);
    int64_t dipSeriesDevice = -1;
    const std::string path = writeRun(m_dir, name, [&](store::RunWriter& w) {
        return forEachGpu(w, 4, 8, [&](int n, int g, int64_t gpu) {
            const bool dips = allDip || (n == 2 && g == 5);
            if (n == 2 && g == 5) dipSeriesDevice = gpu;
            return appendSeries(w, gpu, "gpu.util", "%", count, step, [&](int64_t i) {
                const int64_t t = kStart + i * step;
                return dips && t >= dipAt && t < dipEnd ? 0.0 : 100.0;
            });
        });
    });
    QVERIFY(!path.empty());
    Opened run = openRun(path);
    QVERIFY(run.source);
    TimelineRequest req;
    req.fromNs = run.catalog->firstNs;
    req.toNs = run.catalog->lastNs;
    req.pixels = 1600;
    req.lanes = laneSpecs(*run.catalog);
    QCOMPARE(req.lanes.size(), size_t(1));
    auto frame = run.source->fetch(req);
    QVERIFY_OK(frame);
    const LaneFrame& lf = (*frame)->lanes[0];
    QCOMPARE(lf.envelopes.size(), size_t(1));
    const TimelineEnvelope& env = lf.envelopes[0];
    QCOMPARE(env.members, 32);
    QCOMPARE(env.label, std::string("GPU utilization, 32 GPUs"));
    QCOMPARE(env.keys.size(), size_t(1600));

    // The dip lands in its bucket, or the one before when the level bucket holding it starts there, and in no
    // bucket outside it.
    const int b = bucketOf(dipAt, req.fromNs, req.toNs, req.pixels);
    QVERIFY(b > 0);
    QVERIFY2(std::min(env.lo[b], env.lo[b - 1]) < 1e-6, qPrintable(QString::number(env.lo[b])));
    const int lastLow = bucketOf(dipEnd - step, req.fromNs, req.toNs, req.pixels);
    for (size_t i = 0; i < env.lo.size(); ++i)
        if (static_cast<int>(i) < b - 1 || static_cast<int>(i) > lastLow) QCOMPARE(env.lo[i], 100.0);
    if (!flagged) {
        QVERIFY(lf.lines.empty()); // a shared dip moves the median, a one-sample dip does not last: nobody stands out
    } else {
        QVERIFY(env.median[b + 2] > 99.9);
        QCOMPARE(lf.lines.size(), size_t(1));
        const TimelineLine& line = lf.lines[0];
        QVERIFY(line.outlier);
        QVERIFY2(line.outlierSigma < -kOutlierK, qPrintable(QString::number(line.outlierSigma)));
        QVERIFY2(line.outlierDeviation < -80, qPrintable(QString::number(line.outlierDeviation))); // ≈ 100 % below
        QCOMPARE(run.catalog->findSeries(line.seriesId)->deviceId, dipSeriesDevice);
        QCOMPARE(line.label, std::string("node2 gpu5 GPU utilization"));
        QVERIFY(line.keys.size() <= size_t(3200));
        QCOMPARE(*std::min_element(line.values.begin(), line.values.end()), 0.0);
    }
    // Flat identical data everywhere else: the median is the value itself.
    QCOMPARE(env.median[10], 100.0);
    QCOMPARE(env.hi[10], 100.0);
}

void TestTimeline::outliersStableAcrossZoom()
{
    // 4 nodes × 8 GPUs over 28 h, a sample every 3 s: Gaussian noise (σ = 10) on a shared hourly wave, and a
    // checkpoint every 2 h that every GPU enters within a few samples of the others. Power: node1 gpu5 is 6 σ
    // above the others for 10 min; temperature: node3 gpu0 is 2 σ below for the same 10 min; memory temperature:
    // all 32 from one distribution. At every zoom from 28 h down to 5 min, at several positions over the
    // deviation, exactly node1 gpu5 is flagged for power (with its size), node3 gpu0 for temperature, and nobody
    // for memory temperature, also at random windows of 1 min to 28 h.
    constexpr int64_t step = 3 * kSecond, count = 28 * 3600 / 3;
    constexpr int64_t offFrom = kStart + 14 * 3600 * kSecond + 123 * kSecond, offTo = offFrom + 600 * kSecond;
    std::map<std::pair<int, int>, int64_t> deviceOf;
    const std::string path = writeRun(m_dir, "zoom-stable.runlens", [&](store::RunWriter& w) {
        std::mt19937_64 rng(5);
        std::normal_distribution<double> noise(0, 1);
        std::uniform_int_distribution<int> late(0, 2);
        return forEachGpu(w, 4, 8, [&](int n, int g, int64_t gpu) {
            deviceOf[{n, g}] = gpu;
            for (const auto& [metric, unit, level, sigmas] :
                 {std::tuple{"gpu.power", "W", 300.0, n == 1 && g == 5 ? 6.0 : 0.0},
                  std::tuple{"gpu.temp", "C", 60.0, n == 3 && g == 0 ? -2.0 : 0.0},
                  std::tuple{"gpu.mem_temp", "C", 50.0, 0.0}}) {
                std::vector<int> lateBy(16);
                for (int& l : lateBy)
                    l = late(rng);
                const double sigma = 10, offset = sigmas * sigma, base = level; // a copy the lambda can capture
                if (!appendSeries(w, gpu, metric, unit, count, step, [&](int64_t i) {
                        const int64_t t = kStart + i * step, s = (t - kStart) / kSecond;
                        const int64_t sinceCheckpoint = s % 7200;
                        const bool checkpoint =
                            sinceCheckpoint >= 3 * lateBy[static_cast<size_t>(s / 7200)] && sinceCheckpoint < 180;
                        double v = base + 20 * std::sin(2 * M_PI * static_cast<double>(s) / 3600) + sigma * noise(rng);
                        if (checkpoint) v *= 0.2;
                        if (t >= offFrom && t < offTo) v += offset;
                        return v;
                    }))
                    return false;
            }
            return true;
        });
    });
    QVERIFY(!path.empty());
    Opened run = openRun(path);
    QVERIFY(run.source);
    const std::map<std::string, int64_t> expected = {
        {"gpu.power", deviceOf[{1, 5}]}, {"gpu.temp", deviceOf[{3, 0}]}, {"gpu.mem_temp", -1}};

    auto check = [&](int64_t from, int64_t to, bool containsDeviation) {
        TimelineRequest req;
        req.fromNs = from;
        req.toNs = to;
        req.pixels = 1600;
        req.lanes = laneSpecs(*run.catalog);
        auto frame = run.source->fetch(req);
        QVERIFY_OK(frame);
        const QString where =
            QStringLiteral("window of %1 s at +%2 s").arg((to - from) / kSecond).arg((from - kStart) / kSecond);
        int envelopes = 0;
        std::map<std::string, std::vector<const TimelineLine*>> flagged;
        for (const LaneFrame& lf : (*frame)->lanes) {
            envelopes += static_cast<int>(lf.envelopes.size());
            for (const TimelineLine& l : lf.lines)
                if (l.outlier) flagged[l.metric].push_back(&l);
        }
        QVERIFY2(envelopes == 3, qPrintable(where));
        for (const auto& [metric, device] : expected) {
            const auto& lines = flagged[metric];
            QStringList names;
            for (const TimelineLine* l : lines)
                names << QString::fromStdString(l->label);
            const QString context = QStringLiteral("%1, %2: %3")
                                        .arg(where, QString::fromStdString(metric), names.join(QStringLiteral(", ")));
            if (device < 0 || !containsDeviation) {
                QVERIFY2(lines.empty(), qPrintable(context));
                continue;
            }
            QVERIFY2(lines.size() == 1, qPrintable(context));
            QVERIFY2(run.catalog->findSeries(lines[0]->seriesId)->deviceId == device, qPrintable(context));
            QVERIFY2(std::fabs(lines[0]->outlierSigma) > kOutlierK, qPrintable(context));
            const double want = metric == "gpu.power" ? 60.0 : -20.0; // 6 σ above, 2 σ below
            QVERIFY2(std::fabs(lines[0]->outlierDeviation - want) < 0.25 * std::fabs(want),
                     qPrintable(QStringLiteral("%1: deviation %2").arg(context).arg(lines[0]->outlierDeviation)));
        }
    };
    const int64_t mid = (offFrom + offTo) / 2;
    const int64_t lastNs = kStart + (count - 1) * step;
    for (int64_t span : {28 * 3600, 8 * 3600, 2 * 3600, 1800, 600, 300}) {
        const int64_t spanNs = std::min(span * kSecond, lastNs - kStart);
        // Centred, and shifted left and right as far as keeps the deviation in view (or the view in it).
        const int64_t slack = std::abs(spanNs - (offTo - offFrom)) / 2;
        for (int64_t shift : {int64_t(0), -slack * 9 / 10, slack * 9 / 10, -slack / 3}) {
            int64_t from = mid - spanNs / 2 + shift;
            from = std::clamp(from, kStart, lastNs - spanNs);
            check(from, from + spanNs, true);
            if (QTest::currentTestFailed()) return;
        }
    }
    // Random windows: away from the deviation nothing is flagged, and memory temperature never is.
    std::mt19937_64 rng(9);
    for (int k = 0; k < 30; ++k) {
        const int64_t span = std::uniform_int_distribution<int64_t>(60, 28 * 3600 - 10)(rng) * kSecond;
        const int64_t from = kStart + std::uniform_int_distribution<int64_t>(0, (count - 1) * step - span)(rng);
        if (from < offTo && from + span > offFrom) continue; // overlaps the deviation: covered above
        check(from, from + span, false);
        if (QTest::currentTestFailed()) return;
    }
}

void TestTimeline::severalSourcesNamed()
{
    // GPU utilization of each GPU from two tools (two imports): each line names its source, and an envelope of
    // them counts GPUs and series apart.
    const std::string path = m_dir.filePath(QStringLiteral("sources.runlens")).toStdString();
    {
        auto db = store::RunDatabase::open(path, store::OpenMode::Create);
        QVERIFY_OK(db);
        QVERIFY((*db)->begin());
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
        QVERIFY((*db)->commit());
    }
    Opened run = openRun(path);
    QVERIFY(run.source);
    for (const int envelopeAbove : {100, 8}) {
        TimelineRequest req;
        req.fromNs = run.catalog->firstNs;
        req.toNs = run.catalog->lastNs;
        req.pixels = 400;
        req.lanes = laneSpecs(*run.catalog);
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

void TestTimeline::envelopeAgainstReference()
{
    // Random envelopes of 5 to 40 members over windows of 3 min to 28 h (judging cells narrower and wider than a
    // bucket): noise of several widths, some members off for a stretch, some with single spikes, buckets where
    // members have no data. The outliers, their stretches and sizes equal the plain computation's.
    std::mt19937_64 rng(11);
    int withOutliers = 0, spikesOnly = 0;
    for (int round = 0; round < 80; ++round) {
        const int members = std::uniform_int_distribution<int>(5, 40)(rng);
        const int buckets = std::uniform_int_distribution<int>(50, 400)(rng);
        const double noise = std::vector<double>{0.1, 1, 5, 20}[static_cast<size_t>(round % 4)];
        const int64_t window = std::vector<int64_t>{180, 3600, 28 * 3600}[static_cast<size_t>(round % 3)] * kSecond;
        std::normal_distribution<double> jitter(0, noise);
        std::uniform_real_distribution<double> u(0, 1);
        std::vector<std::vector<ReducedBucket>> data(static_cast<size_t>(members),
                                                     std::vector<ReducedBucket>(static_cast<size_t>(buckets)));
        EnvelopeInput in;
        in.fromNs = kStart + 7 * kSecond;
        in.toNs = in.fromNs + window;
        in.scale = round % 3 == 0 ? 100.0 : 1.0;
        bool anyStretch = false, anySpike = false;
        for (int m = 0; m < members; ++m) {
            const bool off = u(rng) < 0.1, spiky = u(rng) < 0.15;
            const int from = std::uniform_int_distribution<int>(0, buckets - 1)(rng);
            const int to = from + std::uniform_int_distribution<int>(1, buckets / 3)(rng);
            const double shift = (u(rng) < 0.5 ? -1 : 1) * noise * std::uniform_real_distribution<double>(2, 30)(rng);
            anyStretch = anyStretch || off;
            for (int i = 0; i < buckets; ++i) {
                if (u(rng) < 0.03) continue; // no data here
                double a = 50 + jitter(rng), b = 50 + jitter(rng);
                if (off && i >= from && i < to) {
                    a += shift;
                    b += shift;
                }
                if (spiky && u(rng) < 0.05) {
                    (u(rng) < 0.5 ? a : b) = u(rng) < 0.5 ? 0.0 : 100.0;
                    anySpike = true;
                }
                ReducedBucket& rb = data[static_cast<size_t>(m)][static_cast<size_t>(i)];
                rb.count = 2;
                rb.minValue = std::min(a, b);
                rb.maxValue = std::max(a, b);
                rb.sum = a + b;
                in.valueLo = std::min(in.valueLo, rb.minValue * in.scale);
                in.valueHi = std::max(in.valueHi, rb.maxValue * in.scale);
            }
        }
        if (round % 5 == 0) // a coarser grid spread over the pixels: every other bucket repeats the one before
            for (auto& d : data)
                for (size_t i = 1; i < d.size(); i += 2) {
                    d[i] = d[i - 1];
                    d[i].repeat = true;
                }
        for (const auto& d : data)
            in.members.push_back(&d);
        const EnvelopeResult got = computeEnvelope(in);
        const auto want = referenceOutliers(in);
        QCOMPARE(got.outliers.size(), want.size());
        withOutliers += want.empty() ? 0 : 1;
        spikesOnly += want.empty() && anySpike && !anyStretch ? 1 : 0;
        for (size_t k = 0; k < want.size(); ++k) {
            QCOMPARE(got.outliers[k].member, want[k].member);
            QVERIFY2(std::fabs(got.outliers[k].sigma - want[k].sigma) <= 1e-4 * std::fabs(want[k].sigma),
                     qPrintable(QStringLiteral("%1 against %2").arg(got.outliers[k].sigma).arg(want[k].sigma)));
            QVERIFY(std::fabs(got.outliers[k].deviation - want[k].deviation) <=
                    1e-4 * std::fabs(want[k].deviation) + 1e-9);
            QCOMPARE(got.outliers[k].fromNs, want[k].fromNs);
            QCOMPARE(got.outliers[k].toNs, want[k].toNs);
        }
    }
    // Both kinds of envelope occur, and single spikes alone flag nothing.
    QVERIFY2(withOutliers > 10 && withOutliers < 70, qPrintable(QString::number(withOutliers)));
    QVERIFY2(spikesOnly > 0, "no round had spikes without a lasting deviation");
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
    TimelineRequest req;
    req.fromNs = run.catalog->firstNs;
    req.toNs = run.catalog->lastNs;
    req.pixels = 700;
    req.lanes = laneSpecs(*run.catalog);
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
    const int64_t count = 28 * 3600;
    const int64_t holeFrom = kStart + 10 * 3600 * kSecond, holeTo = holeFrom + 600 * kSecond;
    const int64_t missFrom = kStart + 20 * 3600 * kSecond, missTo = missFrom + 120 * kSecond;
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
    const int64_t count = 28 * 3600;
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
    TimelineRequest req;
    req.fromNs = run.catalog->firstNs;
    req.toNs = run.catalog->lastNs;
    req.lanes = laneSpecs(*run.catalog);
    std::atomic<bool> cancelled{true};
    auto frame = run.source->fetch(req, &cancelled);
    QVERIFY(!frame.ok());
    QCOMPARE(frame.error().code, ErrorCode::Cancelled);
    cancelled = false;
    QVERIFY_OK(run.source->fetch(req, &cancelled));
}

QTEST_GUILESS_MAIN(TestTimeline)
#include "tst_timeline.moc"
