// The stack chunk codec: timed samples and per-callsite totals round-trip exactly, and damaged blobs
// (truncated, flipped, random, wrong version, ids out of range) are errors, never crashes.

#include "analysis/store/stack_codec.h"
#include "tests/test_support.h"

#include <QTest>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace runlens;
using namespace runlens::store;
using test::rawBytes;
using test::varintBytes;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kHour = 3600 * kSecond;
constexpr int64_t kBase = 1'700'000'000 * kSecond + 12'345; // a realistic epoch time, not on any boundary
constexpr int64_t kMinNs = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();

} // namespace

Q_DECLARE_METATYPE(std::vector<runlens::store::StackSample>)

class TestStackCodec : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void codecRoundTrip_data()
    {
        QTest::addColumn<std::vector<StackSample>>("samples");
        std::mt19937_64 rng(3);
        auto series = [&](int n, const std::function<StackSample(int)>& f) {
            std::vector<StackSample> v;
            for (int i = 0; i < n; ++i)
                v.push_back(f(i));
            return v;
        };
        const int64_t t0 = kBase;
        QTest::newRow("1 sample") << std::vector<StackSample>{{t0, 17, 1, 1.0}};
        QTest::newRow("equal weights") << series(1000, [&](int i) {
            return StackSample{t0 + i * kMs, i % 40, 1, 1.0};
        });
        QTest::newRow("varying weights") << series(1000, [&](int i) {
            return StackSample{t0 + i * kMs, i % 40, 1, static_cast<double>(rng() % 1000000) / 7.0};
        });
        QTest::newRow("counts above 1") << series(500, [&](int i) {
            const int64_t count = std::array<int64_t, 4>{2, 1000, 1'000'000, int64_t{1} << 40}[i % 4];
            return StackSample{t0 + i * kSecond, 3, count, 0.5 * static_cast<double>(count)};
        });
        QTest::newRow("weights alternating with repeats") << series(300, [&](int i) {
            return StackSample{t0 + i, 1, 1, (i / 3) % 2 ? 2.5 : 0.125};
        });
        QTest::newRow("zero, negative zero, tiny, huge, infinite and NaN weights") << series(12, [&](int i) {
            const double w[] = {0.0,
                                -0.0,
                                5e-324,
                                1e300,
                                std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()};
            return StackSample{t0, i, 1, w[i % 6]};
        });
        QTest::newRow("duplicate timestamps") << series(100, [&](int i) { return StackSample{t0 + i / 10, i, 1, 1}; });
        int64_t t = t0;
        QTest::newRow("irregular gaps") << series(2000, [&](int) {
            t += static_cast<int64_t>(rng() % (10 * kHour));
            return StackSample{t, static_cast<int64_t>(rng() % 5000), 1, 1};
        });
        QTest::newRow("huge timestamps") << std::vector<StackSample>{
            {kMinNs, 1, 1, 1}, {kMinNs + 1, 2, 1, 1}, {-1, 3, 1, 1},    {0, 4, 1, 1},
            {1, 5, 1, 1},      {kMaxNs - 1, 6, 1, 1}, {kMaxNs, 7, 1, 1}};
        QTest::newRow("INT64_MIN then INT64_MAX") << std::vector<StackSample>{{kMinNs, 1, 1, 1}, {kMaxNs, 1, 1, 2}};
        QTest::newRow("large callsite ids") << series(10, [&](int i) {
            return StackSample{t0 + i, (int64_t{1} << 31) + int64_t{i} * 100000, 1, 1};
        });
        QTest::newRow("4096 samples") << series(kStackChunkSamples, [&](int i) {
            return StackSample{t0 + int64_t{i} * 10 * kMs + static_cast<int64_t>(rng() % kMs),
                               static_cast<int64_t>(rng() % 300), 1 + static_cast<int64_t>(rng() % 2),
                               i % 5 ? 1.0 : static_cast<double>(rng() % 100) / 8.0};
        });
    }

    void codecRoundTrip()
    {
        QFETCH(std::vector<StackSample>, samples);
        const std::string blob = encodeStackSamples(samples);
        QVERIFY(!blob.empty());
        auto decoded = decodeStackSamples(blob.data(), blob.size());
        QVERIFY_OK(decoded);
        QCOMPARE(decoded->size(), samples.size());
        for (size_t i = 0; i < samples.size(); ++i) {
            const StackSample &g = (*decoded)[i], &w = samples[i];
            QVERIFY2(g.tsNs == w.tsNs && g.callsiteId == w.callsiteId && g.count == w.count &&
                         std::bit_cast<uint64_t>(g.weight) == std::bit_cast<uint64_t>(w.weight),
                     qPrintable(QStringLiteral("sample %1").arg(i)));
        }

        // The chunk's totals, as the writer stores them, add up to the samples.
        std::map<int64_t, CallsiteTotal> byId;
        for (const StackSample& s : samples) {
            CallsiteTotal& t = byId[s.callsiteId];
            t.callsiteId = s.callsiteId;
            t.samples += s.count;
            t.weight += s.weight;
        }
        std::vector<CallsiteTotal> totals;
        for (const auto& [id, t] : byId)
            totals.push_back(t);
        const std::string summary = encodeCallsiteTotals(totals);
        auto back = decodeCallsiteTotals(summary.data(), summary.size());
        QVERIFY_OK(back);
        QCOMPARE(back->size(), totals.size());
        for (size_t i = 0; i < totals.size(); ++i) {
            QCOMPARE((*back)[i].callsiteId, totals[i].callsiteId);
            QCOMPARE((*back)[i].samples, totals[i].samples);
            QCOMPARE(std::bit_cast<uint64_t>((*back)[i].weight), std::bit_cast<uint64_t>(totals[i].weight));
        }
        const int64_t callsites = totals.back().callsiteId + 1;
        if (callsites > 100000) return; // sums are indexed by callsite id
        CallsiteSums sums;
        QVERIFY_OK(addCallsiteTotals(summary.data(), summary.size(), sums, callsites));
        QVERIFY_OK(addCallsiteTotals(summary.data(), summary.size(), sums, callsites)); // adds, twice
        CallsiteSums fewer; // a summary naming a callsite past those that exist is corrupt
        QVERIFY(!addCallsiteTotals(summary.data(), summary.size(), fewer, callsites - 1).ok());
        for (const CallsiteTotal& t : totals) {
            QCOMPARE(sums.samples.at(static_cast<size_t>(t.callsiteId)), 2 * t.samples);
            if (!std::isnan(t.weight)) QCOMPARE(sums.weight.at(static_cast<size_t>(t.callsiteId)), 2 * t.weight);
        }
    }

    void decodeCorruptSamples_data()
    {
        QTest::addColumn<QByteArray>("blob");
        auto z = [](std::initializer_list<int> bytes) {
            return QByteArray::fromStdString(test::zstdCompress(rawBytes(bytes)));
        };
        const std::string good = encodeStackSamples({{kBase, 1, 1, 1.0}});
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("not zstd") << QByteArray("hello, this is not a stack chunk");
        QTest::newRow("zstd magic only") << QByteArray("\x28\xb5\x2f\xfd", 4);
        QTest::newRow("empty payload") << z({});
        QTest::newRow("two frames") << QByteArray::fromStdString(good + good);
        QTest::newRow("unknown version") << z({2, 1, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f});
        QTest::newRow("version 0") << z({0, 0});
        QTest::newRow("huge count") << z({1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 1, 2});
        QTest::newRow("count above the samples") << z({1, 2, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f});
        QTest::newRow("truncated sample") << z({1, 1, 0, 1});
        QTest::newRow("truncated weight") << z({1, 1, 0, 1, 2, 0, 0, 0});
        QTest::newRow("trailing bytes") << z({1, 1, 0, 1, 3, 9, 9});
        QTest::newRow("endless varint") << z({1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1});
    }

    void decodeCorruptSamples()
    {
        QFETCH(QByteArray, blob);
        auto decoded = decodeStackSamples(blob.constData(), static_cast<size_t>(blob.size()));
        QVERIFY(!decoded.ok());
        QVERIFY(!decoded.error().message.empty());
    }

    void decodeTruncatedFlippedAndRandomSamples()
    {
        std::mt19937_64 rng(5);
        std::vector<StackSample> samples;
        for (int i = 0; i < 800; ++i)
            samples.push_back({kBase + i * kMs, static_cast<int64_t>(rng() % 50), 1, i % 3 ? 1.0 : 0.5 * i});
        const std::string blob = encodeStackSamples(samples);
        for (size_t n = 0; n < blob.size(); ++n)
            QVERIFY2(!decodeStackSamples(blob.data(), n).ok(), "a cut chunk decoded");
        // Flipped bytes must never crash; with no checksum some decode to other samples.
        int errors = 0;
        for (size_t i = 0; i < blob.size(); ++i)
            for (int mask : {0x01, 0x80, 0xff}) {
                std::string bad = blob;
                bad[i] = static_cast<char>(bad[i] ^ mask);
                errors += decodeStackSamples(bad.data(), bad.size()).ok() ? 0 : 1;
            }
        QVERIFY(errors > 0);
        for (int k = 0; k < 2000; ++k) { // random bytes, half of them after a zstd magic number
            std::string bytes = k % 2 ? std::string("\x28\xb5\x2f\xfd", 4) : std::string();
            for (size_t n = rng() % 64; n > 0; --n)
                bytes.push_back(static_cast<char>(rng()));
            QVERIFY(!decodeStackSamples(bytes.data(), bytes.size()).ok());
        }
    }

    void decodeCorruptTotals_data()
    {
        QTest::addColumn<QByteArray>("blob");
        QTest::addColumn<bool>("idOnly"); // only an id is past the callsites (decodeCallsiteTotals knows no count)
        const std::string one = rawBytes({0, 0, 0, 0, 0, 0, 0xf0, 0x3f}); // 1.0
        auto entry = [&](uint64_t idDelta) { return varintBytes(idDelta) + varintBytes(1) + one; };
        auto row = [](const char* name, const std::string& bytes, bool idOnly = false) {
            QTest::newRow(name) << QByteArray::fromStdString(bytes) << idOnly;
        };
        const std::string good = encodeCallsiteTotals({{3, 1, 1.0}, {9, 2, 2.0}});
        row("empty", {});
        row("unknown version", "\x02" + good.substr(1));
        row("huge count", rawBytes({1, 0xff, 0xff, 0xff, 0x0f}) + entry(1));
        row("truncated entry", good.substr(0, good.size() - 3));
        row("truncated after the count", good.substr(0, 2));
        row("trailing bytes", good + "\x01");
        row("endless varint", rawBytes({1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 1}));
        row("the same id twice", "\x01\x02" + entry(5) + entry(0));
        row("negative callsite id", "\x01\x01" + entry(~uint64_t{0}));
        row("id wrapping to the index size", "\x01\x01" + entry(0xaaaaaaaaaaaaaaaaULL));
        row("ids wrapping around", "\x01\x02" + entry(5) + entry(~uint64_t{0} - 1));
        row("callsite id 2^40", "\x01\x01" + entry(uint64_t{1} << 40), true);
        row("callsite id 2^62", "\x01\x01" + entry(uint64_t{1} << 62), true);
        row("random bytes after a valid header",
            "\x01\x01" + rawBytes({0x93, 0xd1, 0xee, 0xc4, 0xb5, 0xa7, 0x9b, 0x86, 0x41, 7, 1, 2, 3, 4, 5, 6, 7, 8}),
            true);
    }

    void decodeCorruptTotals()
    {
        QFETCH(QByteArray, blob);
        QFETCH(bool, idOnly);
        if (!idOnly) QVERIFY(!decodeCallsiteTotals(blob.constData(), static_cast<size_t>(blob.size())).ok());
        CallsiteSums sums;
        sums.add(299, 1, 1.0);
        Status added = addCallsiteTotals(blob.constData(), static_cast<size_t>(blob.size()), sums, 300);
        QVERIFY(!added.ok());
        QVERIFY(!added.error().message.empty());
        QVERIFY(sums.samples.size() < 1000); // nothing allocated for an id the bytes made up
    }

    void decodeRandomTotals()
    {
        std::mt19937_64 rng(11);
        for (int k = 0; k < 5000; ++k) { // random bytes after a valid version: an Error or some totals, no crash
            std::string bytes = "\x01";
            for (size_t n = rng() % 40; n > 0; --n)
                bytes.push_back(static_cast<char>(rng()));
            CallsiteSums sums;
            if (addCallsiteTotals(bytes.data(), bytes.size(), sums, 1000).ok())
                QVERIFY(decodeCallsiteTotals(bytes.data(), bytes.size()).ok());
            QVERIFY(sums.samples.size() <= 1500);
        }
    }

    // ---- window totals ----
};

QTEST_GUILESS_MAIN(TestStackCodec)
#include "tst_stack_codec.moc"
