// Wide hand-made CSV import (wide_csv_importer.h, docs/formats.md §20): the real DCConv fixture checked
// against an independent count of its rows. The cases of each behaviour are folders under tests/golden/wide_csv.

#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

// 1768471200 s = 2026-01-15T10:00:00Z.

} // namespace

class TestWideCsvImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void dcconvFixture();
};

void TestWideCsvImporter::dcconvFixture()
{
    if (test::fixturesDir().isEmpty()) QSKIP("../shared/fixtures is absent: the DCConv fixture test needs it");
    const QString file = test::fixturesDir() + QStringLiteral("/public/DCConv/gpu_usage.csv");
    QFile f(file);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(file));
    // Independent reading: a row starts on a line with balanced quotes so far; it is broken when a quote opened
    // on one line closes on another.
    int rows = 0, broken = 0;
    bool open = false, header = true;
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (!open && line.trimmed().isEmpty()) continue;
        if (std::exchange(header, false)) continue;
        if (!open) ++rows;
        const bool wasOpen = open;
        if (line.count('"') % 2 == 1) open = !open;
        if (wasOpen && !open) ++broken;
    }
    QVERIFY(rows > 100);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(QStringLiteral("run.db")).toStdString();
    const Imported r = importPath(db, file.toStdString(), {}, QStringLiteral("UTC"), {}, {});
    QCOMPARE(QString::fromStdString(r.importer), QStringLiteral("wide-csv"));
    QCOMPARE(QString::fromUtf8(outcomeName(r.outcome)), QStringLiteral("imported"));
    QCOMPARE(r.result.rowsRead, rows);
    // Every row keeps its unbroken cells; the broken power_w cells are missing points with their text.
    QCOMPARE(test::queryRows(db, "SELECT count(*), sum(missing) FROM series_points WHERE metric = 'csv.gpu_util_pct'")
                 .value(0),
             QStringLiteral("%1|0").arg(rows));
    QCOMPARE(
        test::queryRows(db, "SELECT count(*) FROM series_points WHERE metric = 'csv.power_w' AND missing = 1").value(0),
        QString::number(broken));
    const auto counts = r.result.diagnostics.counts();
    QCOMPARE(counts.count("quoted_newline") ? counts.at("quoted_newline").count : 0, int64_t(broken));
    QCOMPARE(test::queryRows(db, "SELECT count FROM diagnostic_count WHERE kind = 'quoted_newline'").value(0),
             QString::number(broken));
}

QTEST_GUILESS_MAIN(TestWideCsvImporter)
#include "tst_importers_wide_csv.moc"
