// The generic long CSV read in blocks of lines on a second thread (importers/generic/generic_blocks.h): a file cut
// into many small blocks gives the run it gives in one block, with a quoted field's line break and bad rows across
// block boundaries and the diagnostics on the same lines.

#include "analysis/store/run_database.h"
#include "importers/generic/generic_importer.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QTemporaryDir>
#include <QTest>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

// Rows of three nodes × two GPUs × three metrics in nanoseconds, interleaved, with a label column, comments, blank
// lines and every kind of row the importer drops or keeps as missing between them.
QByteArray blockInput()
{
    QByteArray out("# written by a collector\nts,node,device,metric,value,unit,job\n");
    const char* metrics[][2] = {{"gpu.util", "%"}, {"gpu.mem_used", "MiB"}, {"train.custom", "items/s"}};
    for (int step = 0; step < 40; ++step) {
        for (int n = 0; n < 3; ++n)
            for (int g = 0; g < 2; ++g)
                for (const auto& m : metrics)
                    out += QByteArray::number(1768471200123456789LL + step * 1'000'000'000LL + n * 1000LL + g * 10LL) +
                           ",node-" + QByteArray::number(n) + ",gpu:" + QByteArray::number(g) + "," + m[0] + "," +
                           QByteArray::number(step * 1.125 + n + g / 8.0, 'f', 4) + "," + m[1] + "," +
                           (g == 1 ? "pretrain" : "") + "\n";
        if (step == 5) out += "1768471205999999999,node-0,gpu:0,gpu.util,\"5\n6\",%,x\n"; // a quote over a line break
        if (step == 8) out += "\n# a comment\n1768471208999999999,node-1,gpu:1,gpu.util,7,%\n"; // a field short
        if (step == 11) out += "yesterday,node-2,gpu:0,gpu.util,1,%,\n";
        if (step == 14) out += "1768471214999999999,node-2,gpu:0,gpu.util,lots,%,\n";
        if (step == 17) out += "1768471217999999999,node-2,gpu:1,gpu.util,NaN,%,pretrain\n";
        if (step == 20) out += "1768471200000000000,node-0,gpu:1,gpu.util,3,%,pretrain\n"; // backwards
        if (step == 23) out += "1768471223123457789,node-1,gpu:0,gpu.util,4,%,\n";         // a second value
        if (step == 26) out += "1768471226999999999,node-1,gpu:0,gpu.mem_used,2.5,GiB,\n"; // another unit
        if (step == 29) out += "1768471229999999999,node-1,gpu:0,gpu.mem_used,2.5,parsecs,\n";
        if (step == 32) out += "1768471232999999999,node-0,fan:1,fan.speed,55.5,rpm,\n";
        if (step == 35) out += "1768471235.5,node-0,gpu:0,gpu.util,\"\",%,\n";
    }
    return out;
}

// What the run holds of the rows: the import's counts, its diagnostics with their lines, every series with its
// points (times in ns, values with 17 digits, missing ones with their token) and the notes.
QStringList runContent(const Imported& r)
{
    QStringList out = queryRows(r.db, "SELECT rows_read, points, diagnostics FROM import");
    out += queryRows(r.db, "SELECT kind, line, column, message FROM diagnostic ORDER BY id");
    const QStringList series =
        queryRows(r.db, "SELECT s.id, n.name, d.kind, d.name, s.metric, s.unit, s.labels FROM series s JOIN device d "
                        "ON d.id = s.device_id JOIN node n ON n.id = d.node_id ORDER BY s.id");
    out += series;
    auto db = store::RunDatabase::open(r.db, store::OpenMode::ReadOnly);
    if (!db) return out << QString::fromStdString(db.error().message);
    for (const QString& s : series)
        out += pointsText(
            readSeries(**db, s.section(QLatin1Char('|'), 0, 0).toLongLong(), true),
            [](int64_t ns) { return QString::number(ns); }, num17);
    for (const std::string& note : r.result.notes)
        out += QString::fromStdString(note);
    return out;
}

} // namespace

class TestGenericBlocks : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void manyBlocksSameRun_data();
    void manyBlocksSameRun();
    void cleanupTestCase() { GenericMetricsImporter::setCsvBlockBytes(4u << 20); }
};

void TestGenericBlocks::manyBlocksSameRun_data()
{
    QTest::addColumn<int>("blockBytes");
    for (int bytes : {1, 7, 60, 333, 4096})
        QTest::newRow(qPrintable(QStringLiteral("%1 bytes").arg(bytes))) << bytes;
}

void TestGenericBlocks::manyBlocksSameRun()
{
    QFETCH(int, blockBytes);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = writeInput(dir, str("metrics.csv"), blockInput());
    const auto options = importOptions(str("metrics-csv"), str("UTC"), {}, QString()); // nodes from the node column
    GenericMetricsImporter::setCsvBlockBytes(64u << 20);
    const Imported whole = importWith(dir.filePath(str("whole.runlens")).toStdString(), path, options);
    GenericMetricsImporter::setCsvBlockBytes(static_cast<size_t>(blockBytes));
    const Imported cut = importWith(dir.filePath(str("cut.runlens")).toStdString(), path, options);
    QCOMPARE(outcomeName(whole.outcome), "imported");
    QCOMPARE(outcomeName(cut.outcome), "imported");
    const QStringList expected = runContent(whole);
    QCOMPARE(runContent(cut), expected);

    // The rows the importer cannot take keep their lines: a record is a line, so the quote opened at line 111 ends
    // that row (5 fields) and line 112 is a row of its own.
    QCOMPARE(queryRows(cut.db, "SELECT kind, line, column FROM diagnostic ORDER BY id"),
             strs({"unmapped_metric|5|0", "wrong_field_count|111|0", "wrong_field_count|112|0",
                   "wrong_field_count|169|0", "bad_timestamp|224|1", "bad_number|279|5", "nan_value|334|5",
                   "backwards_time|389|1", "duplicate_sample|444|1", "unknown_unit|554|0", "unmapped_metric|609|0"}));
    QCOMPARE(queryOne(cut.db, "SELECT count(*) FROM node"), str("3"));
}

QTEST_GUILESS_MAIN(TestGenericBlocks)
#include "tst_generic_blocks.moc"
