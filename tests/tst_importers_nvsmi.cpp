// nvidia-smi --query-gpu CSV import (docs/formats.md §1): compressed and plain alike, re-imports, overlapping logs,
// garbage and a 10 MB line, then the real fixtures checked against an independent count of their rows per GPU. The
// cases of each behaviour and quirk are folders under tests/golden/nvsmi.

#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/user_query.h"
#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <map>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

const QString kFormat = QStringLiteral("nvidia-smi-query-csv");

const std::string kCountsSql =
    countsSql({"series", "point_chunk", "import", "device", "device_attribute", "diagnostic"});

// Every point of a series as "time=value", a missing one as "time=?<raw token>".
QString pointsText(store::RunDatabase& db, int64_t seriesId)
{
    return test::pointsText(test::readSeries(db, seriesId, true),
                            [](int64_t ns) { return utc(ns, Fraction::AlwaysMillis); });
}

// Every series of a run with its points, for comparing two imports.
QStringList dumpAll(const std::string& dbPath)
{
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadOnly);
    if (!db) return {QString::fromStdString(db.error().toString())};
    QStringList out = queryRows(dbPath, "SELECT s.id, d.name, s.metric, s.unit, s.raw_name FROM series s JOIN device d "
                                        "ON d.id = s.device_id ORDER BY d.name, s.metric");
    for (QString& row : out)
        row += QLatin1Char('|') + pointsText(**db, row.section(QLatin1Char('|'), 0, 0).toLongLong());
    return out;
}

// A -lms style capture: samples x gpus rows, 250 ms apart, a [N/A] power every 97th sample.
QByteArray generatedCsv(int samples, int gpus, int firstGpu = 0)
{
    QByteArray out("timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W], "
                   "clocks.current.sm [MHz], temperature.gpu, pstate\n");
    const QDateTime start(QDate(2026, 1, 15), QTime(10, 0), Qt::UTC);
    for (int i = 0; i < samples; ++i) {
        for (int g = firstGpu; g < firstGpu + gpus; ++g) {
            const QByteArray ts =
                start.addMSecs(i * 250 + g * 3).toString(QStringLiteral("yyyy/MM/dd HH:mm:ss.zzz")).toLatin1();
            const QByteArray power = i % 97 == 5 ? QByteArray("[N/A]") : QByteArray::number(80 + i % 600) + ".25 W";
            out += ts + ", " + QByteArray::number(g) + ", NVIDIA H200, " + QByteArray::number((i * 7 + g) % 101) +
                   " %, " + QByteArray::number(1000 + i) + " MiB, " + power + ", " +
                   QByteArray::number(1500 + i % 480) + " MHz, " + QByteArray::number(30 + i % 50) + ", P" +
                   QByteArray::number(i % 3) + "\n";
        }
    }
    return out;
}

// An independent reading of a query CSV: rows per GPU index with their first and last timestamps (read as UTC).
struct GpuRows
{
    int rows = 0;
    qint64 firstNs = 0, lastNs = 0;
};

std::map<QString, GpuRows> referenceRows(const QByteArray& text, bool* hasUtilAndIndex)
{
    std::map<QString, GpuRows> out;
    QStringList header;
    QByteArray headerLine;
    for (QByteArray line : text.split('\n')) {
        if (line.endsWith('\r')) line.chop(1);
        if (line.trimmed().isEmpty()) continue;
        const QList<QByteArray> fields = line.split(',');
        if (header.isEmpty()) {
            headerLine = line;
            for (const QByteArray& f : fields)
                header << QString::fromUtf8(f).section(QStringLiteral(" ["), 0, 0).trimmed().toLower();
            continue;
        }
        const int ts = static_cast<int>(header.indexOf(QStringLiteral("timestamp")));
        const int idx = static_cast<int>(header.indexOf(QStringLiteral("index")));
        if (ts < 0 || line == headerLine || fields.size() != header.size()) continue;
        const QString t = QString::fromUtf8(fields[ts].trimmed());
        const QDateTime dt(QDate::fromString(t.left(10), QStringLiteral("yyyy/MM/dd")),
                           QTime::fromString(t.mid(11), QStringLiteral("HH:mm:ss.zzz")), Qt::UTC);
        GpuRows& g = out[idx >= 0 ? QString::fromUtf8(fields[idx].trimmed()) : QStringLiteral("0")];
        const qint64 ns = dt.toMSecsSinceEpoch() * 1000000;
        if (g.rows++ == 0) g.firstNs = ns;
        g.lastNs = ns;
    }
    *hasUtilAndIndex = header.contains(QStringLiteral("utilization.gpu")) && header.contains(QStringLiteral("index"));
    return out;
}

// A CSV from a header and rows; a row starting with '@' is on 2026/01/15 10:00 ("@01.500" = 10:00:01.500).
QByteArray csv(const char* header, std::initializer_list<const char*> rows)
{
    QByteArray out = QByteArray(header) + '\n';
    for (const char* r : rows)
        out += (r[0] == '@' ? "2026/01/15 10:00:" + QByteArray(r + 1) : QByteArray(r)) + '\n';
    return out;
}

const char* const kH3 = "timestamp, index, utilization.gpu [%], power.draw [W]";

} // namespace

class TestNvsmiImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void compressedSameAsPlain();
    void truncatedZstdLeavesDatabaseUnchanged();
    void reimportIsNoOp();
    void overlappingLogsStoredOnce();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
    void realFixtures_data();
    void realFixtures();
    void publicNonNvsmiCsv();
};

void TestNvsmiImporter::compressedSameAsPlain()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QByteArray text = generatedCsv(3000, 2);
    QStringList reference;
    for (const QString& enc : strs({"plain", "zstd", "gzip"})) {
        const QString ext = enc == str("zstd") ? str(".zst") : enc == str("gzip") ? str(".gz") : QString();
        const std::string path = test::writeFile(dir, enc + str("/gpu.csv") + ext, encode(text, enc));
        const Imported r = importPath(dir.filePath(enc + str(".runlens")).toStdString(), path, QString());
        QCOMPARE(outcomeName(r.outcome), "imported");
        const QStringList dump = dumpAll(r.db)
                                 << queryRows(r.db, "SELECT kind, line, message FROM diagnostic ORDER BY id");
        if (reference.isEmpty()) {
            reference = dump;
            QCOMPARE(queryOne(r.db, "SELECT sum(points) FROM series WHERE metric = 'gpu.util'"), str("6000"));
            QCOMPARE(queryOne(r.db, "SELECT sum(missing_points) FROM series WHERE metric = 'gpu.power'"),
                     QString::number(2 * 31));
        } else {
            QCOMPARE(dump, reference);
        }
    }
}

void TestNvsmiImporter::truncatedZstdLeavesDatabaseUnchanged()
{
    checkCutZstdImport(kCountsSql, str("first.csv"), generatedCsv(50, 1), str("6|6|1|1|1|0"), str("gpu.csv.zst"),
                       generatedCsv(20000, 2, 1), importOptions(QString()));
}

void TestNvsmiImporter::reimportIsNoOp()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const std::string path = test::writeFile(dir, str("n/gpu.csv"), generatedCsv(100, 2).toStdString());
    const Imported first = importPath(db, path, QString());
    QCOMPARE(outcomeName(first.outcome), "imported");
    const QString before = queryOne(db, kCountsSql);
    const QStringList dump = dumpAll(db);
    const Imported again = importPath(db, path, QString());
    QCOMPARE(outcomeName(again.outcome), "already imported");
    QCOMPARE(again.result.importId, first.result.importId);
    QCOMPARE(queryOne(db, kCountsSql), before);
    QCOMPARE(dumpAll(db), dump);
}

// Two log files that overlap in time (a rotated log copied twice, say): the shared samples are stored once
// and counted as already_stored; the series holds the union.
void TestNvsmiImporter::overlappingLogsStoredOnce()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(str("t.runlens")).toStdString();
    const QByteArray full = generatedCsv(300, 2);
    const QList<QByteArray> lines = full.split('\n');
    // First file: samples 0-199; second: the header and samples 100-299 (2 GPUs per sample).
    QByteArray first = lines[0] + '\n', second = lines[0] + '\n';
    for (int i = 1; i <= 400; ++i)
        first += lines[i] + '\n';
    for (int i = 201; i <= 600; ++i)
        second += lines[i] + '\n';
    const std::string a = test::writeFile(dir, str("n/a.csv"), first.toStdString());
    const std::string b = test::writeFile(dir, str("n/b.csv"), second.toStdString());
    QCOMPARE(outcomeName(importPath(db, a, QString()).outcome), "imported");
    QCOMPARE(outcomeName(importPath(db, b, QString()).outcome), "imported");
    QCOMPARE(queryOne(db, "SELECT points FROM series_summary WHERE device = 'gpu:1' AND metric = 'gpu.util'"),
             str("300"));
    QCOMPARE(queryOne(db, "SELECT count(*), count(DISTINCT ts_ns) FROM series_points WHERE metric = 'gpu.power'"),
             str("600|600"));
    // 100 samples × 2 GPUs × 6 numeric properties were in both files: said in the import's summary, and not
    // counted as a problem.
    QCOMPARE(queryOne(db, "SELECT diagnostics, summary LIKE '%1200 points already stored%' FROM import "
                          "WHERE path LIKE '%b.csv'"),
             str("0|1"));
}

void TestNvsmiImporter::garbage_data()
{
    const QByteArray random = addGarbageRows(7, kFormat);
    QTest::newRow("header then random bytes") << csv(kH3, {}) + random << QString();
}

void TestNvsmiImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = writeInput(dir, str("garbage.csv"), input);
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format);
    const bool withHeader = input.startsWith(kH3);
    checkGarbage(r, format, kFormat, withHeader);
    if (r.outcome == FileOutcome::Imported) QVERIFY(queryOne(r.db, "SELECT diagnostics FROM import").toInt() > 0);
}

void TestNvsmiImporter::tenMegabyteLine()
{
    constexpr int kBytes = 10 << 20;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // Line 3: 10 MB without a comma; line 4: a 10 MB value.
    std::string input = csv(kH3, {"@01.000, 0, 1 %, 80 W"}).toStdString() + std::string(kBytes, 'x') +
                        "\n2026/01/15 10:00:02.000, 0, " + std::string(kBytes, 'y') + " %, 81 W\n" +
                        "2026/01/15 10:00:03.000, 0, 3 %, 82 W\n";
    const std::string path = test::writeFile(dir, str("huge.csv"), input);
    input.clear();
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, QString());
    QCOMPARE(outcomeName(r.outcome), "imported");
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
             strs({"wrong_field_count|3", "bad_number|4"}));
    QCOMPARE(queryRows(r.db, "SELECT metric, points, missing_points FROM series ORDER BY metric"),
             strs({"gpu.power|3|0", "gpu.util|3|1"}));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.power"), Fraction::AlwaysMillis, true),
             str("10:00:01.000=80, 10:00:02.000=81, 10:00:03.000=82"));
    const int longest = queryOne(r.db, "SELECT max(length(message)) FROM diagnostic").toInt();
    QVERIFY2(longest < 1000, qPrintable(QStringLiteral("a diagnostic message of %1 characters").arg(longest)));
}

void TestNvsmiImporter::realFixtures_data()
{
    QTest::addColumn<QString>("path");       // the file to import, or empty to write `content`
    QTest::addColumn<QByteArray>("content"); // the CSV text
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty())
        QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): real nvidia-smi CSVs not tested");

    int rows = 0;
    QStringList files;
    for (QDirIterator it(fixtures, QDir::Files, QDirIterator::Subdirectories); it.hasNext();)
        files << it.next();
    files.sort();
    for (const QString& f : files) {
        const QString rel = QDir(fixtures).relativeFilePath(f);
        QFile file(f);
        if (file.size() > (8 << 20) || !file.open(QIODevice::ReadOnly)) continue;
        const QByteArray bytes = file.readAll();
        if (bytes.contains('\0')) continue; // binary or compressed
        if (QFileInfo(f).fileName() == QLatin1String("nvidia-smi-query.csv")) {
            QTest::newRow(qPrintable(rel)) << f << bytes;
            ++rows;
            continue;
        }
        if (!rel.startsWith(QLatin1String("public/"))) continue;
        // Public captures hold many command outputs between '#' banner lines: sniff each block on its own.
        const QList<QByteArray> lines = bytes.split('\n');
        for (qsizetype i = 0; i < lines.size(); ++i) {
            if (lines[i].startsWith('#') || lines[i].trimmed().isEmpty()) continue;
            const qsizetype start = i;
            QByteArray block;
            while (i < lines.size() && !lines[i].startsWith('#'))
                block += lines[i++] + '\n';
            const SniffInput head{std::string_view(block.constData(), size_t(block.size())), {}};
            const auto [importer, score] = detectFormat(head);
            bool hasUtil = false; // a --query-gpu CSV, not --query-compute-apps and the like
            referenceRows(block, &hasUtil);
            if (importer && importer->format() == kFormat.toStdString() && hasUtil) {
                QTest::newRow(qPrintable(QStringLiteral("%1:%2").arg(rel).arg(start + 1))) << QString() << block;
                ++rows;
            }
        }
    }
    if (rows == 0) QSKIP("no nvidia-smi query CSV under the fixtures folder");
}

void TestNvsmiImporter::realFixtures()
{
    QFETCH(QString, path);
    QFETCH(QByteArray, content);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string file =
        path.isEmpty() ? test::writeFile(dir, str("capture.csv"), content.toStdString()) : path.toStdString();
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), file, QString());
    QCOMPARE(QString::fromStdString(r.importer), kFormat);
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    bool hasUtil = false;
    const std::map<QString, GpuRows> ref = referenceRows(content, &hasUtil);
    QVERIFY(hasUtil && !ref.empty());
    QCOMPARE(queryOne(r.db, "SELECT count(*) FROM device WHERE kind = 'gpu'").toInt(), int(ref.size()));
    QCOMPARE(queryOne(r.db, "SELECT data_loss FROM import"), str("0"));

    auto db = store::RunDatabase::open(r.db, store::OpenMode::ReadOnly);
    QVERIFY(db);
    store::RunReader reader(**db);
    for (const auto& [gpu, rows] : ref) {
        auto s = reader.findSeries("n1", "gpu", gpu.toStdString(), "gpu.util");
        QVERIFY(s && *s);
        const store::SeriesInfo info = **s;
        QCOMPARE(info.points, int64_t(rows.rows));
        auto points = reader.readPoints(info.id, {});
        QVERIFY(points && !points->empty());
        QCOMPARE(qint64(points->front().tsNs), rows.firstNs);
        QCOMPARE(qint64(points->back().tsNs), rows.lastNs);
    }
    // No series gets more points than its GPU has rows (one value per row and column).
    QStringList tooMany;
    for (const QString& row :
         queryRows(r.db, "SELECT d.name, s.metric, s.raw_name, s.points FROM series s JOIN device d "
                         "ON d.id = s.device_id")) {
        const QStringList cells = row.split(QLatin1Char('|'));
        if (cells[3].toInt() > ref.at(cells[0]).rows)
            tooMany << QStringLiteral("GPU %1 points for %2 rows").arg(row).arg(ref.at(cells[0]).rows);
    }
    QVERIFY2(tooMany.isEmpty(), qPrintable(tooMany.join(QStringLiteral("; "))));
}

void TestNvsmiImporter::publicNonNvsmiCsv()
{
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): DCConv CSV not tested");
    const QString path = fixtures + str("/public/DCConv/gpu_usage.csv");
    if (!QFileInfo::exists(path)) QSKIP("public/DCConv/gpu_usage.csv not in the fixtures");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Imported detected = importPath(dir.filePath(str("a.runlens")).toStdString(), path.toStdString(), QString());
    QVERIFY(detected.importer != kFormat.toStdString());

    const Imported forced = importPath(dir.filePath(str("b.runlens")).toStdString(), path.toStdString(), kFormat);
    QCOMPARE(outcomeName(forced.outcome), "failed");
    const QString error = QString::fromStdString(forced.error);
    QVERIFY2(error.contains(str("gpu_usage.csv:1")) && error.contains(str("timestamp")), qPrintable(error));
    QCOMPARE(queryOne(forced.db, "SELECT count(*) FROM import"), str("0"));
}

QTEST_MAIN(TestNvsmiImporter)
#include "tst_importers_nvsmi.moc"
