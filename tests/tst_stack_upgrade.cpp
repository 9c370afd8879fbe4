// The upgrade of schema version 1 stack files: a version-1 database written by hand opens, its samples read back
// as the brute-force model says, and new samples can be added to it.

#include "tests/stack_store_support.h"

#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace runlens;
using namespace runlens::store;
using namespace runlens::test::stack_store;

namespace {

// The stack tables of schema version 1.
constexpr const char* kSchemaV1Stacks = R"sql(
CREATE TABLE run (id INTEGER PRIMARY KEY, name TEXT NOT NULL, created_ns INTEGER NOT NULL, creator TEXT NOT NULL);
CREATE TABLE node (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, time_zone TEXT NOT NULL DEFAULT '',
    clock_offset_ns INTEGER NOT NULL DEFAULT 0, name_source TEXT NOT NULL DEFAULT '');
CREATE TABLE import (id INTEGER PRIMARY KEY, path TEXT NOT NULL, size_bytes INTEGER NOT NULL,
    content_hash TEXT NOT NULL UNIQUE, format TEXT NOT NULL, importer_version INTEGER NOT NULL, options TEXT NOT NULL,
    node_id INTEGER REFERENCES node(id), started_ns INTEGER NOT NULL, duration_ms REAL NOT NULL,
    rows_read INTEGER NOT NULL, points INTEGER NOT NULL, samples INTEGER NOT NULL, diagnostics INTEGER NOT NULL,
    data_loss INTEGER NOT NULL, summary TEXT NOT NULL DEFAULT '');
CREATE INDEX import_size ON import(size_bytes);
CREATE TABLE frame (id INTEGER PRIMARY KEY, name TEXT NOT NULL, file TEXT NOT NULL DEFAULT '',
    line INTEGER NOT NULL DEFAULT 0, module TEXT NOT NULL DEFAULT '', UNIQUE (name, file, line, module));
CREATE TABLE callsite (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL, frame_id INTEGER NOT NULL
    REFERENCES frame(id), depth INTEGER NOT NULL, UNIQUE (parent_id, frame_id));
CREATE TABLE thread (id INTEGER PRIMARY KEY, node_id INTEGER NOT NULL REFERENCES node(id), process TEXT NOT NULL,
    pid INTEGER NOT NULL DEFAULT 0, name TEXT NOT NULL, tid INTEGER NOT NULL DEFAULT 0,
    UNIQUE (node_id, process, pid, name, tid));
CREATE TABLE stack_sample (id INTEGER PRIMARY KEY, thread_id INTEGER NOT NULL REFERENCES thread(id),
    callsite_id INTEGER NOT NULL REFERENCES callsite(id), ts_ns INTEGER, sample_count INTEGER NOT NULL,
    weight REAL NOT NULL, import_id INTEGER NOT NULL REFERENCES import(id));
CREATE INDEX stack_sample_thread_ts ON stack_sample(thread_id, ts_ns);
CREATE VIEW stack_summary AS
SELECT n.name AS node, t.process AS process, t.name AS thread,
       SUM(ss.sample_count) AS samples, SUM(ss.weight) AS total_weight,
       t.pid AS pid, t.tid AS tid,
       SUM(ss.ts_ns IS NULL) AS untimed_rows
FROM stack_sample ss JOIN thread t ON t.id = ss.thread_id JOIN node n ON n.id = t.node_id
GROUP BY t.id;
)sql";

// The samples of the version-1 file: 5000 timed ones per thread (thread 1's of both imports, interleaved) and seven
// untimed ones, shuffled.
std::vector<GenSample> samplesOfVersion1(const std::vector<int64_t>& sites)
{
    std::vector<GenSample> originals;
    std::mt19937_64 rng(23);
    std::vector<int64_t> unused;
    for (int64_t thread : {1, 2, 3}) {
        auto v =
            timeline(rng, thread, kThreads[static_cast<size_t>(thread)], kBase + thread * kMinute, 5000, sites, unused);
        for (size_t i = 0; i < v.size(); ++i) // thread 1 has samples of both imports, interleaved
            v[i].importId = thread == 3 || (thread == 1 && i % 2) ? 2 : 1;
        originals.insert(originals.end(), v.begin(), v.end());
    }
    for (int i = 0; i < 7; ++i) {
        GenSample s;
        s.threadId = 1 + i % 3;
        s.callsiteId = sites[static_cast<size_t>(i)];
        s.count = 5 + i;
        s.weight = 2.5 * i;
        s.importId = 2;
        originals.push_back(s);
    }
    std::shuffle(originals.begin(), originals.end(), rng); // rows not in time order
    return originals;
}

// A version-1 file at `file` as runlens 0.1 wrote it: two nodes, three threads, 21 callsites and the samples of
// samplesOfVersion1, which `originals` receives.
void writeVersion1(const std::string& file, std::vector<GenSample>& originals)
{
    QCOMPARE(execRaw(file, kSchemaV1Stacks), std::string());
    sqlite3* h = nullptr;
    QCOMPARE(sqlite3_open(file.c_str(), &h), SQLITE_OK);
    const std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(h, sqlite3_close);
    QVERIFY_OK(execSql(h, "BEGIN; INSERT INTO run VALUES (1, 'v1', 1, 'runlens 0.1');"
                          "INSERT INTO node(id, name) VALUES (1, 'node-a'), (2, 'node-b');"
                          "INSERT INTO import VALUES (1, 'a.perf', 1, 'h1', 'perf-script', 1, '{}', 1, 0, 0, "
                          "0, 0, 0, 0, 0, ''), (2, 'b.folded', 1, 'h2', 'folded', 1, '{}', 2, 0, 0, 0, 0, "
                          "0, 0, 0, '');"
                          "INSERT INTO thread VALUES (1, 1, 'train', 10, 'MainThread', 10), "
                          "(2, 2, 'train', 20, 'MainThread', 20), (3, 2, 'train', 20, 'loader', 21);"));
    std::vector<int64_t> sites, depth{-1}; // callsite id / 3 is its parent
    for (int64_t id = 1; id <= 20; ++id) {
        depth.push_back(depth[static_cast<size_t>(id / 3)] + 1);
        const std::string n = std::to_string(id);
        QVERIFY_OK(
            execSql(h, ("INSERT INTO frame(id, name) VALUES (" + n + ", 'f" + n + "'); INSERT INTO callsite VALUES (" +
                        n + ", " + std::to_string(id / 3) + ", " + n + ", " + std::to_string(depth.back()) + ")")
                           .c_str()));
        sites.push_back(id);
    }
    originals = samplesOfVersion1(sites);
    auto ins = Statement::prepare(h, "INSERT INTO stack_sample(thread_id, callsite_id, ts_ns, sample_count, "
                                     "weight, import_id) VALUES (?,?,?,?,?,?)");
    QVERIFY_OK(ins);
    for (const GenSample& s : originals) {
        ins->bind(1, s.threadId).bind(2, s.callsiteId).bind(4, s.count).bind(5, s.weight).bind(6, s.importId);
        if (s.tsNs)
            ins->bind(3, *s.tsNs);
        else
            ins->bindNull(3);
        QVERIFY_OK(ins->exec());
    }
    QVERIFY_OK(execSql(
        h,
        ("PRAGMA application_id = " + std::to_string(kApplicationId) + "; PRAGMA user_version = 1; COMMIT;").c_str()));
}

// Read-only (as `runlens query` opens it), the file is refused with a message that says how to upgrade it.
void checkRefusedReadOnly(const std::string& file)
{
    auto ro = RunDatabase::open(file, OpenMode::ReadOnly);
    QVERIFY(!ro.ok());
    QCOMPARE(ro.error().code, ErrorCode::Unsupported);
    const std::string message = ro.error().toString();
    for (const char* part : {"schema version 1", "open it for writing", "upgrade"})
        QVERIFY2(message.find(part) != std::string::npos, message.c_str());
    auto q = runUserQuery(file, "SELECT 1", nullptr, nullptr);
    QVERIFY(!q.ok());
    QVERIFY2(q.error().toString().find("upgrade") != std::string::npos, q.error().toString().c_str());
}

// The upgraded file's tables, and its totals read back as the brute-force model says.
void checkUpgradedTotals(RunDatabase& db, const std::vector<GenSample>& originals)
{
    QCOMPARE(queryInt(db, "PRAGMA user_version"), int64_t(kSchemaVersion));
    QCOMPARE(queryInt(db, "SELECT count(*) FROM stack_sample"), int64_t(7)); // the untimed rows stay
    QCOMPARE(queryInt(db, "SELECT count(*) FROM stack_sample WHERE ts_ns IS NOT NULL"), int64_t(0));
    QVERIFY(queryInt(db, "SELECT count(*) FROM stack_chunk") >= 6); // 3 threads x 5000 samples
    QVERIFY(queryInt(db, "SELECT count(*) FROM stack_bucket") > 0);
    QCOMPARE(queryInt(db, "SELECT count(DISTINCT import_id) FROM stack_chunk WHERE thread_id = 1"), int64_t(2));
    QCOMPARE(queryInt(db, "SELECT count(DISTINCT import_id) FROM stack_chunk WHERE thread_id = 3"), int64_t(1));
    QCOMPARE(queryInt(db, "SELECT min(import_id) FROM stack_chunk WHERE thread_id = 3"), int64_t(2));

    StackReader reader(db);
    auto cat = reader.catalog();
    QVERIFY_OK(cat);
    QCOMPARE((*cat)->callsiteCount(), size_t(21));
    QCOMPARE((*cat)->parent[7], int32_t(2));
    std::mt19937_64 rng(29);
    std::vector<std::pair<TimeWindow, std::vector<int64_t>>> windows = {
        {{}, {}}, {{kBase, kBase + 30 * kMinute}, {}}, {{}, {2, 3}}};
    for (int i = 0; i < 30; ++i) {
        const int64_t from = kBase + static_cast<int64_t>(rng() % static_cast<uint64_t>(kHour));
        windows.push_back({{from, from + static_cast<int64_t>(rng() % static_cast<uint64_t>(kHour))},
                           {1 + static_cast<int64_t>(rng() % 3)}});
    }
    for (const auto& [w, threads] : windows)
        for (bool untimed : {false, true}) {
            auto got = reader.totals(threads, w, untimed);
            QVERIFY_OK(got);
            const std::string diff = diffTotals(*got, bruteTotals(originals, threads, w, untimed));
            QVERIFY2(diff.empty(), (windowText(w) + ": " + diff).c_str());
        }
}

// stack_samples gives back every original row, timed or not.
void checkSampleRows(const std::string& file, const std::vector<GenSample>& originals)
{
    std::vector<std::tuple<int64_t, std::string, int64_t, int64_t, double, int64_t>> got, want;
    auto n =
        runUserQuery(file, "SELECT thread_id, ts_ns, callsite_id, sample_count, weight, import_id FROM stack_samples",
                     {}, [&](const QueryRow& r) {
                         got.emplace_back(std::stoll(r.values[0]), r.values[1], std::stoll(r.values[2]),
                                          std::stoll(r.values[3]), std::stod(r.values[4]), std::stoll(r.values[5]));
                     });
    QVERIFY_OK(n);
    for (const GenSample& s : originals)
        want.emplace_back(s.threadId, s.tsNs ? std::to_string(*s.tsNs) : std::string(), s.callsiteId, s.count, s.weight,
                          s.importId);
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    QCOMPARE(got.size(), want.size());
    QVERIFY2(got == want, "stack_samples differs from the version 1 rows");
}

// stack_summary, re-created for the new tables.
void checkSummary(const std::string& file, const std::vector<GenSample>& originals)
{
    const QStringList summary = test::queryRows(file, "SELECT node, thread, samples, untimed_rows, first_ns IS "
                                                      "NOT NULL FROM stack_summary ORDER BY node, thread");
    QStringList expected;
    for (const auto& [node, thread, id] : {std::tuple{"node-a", "MainThread", 1}, std::tuple{"node-b", "MainThread", 2},
                                           std::tuple{"node-b", "loader", 3}}) {
        const ThreadTotals t = threadTotals(originals, id);
        expected << QStringLiteral("%1|%2|%3|%4|1")
                        .arg(QLatin1String(node), QLatin1String(thread))
                        .arg(t.samples)
                        .arg(t.untimedRows);
    }
    QCOMPARE(summary, expected);
}

} // namespace

class TestStackUpgrade : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string path(const char* name) const { return m_dir.filePath(QString::fromLatin1(name)).toStdString(); }

private Q_SLOTS:
    void upgradeFromVersion1()
    {
        const std::string file = path("v1.runlens");
        std::vector<GenSample> originals;
        writeVersion1(file, originals);
        if (QTest::currentTestFailed()) return;
        checkRefusedReadOnly(file);
        if (QTest::currentTestFailed()) return;

        auto rw = RunDatabase::open(file, OpenMode::ReadWrite);
        QVERIFY_OK(rw);
        checkUpgradedTotals(**rw, originals);
        if (QTest::currentTestFailed()) return;
        checkSampleRows(file, originals);
        if (QTest::currentTestFailed()) return;
        checkSummary(file, originals);
        if (QTest::currentTestFailed()) return;

        // Upgraded, the file opens read-only and takes further imports.
        rw->reset(); // closes the file
        QVERIFY_OK(RunDatabase::open(file, OpenMode::ReadOnly));
        auto again = RunDatabase::open(file, OpenMode::ReadWrite);
        QVERIFY_OK(again);
        QVERIFY_OK(writeImport(**again, "h3", [](RunWriter& w) { return w.stackSample(1, 4, kBase, 3, 1.5); }));
        auto after = StackReader(**again).totals({1}, {kBase, kBase}, false);
        QVERIFY_OK(after);
        QCOMPARE(after->self.samples.at(4), 3 + bruteTotals(originals, {1}, {kBase, kBase}, false).self[4].samples);
    }
};

QTEST_GUILESS_MAIN(TestStackUpgrade)
#include "tst_stack_upgrade.moc"
