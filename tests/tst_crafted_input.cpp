// Crafted inputs that once reached undefined behaviour or unbounded allocations: chunk blobs whose declared sizes
// are far beyond what their bytes hold, stack catalogues with ids outside the tables, decompression bombs,
// timestamps at the int64 limits and very deep stacks. Each must give a clear error or a bounded result, quickly.

#include "analysis/flame/flame_diff.h"
#include "analysis/flame/flame_tree.h"
#include "analysis/store/chunk_codec.h"
#include "analysis/store/run_database.h"
#include "analysis/store/stack_codec.h"
#include "analysis/store/stack_reader.h"
#include "importers/import_session.h"
#include "tests/test_support.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <sqlite3.h>
#include <string>

using namespace runlens;
using namespace runlens::store;
using namespace runlens::importers;
using test::varintBytes;

namespace {

// A zstd frame (single segment, content size declared) whose content is `head` (one raw block) followed by
// `zeros` zero bytes in RLE blocks: 4 bytes per 128 KiB, so a few KB of frame declare and hold a gigabyte.
std::string zstdFrame(const std::string& head, uint64_t zeros)
{
    constexpr uint64_t kBlock = 128 * 1024;
    std::string out = "\x28\xB5\x2F\xFD";
    out += static_cast<char>(0xE0); // 8-byte content size, single segment, no checksum, no dictionary
    const uint64_t size = head.size() + zeros;
    for (int b = 0; b < 8; ++b)
        out += static_cast<char>((size >> (8 * b)) & 0xff);
    const auto blockHeader = [&](bool last, int type, uint64_t n) {
        const uint64_t h = (last ? 1u : 0u) | (static_cast<uint64_t>(type) << 1) | (n << 3);
        for (int b = 0; b < 3; ++b)
            out += static_cast<char>((h >> (8 * b)) & 0xff);
    };
    blockHeader(zeros == 0, 0, head.size());
    out += head;
    for (uint64_t left = zeros; left > 0;) {
        const uint64_t n = std::min(left, kBlock);
        left -= n;
        blockHeader(left == 0, 1, n);
        out += '\0';
    }
    return out;
}

std::string execRaw(const std::string& path, const std::string& sql)
{
    sqlite3* h = nullptr;
    sqlite3_open(path.c_str(), &h);
    char* err = nullptr;
    const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
    std::string msg = rc == SQLITE_OK ? "" : err ? err : "error";
    sqlite3_free(err);
    sqlite3_close(h);
    return msg;
}

struct Imported
{
    FileOutcome outcome = FileOutcome::Failed;
    std::string error;
    std::vector<std::string> diagnostics; // "kind: message"
};

Imported importInto(const std::string& db, const std::string& path, ImportOptions options = {})
{
    Imported result;
    if (options.node.empty()) options.node = "node1";
    auto plan = planImport({path}, options);
    if (!plan || plan->size() != 1) {
        result.error = plan ? "expected one planned file" : plan.error().toString();
        return result;
    }
    auto database = RunDatabase::open(db, OpenMode::Create);
    if (!database) {
        result.error = database.error().toString();
        return result;
    }
    const FileResult r = importFile(**database, plan->front(), options);
    result.outcome = r.outcome;
    if (r.error) result.error = r.error->toString();
    for (const DiagnosticEntry& d : r.diagnostics.entries())
        result.diagnostics.push_back(d.kind + ": " + d.message);
    return result;
}

bool contains(const std::string& text, const char* part)
{
    return text.find(part) != std::string::npos;
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
            << QByteArray::fromStdString(zstdFrame(varintBytes(1) + varintBytes(20'000'000) + varintBytes(0), 60ull << 20))
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
        QTest::newRow("callsite 2^63")
            << QByteArray::fromStdString(test::zstdCompress(varintBytes(1) + varintBytes(1) + varintBytes(0) +
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
        const std::string folded = test::writeFile(*m_tmp, QStringLiteral("stacks.folded"),
                                                   "main;a;b 10\nmain;a 5\nmain;c;b 7\nidle 6\n");
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

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
};

QTEST_GUILESS_MAIN(TestCraftedInput)
#include "tst_crafted_input.moc"
