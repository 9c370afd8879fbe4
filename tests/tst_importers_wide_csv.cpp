// Wide hand-made CSV import (wide_csv_importer.h, docs/formats.md §1 quirks a and b): generated inputs for each
// behaviour, then the real DCConv fixture checked against an independent count of its rows.

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

// Points of csv.<column> on n1's host as "ts_ns=value" ("ts_ns=?token" when missing), in time order.
QString pointsSql(const char* column)
{
    return QStringLiteral("SELECT ts_ns || '=' || CASE WHEN missing THEN '?' || coalesce(token, '') ELSE "
                          "printf('%g', value) END FROM series_points WHERE node = 'n1' AND device = 'host' AND "
                          "metric = 'csv.%1'")
        .arg(QString::fromUtf8(column));
}
const QString kDiagSql = QStringLiteral("SELECT kind || '@' || line FROM import_diagnostic ORDER BY line, kind");
const QString kSeriesSql = QStringLiteral("SELECT metric || ' ' || unit || ' ' || points FROM series_summary "
                                          "ORDER BY metric");

} // namespace

class TestWideCsvImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void importCases_data();
    void importCases();
    void dcconvFixture();
};

void TestWideCsvImporter::importCases_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format"); // forced format, empty = detect
    QTest::addColumn<QString>("tz");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("mtime");
    QTest::addColumn<QString>("importer"); // the importer the plan chose
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<QString>("error"); // a part of the fatal error
    QTest::addColumn<QStringList>("sql");
    QTest::addColumn<QStringList>("expected"); // rows of each query joined by "; "

    const QString wide = QStringLiteral("wide-csv");
    const QString imported = QStringLiteral("imported");
    const QString utc = QStringLiteral("UTC");

    QTest::newRow("epoch seconds column")
        << QByteArray("timestamp,loss,step_ms\n1768471200,2.5,100\n1768471201,2.25, 90\n") << QString() << utc
        << QStringList() << QString() << wide << imported << QString()
        << QStringList{pointsSql("loss"), kSeriesSql, kDiagSql}
        << strs({"1768471200000000000=2.5; 1768471201000000000=2.25", "csv.loss  2; csv.step_ms  2", ""});
    QTest::newRow("epoch milliseconds, quoted cell on one line")
        << QByteArray("time_ms,x\n1768471200250,\"12.5\"\n") << QString() << utc << QStringList() << QString() << wide
        << imported << QString() << QStringList{pointsSql("x")} << strs({"1768471200250000000=12.5"});
    QTest::newRow("naive local times with --tz +02:00")
        << QByteArray("datetime,temp\n2026-01-15 12:00:00,30\n2026/01/15 12:00:01.5,31\n") << QString()
        << QStringLiteral("+02:00") << QStringList() << QString() << wide << imported << QString()
        << QStringList{pointsSql("temp")} << strs({"1768471200000000000=30; 1768471201500000000=31"});
    QTest::newRow("ISO 8601 with Z and offsets")
        << QByteArray("time,x\n2026-01-15T10:00:00Z,1\n2026-01-15T12:00:01+02:00,2\n2026-01-15T05:00:02-0500,3\n")
        << QString() << utc << QStringList() << QString() << wide << imported << QString()
        << QStringList{pointsSql("x")} << strs({"1768471200000000000=1; 1768471201000000000=2; 1768471202000000000=3"});
    QTest::newRow("elapsed seconds with start=")
        << QByteArray("elapsed_sec,util\n0.5,10\n1.25,20\n") << QString() << utc
        << QStringList{QStringLiteral("start=2026-01-15T10:00:00Z")} << QString() << wide << imported << QString()
        << QStringList{pointsSql("util"), kDiagSql} << strs({"1768471200500000000=10; 1768471201250000000=20", ""});
    QTest::newRow("elapsed seconds estimated from the modification time")
        << QByteArray("elapsed_s,util\n0,10\n4,20\n10,30\n") << QString() << utc << QStringList()
        << QStringLiteral("2026-01-15T10:00:10Z") << wide << imported << QString()
        << QStringList{pointsSql("util"), kDiagSql}
        << strs({"1768471200000000000=10; 1768471204000000000=20; 1768471210000000000=30", "estimated_time@2"});
    QTest::newRow("quoted newline: the broken cell missing, the row kept, reported at its first line")
        << QByteArray("elapsed_sec,a,b\n0,1,2\n1,3,\"4.5\n0\"\n2,5,\"6\"\n") << QString() << utc
        << QStringList{QStringLiteral("start=0")} << QString() << wide << imported << QString()
        << QStringList{pointsSql("b"), kDiagSql, QStringLiteral("SELECT rows FROM import_log")}
        << QStringList{QStringLiteral("0=2; 1000000000=?4.5\n0; 2000000000=6"), QStringLiteral("quoted_newline@3"),
                       QStringLiteral("3")};
    QTest::newRow("wrong field count drops the row")
        << QByteArray("ts,a\n1,2\n2,3,4\n3,5\n") << QString() << utc << QStringList{QStringLiteral("start=0")}
        << QString() << wide << imported << QString() << QStringList{pointsSql("a"), kDiagSql}
        << QStringList{QStringLiteral("1000000000=2; 3000000000=5"), QStringLiteral("wrong_field_count@3")};
    QTest::newRow("bad number, empty and NaN cells are missing")
        << QByteArray("ts,a\n1,2\n2,1O\n3,\n4,NaN\n5,N/A\n") << QString() << utc
        << QStringList{QStringLiteral("start=0")} << QString() << wide << imported << QString()
        << QStringList{pointsSql("a"), kDiagSql}
        << QStringList{QStringLiteral("1000000000=2; 2000000000=?1O; 3000000000=?; 4000000000=?NaN; 5000000000=?N/A"),
                       QStringLiteral("bad_number@3; nan_value@5")};
    QTest::newRow("text column not imported, counted once")
        << QByteArray("ts,host,a\n1,,7\n2,gpu-01,5\n3,gpu-02,6\n") << QString() << utc
        << QStringList{QStringLiteral("start=0")} << QString() << wide << imported << QString()
        << QStringList{kSeriesSql, kDiagSql}
        << QStringList{QStringLiteral("csv.a  3"), QStringLiteral("unmapped_column@3")};
    QTest::newRow("empty file, forced") << QByteArray() << wide << utc << QStringList() << QString() << wide
                                        << QStringLiteral("failed") << QStringLiteral("empty file") << QStringList()
                                        << QStringList();
    QTest::newRow("no time column is not detected")
        << QByteArray("step,loss\n1,2.5\n") << QString() << utc << QStringList() << QString() << QString()
        << QStringLiteral("not recognised") << QStringLiteral("format not recognised") << QStringList()
        << QStringList();
    QTest::newRow("no time column, forced")
        << QByteArray("step,loss\n1,2.5\n") << wide << utc << QStringList() << QString() << wide
        << QStringLiteral("failed")
        << QStringLiteral(":1:1: no time column in the header; wide CSV accepts timestamp, time, ts") << QStringList()
        << QStringList();
    QTest::newRow("nvidia-smi property header goes to nvidia-smi")
        << QByteArray("timestamp,memory.used,memory.total,utilization.gpu\n1764189075,1, 24576, 0\n") << QString()
        << utc << QStringList() << QString() << QStringLiteral("nvidia-smi-query-csv") << imported << QString()
        << QStringList() << QStringList();
    QTest::newRow("long generic metrics go to metrics-csv")
        << QByteArray("ts,metric,value\n2026-01-15T10:00:00Z,gpu.util,5\n") << QString() << utc << QStringList()
        << QString() << QStringLiteral("metrics-csv") << imported << QString() << QStringList() << QStringList();
}

void TestWideCsvImporter::importCases()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QFETCH(QString, tz);
    QFETCH(QStringList, options);
    QFETCH(QString, mtime);
    QFETCH(QString, importer);
    QFETCH(QString, outcome);
    QFETCH(QString, error);
    QFETCH(QStringList, sql);
    QFETCH(QStringList, expected);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(dir, QStringLiteral("log.csv"), input.toStdString());
    const std::string db = dir.filePath(QStringLiteral("run.db")).toStdString();
    const Imported r = importPath(db, path, format, tz, options, mtime);
    QCOMPARE(QString::fromStdString(r.importer), importer);
    QCOMPARE(QString::fromUtf8(outcomeName(r.outcome)), outcome);
    if (error.isEmpty())
        QCOMPARE(QString::fromStdString(r.error), QString());
    else
        QVERIFY2(QString::fromStdString(r.error).contains(error), r.error.c_str());
    QCOMPARE(sql.size(), expected.size());
    for (qsizetype i = 0; i < sql.size(); ++i)
        QCOMPARE(test::queryRows(db, sql[i].toStdString()).join(QStringLiteral("; ")), expected[i]);
}

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
