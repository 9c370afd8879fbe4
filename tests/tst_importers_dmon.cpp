// nvidia-smi dmon import (docs/formats.md §2): detection, a cut zstd file, garbage and a 10 MB line, then the real
// fixtures checked against an independent count of their rows per GPU. The cases of each behaviour and quirk are
// folders under tests/golden/dmon.

#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>
#include <map>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

const QString kFormat = QStringLiteral("nvidia-smi-dmon");

const std::string kCountsSql = countsSql({"series", "point_chunk", "import", "device", "diagnostic"});

// Default `nvidia-smi dmon` (-s puc, no time columns), two GPUs, two intervals, trailing spaces as dmon prints.
const QByteArray kPuc = lines({"# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk ",
                               "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz ",
                               "    0    631     63     57    100     10      0      0      0      0   2619   1980 ",
                               "    1    105     38     36     49      0      0      0      0      0   2619    345 ",
                               "    0    630     64     57     99     11      0      0      0      0   2619   1965 ",
                               "    1     80     38     36      0      0      0      0      0      0   2619    345 "});
const char* const kDtHeader = "#Date       Time        gpu    pwr     sm     fb  rxpci ";
const char* const kDtUnits = "#YYYYMMDD   HH:MM:SS    Idx      W      %     MB   MB/s ";
const QByteArray kDt = lines({kDtHeader, kDtUnits, " 20260115   12:00:01      0     80      5      1      5 ",
                              " 20260115   12:00:02      0     81      6      2      6 "});

// An independent reading of a dmon file: data rows per GPU, and per GPU the '-' cells of one column.
struct Reference
{
    std::map<QString, int> rows, dashes;
};
Reference referenceRows(const QByteArray& text, const QString& dashColumn)
{
    Reference ref;
    QStringList header;
    for (const QByteArray& raw : text.split('\n')) {
        const QStringList f = QString::fromUtf8(raw).simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (f.isEmpty()) continue;
        if (f[0].startsWith(QLatin1Char('#'))) {
            QStringList names = f;
            names[0] = names[0].mid(1);
            if (names[0].isEmpty()) names.removeFirst();
            if (names.contains(str("gpu"))) header = names;
            continue;
        }
        const qsizetype gpu = header.indexOf(str("gpu"));
        const qsizetype dash = header.indexOf(dashColumn);
        ++ref.rows[f.value(gpu)];
        if (dash >= 0 && f.value(dash) == QLatin1String("-")) ++ref.dashes[f.value(gpu)];
    }
    return ref;
}

} // namespace

class TestDmonImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sniff_data();
    void sniff();
    void truncatedZstdLeavesDatabaseUnchanged();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
    void realFixtures_data();
    void realFixtures();
};

void TestDmonImporter::sniff_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<QString>("expected"); // the format detected, or empty
    QTest::newRow("default header and unit row") << kPuc << kFormat;
    QTest::newRow("-o DT header") << kDt << kFormat;
    QTest::newRow("header without unit row") << lines({"# gpu pwr sm", "0 80 5"}) << kFormat;
    QTest::newRow("blank lines first") << QByteArray("\n\n" + kDt) << kFormat;
    QTest::newRow("dcgmi dmon is not claimed") << lines({"#Entity   NVLTX                       NVLRX", "ID",
                                                         "GPU 7     30570603980                 30638829242"})
                                               << str("dcgmi-dmon");
    QTest::newRow("a comment naming gpu but no dmon column") << lines({"# gpu notes", "hello"}) << QString();
    QTest::newRow("nvidia-smi query CSV")
        << lines({"timestamp, index, utilization.gpu [%]"}) << str("nvidia-smi-query-csv");
}

void TestDmonImporter::sniff()
{
    QFETCH(QByteArray, head);
    QFETCH(QString, expected);
    checkDetected(head, expected, kFormat, 75);
}

void TestDmonImporter::truncatedZstdLeavesDatabaseUnchanged()
{
    QByteArray big = lines({kDtHeader, kDtUnits});
    const QDateTime t0(QDate(2026, 1, 15), QTime(0, 0), QTimeZone::utc());
    for (int i = 0; i < 40000; ++i)
        big += t0.addSecs(i).toString(QStringLiteral(" yyyyMMdd HH:mm:ss ")).toLatin1() + "1 " +
               QByteArray::number(i % 700) + " " + QByteArray::number(i % 101) + " 100 5\n";
    // Without start= the second reading meets the error first.
    checkCutZstdImport(kCountsSql, str("first.txt"), kDt, str("4|4|1|1|0"), str("gpu.txt.zst"), big,
                       importOptions(QString()),
                       {importOptions(QString(), str("UTC"), {str("start=2026-01-15T00:00:00Z")})});
}

void TestDmonImporter::garbage_data()
{
    const QByteArray random = addGarbageRows(11, kFormat);
    QTest::newRow("header then random bytes") << lines({kDtHeader, kDtUnits}) + random << QString();
}

void TestDmonImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = writeInput(dir, str("garbage.txt"), input);
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format);
    const bool withHeader = input.startsWith(kDtHeader);
    checkGarbage(r, format, kFormat, withHeader);
    if (r.outcome == FileOutcome::Imported) {
        QVERIFY(withHeader);
        QVERIFY(queryOne(r.db, "SELECT diagnostics FROM import").toInt() > 0);
    }
}

void TestDmonImporter::tenMegabyteLine()
{
    constexpr int kBytes = 10 << 20;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // Line 4: 10 MB of one field; line 5: a 10 MB value.
    std::string input = lines({kDtHeader, kDtUnits, " 20260115 12:00:01 0 80 5 1 5"}).toStdString() +
                        std::string(kBytes, 'x') + "\n 20260115 12:00:02 0 81 " + std::string(kBytes, '7') +
                        "y 2 6\n 20260115 12:00:03 0 82 7 3 7\n";
    const std::string path = test::writeFile(dir, str("huge.txt"), input);
    input.clear();
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, QString(), str("+02:00"));
    QCOMPARE(outcomeName(r.outcome), "imported");
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
             strs({"wrong_field_count|4", "bad_number|5"}));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.util")), str("10:00:01=5, 10:00:02=?, 10:00:03=7"));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.power")), str("10:00:01=80, 10:00:02=81, 10:00:03=82"));
    const int longest = queryOne(r.db, "SELECT max(length(message)) FROM diagnostic").toInt();
    QVERIFY2(longest < 1000, qPrintable(QStringLiteral("a diagnostic message of %1 characters").arg(longest)));
}

void TestDmonImporter::realFixtures_data()
{
    QTest::addColumn<QString>("path");
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty())
        QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): real nvidia-smi dmon captures not tested");
    int rows = 0;
    for (QDirIterator it(fixtures, {str("nvidia-smi-dmon*.txt")}, QDir::Files, QDirIterator::Subdirectories);
         it.hasNext();) {
        const QString f = it.next();
        QTest::newRow(qPrintable(QDir(fixtures).relativeFilePath(f))) << f;
        ++rows;
    }
    if (rows == 0) QSKIP("no nvidia-smi-dmon*.txt under the fixtures folder");
}

void TestDmonImporter::realFixtures()
{
    QFETCH(QString, path);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const Reference ref = referenceRows(file.readAll(), str("smutil"));
    QVERIFY(!ref.rows.empty());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path.toStdString(), QString());
    QCOMPARE(QString::fromStdString(r.importer), kFormat);
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(queryOne(r.db, "SELECT data_loss FROM import"), str("0"));
    QCOMPARE(queryOne(r.db, "SELECT count(*) FROM device WHERE kind = 'gpu'").toInt(), int(ref.rows.size()));
    int total = 0;
    for (const auto& [gpu, n] : ref.rows) {
        total += n;
        const QString device = QStringLiteral("gpu:") + gpu;
        QCOMPARE(queryOne(r.db, "SELECT points FROM series_summary WHERE metric = 'gpu.util' AND device = '" +
                                    device.toStdString() + "'")
                     .toInt(),
                 n);
        if (!path.contains(QLatin1String("gpm"))) continue;
        const QStringList active = queryRows(r.db, "SELECT points, missing_points, min_value >= 0, max_value <= 1 FROM "
                                                   "series_summary WHERE metric = 'gpu.sm_active' AND device = '" +
                                                       device.toStdString() + "'");
        QCOMPARE(active,
                 QStringList{QStringLiteral("%1|%2|1|1").arg(n).arg(ref.dashes.count(gpu) ? ref.dashes.at(gpu) : 0)});
    }
    QCOMPARE(queryOne(r.db, "SELECT rows_read FROM import").toInt(), total);
}

QTEST_MAIN(TestDmonImporter)
#include "tst_importers_dmon.moc"
