// Timeline envelopes: many GPUs drawn as one band with a planted single-GPU dip (an outlier) and a shared dip (none),
// the outliers of random envelopes equal to a plain computation of their definition, and the same GPUs flagged at
// every zoom. Every run is generated here through store::RunWriter.

#include "analysis/store/run_writer.h"
#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"
#include "analysis/timeline/timeline_envelope.h"
#include "analysis/timeline/timeline_lod.h"
#include "analysis/timeline/timeline_source.h"
#include "tests/test_support.h"
#include "tests/timeline_support.h"

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

using namespace runlens;
using namespace runlens::test;
using namespace runlens::timeline;

namespace {

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

class TestTimelineEnvelope : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void envelopeOutliers_data();
    void envelopeOutliers();
    void envelopeAgainstReference();
    void outliersStableAcrossZoom();

private:
    QTemporaryDir m_dir;
};

void TestTimelineEnvelope::envelopeOutliers_data()
{
    QTest::addColumn<bool>("allDip");
    QTest::addColumn<int>("dipSamples");
    QTest::addColumn<bool>("flagged");
    QTest::newRow("one GPU dips for one sample: in the band, not flagged") << false << 1 << false;
    QTest::newRow("one GPU dips for 10 min: flagged") << false << 120 << true;
    QTest::newRow("every GPU dips (a checkpoint)") << true << 120 << false;
}

void TestTimelineEnvelope::envelopeOutliers()
{
    QFETCH(bool, allDip);
    QFETCH(int, dipSamples);
    QFETCH(bool, flagged);
    const int64_t step = 5 * kSecond, count = 28 * 3600 / 5;
    const int64_t dipAt = kStart + int64_t{13} * 3600 * kSecond + 7 * step, dipEnd = dipAt + dipSamples * step; // at 0
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
    TimelineRequest req = wholeRunRequest(run, 1600);
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

void TestTimelineEnvelope::outliersStableAcrossZoom()
{
    // 4 nodes × 8 GPUs over 28 h, a sample every 3 s: Gaussian noise (σ = 10) on a shared hourly wave, and a
    // checkpoint every 2 h that every GPU enters within a few samples of the others. Power: node1 gpu5 is 6 σ
    // above the others for 10 min; temperature: node3 gpu0 is 2 σ below for the same 10 min; memory temperature:
    // all 32 from one distribution. At every zoom from 28 h down to 5 min, at several positions over the
    // deviation, exactly node1 gpu5 is flagged for power (with its size), node3 gpu0 for temperature, and nobody
    // for memory temperature, also at random windows of 1 min to 28 h.
    constexpr int64_t step = 3 * kSecond, count = 28 * 3600 / 3;
    constexpr int64_t offFrom = kStart + int64_t{14} * 3600 * kSecond + 123 * kSecond, offTo = offFrom + 600 * kSecond;
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
                        const bool checkpoint = sinceCheckpoint >= int64_t{3} * lateBy[static_cast<size_t>(s / 7200)] &&
                                                sinceCheckpoint < 180;
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

void TestTimelineEnvelope::envelopeAgainstReference()
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
        const int64_t window =
            std::vector<int64_t>{180, 3600, int64_t{28} * 3600}[static_cast<size_t>(round % 3)] * kSecond;
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

QTEST_GUILESS_MAIN(TestTimelineEnvelope)
#include "tst_timeline_envelope.moc"
