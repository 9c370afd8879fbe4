// The run database: chunk codec round trips and corruption, version checks, writing and reading points and
// envelopes, clock offsets, transactions, size on disk, and read-only user queries.

#include "analysis/store/chunk_codec.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/run_writer.h"
#include "analysis/store/user_query.h"
#include "tests/test_support.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <sqlite3.h>

using namespace runlens;
using namespace runlens::store;
using runlens::test::execRaw;

#define QVERIFY_OK(expr)                                                                                               \
    do {                                                                                                               \
        const auto& result_ = (expr);                                                                                  \
        QVERIFY2(result_.ok(), result_.ok() ? "" : result_.error().toString().c_str());                                \
    } while (false)

// Compares point vectors exactly (see diffPoints).
#define QCOMPARE_POINTS(got, want)                                                                                     \
    do {                                                                                                               \
        const std::string diff_ = diffPoints(got, want);                                                               \
        QVERIFY2(diff_.empty(), diff_.c_str());                                                                        \
    } while (false)

namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000; // a multiple of 2^17: whole seconds are exact doubles
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();

struct CodecCase
{
    std::vector<Point> points;
    std::vector<std::string> tokens; // one per missing point
};

struct SeriesSpec
{
    std::string metric;
    std::string rawName;
    CodecCase data;
};

Point present(int64_t ts, double v)
{
    return {ts, v, false};
}
Point absent(int64_t ts)
{
    return {ts, 0.0, true};
}

CodecCase regular(int n, const std::function<double(int)>& value, int64_t stepNs = kSecond)
{
    CodecCase c;
    for (int i = 0; i < n; ++i)
        c.points.push_back(present(kT0 + i * stepNs, value(i)));
    return c;
}

CodecCase withMissing(CodecCase c, const std::vector<int>& indexes, const std::vector<std::string>& tokens)
{
    for (int i : indexes)
        c.points[i].missing = true;
    c.tokens = tokens;
    return c;
}

// Empty when equal, else the first difference. Present values compare bit for bit.
std::string diffPoints(const std::vector<Point>& got, const std::vector<Point>& want)
{
    if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        const Point &g = got[i], &w = want[i];
        if (g.tsNs != w.tsNs || g.missing != w.missing ||
            (!w.missing && std::bit_cast<uint64_t>(g.value) != std::bit_cast<uint64_t>(w.value)))
            return "point " + std::to_string(i) + ": got " + std::to_string(g.tsNs) + (g.missing ? " missing" : "") +
                   " " + std::to_string(g.value) + ", want " + std::to_string(w.tsNs) + (w.missing ? " missing" : "") +
                   " " + std::to_string(w.value);
    }
    return {};
}

// One node, one GPU and the given series, written in one transaction: committed, or handed to keepOpen.
Expected<std::vector<int64_t>> writeRun(RunDatabase& db, const std::vector<SeriesSpec>& specs, const std::string& hash,
                                        std::optional<Transaction>* keepOpen = nullptr)
{
    RUNLENS_ASSIGN_OR_RETURN(Transaction tx, db.transaction());
    RunWriter w(db);
    ImportRecord rec;
    rec.path = "generated.csv";
    rec.contentHash = hash;
    rec.format = "test";
    RUNLENS_TRY(w.beginImport(rec));
    RUNLENS_ASSIGN_OR_RETURN(auto node, w.node("node-a", "option", "UTC"));
    RUNLENS_ASSIGN_OR_RETURN(auto dev, w.device(node, "gpu", "0"));
    std::vector<int64_t> ids;
    for (const SeriesSpec& s : specs) {
        RUNLENS_ASSIGN_OR_RETURN(auto sink, w.series(dev, s.metric, "%", s.rawName));
        size_t m = 0;
        for (const Point& p : s.data.points) {
            if (p.missing)
                sink->appendMissing(p.tsNs, s.data.tokens.at(m++));
            else
                sink->append(p.tsNs, p.value);
            RUNLENS_TRY(w.flushIfNeeded(*sink));
        }
        ids.push_back(sink->seriesId());
    }
    ImportTotals totals;
    totals.contentHash = hash;
    RUNLENS_TRY(w.finishImport(totals, Diagnostics()));
    if (keepOpen)
        keepOpen->emplace(std::move(tx));
    else
        RUNLENS_TRY(tx.commit());
    return ids;
}

Expected<std::vector<int64_t>> createRun(const std::string& path, const std::vector<SeriesSpec>& specs)
{
    RUNLENS_ASSIGN_OR_RETURN(auto db, RunDatabase::open(path, OpenMode::Create));
    return writeRun(*db, specs, path);
}

int64_t countRows(RunDatabase& db, const std::string& table)
{
    auto st = Statement::prepare(db.handle(), "SELECT count(*) FROM " + table);
    return st && st->step() ? st->int64(0) : -1;
}

} // namespace

Q_DECLARE_METATYPE(CodecCase)
Q_DECLARE_METATYPE(runlens::store::TimeWindow)

class TestStore : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_bigPath;
    std::vector<int64_t> m_bigIds;
    std::vector<std::vector<Point>> m_bigPoints; // per series, as written

    std::string path(const QString& name) const { return m_dir.filePath(name).toStdString(); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // 3 series x 100 000 points at 1 s: integers (with missing points), two decimals, full precision, each
        // with spikes inside chunks, so envelopes must find them on both the summary and the decode path.
        std::vector<SeriesSpec> specs = {
            {"gpu.util", "utilization.gpu [%]", regular(100000, [](int i) { return (i * 7919) % 101; })},
            {"gpu.power", "power.draw [W]", regular(100000, [](int i) { return (i * 37 % 20000) / 100.0; })},
            {"gpu.sm_active", "sm_active", regular(100000, [](int i) { return (i + 1) / 3.0; })}};
        for (int idx : {1000, 5000, 41000, 50500, 99990}) {
            specs[0].data.points[idx].value = 100000 + idx;
            specs[1].data.points[idx + 7].value = -9999.75;
            specs[2].data.points[idx - 3].value = 1e9 / 7.0;
        }
        for (int idx = 17; idx < 100000; idx += 9973) {
            specs[0].data.points[idx].missing = true;
            specs[0].data.tokens.push_back(idx % 2 ? "[N/A]" : "[Not Supported]");
        }
        m_bigPath = path(QStringLiteral("big.runlens"));
        auto ids = createRun(m_bigPath, specs);
        QVERIFY_OK(ids);
        m_bigIds = *ids;
        for (const SeriesSpec& s : specs)
            m_bigPoints.push_back(s.data.points);
    }

    void codecRoundTrip_data()
    {
        QTest::addColumn<CodecCase>("input");
        auto row = [](const char* name, const CodecCase& c) { QTest::newRow(name) << c; };
        const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
        row("integers", regular(300, [](int i) { return (i * 13) % 101; }));
        row("two decimals", regular(300, [](int i) { return i % 3 == 0 ? 105.75 : 99.5 + i / 100.0; }));
        row("full precision", regular(300, [](int i) { return (i + 1) / 3.0; }));
        row("six decimals", regular(100, [](int i) { return 123456.789012 + i; }));
        row("negative numbers", regular(300, [](int i) { return i % 2 ? -105.75 * i : -1.0 / (i + 3); }));
        row("huge and tiny", regular(50, [](int i) { return i % 2 ? 1e300 * i : 4.9e-324 * i; }));
        row("beyond the decimal range", regular(50, [](int i) { return 9.5e15 + i * 2; }));
        row("nan and infinity values", regular(40, [&](int i) { return std::array{nan, inf, -inf, 1.5}[i % 4]; }));
        std::mt19937_64 rng(7);
        int64_t ts = kT0;
        CodecCase irregular = regular(500, [](int i) { return i; });
        for (Point& p : irregular.points)
            p.tsNs = ts += 1 + static_cast<int64_t>(rng() % 3'000'000'000);
        row("irregular timestamps", irregular);
        CodecCase backwards;
        for (int64_t t :
             {kT0, kT0 - 5 * kSecond, kT0 - 5 * kSecond, kT0 + 1, int64_t(0), int64_t(-7), kT0 * 2, kT0 - 1})
            backwards.points.push_back(present(t, 1.25));
        row("backwards and duplicate timestamps", backwards);
        CodecCase allMissing;
        for (int i = 0; i < 25; ++i) {
            allMissing.points.push_back(absent(kT0 + i * kSecond));
            allMissing.tokens.emplace_back(std::array{"[N/A]", "[Not Supported]", "", "ERR!", "[N/A]"}[i % 5]);
        }
        row("all missing, several tokens", allMissing);
        row("missing first, middle and last",
            withMissing(regular(200, [](int i) { return i * 0.5; }), {0, 1, 77, 78, 199},
                        {"[N/A]", "[Not Supported]", "[N/A]", "nan", "[Unknown Error]"}));
        row("single point", regular(1, [](int) { return 42.5; }));
        row("single missing point", withMissing(regular(1, [](int) { return 0; }), {0}, {"[N/A]"}));
        row("4096 points",
            regular(
                kChunkPoints, [&](int) { return static_cast<double>(rng() % 100000) / 100; }, 100'000'000));
    }

    void codecRoundTrip()
    {
        QFETCH(CodecCase, input);
        ChunkSummary summary;
        const std::string blob = encodeChunk(input.points, input.tokens, &summary);
        QVERIFY(!blob.empty());
        auto decoded = decodeChunk(blob.data(), blob.size());
        QVERIFY_OK(decoded);
        QCOMPARE_POINTS(decoded->points, input.points);
        QCOMPARE(decoded->missingTokens, input.tokens);

        QCOMPARE(summary.count, int64_t(input.points.size()));
        QCOMPARE(summary.missing, int64_t(input.tokens.size()));
        QCOMPARE(summary.firstNs, input.points.front().tsNs);
        QCOMPARE(summary.lastNs, input.points.back().tsNs);
    }

    void decodeCorrupt_data()
    {
        QTest::addColumn<QByteArray>("blob");
        auto raw = [](std::initializer_list<int> bytes) { // an uncompressed chunk, zstd-compressed
            std::string s;
            for (int b : bytes)
                s.push_back(static_cast<char>(b));
            return QByteArray::fromStdString(test::zstdCompress(s));
        };
        const std::string good = encodeChunk({present(kT0, 1)}, {}, nullptr);
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("not zstd") << QByteArray("hello, this is not a chunk");
        QTest::newRow("zstd magic only") << QByteArray("\x28\xb5\x2f\xfd", 4);
        QTest::newRow("empty payload") << raw({});
        QTest::newRow("two frames") << QByteArray::fromStdString(good + good);
        QTest::newRow("unknown version") << raw({2, 1, 0, 0, 0, 0, 0, 0});
        QTest::newRow("huge count") << raw({1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0});
        QTest::newRow("missing above count") << raw({1, 1, 2, 0, 0, 0, 0});
        QTest::newRow("truncated timestamps") << raw({1, 3, 0, 2});
        QTest::newRow("bad value mode") << raw({1, 1, 0, 2, 7});
        QTest::newRow("bad decimal scale") << raw({1, 1, 0, 2, 0, 9, 2, 0});
        QTest::newRow("truncated xor values") << raw({1, 1, 0, 2, 1, 1, 2, 3});
        QTest::newRow("missing index past the end") << raw({1, 2, 1, 2, 2, 0, 0, 2, 5, 0, 1, 0});
        QTest::newRow("token id past the table") << raw({1, 1, 1, 2, 0, 0, 0, 3, 1, 1, 'x'});
        QTest::newRow("token longer than the chunk") << raw({1, 1, 1, 2, 0, 0, 0, 0, 1, 0x7f, 'x'});
        QTest::newRow("more tokens than missing") << raw({1, 1, 1, 2, 0, 0, 0, 0, 2, 0, 0});
        QTest::newRow("trailing bytes") << raw({1, 1, 0, 2, 0, 0, 2, 0, 9, 9});
        QTest::newRow("endless varint") << raw({1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1});
    }

    void decodeCorrupt()
    {
        QFETCH(QByteArray, blob);
        auto decoded = decodeChunk(blob.constData(), static_cast<size_t>(blob.size()));
        QVERIFY(!decoded.ok());
        QVERIFY(!decoded.error().message.empty());
    }

    void decodeTruncatedAndFlipped()
    {
        const CodecCase c = withMissing(regular(1000, [](int i) { return i / 3.0; }), {7, 57, 507},
                                        {"[N/A]", "[Not Supported]", "[N/A]"});
        const std::string blob = encodeChunk(c.points, c.tokens, nullptr);
        for (size_t n = 0; n < blob.size(); ++n)
            QVERIFY2(!decodeChunk(blob.data(), n).ok(), "a cut chunk decoded");
        // Flipped bytes must never crash (nor be undefined behaviour); with no checksum some decode to other points.
        int errors = 0;
        for (size_t i = 0; i < blob.size(); ++i) {
            for (int mask : {0x01, 0x80, 0xff}) {
                std::string bad = blob;
                bad[i] = static_cast<char>(bad[i] ^ mask);
                errors += decodeChunk(bad.data(), bad.size()).ok() ? 0 : 1;
            }
        }
        QVERIFY(errors > 0);
    }

    void createReopenKeepsData()
    {
        const std::string file = path(QStringLiteral("reopen.runlens"));
        const CodecCase c = withMissing(regular(5000, [](int i) { return i % 10 + 0.25; }), {3}, {"[N/A]"});
        QVERIFY_OK(createRun(file, {{"gpu.util", "utilization.gpu [%]", c}}));
        for (OpenMode mode : {OpenMode::ReadWrite, OpenMode::ReadOnly, OpenMode::Create}) {
            auto db = RunDatabase::open(file, mode);
            QVERIFY_OK(db);
            RunReader r(**db);
            auto series = r.series();
            QVERIFY_OK(series);
            QCOMPARE(series->size(), size_t(1));
            const SeriesInfo& s = series->front();
            QCOMPARE(s.metric + "|" + s.rawName, std::string("gpu.util|utilization.gpu [%]"));
            QCOMPARE(s.points, int64_t(5000));
            QCOMPARE(s.missingPoints, int64_t(1));
            QCOMPARE(s.maxValue, std::optional(9.25));
            auto pts = r.readPoints(s.id, {});
            QVERIFY_OK(pts);
            QCOMPARE_POINTS(*pts, c.points);
            QCOMPARE(countRows(**db, "import"), int64_t(1));
        }
    }

    void refusesFiles_data()
    {
        QTest::addColumn<QString>("setup"); // SQL run on the file before opening it, or "text"
        QTest::addColumn<QString>("message");
        QTest::newRow("newer schema version")
            << QStringLiteral("PRAGMA user_version = %1").arg(kSchemaVersion + 1) << QStringLiteral("newer");
        QTest::newRow("newer schema version, other application id")
            << QStringLiteral("PRAGMA application_id = 7; PRAGMA user_version = 99") << QStringLiteral("newer");
        QTest::newRow("plain SQLite file") << QStringLiteral("CREATE TABLE measurement(x); INSERT INTO measurement "
                                                             "VALUES (1)")
                                           << QStringLiteral("not a RunLens");
        QTest::newRow("text file") << QStringLiteral("text") << QString();
    }

    void refusesFiles()
    {
        QFETCH(QString, setup);
        QFETCH(QString, message);
        const std::string file = path(QString::fromLatin1(QTest::currentDataTag()) + QStringLiteral(".runlens"));
        if (setup == QStringLiteral("text")) {
            test::writeFile(m_dir, QFileInfo(QString::fromStdString(file)).fileName(), std::string(5000, 'x'));
        } else {
            if (message == QStringLiteral("newer")) QVERIFY_OK(RunDatabase::open(file, OpenMode::Create));
            QCOMPARE(execRaw(file, setup.toStdString()), std::string());
        }
        const qint64 size = QFileInfo(QString::fromStdString(file)).size();
        for (OpenMode mode : {OpenMode::ReadOnly, OpenMode::ReadWrite, OpenMode::Create}) {
            auto db = RunDatabase::open(file, mode);
            QVERIFY(!db.ok());
            const std::string text = db.error().toString();
            QVERIFY2(text.find(message.toStdString()) != std::string::npos, text.c_str());
            if (!message.isEmpty()) QCOMPARE(db.error().code, ErrorCode::Unsupported);
        }
        QCOMPARE(QFileInfo(QString::fromStdString(file)).size(), size); // left as it was
        auto q = runUserQuery(file, "SELECT 1", nullptr, nullptr);
        QVERIFY(!q.ok());
        QVERIFY(q.error().toString().find(message.toStdString()) != std::string::npos);

        auto none = RunDatabase::open(path(QStringLiteral("absent.runlens")), OpenMode::ReadOnly);
        QVERIFY(!none.ok());
        QCOMPARE(none.error().code, ErrorCode::Io);
    }

    void readPointsWindow_data()
    {
        QTest::addColumn<TimeWindow>("window");
        const int64_t last = kT0 + 99999 * kSecond;
        QTest::newRow("full range") << TimeWindow{};
        QTest::newRow("exact data range") << TimeWindow{kT0, last};
        QTest::newRow("1 % window, inclusive bounds") << TimeWindow{kT0 + 50000 * kSecond, kT0 + 50999 * kSecond};
        QTest::newRow("bounds between points") << TimeWindow{kT0 + 20000 * kSecond + 1, kT0 + 21000 * kSecond - 1};
        QTest::newRow("across a chunk boundary") << TimeWindow{kT0 + 4095 * kSecond, kT0 + 4096 * kSecond};
        QTest::newRow("single point") << TimeWindow{kT0 + 777 * kSecond, kT0 + 777 * kSecond};
        QTest::newRow("first point only") << TimeWindow{kT0 - kSecond, kT0};
        QTest::newRow("last point only") << TimeWindow{last, last + kSecond};
        QTest::newRow("before the data") << TimeWindow{0, kT0 - 1};
        QTest::newRow("after the data") << TimeWindow{last + 1, kMaxNs};
        QTest::newRow("between two points") << TimeWindow{kT0 + 1, kT0 + kSecond - 1};
    }

    void readPointsWindow()
    {
        QFETCH(TimeWindow, window);
        auto db = RunDatabase::open(m_bigPath, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        RunReader r(**db);
        for (size_t s = 0; s < m_bigIds.size(); ++s) {
            std::vector<Point> want;
            std::copy_if(m_bigPoints[s].begin(), m_bigPoints[s].end(), std::back_inserter(want),
                         [&](const Point& p) { return p.tsNs >= window.fromNs && p.tsNs <= window.toNs; });
            auto got = r.readPoints(m_bigIds[s], window);
            QVERIFY_OK(got);
            const std::string diff = diffPoints(*got, want);
            QVERIFY2(diff.empty(), ("series " + std::to_string(s) + ": " + diff).c_str());
        }
    }

    void readEnvelope_data()
    {
        QTest::addColumn<TimeWindow>("window");
        QTest::addColumn<int>("buckets");
        const int64_t last = kT0 + 99999 * kSecond;
        QTest::newRow("full range, 1 bucket (summaries only)") << TimeWindow{kT0, last} << 1;
        QTest::newRow("full range, 7 buckets") << TimeWindow{kT0, last} << 7;
        QTest::newRow("full range, 10 buckets") << TimeWindow{kT0, last} << 10;
        QTest::newRow("full range, 1000 buckets (decode only)") << TimeWindow{kT0, last} << 1000;
        QTest::newRow("wider than the data, 3 buckets") << TimeWindow{kT0 - 500 * kSecond, last + 500 * kSecond} << 3;
        QTest::newRow("1 % window, 5 buckets") << TimeWindow{kT0 + 50000 * kSecond, kT0 + 50999 * kSecond} << 5;
        QTest::newRow("odd window, 33 buckets") << TimeWindow{kT0 + 123456768, kT0 + 77777 * kSecond + 768} << 33;
        QTest::newRow("more buckets than points") << TimeWindow{kT0 + 10 * kSecond, kT0 + 19 * kSecond} << 64;
        // A bucket boundary exactly on a point, the window start not a multiple of 256 ns.
        const int64_t from = kT0 + kSecond - 100;
        QTest::newRow("boundary on a point, unaligned start") << TimeWindow{from, from + 2 * (kSecond + 100) - 1} << 2;
    }

    void readEnvelope()
    {
        QFETCH(TimeWindow, window);
        QFETCH(int, buckets);
        auto db = RunDatabase::open(m_bigPath, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        RunReader r(**db);
        for (size_t s = 0; s < m_bigIds.size(); ++s) {
            auto env = r.readEnvelope(m_bigIds[s], window, buckets);
            QVERIFY_OK(env);
            QCOMPARE(env->size(), size_t(buckets));
            int64_t total = 0;
            for (int b = 0; b < buckets; ++b) {
                const EnvelopeBucket& e = (*env)[b];
                if (b > 0) QCOMPARE(e.startNs, (*env)[b - 1].endNs);
                std::vector<double> v; // brute force over [startNs, endNs)
                for (const Point& p : m_bigPoints[s])
                    if (!p.missing && p.tsNs >= e.startNs && p.tsNs < e.endNs) v.push_back(p.value);
                const std::string where = "series " + std::to_string(s) + " bucket " + std::to_string(b) + ": ";
                QVERIFY2(e.count == int64_t(v.size()), (where + "count " + std::to_string(e.count)).c_str());
                total += e.count;
                if (v.empty()) continue;
                QVERIFY2(e.minValue == *std::min_element(v.begin(), v.end()), (where + "min").c_str());
                QVERIFY2(e.maxValue == *std::max_element(v.begin(), v.end()), (where + "max").c_str());
                const double sum = std::accumulate(v.begin(), v.end(), 0.0);
                QVERIFY2(std::fabs(e.sum - sum) <= 1e-9 * std::max(1.0, std::fabs(sum)), (where + "sum").c_str());
            }
            QVERIFY(total > 0);
            QCOMPARE(env->front().startNs, window.fromNs); // the buckets tile the window exactly
            QCOMPARE(env->back().endNs, window.toNs + 1);
        }
    }

    void clockOffsetShiftsReads()
    {
        const std::string file = path(QStringLiteral("offset.runlens"));
        const CodecCase c = regular(10000, [](int i) { return i; });
        QVERIFY_OK(createRun(file, {{"gpu.util", "util", c}}));
        const int64_t offset = int64_t{-2} * 3600 * kSecond + 250'000'000;
        QCOMPARE(execRaw(file, "UPDATE node SET clock_offset_ns = " + std::to_string(offset)), std::string());
        auto db = RunDatabase::open(file, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        auto series = RunReader(**db).series();
        QVERIFY_OK(series);
        QCOMPARE(series->size(), size_t(1));
        const SeriesInfo s = series->front();
        QCOMPARE(s.firstNs, std::optional(kT0 + offset));
        QCOMPARE(s.lastNs, std::optional(kT0 + 9999 * kSecond + offset));

        std::vector<Point> shifted = c.points;
        for (Point& p : shifted)
            p.tsNs += offset;
        RunReader r(**db);
        auto all = r.readPoints(s.id, {});
        QVERIFY_OK(all);
        QCOMPARE_POINTS(*all, shifted);
        // The window is in shifted time: [t0 + offset + 100 s, t0 + offset + 200 s] holds points 100..200.
        auto win = r.readPoints(s.id, {kT0 + offset + 100 * kSecond, kT0 + offset + 200 * kSecond});
        QVERIFY_OK(win);
        QCOMPARE_POINTS(*win, std::vector<Point>(shifted.begin() + 100, shifted.begin() + 201));
        auto after = r.readPoints(s.id, {kT0 + 9999 * kSecond + offset + 1, kMaxNs});
        QVERIFY_OK(after);
        QVERIFY(after->empty()); // unshifted, the last hour would still be there
        auto env = r.readEnvelope(s.id, {kT0 + offset, kT0 + offset + 9999 * kSecond}, 1);
        QVERIFY_OK(env);
        QCOMPARE(env->front().count, int64_t(10000));
    }

    void duplicateTimestampsAcrossChunks()
    {
        // More than kChunkPoints points at one timestamp (a stuck or coarse clock) must still import.
        const CodecCase c = regular(
            kChunkPoints + 100, [](int i) { return i; }, 0);
        auto db = RunDatabase::open(path(QStringLiteral("dup.runlens")), OpenMode::Create);
        QVERIFY_OK(db);
        const auto ids = writeRun(**db, {{"gpu.util", "util", c}}, "dup");
        QVERIFY_OK(ids);
        auto got = RunReader(**db).readPoints(ids->at(0), {});
        QVERIFY_OK(got);
        QCOMPARE_POINTS(*got, c.points);
    }

    void rollbackLeavesNothing()
    {
        const std::string file = path(QStringLiteral("rollback.runlens"));
        auto db = RunDatabase::open(file, OpenMode::Create);
        QVERIFY_OK(db);
        const CodecCase c = regular(9000, [](int i) { return i; });
        std::optional<Transaction> open;
        QVERIFY_OK(writeRun(**db, {{"gpu.util", "util", c}, {"gpu.power", "power", c}}, "rolled", &open));
        QCOMPARE(countRows(**db, "point_chunk"), int64_t(6));
        open->rollback();
        for (const char* table : {"import", "node", "device", "series", "point_chunk", "diagnostic_count"})
            QVERIFY2(countRows(**db, table) == 0, table);
        db = RunDatabase::open(file, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        QCOMPARE(countRows(**db, "point_chunk"), int64_t(0));
        QCOMPARE(countRows(**db, "run"), int64_t(1));
        auto found = RunWriter(**db).findImportByHash("rolled");
        QVERIFY_OK(found);
        QVERIFY(!found->has_value());
    }

    void bytesPerPoint()
    {
        const std::string file = path(QStringLiteral("size.runlens"));
        constexpr int kPoints = 1'000'000;
        std::mt19937 rng(1);
        int util = 50; // a random walk of GPU utilisation, 0..100 %
        QVERIFY_OK(createRun(file, {{"gpu.util", "util", regular(kPoints, [&](int) {
                                         return util = std::clamp(util + int(rng() % 11) - 5, 0, 100);
                                     })}}));
        const double perPoint = double(QFileInfo(QString::fromStdString(file)).size()) / kPoints;
        qInfo("%.3f bytes per point on disk", perPoint);
        QVERIFY2(perPoint < 3.0, qPrintable(QStringLiteral("%1 bytes per point").arg(perPoint)));
    }

    void userQueryRejectsWrites_data()
    {
        QTest::addColumn<QString>("sql"); // %1: a file the statement must not create
        QTest::newRow("insert") << QStringLiteral("INSERT INTO node(name) VALUES ('evil')");
        QTest::newRow("delete") << QStringLiteral("DELETE FROM series");
        QTest::newRow("update") << QStringLiteral("UPDATE node SET clock_offset_ns = 5");
        QTest::newRow("drop") << QStringLiteral("DROP TABLE point_chunk");
        QTest::newRow("create") << QStringLiteral("CREATE TABLE t(x)");
        QTest::newRow("attach") << QStringLiteral("ATTACH DATABASE '%1' AS other");
        QTest::newRow("query_only off, then insert")
            << QStringLiteral("PRAGMA query_only = 0; INSERT INTO node(name) VALUES ('evil')");
        QTest::newRow("vacuum into") << QStringLiteral("VACUUM INTO '%1'");
        QTest::newRow("load_extension") << QStringLiteral("SELECT load_extension('%1')");
    }

    void userQueryRejectsWrites()
    {
        QFETCH(QString, sql);
        const std::string file = path(QStringLiteral("query-write.runlens"));
        if (!QFileInfo::exists(QString::fromStdString(file)))
            QVERIFY_OK(createRun(file, {{"gpu.util", "util", regular(10, [](int i) { return i; })}}));
        const QString target = m_dir.filePath(QString::fromLatin1(QTest::currentDataTag()).remove(QLatin1Char(' ')));
        auto q = runUserQuery(file, QString(sql).replace(QStringLiteral("%1"), target).toStdString(), nullptr, nullptr);
        QVERIFY(!q.ok());
        QVERIFY(!q.error().message.empty());
        QVERIFY2(!QFileInfo::exists(target), "the query created a file");
        auto db = RunDatabase::open(file, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        for (const char* table : {"node", "series", "point_chunk"})
            QVERIFY2(countRows(**db, table) == 1, table);
    }

    void userQuerySeriesSummary()
    {
        const std::string file = path(QStringLiteral("query.runlens"));
        const CodecCase missingOnly = withMissing(regular(2, [](int) { return 0; }), {0, 1}, {"[N/A]", "[N/A]"});
        QVERIFY_OK(createRun(file, {{"gpu.power", "power.draw, \"W\"", regular(4, [](int i) { return 100 + i * 0.5; })},
                                    {"gpu.util", "utilization.gpu [%]", missingOnly}}));
        std::vector<std::string> header, csv;
        std::vector<std::vector<bool>> nulls;
        auto n = runUserQuery(
            file, "SELECT * FROM series_summary ORDER BY metric;", [&](const auto& h) { header = h; },
            [&](const QueryRow& r) {
                csv.push_back(csvLine(r.values));
                nulls.push_back(r.isNull);
            });
        QVERIFY_OK(n);
        QCOMPARE(*n, int64_t(2));
        QCOMPARE(header, (std::vector<std::string>{"node", "device", "metric", "unit", "points", "first_ns", "last_ns",
                                                   "missing_points", "min_value", "max_value", "mean_value", "raw_name",
                                                   "source", "labels"}));
        const std::string t0 = std::to_string(kT0);
        QCOMPARE(csv.size(), size_t(2));
        QCOMPARE(csv[0], "node-a,gpu:0,gpu.power,%,4," + t0 + "," + std::to_string(kT0 + 3 * kSecond) +
                             ",0,100,101.5,100.75,\"power.draw, \"\"W\"\"\",test,");
        QCOMPARE(csv[1], "node-a,gpu:0,gpu.util,%,2," + t0 + "," + std::to_string(kT0 + kSecond) +
                             ",2,,,,utilization.gpu [%],test,");
        std::vector<bool> nullColumns(14, false); // min_value, max_value and mean_value
        nullColumns[8] = nullColumns[9] = nullColumns[10] = true;
        QCOMPARE(nulls[1], nullColumns);
    }

    // series_points decodes the stored chunks: every point comes back, filtered by node/device/metric/time.
    void seriesPointsTableFunction_data()
    {
        QTest::addColumn<QString>("where");
        QTest::addColumn<int>("series");
        QTest::addColumn<int>("first"); // index of the first expected point
        QTest::addColumn<int>("count");
        auto at = [](int i) { return QString::number(kT0 + int64_t(i) * kSecond); };
        QTest::newRow("one series, whole") << QStringLiteral("metric = 'gpu.util'") << 0 << 0 << 100000;
        QTest::newRow("node, device and metric, 1 % window")
            << QStringLiteral("node = 'node-a' AND device = 'gpu:0' AND metric = 'gpu.power' AND ts_ns >= %1 AND "
                              "ts_ns <= %2")
                   .arg(at(50000), at(50999))
            << 1 << 50000 << 1000;
        QTest::newRow("open-ended window")
            << QStringLiteral("metric = 'gpu.sm_active' AND ts_ns > %1").arg(at(99989)) << 2 << 99990 << 10;
        QTest::newRow("one instant") << QStringLiteral("metric = 'gpu.util' AND ts_ns = %1").arg(at(4242)) << 0 << 4242
                                     << 1;
        QTest::newRow("no such node") << QStringLiteral("node = 'elsewhere'") << 0 << 0 << 0;
    }

    void seriesPointsTableFunction()
    {
        QFETCH(QString, where);
        QFETCH(int, series);
        QFETCH(int, first);
        QFETCH(int, count);
        std::vector<Point> got;
        std::vector<std::string> tokens;
        auto n = runUserQuery(
            m_bigPath, "SELECT ts_ns, value, missing, token FROM series_points WHERE " + where.toStdString(), {},
            [&](const QueryRow& r) {
                Point p{std::stoll(r.values[0]), r.isNull[1] ? 0.0 : std::stod(r.values[1]), r.values[2] == "1"};
                got.push_back(p);
                tokens.push_back(r.values[3]);
            });
        QVERIFY_OK(n);
        QCOMPARE(got.size(), size_t(count));
        const std::vector<Point>& want = m_bigPoints[static_cast<size_t>(series)];
        for (int i = 0; i < count; ++i) {
            const Point& w = want[static_cast<size_t>(first) + static_cast<size_t>(i)];
            QCOMPARE(got[i].tsNs, w.tsNs);
            QCOMPARE(got[i].missing, w.missing);
            if (!w.missing)
                QCOMPARE(got[i].value, w.value); // values printed in shortest round-trip form
            else
                QVERIFY(tokens[i] == "[N/A]" || tokens[i] == "[Not Supported]");
        }
    }

    void userQueryCancel()
    {
        const std::string file = path(QStringLiteral("cancel.runlens"));
        QVERIFY_OK(RunDatabase::open(file, OpenMode::Create));
        const std::string count = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %1) "
                                  "SELECT count(*) FROM c";
        auto sql = [&](const char* n) { return QString::fromStdString(count).arg(QLatin1String(n)).toStdString(); };
        std::atomic<bool> cancel{true};
        QueryOptions options;
        options.cancel = &cancel;
        std::vector<std::string> values;
        auto onRow = [&](const QueryRow& r) { values.push_back(r.values.at(0)); };
        auto q = runUserQuery(file, sql("1000000000"), nullptr, onRow, options);
        QVERIFY(!q.ok());
        QCOMPARE(q.error().code, ErrorCode::Cancelled);
        QVERIFY(values.empty());

        cancel = false; // not set: the same options let a query run to the end
        auto small = runUserQuery(file, sql("100000"), nullptr, onRow, options);
        QVERIFY_OK(small);
        QCOMPARE(values, std::vector<std::string>{"100000"});
    }
};

QTEST_GUILESS_MAIN(TestStore)
#include "tst_store.moc"
