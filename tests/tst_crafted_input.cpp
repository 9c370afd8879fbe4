// Crafted inputs that once reached undefined behaviour or unbounded allocations: chunk blobs whose declared sizes
// are far beyond what their bytes hold, stack catalogues with ids outside the tables, decompression bombs,
// timestamps at the int64 limits and very deep stacks. Each must give a clear error or a bounded result, quickly.

#include "analysis/flame/flame_diff.h"
#include "analysis/flame/flame_export.h"
#include "analysis/flame/flame_layout.h"
#include "analysis/flame/flame_tree.h"
#include "analysis/store/chunk_codec.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/stack_codec.h"
#include "analysis/store/stack_reader.h"
#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <limits>
#include <memory>
#include <sqlite3.h>
#include <string>

using namespace runlens;
using namespace runlens::store;
using namespace runlens::importers;
using test::execRaw;
using test::varintBytes;
using test::zstdFrame;

namespace {

// An import with its diagnostics.
struct Imported : test::Imported
{
    std::vector<std::string> diagnostics; // "kind: message"
};

Imported importInto(const std::string& db, const std::string& path, ImportOptions options = {})
{
    if (options.node.empty()) options.node = "node1";
    Imported result{test::importWith(db, path, options), {}};
    for (const DiagnosticEntry& d : result.result.diagnostics.entries())
        result.diagnostics.push_back(d.kind + ": " + d.message);
    return result;
}

bool contains(const std::string& text, const char* part)
{
    return text.find(part) != std::string::npos;
}

bool anyContains(const std::vector<std::string>& lines, const char* part)
{
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return contains(l, part); });
}

std::string joined(const std::vector<std::string>& lines)
{
    std::string out;
    for (const std::string& l : lines)
        out += l + "\n";
    return out;
}

ImportOptions withOptions(std::initializer_list<std::pair<const char*, const char*>> extra, const char* format = "")
{
    ImportOptions o;
    o.format = format;
    o.timeZone = "UTC";
    for (const auto& [k, v] : extra)
        o.extra[k] = v;
    return o;
}

} // namespace

class TestCraftedInput : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        m_tmp = std::make_unique<QTemporaryDir>();
        QVERIFY(m_tmp->isValid());
    }

    // --- Chunk codecs: declared sizes bounded by what the bytes can hold --------------------------------------

    void pointChunkBombs_data()
    {
        QTest::addColumn<QByteArray>("blob");
        QTest::addColumn<QString>("expected");
        const std::string head = varintBytes(1) + varintBytes(500'000'000) + varintBytes(0);
        // A 32 KB frame that holds 1 GiB: once 500 M points (12 GiB) were allocated from it.
        QTest::newRow("1 GiB frame, 500M points")
            << QByteArray::fromStdString(zstdFrame(head, 1ull << 30)) << QStringLiteral("bad zstd frame header");
        // Under the raw cap, but far more points than any chunk the writer makes.
        QTest::newRow("60 MiB frame, 20M points")
            << QByteArray::fromStdString(
                   zstdFrame(varintBytes(1) + varintBytes(20'000'000) + varintBytes(0), 60ull << 20))
            << QStringLiteral("20000000 points declared");
        // Fewer than the cap, more than the bytes can hold (two bytes a point at least).
        QTest::newRow("1 MiB frame, 900k points")
            << QByteArray::fromStdString(zstdFrame(varintBytes(1) + varintBytes(900'000) + varintBytes(0), 1ull << 20))
            << QStringLiteral("900000 points declared");
    }
    void pointChunkBombs()
    {
        QFETCH(QByteArray, blob);
        QFETCH(QString, expected);
        QElapsedTimer timer;
        timer.start();
        auto got = decodeChunk(blob.constData(), static_cast<size_t>(blob.size()));
        QVERIFY(!got.ok());
        QVERIFY2(contains(got.error().message, expected.toUtf8().constData()), got.error().message.c_str());
        QVERIFY2(timer.elapsed() < 5000, "a crafted chunk took seconds to reject");
    }

    void stackChunkBombs_data()
    {
        QTest::addColumn<QByteArray>("blob");
        QTest::addColumn<QString>("expected");
        QTest::newRow("1 GiB frame, 300M samples")
            << QByteArray::fromStdString(zstdFrame(varintBytes(1) + varintBytes(300'000'000), 1ull << 30))
            << QStringLiteral("bad zstd frame");
        QTest::newRow("60 MiB frame, 15M samples")
            << QByteArray::fromStdString(zstdFrame(varintBytes(1) + varintBytes(15'000'000), 60ull << 20))
            << QStringLiteral("15000000 samples declared");
        QTest::newRow("1 MiB frame, 600k samples")
            << QByteArray::fromStdString(zstdFrame(varintBytes(1) + varintBytes(600'000), 1ull << 20))
            << QStringLiteral("600000 samples declared");
        // A callsite id above INT64_MAX would come out negative.
        QTest::newRow("callsite 2^63") << QByteArray::fromStdString(
                                              test::zstdCompress(varintBytes(1) + varintBytes(1) + varintBytes(0) +
                                                                 varintBytes(uint64_t{1} << 63) + varintBytes(3)))
                                       << QStringLiteral("callsite id 9223372036854775808 out of range");
    }
    void stackChunkBombs()
    {
        QFETCH(QByteArray, blob);
        QFETCH(QString, expected);
        QElapsedTimer timer;
        timer.start();
        auto got = decodeStackSamples(blob.constData(), static_cast<size_t>(blob.size()));
        QVERIFY(!got.ok());
        QVERIFY2(contains(got.error().message, expected.toUtf8().constData()), got.error().message.c_str());
        QVERIFY2(timer.elapsed() < 5000, "a crafted chunk took seconds to reject");
    }

    void summaryCountBounded()
    {
        // A summary claiming 2^40 totals in 12 bytes.
        const std::string blob = varintBytes(1) + varintBytes(uint64_t{1} << 40) + std::string(6, '\0');
        auto got = decodeCallsiteTotals(blob.data(), blob.size());
        QVERIFY(!got.ok());
        QVERIFY2(contains(got.error().message, "bad summary count"), got.error().message.c_str());
    }

    // --- Stack catalogue: ids read from the file are checked where they are read ------------------------------

    void damagedCatalogue_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("expected");
        const auto leaf = QStringLiteral("(SELECT max(id) FROM callsite)");
        QTest::newRow("negative parent") << QStringLiteral("UPDATE callsite SET parent_id = -1 WHERE id = %1").arg(leaf)
                                         << QStringLiteral("has parent -1");
        QTest::newRow("parent after the child")
            << QStringLiteral("UPDATE callsite SET parent_id = 1000 WHERE id = 1") << QStringLiteral("has parent 1000");
        QTest::newRow("parent is itself") << QStringLiteral("UPDATE callsite SET parent_id = 2 WHERE id = 2")
                                          << QStringLiteral("callsite 2 has parent 2");
        QTest::newRow("negative frame") << QStringLiteral("UPDATE callsite SET frame_id = -5 WHERE id = 2")
                                        << QStringLiteral("callsite 2 has frame -5");
        QTest::newRow("frame past the table") << QStringLiteral("UPDATE callsite SET frame_id = 100000 WHERE id = 2")
                                              << QStringLiteral("callsite 2 has frame 100000");
        QTest::newRow("wrong depth") << QStringLiteral("UPDATE callsite SET depth = -1 WHERE id = 2")
                                     << QStringLiteral("callsite 2 has depth -1");
        QTest::newRow("negative callsite id") << QStringLiteral("UPDATE callsite SET id = -9 WHERE id = %1").arg(leaf)
                                              << QStringLiteral("callsite id -9");
        QTest::newRow("callsite id 2^40")
            << QStringLiteral("UPDATE callsite SET id = 1099511627776 WHERE id = %1").arg(leaf)
            << QStringLiteral("callsite id 1099511627776 with");
        QTest::newRow("frame id 2^40") << QStringLiteral("UPDATE frame SET id = 1099511627776 WHERE id = 1")
                                       << QStringLiteral("frame id 1099511627776 with");
        QTest::newRow("frame id 0") << QStringLiteral("UPDATE frame SET id = 0 WHERE id = 1")
                                    << QStringLiteral("frame id 0");
    }
    void damagedCatalogue()
    {
        QFETCH(QString, sql);
        QFETCH(QString, expected);
        const std::string run = m_tmp->filePath(QStringLiteral("stacks.runlens")).toStdString();
        const std::string folded =
            test::writeFile(*m_tmp, QStringLiteral("stacks.folded"), "main;a;b 10\nmain;a 5\nmain;c;b 7\nidle 6\n");
        const Imported r = importInto(run, folded);
        QCOMPARE(r.outcome, FileOutcome::Imported);
        {
            auto db = RunDatabase::open(run, OpenMode::ReadOnly);
            QVERIFY_OK(db);
            QVERIFY_OK(StackReader(**db).catalog()); // sound before the damage
        }
        QCOMPARE(execRaw(run, sql.toStdString()), std::string());
        auto db = RunDatabase::open(run, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        StackReader reader(**db);
        auto cat = reader.catalog();
        QVERIFY(!cat.ok());
        QCOMPARE(cat.error().code, ErrorCode::Format);
        QVERIFY2(contains(cat.error().message, "corrupt stack catalogue"), cat.error().message.c_str());
        QVERIFY2(contains(cat.error().message, expected.toUtf8().constData()), cat.error().message.c_str());
        analysis::FlameSource source(**db, nullptr);
        auto tree = source.tree({});
        QVERIFY(!tree.ok());
        QCOMPARE(tree.error().code, ErrorCode::Format);
    }

    // --- Whole-document importers: the decoded size is capped ----------------------------------------------

    void decompressionBomb_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("head");
        QTest::newRow("chrome-trace") << QStringLiteral("chrome-trace") << QString::fromUtf8("{\"traceEvents\": [");
        QTest::newRow("speedscope")
            << QStringLiteral("speedscope")
            << QString::fromUtf8("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\", \"shared\": ");
        QTest::newRow("hf-trainer-state")
            << QStringLiteral("hf-trainer-state") << QString::fromUtf8("{\"global_step\": 10, \"log_history\": [");
    }
    void decompressionBomb()
    {
        QFETCH(QString, format);
        QFETCH(QString, head);
        // 32 KB of zstd that decodes to 1 GiB of blanks; the cap here is 1 MiB (the default's 4 GiB would need
        // that much memory to reach).
        const std::string bomb = zstdFrame(head.toStdString(), 1ull << 30, ' ', false);
        QVERIFY(bomb.size() < 40'000);
        const std::string file = test::writeFile(*m_tmp, QStringLiteral("bomb.json.zst"), bomb);
        QElapsedTimer timer;
        timer.start();
        const Imported r = importInto(m_tmp->filePath(QStringLiteral("bomb.runlens")).toStdString(), file,
                                      withOptions({{"max_input", "1MiB"}}, format.toUtf8().constData()));
        QCOMPARE(r.outcome, FileOutcome::Failed);
        QVERIFY2(contains(r.error, "bomb.json.zst"), r.error.c_str());
        QVERIFY2(contains(r.error, "larger than 1 MiB"), r.error.c_str());
        QVERIFY2(contains(r.error, "max_input"), r.error.c_str());
        QVERIFY2(timer.elapsed() < 10'000, "a bomb took long to stop");
    }

    void maxInputOption()
    {
        const std::string file = test::writeFile(*m_tmp, QStringLiteral("t.json"), "{\"traceEvents\": []}");
        const std::string run = m_tmp->filePath(QStringLiteral("opt.runlens")).toStdString();
        const Imported bad = importInto(run, file, withOptions({{"max_input", "lots"}}, "chrome-trace"));
        QCOMPARE(bad.outcome, FileOutcome::Failed);
        QVERIFY2(contains(bad.error, "max_input=lots"), bad.error.c_str());
        const Imported tooBig = importInto(run, file, withOptions({{"max_input", "5GiB"}}, "speedscope"));
        QCOMPARE(tooBig.outcome, FileOutcome::Failed);
        QVERIFY2(contains(tooBig.error, "at most"), tooBig.error.c_str());
    }

    // --- Timestamps at the int64 limits: a diagnostic and a skipped value, never overflow ------------------

    void perfTimeBeyondInt64()
    {
        const std::string perf = "python 123/123 [001] 9999999999.999999: 1 cycles:\n"
                                 "\t    7f0000001000 train_step+0x10 (/usr/bin/python3)\n\n"
                                 "python 123/123 [001] 100.000000: 1 cycles:\n"
                                 "\t    7f0000001000 train_step+0x10 (/usr/bin/python3)\n\n";
        const std::string file = test::writeFile(*m_tmp, QStringLiteral("perf.txt"), perf);
        const std::string run = m_tmp->filePath(QStringLiteral("perf.runlens")).toStdString();
        // Anchored in 2261: the first sample would land past int64; the second is placed.
        const Imported r = importInto(run, file, withOptions({{"anchor", "9100000000"}}, "perf-script"));
        QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
        QVERIFY2(anyContains(r.diagnostics, "bad_timestamp: sample of"), joined(r.diagnostics).c_str());
        QCOMPARE(test::queryOne(run, "SELECT sum(samples) FROM stack_chunk"), QStringLiteral("1"));
        // Unanchored both are kept untimed: the time is not used.
        const std::string run2 = m_tmp->filePath(QStringLiteral("perf2.runlens")).toStdString();
        const Imported u = importInto(run2, file, withOptions({}, "perf-script"));
        QVERIFY2(u.outcome == FileOutcome::Imported, u.error.c_str());
        QCOMPARE(test::queryOne(run2, "SELECT sum(sample_count) FROM stack_sample"), QStringLiteral("2"));
    }

    void nvsmiYearBeyondInt64()
    {
        std::string csv = test::nvsmiCsv(1, 3);
        csv += "2263/01/02 03:00:05.000, 0, NVIDIA H200, 00000000:0A:00.0, 50 %, 1000 MiB\n";
        csv += "9999/12/31 23:59:59.999, 0, NVIDIA H200, 00000000:0A:00.0, 50 %, 1000 MiB\n";
        const std::string file = test::writeFile(*m_tmp, QStringLiteral("smi.csv"), csv);
        const std::string run = m_tmp->filePath(QStringLiteral("smi.runlens")).toStdString();
        const Imported r = importInto(run, file, withOptions({}));
        QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
        QVERIFY2(anyContains(r.diagnostics, "bad_timestamp: cannot read timestamp \"2263/01/02"),
                 joined(r.diagnostics).c_str());
        QVERIFY2(anyContains(r.diagnostics, "bad_timestamp: cannot read timestamp \"9999/12/31"),
                 joined(r.diagnostics).c_str());
        QCOMPARE(test::queryOne(run, "SELECT max(points) FROM series"), QStringLiteral("3"));
    }

    void speedscopeOffsetBeyondInt64()
    {
        // Started in 2261, in milliseconds: the third sample's offset (1e300 ms) is beyond any time.
        const std::string json =
            "{\"shared\": {\"frames\": [{\"name\": \"main\"}, {\"name\": \"step\"}]},\n"
            "\"profiles\": [{\"type\": \"sampled\", \"name\": \"t\", \"unit\": \"milliseconds\", \"startValue\": 0,\n"
            "\"endValue\": 1, \"startUnixNs\": 9200000000000000000, \"samples\": [[0], [0, 1], [0]],\n"
            "\"weights\": [10, 1e300, 5]}]}";
        const std::string file = test::writeFile(*m_tmp, QStringLiteral("p.speedscope.json"), json);
        const std::string run = m_tmp->filePath(QStringLiteral("ss.runlens")).toStdString();
        const Imported r = importInto(run, file, withOptions({}));
        QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
        QVERIFY2(anyContains(r.diagnostics, "bad_timestamp: 1 sample(s) at offsets beyond the years a timestamp holds"),
                 joined(r.diagnostics).c_str());
        QCOMPARE(test::queryOne(run, "SELECT count(*) FROM stack_samples WHERE ts_ns IS NOT NULL"),
                 QStringLiteral("2"));
        QCOMPARE(test::queryOne(run, "SELECT sum(sample_count) FROM stack_samples"), QStringLiteral("3"));
    }

    void trainerStateHugeSteps()
    {
        const std::string json =
            "{\"global_step\": 9000000000000000000, \"log_history\": [\n"
            "{\"step\": 1, \"loss\": 2.0}, {\"step\": 2, \"loss\": 1.5},\n"
            "{\"step\": 9000000000, \"loss\": 1.2}, {\"step\": 9000000000000000000, \"loss\": 1.0}]}";
        const std::string file = test::writeFile(*m_tmp, QStringLiteral("trainer_state.json"), json);
        const std::string run = m_tmp->filePath(QStringLiteral("hf.runlens")).toStdString();
        const Imported r = importInto(run, file, withOptions({{"interval", "1s"}, {"start", "1700000000"}}));
        QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
        QVERIFY2(anyContains(r.diagnostics, "step 9000000000000000000 at 1 s per step is beyond any time"),
                 joined(r.diagnostics).c_str());
        QVERIFY2(anyContains(r.diagnostics, "step 9000000000 falls"), joined(r.diagnostics).c_str());
        QCOMPARE(test::queryOne(run, "SELECT points FROM series WHERE metric = 'train.loss'"), QStringLiteral("2"));
    }

    void wideCsvElapsedBeyondInt64()
    {
        const std::string csv = "elapsed_s,loss\n0,2.0\n1,1.5\n1e30,1.0\n-1e30,0.5\n-9223372036854775808,0.25\n";
        const std::string file = test::writeFile(*m_tmp, QStringLiteral("log.csv"), csv);
        const std::string run = m_tmp->filePath(QStringLiteral("csv.runlens")).toStdString();
        const Imported r = importInto(run, file, withOptions({{"start", "9100000000"}}, "wide-csv"));
        QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
        QVERIFY2(anyContains(r.diagnostics, "bad_timestamp: time 1e30 is out of range"), joined(r.diagnostics).c_str());
        QCOMPARE(test::queryOne(run, "SELECT points FROM series WHERE metric = 'csv.loss'"), QStringLiteral("2"));
        // Without start=, the last elapsed value places the start: 1e30 s before the file time cannot be.
        const std::string last =
            test::writeFile(*m_tmp, QStringLiteral("last.csv"), "elapsed_s,loss\n0,2.0\n1e30,1.0\n");
        const Imported e = importInto(m_tmp->filePath(QStringLiteral("csv2.runlens")).toStdString(), last,
                                      withOptions({}, "wide-csv"));
        QCOMPARE(e.outcome, FileOutcome::Failed);
        QVERIFY2(contains(e.error, "cannot be placed"), e.error.c_str());
    }

    void startOptionBeyondInt64()
    {
        const std::string csv = "elapsed_s,loss\n0,2.0\n1,1.5\n";
        const std::string file = test::writeFile(*m_tmp, QStringLiteral("s.csv"), csv);
        const Imported r = importInto(m_tmp->filePath(QStringLiteral("s.runlens")).toStdString(), file,
                                      withOptions({{"start", "99999999999"}}, "wide-csv"));
        QCOMPARE(r.outcome, FileOutcome::Failed);
        QVERIFY2(contains(r.error, "start=99999999999"), r.error.c_str());
    }

    void extremeClockOffsets_data()
    {
        QTest::addColumn<qint64>("offset");
        QTest::newRow("INT64_MIN") << std::numeric_limits<qint64>::min();
        QTest::newRow("INT64_MAX") << std::numeric_limits<qint64>::max();
    }
    void extremeClockOffsets()
    {
        QFETCH(qint64, offset);
        const std::string run = m_tmp->filePath(QStringLiteral("offset.runlens")).toStdString();
        const std::string smi = test::writeFile(*m_tmp, QStringLiteral("smi.csv"), test::nvsmiCsv(1, 5));
        QVERIFY2(importInto(run, smi, withOptions({})).outcome == FileOutcome::Imported, "nvidia-smi import");
        const std::string perf = test::writeFile(*m_tmp, QStringLiteral("perf.txt"),
                                                 "python 123/123 [001] 100.000000: 1 cycles:\n"
                                                 "\t    7f0000001000 train_step+0x10 (/usr/bin/python3)\n\n");
        QVERIFY2(importInto(run, perf, withOptions({{"anchor", "1767322800"}}, "perf-script")).outcome ==
                     FileOutcome::Imported,
                 "perf import");
        QCOMPARE(execRaw(run, "UPDATE node SET clock_offset_ns = " + std::to_string(offset)), std::string());
        auto db = RunDatabase::open(run, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        RunReader reader(**db);
        auto series = reader.series();
        QVERIFY_OK(series);
        QVERIFY(!series->empty());
        for (const SeriesInfo& s : *series) {
            QVERIFY_OK(reader.readPoints(s.id, TimeWindow{}));
            QVERIFY_OK(reader.readEnvelope(s.id, TimeWindow{}, 10));
        }
        StackReader stacks(**db);
        auto threads = stacks.threads();
        QVERIFY_OK(threads);
        QCOMPARE(threads->size(), size_t(1));
        QVERIFY_OK(stacks.samples(threads->front().id, TimeWindow{}));
        QVERIFY_OK(stacks.totals({}, TimeWindow{0, 1'000'000'000}, false));
        QVERIFY_OK(stacks.totals({}, TimeWindow{}, true));
        for (const char* sql : {"SELECT count(*), min(ts_ns), max(ts_ns) FROM stack_samples",
                                "SELECT count(*), min(ts_ns), max(ts_ns) FROM series_points"}) {
            const QString row = test::queryOne(run, sql);
            QVERIFY2(!row.startsWith(QStringLiteral("query failed")), qPrintable(row));
        }
    }

    // --- Very deep stacks: every walk of the flame tree and its diff is iterative ---------------------------

    void deepStack()
    {
        constexpr int kDepth = 200'000;
        std::string line;
        line.reserve(static_cast<size_t>(kDepth) * 8);
        for (int i = 0; i < kDepth; ++i)
            line += (i ? ";f" : "f") + std::to_string(i);
        const std::string file = test::writeFile(*m_tmp, QStringLiteral("deep.folded"),
                                                 line + " 3\n" + line.substr(0, line.size() / 2) + " 2\n");
        const std::string run = m_tmp->filePath(QStringLiteral("deep.runlens")).toStdString();
        QElapsedTimer timer;
        timer.start();
        // Kept whole (the default limit would cut it): the walks below must hold at this depth.
        const Imported r = importInto(run, file, withOptions({{"max_stack_depth", "1000000"}}, "folded"));
        QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
        auto db = RunDatabase::open(run, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        analysis::FlameSource source(**db, nullptr);
        auto tree = source.tree({});
        QVERIFY_OK(tree);
        QCOMPARE((*tree)->totalSamples(), int64_t(5));
        QVERIFY((*tree)->maxDepth() >= kDepth);

        // The same stacks built in memory, then diffed against the stored tree both ways.
        std::vector<analysis::FlameTree::Stack> stacks(1);
        for (int i = 0; i < kDepth; ++i) {
            store::FrameInfo f;
            f.name = "f" + std::to_string(i);
            stacks[0].frames.push_back(f);
        }
        stacks[0].samples = 4;
        auto other = analysis::FlameTree::fromStacks(stacks);
        QCOMPARE(other->maxDepth(), kDepth);
        auto diff = analysis::diffTree(**tree, *other, {});
        QVERIFY(diff->nodes().size() > size_t(kDepth));
        QCOMPARE(diff->node(1).samplesA, int64_t(5));
        QCOMPARE(diff->node(1).samplesB, int64_t(4));
        auto asTree = analysis::diffAsFlameTree(*diff);
        QCOMPARE(static_cast<size_t>(asTree->subtreeEnd(0)), asTree->nodes().size());
        const auto layout = analysis::layoutFlame(*asTree, 0, 0.0);
        QVERIFY(layout.rows > kDepth);
        const std::string folded = analysis::foldedText(**tree, analysis::FlameValue::Samples);
        QVERIFY(contains(folded, " 3\n"));
        QVERIFY2(timer.elapsed() < 120'000, "a deep stack took minutes");
    }

    // A stack deeper than max_stack_depth keeps its innermost frames under one "[outer frames not kept]" root frame,
    // with all its samples, and says so with data loss; a stack exactly at the limit is kept whole. Each stack
    // format: a (root) calls b ... calls g (leaf), 3 samples, and a..e, 2 samples.
    void stackDepthLimit_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int64_t>("samples"); // speedscope: two samples, weighing 3 and 2
        QTest::addColumn<int>("reports");     // one per record that is cut: folded line, perf sample, speedscope stack
        QTest::newRow("folded") << QStringLiteral("s.folded") << QStringLiteral("folded")
                                << QByteArray("a;b;c;d;e;f;g 3\na;b;c;d;e 2\n") << int64_t(5) << 1;
        QByteArray perf;
        for (const auto& [frames, n] : {std::pair{QByteArray("gfedcba"), 3}, std::pair{QByteArray("edcba"), 2}})
            for (int i = 0; i < n; ++i) {
                perf += "app 10/10 [000] 100.000001: 1 cycles:\n";
                for (const char f : frames)
                    perf += "\t    4005d0 " + QByteArray(1, f) + " (/usr/bin/app)\n";
                perf += "\n";
            }
        QTest::newRow("perf script") << QStringLiteral("s.perf") << QStringLiteral("perf-script") << perf << int64_t(5)
                                     << 3;
        QTest::newRow("speedscope")
            << QStringLiteral("s.speedscope.json") << QStringLiteral("speedscope")
            << QByteArray("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{\"frames\":["
                          "{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"},{\"name\":\"d\"},{\"name\":\"e\"},"
                          "{\"name\":\"f\"},{\"name\":\"g\"}]},\"profiles\":[{\"type\":\"sampled\",\"name\":\"t\","
                          "\"unit\":\"none\",\"startValue\":0,\"endValue\":5,\"samples\":[[0,1,2,3,4,5,6],[0,1,2,3,4]],"
                          "\"weights\":[3,2]}]}")
            << int64_t(2) << 1;
    }

    void stackDepthLimit()
    {
        QFETCH(QString, name);
        QFETCH(QString, format);
        QFETCH(QByteArray, text);
        QFETCH(int64_t, samples);
        QFETCH(int, reports);
        const std::string file = test::writeFile(*m_tmp, name, text.toStdString());
        const std::string run = m_tmp->filePath(name + QStringLiteral(".runlens")).toStdString();
        const std::string fmtName = format.toStdString();
        const Imported r = importInto(run, file, withOptions({{"max_stack_depth", "5"}}, fmtName.c_str()));
        QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
        QVERIFY2(anyContains(r.diagnostics, "stack_too_deep: a stack of 7 frames: its 4 innermost kept"),
                 joined(r.diagnostics).c_str());
        QCOMPARE(std::count_if(r.diagnostics.begin(), r.diagnostics.end(),
                               [](const std::string& d) { return contains(d, "stack_too_deep"); }),
                 reports);
        auto db = RunDatabase::open(run, OpenMode::ReadOnly);
        QVERIFY_OK(db);
        analysis::FlameSource source(**db, nullptr);
        auto tree = source.tree({});
        QVERIFY_OK(tree);
        QCOMPARE((*tree)->totalSamples(), samples);
        const std::string folded = analysis::foldedText(**tree, analysis::FlameValue::Samples);
        QVERIFY2(contains(folded, "[outer frames not kept];d;e;f;g "), folded.c_str());
        QVERIFY2(contains(folded, "a;b;c;d;e "), folded.c_str());
        QVERIFY2(!contains(folded, "a;b;c;d;e;"), folded.c_str());
        QCOMPARE((*tree)->maxDepth(), 5);

        const Imported bad = importInto(run + ".bad", file, withOptions({{"max_stack_depth", "1"}}, fmtName.c_str()));
        QCOMPARE(bad.outcome, FileOutcome::Failed);
        QVERIFY2(contains(bad.error, "max_stack_depth=1: expected a whole number of frames, at least 2"),
                 bad.error.c_str());
    }

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
};

QTEST_GUILESS_MAIN(TestCraftedInput)
#include "tst_crafted_input.moc"
