// Timed stack storage (the codec is tst_stack_codec): window totals against a brute-force sum
// (pre-aggregated buckets, chunk edges, two overlapping imports, untimed stacks, thread subsets), node clock
// offsets, samples(), the stack_samples table function and the stack_summary view, and cancellation. The
// generated run and the brute-force model are in stack_store_support.h; the schema upgrade is tst_stack_upgrade.

#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/store/stack_codec.h"
#include "analysis/store/stack_reader.h"
#include "analysis/store/user_query.h"
#include "tests/stack_store_support.h"
#include "tests/test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sqlite3.h>
#include <tuple>

using namespace runlens;
using namespace runlens::store;
using test::rawBytes;
using test::varintBytes;

using namespace runlens::test::stack_store;

Q_DECLARE_METATYPE(std::vector<int64_t>)
Q_DECLARE_METATYPE(runlens::store::TimeWindow)

class TestStackStore : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_path;               // the generated run
    std::string m_offsetPath;         // the same, with node-b's clock offset set to kOffset
    std::vector<int64_t> m_threadIds; // as kThreads
    std::vector<int64_t> m_callsites;
    std::vector<GenSample> m_samples;  // every sample written, timed and untimed
    std::vector<int64_t> m_boundaries; // 2^36 ns boundaries holding a sample
    int64_t m_firstNs = 0, m_lastNs = 0;
    std::vector<WindowCase> m_windows;
    Offsets m_offsets; // of the offset run

    std::string path(const char* name) const { return m_dir.filePath(QString::fromLatin1(name)).toStdString(); }

    Status generate(RunDatabase& db)
    {
        std::mt19937_64 rng(20240611);
        Status first = writeImport(db, "first", [&](RunWriter& w) -> Status {
            int64_t nodes[2];
            for (int n = 0; n < 2; ++n) {
                RUNLENS_ASSIGN_OR_RETURN(auto id, w.node(kNodes[n], "option", "UTC"));
                nodes[n] = id;
            }
            for (const ThreadSpec& t : kThreads) {
                RUNLENS_ASSIGN_OR_RETURN(auto id, w.thread(nodes[t.node], t.process, t.pid, t.name, t.tid));
                m_threadIds.push_back(id);
            }
            std::vector<int64_t> frames;
            for (int f = 0; f < 80; ++f) {
                RUNLENS_ASSIGN_OR_RETURN(auto id, w.frame("fn_" + std::to_string(f), "train.py", f + 1, "train"));
                frames.push_back(id);
            }
            std::set<int64_t> seen; // a prefix tree of 300 callsites, a few roots, up to depth ~20
            while (m_callsites.size() < 300) {
                const int64_t parent =
                    m_callsites.size() < 8 || rng() % 10 == 0 ? 0 : m_callsites[rng() % m_callsites.size()];
                RUNLENS_ASSIGN_OR_RETURN(auto id, w.callsite(parent, frames[rng() % frames.size()]));
                if (seen.insert(id).second) m_callsites.push_back(id);
            }
            std::vector<GenSample> timed;
            for (size_t t = 0; t < kTimedThreads; ++t) {
                const int64_t start = kBase + static_cast<int64_t>(rng() % static_cast<uint64_t>(kMinute));
                auto v = timeline(rng, m_threadIds[t], kThreads[t], start, 40000, m_callsites, m_boundaries);
                timed.insert(timed.end(), v.begin(), v.end());
            }
            RUNLENS_TRY(writeSamples(w, rng, std::move(timed), m_samples));
            for (size_t t : {size_t(0), size_t(2), size_t(4)})
                if (Status s = writeUntimed(w, rng, m_threadIds[t], 4, m_callsites, m_samples); !s) return s;
            return writeUntimed(w, rng, m_threadIds[6], 6, m_callsites, m_samples);
        });
        if (!first) return first;
        // The second import adds to two threads (one per node), overlapping the first in time, with new callsites.
        return writeImport(db, "second", [&](RunWriter& w) -> Status {
            for (size_t t : {size_t(0), size_t(4)}) {
                RUNLENS_ASSIGN_OR_RETURN(auto node, w.node(kNodes[kThreads[t].node], "option", "UTC"));
                auto id = w.thread(node, kThreads[t].process, kThreads[t].pid, kThreads[t].name, kThreads[t].tid);
                if (!id) return id.error();
                if (*id != m_threadIds[t]) return makeError(ErrorCode::Database, "the thread got a second id");
            }
            for (int f = 0; f < 10; ++f) {
                RUNLENS_ASSIGN_OR_RETURN(auto frame,
                                         w.frame("late_" + std::to_string(f), "train.py", 1000 + f, "train"));
                RUNLENS_ASSIGN_OR_RETURN(auto id, w.callsite(m_callsites[static_cast<size_t>(f) * 7], frame));
                m_callsites.push_back(id);
            }
            std::vector<GenSample> timed;
            for (size_t t : {size_t(0), size_t(4)}) {
                auto v =
                    timeline(rng, m_threadIds[t], kThreads[t], kBase + 3 * kHour, 15000, m_callsites, m_boundaries);
                timed.insert(timed.end(), v.begin(), v.end());
            }
            RUNLENS_TRY(writeSamples(w, rng, std::move(timed), m_samples));
            return writeUntimed(w, rng, m_threadIds[0], 2, m_callsites, m_samples);
        });
    }

    std::vector<GenSample> threadSamples(int64_t threadId, TimeWindow w, const Offsets& offsets = {}) const
    {
        std::vector<GenSample> out;
        for (const GenSample& s : m_samples)
            if (s.threadId == threadId && s.tsNs && shownTs(s, offsets) >= w.fromNs && shownTs(s, offsets) <= w.toNs)
                out.push_back(s);
        return out;
    }

    void buildWindows(RunDatabase& db)
    {
        auto add = [&](std::string name, TimeWindow w, std::vector<int64_t> threads = {}, bool untimed = false) {
            m_windows.push_back({std::move(name), w, std::move(threads), untimed});
        };
        const int64_t mid = m_firstNs + (m_lastNs - m_firstNs) / 2;
        const int64_t b44 = ceilTo(m_firstNs, 44), b40 = b44 + 3 * width(40), b36 = b44 + width(40) + 5 * width(36);
        add("unbounded", {});
        add("unbounded, with untimed stacks", {}, {}, true);
        add("exact data range", {m_firstNs, m_lastNs});
        add("before all data", {kMinNs, m_firstNs - 1});
        add("before all data, with untimed stacks", {kMinNs, m_firstNs - 1}, {}, true);
        add("after all data", {m_lastNs + 1, kMaxNs});
        add("ending at INT64_MAX", {mid, kMaxNs});
        add("starting at INT64_MIN", {kMinNs, mid});
        add("from after to", {mid, mid - 1});
        add("one 2^44 ns bucket", {b44, b44 + width(44) - 1});
        add("one 2^40 ns bucket", {b40, b40 + width(40) - 1});
        add("one 2^36 ns bucket", {b36, b36 + width(36) - 1});
        add("2^44 bucket and 1 ns either side", {b44 - 1, b44 + width(44)});
        add("2^44 bucket less 1 ns either side", {b44 + 1, b44 + width(44) - 2});
        std::vector<int64_t> bs = m_boundaries;
        std::sort(bs.begin(), bs.end());
        add("boundary to boundary, both holding samples", {bs[3], bs[bs.size() - 4]});
        add("1 ns inside boundaries holding samples", {bs[3] + 1, bs[bs.size() - 4] - 1});
        add("one sample's time, on a boundary", {bs[5], bs[5]});
        add("1 ns before a boundary", {bs[5] - 1, bs[5] - 1});
        const int64_t someTs = *m_samples[12345].tsNs;
        add("one sample's time", {someTs, someTs});
        std::map<int64_t, int> timesSeen;
        for (const GenSample& s : m_samples)
            if (s.tsNs) ++timesSeen[*s.tsNs];
        const auto dup = std::find_if(timesSeen.begin(), timesSeen.end(), [](const auto& p) { return p.second > 2; });
        if (dup != timesSeen.end()) add("a time shared by several samples", {dup->first, dup->first});
        auto chunk = Statement::prepare(db.handle(), "SELECT first_ns, last_ns FROM stack_chunk ORDER BY thread_id, "
                                                     "import_id, first_ns LIMIT 1 OFFSET 4");
        if (chunk && hasRow(*chunk)) {
            const int64_t f = chunk->int64(0), l = chunk->int64(1);
            add("a chunk's exact range", {f, l});
            add("inside a chunk", {f + 1, l - 1});
            add("across a chunk's start", {f - 10 * kSecond, f + 10 * kSecond});
            add("across a chunk's end", {l - 10 * kSecond, l + 10 * kSecond});
        }
        add("the second import's start", {kBase + 3 * kHour - kMinute, kBase + 3 * kHour + 10 * kMinute});
        add("one thread", {}, {m_threadIds[2]});
        add("two threads on two nodes, one 2^40 bucket", {b40, b40 + width(40) - 1}, {m_threadIds[1], m_threadIds[4]});
        add("two threads of both imports", {kBase + 2 * kHour, kBase + 5 * kHour}, {m_threadIds[0], m_threadIds[4]});
        add("the thread with untimed stacks only", {}, {m_threadIds[6]}, true);
        add("a thread id that does not exist", {}, {9999}, true);
        std::mt19937_64 rng(99);
        for (int i = 0; i < 120; ++i) {
            const int64_t from = m_firstNs - kHour +
                                 static_cast<int64_t>(rng() % static_cast<uint64_t>(m_lastNs - m_firstNs + 2 * kHour));
            const double u = static_cast<double>(rng() % 100000) / 100000.0; // lengths 1 us .. 14 h, log-uniform
            const auto length = static_cast<int64_t>(std::exp(std::log(1e3) + u * (std::log(5e13) - std::log(1e3))));
            std::vector<int64_t> threads;
            if (rng() % 2)
                for (size_t k = 1 + rng() % 3; k > 0; --k)
                    threads.push_back(m_threadIds[rng() % m_threadIds.size()]);
            add("random window " + std::to_string(i), {from, from + length}, threads, rng() % 4 == 0);
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = path("stacks.runlens");
        {
            auto db = RunDatabase::open(m_path, OpenMode::Create);
            QVERIFY_OK(db);
            QVERIFY_OK(generate(**db));
            m_firstNs = kMaxNs;
            m_lastNs = kMinNs;
            for (const GenSample& s : m_samples)
                if (s.tsNs) {
                    m_firstNs = std::min(m_firstNs, *s.tsNs);
                    m_lastNs = std::max(m_lastNs, *s.tsNs);
                }
            QVERIFY(ceilTo(m_firstNs, 44) + width(44) < m_lastNs); // a whole 2^44 ns bucket inside the data
            buildWindows(**db);
            qInfo("%zu samples in %lld chunks and %lld buckets, %zu callsites", m_samples.size(),
                  static_cast<long long>(queryInt(**db, "SELECT count(*) FROM stack_chunk")),
                  static_cast<long long>(queryInt(**db, "SELECT count(*) FROM stack_bucket")), m_callsites.size());
        }
        m_offsetPath = path("offset.runlens");
        QVERIFY(QFile::copy(QString::fromStdString(m_path), QString::fromStdString(m_offsetPath)));
        QCOMPARE(execRaw(m_offsetPath,
                         "UPDATE node SET clock_offset_ns = " + std::to_string(kOffset) + " WHERE name = 'node-b'"),
                 std::string());
        for (size_t t = 0; t < m_threadIds.size(); ++t)
            if (kThreads[t].node == 1) m_offsets[m_threadIds[t]] = kOffset;
    }

    // ---- codec ----

    void windowTotals_data()
    {
        QTest::addColumn<int>("index");
        QTest::addColumn<bool>("offset"); // read the copy with node-b's clock offset set: windows in shifted time
        for (size_t i = 0; i < m_windows.size(); ++i)
            for (bool offset : {false, true})
                QTest::addRow("%s%s", m_windows[i].name.c_str(), offset ? ", node-b clock offset" : "")
                    << static_cast<int>(i) << offset;
    }

    void windowTotals()
    {
        QFETCH(int, index);
        QFETCH(bool, offset);
        const WindowCase& c = m_windows[static_cast<size_t>(index)];
        auto db = RunDatabase::open(offset ? m_offsetPath : m_path, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        StackReader reader(**db);
        auto got = reader.totals(c.threads, c.window, c.untimed);
        QVERIFY_OK(got);
        const BruteTotals want = bruteTotals(m_samples, c.threads, c.window, c.untimed, offset ? m_offsets : Offsets{});
        const std::string diff = diffTotals(*got, want);
        QVERIFY2(diff.empty(), (windowText(c.window) + ": " + diff).c_str());
        // Asked again (statements and catalogue reused), the same.
        auto again = reader.totals(c.threads, c.window, c.untimed);
        QVERIFY_OK(again);
        QVERIFY(diffTotals(*again, want).empty());
    }

    void windowTotalsUsePreAggregation()
    {
        auto db = RunDatabase::open(m_path, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        const int64_t chunks = queryInt(**db, "SELECT count(*) FROM stack_chunk");
        StackReader reader(**db);
        auto all = reader.totals({}, {}, false);
        QVERIFY_OK(all);
        qInfo("full range: %lld buckets read, %lld of %lld chunks decoded", static_cast<long long>(all->bucketsRead),
              static_cast<long long>(all->chunksDecoded), static_cast<long long>(chunks));
        QVERIFY(all->bucketsRead > 0);
        // Only the chunks cut by the two edges of each thread's range are decoded: at most 2 per thread and import.
        QVERIFY2(all->chunksDecoded <= 2 * (static_cast<int64_t>(kTimedThreads) + 2), "too many chunks decoded");
        QVERIFY(all->chunksDecoded * 4 < chunks);
        // A window of exactly one aligned 2^40 ns bucket inside every thread's range decodes nothing.
        const int64_t b40 = ceilTo(m_firstNs, 44) + 3 * width(40);
        auto bucket = reader.totals({}, {b40, b40 + width(40) - 1}, false);
        QVERIFY_OK(bucket);
        QVERIFY(bucket->samples > 0);
        QCOMPARE(bucket->chunksDecoded, int64_t(0));
        QVERIFY(bucket->bucketsRead >= 1);
    }

    // A damaged chunk (a summary or samples naming a callsite that does not exist, or bytes that are no chunk)
    // makes the totals an Error, never a crash.
    void damagedChunk_data()
    {
        QTest::addColumn<QString>("column");
        QTest::addColumn<QByteArray>("blob");
        QTest::addColumn<bool>("whole"); // the window holds the whole chunk (its summary is read) or cuts it
        auto bytes = [](const std::string& s) { return QByteArray::fromStdString(s); };
        const std::string one = rawBytes({0, 0, 0, 0, 0, 0, 0xf0, 0x3f});
        const QString summary = QStringLiteral("summary"), data = QStringLiteral("data");
        QTest::newRow("summary naming callsite 2^40")
            << summary << bytes(encodeCallsiteTotals({{3, 1, 1.0}, {int64_t{1} << 40, 1, 1.0}})) << true;
        QTest::newRow("summary naming a negative callsite")
            << summary << bytes("\x01\x01" + varintBytes(~uint64_t{0} - 6) + varintBytes(1) + one) << true;
        QTest::newRow("summary of other bytes") << summary << QByteArray("\x01\x05not a summary") << true;
        QTest::newRow("samples naming callsite 2^40") << data << QByteArray() << false; // encoded in the test
        QTest::newRow("samples naming a negative callsite") << data << QByteArray() << false;
        QTest::newRow("samples of other bytes") << data << QByteArray("\x28\xb5\x2f\xfd not a chunk") << false;
    }

    void damagedChunk()
    {
        QFETCH(QString, column);
        QFETCH(QByteArray, blob);
        QFETCH(bool, whole);
        const std::string file = path("damaged.runlens");
        QFile::remove(QString::fromStdString(file));
        QVERIFY(QFile::copy(QString::fromStdString(m_path), QString::fromStdString(file)));
        const int64_t thread = m_threadIds[2]; // dense: some chunks lie inside one 2^36 ns bucket
        int64_t first = 0, last = 0;
        {
            auto db = RunDatabase::open(file, OpenMode::ReadWrite);
            QVERIFY_OK(db);
            auto chunk = Statement::prepare((*db)->handle(), "SELECT first_ns, last_ns FROM stack_chunk WHERE "
                                                             "thread_id = ? AND first_ns >> 36 = last_ns >> 36 "
                                                             "ORDER BY first_ns LIMIT 1");
            QVERIFY_OK(chunk);
            chunk->bind(1, thread);
            QVERIFY(hasRow(*chunk));
            first = chunk->int64(0);
            last = chunk->int64(1);
            if (blob.isEmpty()) { // samples inside the window naming a callsite that does not exist
                const int64_t site = QByteArray(QTest::currentDataTag()).contains("negative") ? -7 : int64_t{1} << 40;
                blob = QByteArray::fromStdString(encodeStackSamples({{first, 3, 1, 1.0}, {last, site, 1, 1.0}}));
            }
            auto upd = Statement::prepare((*db)->handle(), "UPDATE stack_chunk SET " + column.toStdString() +
                                                               " = ? WHERE thread_id = ? AND first_ns = ?");
            QVERIFY_OK(upd);
            upd->bindBlob(1, blob.constData(), static_cast<size_t>(blob.size())).bind(2, thread).bind(3, first);
            QVERIFY_OK(upd->exec());
            QCOMPARE(sqlite3_changes((*db)->handle()), 1);
            if (column == QLatin1String("summary")) {
                // The window may be summed from buckets instead of the chunk's own totals: damage those too, so
                // whichever summary the reader takes is damaged.
                auto buckets = Statement::prepare((*db)->handle(), "UPDATE stack_bucket SET summary = ? WHERE "
                                                                   "thread_id = ?");
                QVERIFY_OK(buckets);
                buckets->bindBlob(1, blob.constData(), static_cast<size_t>(blob.size())).bind(2, thread);
                QVERIFY_OK(buckets->exec());
            }
        }
        auto db = RunDatabase::open(file, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        StackReader reader(**db);
        auto got = reader.totals({thread}, whole ? TimeWindow{first, last} : TimeWindow{first + 1, last}, false);
        QVERIFY(!got.ok());
        QCOMPARE(got.error().code, ErrorCode::Database);
        QVERIFY2(got.error().message.find("corrupt") != std::string::npos, got.error().message.c_str());
        auto other = reader.totals({m_threadIds[1]}, {}, false); // the reader stays usable
        QVERIFY_OK(other);
        QCOMPARE(other->samples, bruteTotals(m_samples, {m_threadIds[1]}, {}, false).samples);
    }

    void damagedUntimedStack_data()
    {
        QTest::addColumn<qint64>("callsite");
        QTest::newRow("negative callsite") << qint64(-3);
        QTest::newRow("callsite 2^40") << (qint64(1) << 40);
    }

    void damagedUntimedStack()
    {
        QFETCH(qint64, callsite);
        const std::string file = path("damaged-untimed.runlens");
        QFile::remove(QString::fromStdString(file));
        QVERIFY(QFile::copy(QString::fromStdString(m_path), QString::fromStdString(file)));
        QCOMPARE(execRaw(file, "UPDATE stack_sample SET callsite_id = " + std::to_string(callsite) +
                                   " WHERE id = (SELECT min(id) FROM stack_sample)"),
                 std::string());
        auto db = RunDatabase::open(file, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        StackReader reader(**db);
        auto withUntimed = reader.totals({}, {}, true);
        QVERIFY(!withUntimed.ok());
        QCOMPARE(withUntimed.error().code, ErrorCode::Database);
        auto timedOnly = reader.totals({}, {}, false); // the untimed stacks are not read
        QVERIFY_OK(timedOnly);
        QCOMPARE(timedOnly->samples, bruteTotals(m_samples, {}, {}, false).samples);
    }

    // Small runs with times that stress the bucket arithmetic.
    void unusualTimes_data()
    {
        QTest::addColumn<std::vector<int64_t>>("first");  // times of the first import's samples
        QTest::addColumn<std::vector<int64_t>>("second"); // and of the second's
        const int64_t t = kBase + 5 * kMinute;
        QTest::newRow("9000 samples at one time, then 100 more")
            << std::vector<int64_t>(9000, t) << std::vector<int64_t>(100, t);
        std::vector<int64_t> zero;
        for (int64_t b : {-width(44), -width(40), -width(36), int64_t(0), width(36), width(40)})
            for (int64_t d : {int64_t(-1), int64_t(0), int64_t(1)})
                zero.push_back(b + d);
        QTest::newRow("times around zero, negative ones included") << zero << std::vector<int64_t>{-5, 7, width(36)};
        std::vector<int64_t> sparse; // one sample a day for ~11 years: every chunk spans 2^44 ns buckets
        for (int64_t d = 0; d < 4100; ++d)
            sparse.push_back(kBase + d * 24 * kHour + d % 7);
        QTest::newRow("one sample a day") << sparse << std::vector<int64_t>{kBase + int64_t{100} * 24 * kHour + 3};
    }

    void unusualTimes()
    {
        QFETCH(std::vector<int64_t>, first);
        QFETCH(std::vector<int64_t>, second);
        const std::string file = path("unusual.runlens");
        QFile::remove(QString::fromStdString(file));
        auto db = RunDatabase::open(file, OpenMode::Create);
        QVERIFY_OK(db);
        std::vector<GenSample> all;
        int64_t thread = 0;
        std::vector<int64_t> sites;
        for (const auto& [hash, run] : {std::pair{"one", first}, std::pair{"two", second}})
            QVERIFY_OK(writeImport(**db, hash, [&, &times = run](RunWriter& w) -> Status {
                RUNLENS_ASSIGN_OR_RETURN(auto node, w.node("node-a", "option", "UTC"));
                RUNLENS_ASSIGN_OR_RETURN(auto id, w.thread(node, "p", 1, "main", 1));
                thread = id;
                for (int f = 0; sites.size() < 5; ++f) {
                    RUNLENS_ASSIGN_OR_RETURN(auto frame, w.frame("f" + std::to_string(f), "", 0, ""));
                    RUNLENS_ASSIGN_OR_RETURN(auto site, w.callsite(0, frame));
                    sites.push_back(site);
                }
                for (size_t i = 0; i < times.size(); ++i) {
                    GenSample s{thread, times[i], sites[i % 5], 1 + static_cast<int64_t>(i % 2), 0.5 + double(i % 3)};
                    RUNLENS_TRY(w.stackSample(s.threadId, s.callsiteId, s.tsNs, s.count, s.weight));
                    all.push_back(s);
                }
                return okStatus();
            }));
        std::vector<TimeWindow> windows = {{},      {-width(36), -1}, {0, width(36) - 1}, {-width(40), width(40) - 1},
                                           {-1, 0}, {kMinNs, -1},     {0, kMaxNs}};
        std::set<int64_t> times;
        for (const GenSample& s : all)
            times.insert(*s.tsNs);
        size_t k = 0;
        for (int64_t ts : times) // at a sample's time, and 1 ns either side (some 60 of them)
            if (k++ % (times.size() / 60 + 1) == 0)
                for (TimeWindow w :
                     {TimeWindow{ts, ts}, TimeWindow{ts - 1, ts + 1}, TimeWindow{ts + 1, ts + width(36)}})
                    windows.push_back(w);
        for (int64_t a : {int64_t(36), int64_t(40), int64_t(44)})
            windows.push_back({ceilTo(kBase, static_cast<int>(a)), ceilTo(kBase, static_cast<int>(a)) + 30 * width(a)});
        StackReader reader(**db);
        for (const TimeWindow& w : windows) {
            auto got = reader.totals({}, w, false);
            QVERIFY_OK(got);
            const std::string diff = diffTotals(*got, bruteTotals(all, {}, w, false));
            QVERIFY2(diff.empty(), (windowText(w) + ": " + diff).c_str());
            auto samples = reader.samples(thread, w);
            QVERIFY_OK(samples);
            QCOMPARE(samples->size(), threadSamplesIn(all, thread, w));
        }
    }

    // ---- clock offsets ----

    void clockOffsetThreads()
    {
        auto db = RunDatabase::open(m_offsetPath, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        auto threads = StackReader(**db).threads();
        QVERIFY_OK(threads);
        QCOMPARE(threads->size(), m_threadIds.size());
        for (const StackThreadInfo& t : *threads) {
            const size_t k =
                static_cast<size_t>(std::find(m_threadIds.begin(), m_threadIds.end(), t.id) - m_threadIds.begin());
            QVERIFY(k < m_threadIds.size());
            QCOMPARE(t.node, std::string(kNodes[kThreads[k].node]));
            QCOMPARE(t.name, std::string(kThreads[k].name));
            QCOMPARE(t.clockOffsetNs, kThreads[k].node == 1 ? kOffset : int64_t(0));
            const ThreadTotals want = threadTotals(m_samples, t.id);
            QCOMPARE(t.timedSamples, want.timedSamples);
            QCOMPARE(t.untimedSamples, want.samples - want.timedSamples);
            QCOMPARE(t.firstNs.has_value(), want.firstNs.has_value());
            if (!want.firstNs) continue; // untimed stacks only
            QCOMPARE(*t.firstNs, *want.firstNs + t.clockOffsetNs);
            QCOMPARE(*t.lastNs, *want.lastNs + t.clockOffsetNs);
        }
    }

    void clockOffsetShiftsWindows()
    {
        auto db = RunDatabase::open(m_offsetPath, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        StackReader reader(**db);
        const int64_t b = m_threadIds[4]; // node-b, both imports
        const std::vector<GenSample> stored = threadSamples(b, {});
        int64_t first = kMaxNs, last = kMinNs;
        for (const GenSample& s : stored) {
            first = std::min(first, *s.tsNs);
            last = std::max(last, *s.tsNs);
        }
        // In shown time node-b's samples end 3 h earlier: its last 3 h (stored time) are outside this window.
        const TimeWindow shownRange{first + kOffset, last + kOffset};
        auto inShown = reader.totals({b}, shownRange, false);
        QVERIFY_OK(inShown);
        QCOMPARE(inShown->samples, bruteTotals(m_samples, {b}, {}, false).samples);
        auto storedRange = reader.totals({b}, {last + kOffset + 1, last}, false);
        QVERIFY_OK(storedRange);
        QCOMPARE(storedRange->samples, int64_t(0));
        // samples() returns shifted times.
        const TimeWindow w{first + kOffset + kHour, first + kOffset + kHour + 20 * kMinute};
        auto got = reader.samples(b, w);
        QVERIFY_OK(got);
        const std::vector<GenSample> want = threadSamples(b, w, m_offsets);
        QVERIFY(!want.empty());
        QCOMPARE(got->size(), want.size());
        for (const StackSample& s : *got)
            QVERIFY(s.tsNs >= w.fromNs && s.tsNs <= w.toNs);
        // So does stack_samples.
        const QString range = test::queryOne(m_offsetPath, "SELECT min(ts_ns), max(ts_ns) FROM stack_samples WHERE "
                                                           "thread_id = " +
                                                               std::to_string(b));
        QCOMPARE(range, QStringLiteral("%1|%2").arg(first + kOffset).arg(last + kOffset));
    }

    // A reader kept open sees what happens to the file after its first use: a later import adding samples to a
    // thread (no new thread, no new callsite), and a node's clock offset set.
    void readerInUseSeesChanges()
    {
        const std::string file = path("later.runlens");
        QFile::remove(QString::fromStdString(file));
        QVERIFY(QFile::copy(QString::fromStdString(m_path), QString::fromStdString(file)));
        auto db = RunDatabase::open(file, OpenMode::ReadWrite);
        QVERIFY_OK(db);
        StackReader reader(**db);
        const int64_t t = m_threadIds[1];
        const int64_t site = m_callsites[5];
        auto before = reader.totals({t}, {}, false);
        QVERIFY_OK(before);
        auto threadsBefore = reader.threads();
        QVERIFY_OK(threadsBefore);

        const int64_t late = m_lastNs + 2 * kHour; // after everything stored so far
        QVERIFY_OK(writeImport(**db, "later", [&](RunWriter& w) -> Status {
            for (int i = 0; i < 5000; ++i) // longer than any chunk so far
                if (Status s = w.stackSample(t, site, late + i * kSecond, 1, 2.0); !s) return s;
            return okStatus();
        }));
        auto after = reader.totals({t}, {}, false);
        QVERIFY_OK(after);
        QCOMPARE(after->samples, before->samples + 5000);
        QCOMPARE(after->self.samples.at(static_cast<size_t>(site)),
                 before->self.samples.at(static_cast<size_t>(site)) + 5000);
        auto lateOnly = reader.totals({t}, {late + 100 * kSecond, late + 199 * kSecond}, false);
        QVERIFY_OK(lateOnly);
        QCOMPARE(lateOnly->samples, int64_t(100));
        auto lateSamples = reader.samples(t, {late, kMaxNs});
        QVERIFY_OK(lateSamples);
        QCOMPARE(lateSamples->size(), size_t(5000));

        QVERIFY_OK(execSql((*db)->handle(), "UPDATE node SET clock_offset_ns = 1000 WHERE name = 'node-a'"));
        auto shifted = reader.samples(t, {late + 1000, late + 1000});
        QVERIFY_OK(shifted);
        QCOMPARE(shifted->size(), size_t(1));
        QCOMPARE(shifted->front().tsNs, late + 1000);
        auto threads = reader.threads();
        QVERIFY_OK(threads);
        for (const StackThreadInfo& info : *threads)
            if (info.id == t) QCOMPARE(info.lastNs, std::optional(late + 4999 * kSecond + 1000));
        auto cat = reader.catalog();
        QVERIFY_OK(cat);
        for (const StackThreadInfo& info : (*cat)->threads)
            if (info.id == t) QCOMPARE(info.clockOffsetNs, int64_t(1000));

        // Set by another program on its own connection.
        QCOMPARE(execRaw(file, "UPDATE node SET clock_offset_ns = -5000 WHERE name = 'node-a'"), std::string());
        auto other = reader.samples(t, {late - 5000, late - 5000});
        QVERIFY_OK(other);
        QCOMPARE(other->size(), size_t(1));
        auto moved = reader.totals({t}, {late - 5000, late - 5000}, false);
        QVERIFY_OK(moved);
        QCOMPARE(moved->samples, int64_t(1));
    }

    // ---- samples() ----

    void samplesInWindow_data()
    {
        QTest::addColumn<int>("thread"); // index into kThreads
        QTest::addColumn<TimeWindow>("window");
        QTest::newRow("whole thread, two imports") << 0 << TimeWindow{};
        QTest::newRow("whole thread, varying weights") << 5 << TimeWindow{};
        QTest::newRow("thread with untimed stacks only") << 6 << TimeWindow{};
        QTest::newRow("before the data") << 1 << TimeWindow{kMinNs, m_firstNs - 1};
        QTest::newRow("after the data, to INT64_MAX") << 1 << TimeWindow{m_lastNs + 1, kMaxNs};
        const int64_t b44 = ceilTo(m_firstNs, 44);
        QTest::newRow("one 2^40 ns bucket") << 4 << TimeWindow{b44 + width(40), b44 + 2 * width(40) - 1};
        QTest::newRow("a boundary's sample") << 3 << TimeWindow{m_boundaries[1], m_boundaries[1]};
        std::mt19937_64 rng(17);
        for (int i = 0; i < 40; ++i) {
            const int64_t from = m_firstNs + static_cast<int64_t>(rng() % static_cast<uint64_t>(m_lastNs - m_firstNs));
            const int64_t length = static_cast<int64_t>(rng() % static_cast<uint64_t>(i % 2 ? 2 * kHour : kMinute));
            QTest::addRow("random window %d", i)
                << static_cast<int>(rng() % kTimedThreads) << TimeWindow{from, from + length};
        }
    }

    void samplesInWindow()
    {
        QFETCH(int, thread);
        QFETCH(TimeWindow, window);
        auto db = RunDatabase::open(m_path, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        const int64_t id = m_threadIds[static_cast<size_t>(thread)];
        auto got = StackReader(**db).samples(id, window);
        QVERIFY_OK(got);
        for (size_t i = 1; i < got->size(); ++i)
            QVERIFY2((*got)[i - 1].tsNs <= (*got)[i].tsNs, "not in time order");
        std::vector<SampleKey> g, w;
        for (const StackSample& s : *got)
            g.push_back(key(s.tsNs, s.callsiteId, s.count, s.weight));
        for (const GenSample& s : threadSamples(id, window))
            w.push_back(key(*s.tsNs, s.callsiteId, s.count, s.weight));
        std::sort(g.begin(), g.end());
        std::sort(w.begin(), w.end());
        QCOMPARE(g.size(), w.size());
        QVERIFY2(g == w, "other samples than those in the window");
    }

    void samplesOfUnknownThread()
    {
        auto db = RunDatabase::open(m_path, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        auto got = StackReader(**db).samples(9999, {});
        QVERIFY(!got.ok());
        QCOMPARE(got.error().code, ErrorCode::Usage);
    }

    // ---- stack_samples and stack_summary ----

    void stackSamplesPerThread()
    {
        const QStringList rows = test::queryRows(
            m_path, "SELECT thread_id, count(*), sum(sample_count), total(weight), sum(ts_ns IS NULL), "
                    "min(ts_ns), max(ts_ns), count(DISTINCT import_id) FROM stack_samples GROUP BY thread_id");
        QCOMPARE(rows.size(), static_cast<qsizetype>(m_threadIds.size()));
        for (const QString& row : rows) {
            const QStringList c = row.split(QLatin1Char('|'));
            QCOMPARE(c.size(), 8);
            const ThreadTotals want = threadTotals(m_samples, c[0].toLongLong());
            QCOMPARE(c[1].toLongLong(), want.rows);
            QCOMPARE(c[2].toLongLong(), want.samples);
            QVERIFY2(close(c[3].toDouble(), want.weight), qPrintable(row));
            QCOMPARE(c[4].toLongLong(), want.untimedRows);
            QCOMPARE(c[5], nullable(want.firstNs)); // NULL when all untimed
            QCOMPARE(c[6], nullable(want.lastNs));
            QCOMPARE(c[7].toLongLong(), static_cast<qlonglong>(want.imports.size()));
        }
    }

    void stackSamplesOrder()
    {
        // Rows come per thread: the timed ones in time order, then the untimed ones (ts_ns NULL).
        const QStringList rows = test::queryRows(m_path, "SELECT thread_id, ts_ns FROM stack_samples");
        QCOMPARE(rows.size(), static_cast<qsizetype>(m_samples.size()));
        std::set<int64_t> done;
        int64_t thread = -1, prevTs = kMinNs;
        bool inUntimed = false;
        for (const QString& row : rows) {
            const QStringList c = row.split(QLatin1Char('|'));
            const int64_t id = c[0].toLongLong();
            if (id != thread) {
                QVERIFY2(done.insert(id).second, "a thread's rows are not together");
                thread = id;
                prevTs = kMinNs;
                inUntimed = false;
            }
            if (c[1].isEmpty()) {
                inUntimed = true;
                continue;
            }
            QVERIFY2(!inUntimed, "a timed row after the untimed ones");
            QVERIFY2(c[1].toLongLong() >= prevTs, qPrintable(row));
            prevTs = c[1].toLongLong();
        }
    }

    void stackSamplesFilter_data()
    {
        QTest::addColumn<int64_t>("thread");
        QTest::addColumn<TimeWindow>("window");
        for (size_t t = 0; t < m_threadIds.size(); ++t)
            QTest::addRow("%s %s", kNodes[kThreads[t].node], kThreads[t].name) << m_threadIds[t] << TimeWindow{};
        QTest::newRow("no such thread") << int64_t(9999) << TimeWindow{};
        QTest::newRow("two imports, 2 h") << m_threadIds[0] << TimeWindow{kBase + 2 * kHour, kBase + 4 * kHour};
        QTest::newRow("a boundary's sample") << m_threadIds[2] << TimeWindow{m_boundaries[0], m_boundaries[0]};
    }

    void stackSamplesFilter()
    {
        QFETCH(int64_t, thread);
        QFETCH(TimeWindow, window);
        const bool unbounded = window.fromNs == kMinNs && window.toNs == kMaxNs;
        std::string sql = "SELECT count(*), sum(sample_count), min(thread_id), max(thread_id), count(*) - count(ts_ns) "
                          "FROM stack_samples WHERE thread_id = " +
                          std::to_string(thread);
        if (!unbounded)
            sql += " AND ts_ns BETWEEN " + std::to_string(window.fromNs) + " AND " + std::to_string(window.toNs);
        int64_t n = 0, samples = 0, untimed = 0;
        for (const GenSample& s : m_samples) {
            if (s.threadId != thread) continue;
            if (!s.tsNs && !unbounded) continue;
            if (s.tsNs && (*s.tsNs < window.fromNs || *s.tsNs > window.toNs)) continue;
            ++n;
            samples += s.count;
            untimed += s.tsNs ? 0 : 1;
        }
        const QString want = n == 0 ? QStringLiteral("0||||0")
                                    : QStringLiteral("%1|%2|%3|%3|%4").arg(n).arg(samples).arg(thread).arg(untimed);
        QCOMPARE(test::queryOne(m_path, sql), want);
    }

    void stackSummaryView()
    {
        const QStringList rows = test::queryRows(m_path, "SELECT node, process, thread, samples, total_weight, pid, "
                                                         "tid, untimed_rows, first_ns, last_ns FROM stack_summary");
        QCOMPARE(rows.size(), static_cast<qsizetype>(m_threadIds.size()));
        for (const QString& row : rows) {
            const QStringList c = row.split(QLatin1Char('|'));
            QCOMPARE(c.size(), 10);
            size_t k = 0;
            while (k < std::size(kThreads) &&
                   !(c[0] == QLatin1String(kNodes[kThreads[k].node]) && c[2] == QLatin1String(kThreads[k].name) &&
                     c[6].toLongLong() == kThreads[k].tid))
                ++k;
            QVERIFY2(k < std::size(kThreads), qPrintable(row));
            QCOMPARE(c[1], QLatin1String(kThreads[k].process));
            QCOMPARE(c[5].toLongLong(), kThreads[k].pid);
            const ThreadTotals want = threadTotals(m_samples, m_threadIds[k]);
            QCOMPARE(c[3].toLongLong(), want.samples);
            QVERIFY2(close(c[4].toDouble(), want.weight), qPrintable(row));
            QCOMPARE(c[7].toLongLong(), want.untimedRows);
            QCOMPARE(c[8], nullable(want.firstNs));
            QCOMPARE(c[9], nullable(want.lastNs));
        }
    }

    // ---- cancel ----

    void cancelledTotals()
    {
        auto db = RunDatabase::open(m_path, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        StackReader reader(**db);
        std::atomic<bool> cancel{true};
        for (const std::vector<int64_t>& threads : {std::vector<int64_t>{}, std::vector<int64_t>{m_threadIds[3]}}) {
            auto got = reader.totals(threads, {}, true, &cancel);
            QVERIFY(!got.ok());
            QCOMPARE(got.error().code, ErrorCode::Cancelled);
        }
        cancel = false; // not set: the same flag lets the totals run to the end
        auto done = reader.totals({}, {}, true, &cancel);
        QVERIFY_OK(done);
        QCOMPARE(done->samples, bruteTotals(m_samples, {}, {}, true).samples);
    }
};

QTEST_GUILESS_MAIN(TestStackStore)
#include "tst_stack_store.moc"
