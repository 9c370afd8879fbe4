// Folded ("collapsed") stack import: detection, garbage, long lines, other formats' fixtures not claimed, then the
// real fixtures checked against an independent count of their trailing numbers. The cases of each behaviour are
// folders under tests/golden/folded.

#include "analysis/store/user_query.h"
#include "importers/folded/folded_importer.h"
#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDirIterator>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

// Imports one file as node node1 into dir/run.runlens.
Imported importPath(const QTemporaryDir& dir, const std::string& path, const QString& format)
{
    return test::importWith(dir.filePath(QStringLiteral("run.runlens")).toStdString(), path,
                            test::importOptions(format, {}, {}, str("node1")));
}

// An independent reading of a folded file: flamegraph.pl's regular expression on each line.
struct Reference
{
    int64_t rows = 0;
    double weight = 0;
    int64_t zero = 0;
    QList<int64_t> invalidLines;
};

Reference referenceParse(const QByteArray& decoded)
{
    static const QRegularExpression re(QStringLiteral("^(.*)[ \\t\\r\\n\\x0b\\x0c]+?([0-9]+(?:\\.[0-9]*)?)$"),
                                       QRegularExpression::DotMatchesEverythingOption);
    Reference ref;
    const QList<QByteArray> lines = decoded.split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QByteArray line = lines[i].trimmed();
        if (line.isEmpty() || line.startsWith('#') || line.startsWith("//")) continue;
        ++ref.rows;
        auto m = re.match(QString::fromLatin1(line));
        if (!m.hasMatch() || m.captured(1).trimmed().isEmpty()) {
            ref.invalidLines << i + 1;
            continue;
        }
        const double count = m.captured(2).toDouble(); // the second count of a differential line is the last one
        if (count == 0) ++ref.zero;
        ref.weight += count;
    }
    return ref;
}

QByteArray readDecoded(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QByteArray bytes = f.readAll();
    if (bytes.startsWith("\xff\xfe") || bytes.startsWith("\xfe\xff"))
        bytes = QString::fromUtf16(reinterpret_cast<const char16_t*>(bytes.constData() + 2), (bytes.size() - 2) / 2)
                    .toUtf8();
    return bytes;
}

} // namespace

class TestFoldedImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sniff_data();
    void sniff();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
    void lineOverReaderLimit();
    void fixturesOfOtherFormatsNotClaimed();
    void realFixtures_data();
    void realFixtures();
};

void TestFoldedImporter::sniff_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<int>("minScore");
    QTest::addColumn<int>("maxScore");

    QTest::newRow("folded stacks") << QByteArray("a;b;c 1\na;b 2\nmain 4\n") << 80 << 100;
    QTest::newRow("py-spy raw") << QByteArray("process 1:\"python x.py\";thread (2);<module> (x.py:1) 3\n") << 80
                                << 100;
    QTest::newRow("single frames only") << QByteArray("main 5\nidle 3\n") << 1 << 100;
    QTest::newRow("comments then stacks") << QByteArray("# c\n// d\na;b 1\n") << 80 << 100;
    QTest::newRow("head cut inside a line") << QByteArray("a;b 1\na;c 2\na;d") << 80 << 100;
    QTest::newRow("nvidia-smi csv with header") << QByteArray("timestamp, index, name, utilization.gpu [%]\n"
                                                              "2024/01/01 00:00:00.000, 0, NVIDIA H200, 99 %\n")
                                                << 0 << 0;
    QTest::newRow("nvidia-smi csv noheader nounits")
        << QByteArray("2024/01/01 00:00:00.000, 0, NVIDIA H200, 99\n2024/01/01 00:00:01.000, 0, NVIDIA H200, 98\n") << 0
        << 0;
    QTest::newRow("nvidia-smi dmon") << QByteArray("# gpu    pwr  gtemp\n# Idx      W      C\n    0     85     45\n"
                                                   "    0     86     45\n")
                                     << 0 << 0;
    QTest::newRow("prometheus text") << QByteArray("# HELP x y\n# TYPE x gauge\nx{gpu=\"0\"} 1980\nx{gpu=\"1\"} 1980\n")
                                     << 0 << 0;
    QTest::newRow("perf script") << QByteArray("iperf 27409/28744 [000] 441995.133575: cpu-clock: \n"
                                               "\t          59fef5 copy_user (/lib/vmlinux)\n")
                                 << 0 << 0;
    QTest::newRow("json lines") << QByteArray("{\"loss\": 1.5, \"step\": 3}\n") << 0 << 0;
    QTest::newRow("only comments") << QByteArray("# a\n// b\n") << 0 << 0;
    QTest::newRow("empty") << QByteArray() << 0 << 0;
}

void TestFoldedImporter::sniff()
{
    QFETCH(QByteArray, head);
    QFETCH(int, minScore);
    QFETCH(int, maxScore);
    const FoldedImporter importer;
    const int score = importer.sniff({std::string_view(head.constData(), static_cast<size_t>(head.size())), "x.txt"});
    QVERIFY2(score >= minScore && score <= maxScore, qPrintable(QString::number(score)));
}

void TestFoldedImporter::garbage_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("outcome");

    QByteArray random(4096, '\0');
    QRandomGenerator rng(42);
    for (char& c : random)
        c = static_cast<char>(rng.bounded(256));
    // Bytes from a small alphabet so that some lines do end in a count.
    QByteArray mixed;
    static const char kAlphabet[] = "ab;; 0123456789.\n\r\t#/\xff\x00";
    const QByteArray alphabet(kAlphabet, sizeof kAlphabet - 1);
    for (int i = 0; i < 8192; ++i)
        mixed += alphabet[static_cast<qsizetype>(rng.bounded(alphabet.size()))];

    QTest::newRow("random binary is not recognised") << random << QString() << str("not recognised");
    QTest::newRow("random binary forced") << random << str("folded") << str("imported");
    QTest::newRow("mixed bytes forced") << mixed << str("folded") << str("imported");
}

void TestFoldedImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QFETCH(QString, outcome);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(dir, QStringLiteral("garbage.bin"), input.toStdString());
    const Imported r = importPath(dir, path, format);
    QCOMPARE(QString::fromLatin1(outcomeName(r.outcome)), outcome);
    if (r.outcome != FileOutcome::Imported) return;
    // Every line is accounted for: stored, or reported.
    const Reference ref = referenceParse(input);
    QVERIFY(!ref.invalidLines.isEmpty());
    QCOMPARE(queryOne(r.db, "SELECT rows_read FROM import").toLongLong(), qlonglong(ref.rows));
    QCOMPARE(queryOne(r.db, "SELECT count FROM diagnostic_count WHERE kind = 'invalid_line'").toLongLong(),
             qlonglong(ref.invalidLines.size()));
    QCOMPARE(queryOne(r.db, "SELECT coalesce(sum(weight), 0) FROM stack_sample").toDouble(), ref.weight);
    QCOMPARE(queryOne(r.db, "SELECT status FROM import_log"), QStringLiteral("data_loss"));
}

void TestFoldedImporter::tenMegabyteLine()
{
    constexpr int kBytes = 10 << 20;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::string input = "root;" + std::string(kBytes, 'x') + " 3\n" + std::string(kBytes, 'y') + "\na;b 2\n";
    const std::string path = test::writeFile(dir, QStringLiteral("huge.folded"), input);
    input.clear();
    const Imported r = importPath(dir, path, QStringLiteral("folded"));
    QCOMPARE(QString::fromLatin1(outcomeName(r.outcome)), QStringLiteral("imported"));
    QCOMPARE(queryOne(r.db, "SELECT sum(weight) FROM stack_sample"), QStringLiteral("5"));
    QCOMPARE(queryOne(r.db, "SELECT max(length(name)) FROM frame"), QString::number(kBytes));
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic"), strs({"invalid_line|2"}));
    QVERIFY(queryOne(r.db, "SELECT length(message) FROM diagnostic").toInt() < 200);
}

void TestFoldedImporter::lineOverReaderLimit()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::string input = "a;" + std::string(LineReader::kDefaultMaxLine, 'z') + " 1\na;b 2\n";
    const std::string path = test::writeFile(dir, QStringLiteral("over.folded"), input);
    input.clear();
    input.shrink_to_fit();
    const Imported r = importPath(dir, path, str("folded"));
    QCOMPARE(QString::fromLatin1(outcomeName(r.outcome)), str("imported"));
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic"), strs({"line_too_long|1"}));
    QCOMPARE(queryRows(r.db, kStackRowsSql), strs({"|0||0|a;b|2|2"}));
    QCOMPARE(queryOne(r.db, "SELECT rows_read FROM import"), str("2"));
}

// Whatever else the fixtures hold (CSV, dmon, JSON, logs) must not be taken for folded stacks.
void TestFoldedImporter::fixturesOfOtherFormatsNotClaimed()
{
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES)");
    const FoldedImporter importer;
    QDirIterator it(fixtures, QDir::Files, QDirIterator::Subdirectories);
    int checked = 0;
    while (it.hasNext()) {
        const QString path = it.next();
        if (path.endsWith(QLatin1String(".folded")) || path.contains(QLatin1String("/stackcollapse/"))) continue;
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray head = f.read(qint64{64} * 1024);
        const int score = importer.sniff({std::string_view(head.constData(), static_cast<size_t>(head.size())),
                                          QFileInfo(path).fileName().toStdString()});
        QVERIFY2(score == 0, qPrintable(QStringLiteral("%1 scored %2").arg(path).arg(score)));
        ++checked;
    }
    QVERIFY(checked > 0);
}

void TestFoldedImporter::realFixtures_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("format");
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures not found (set RUNLENS_FIXTURES): real folded files not tested");

    QDirIterator it(fixtures, {QStringLiteral("*.folded")}, QDir::Files, QDirIterator::Subdirectories);
    QStringList found;
    while (it.hasNext())
        found << it.next();
    found.sort();
    for (const QString& f : found)
        QTest::newRow(qPrintable(QDir(fixtures).relativeFilePath(f))) << f << QString();
    for (const char* name : {"simple.txt", "simple-with-invalids.txt"}) {
        const QString f = fixtures + QLatin1String("/public/speedscope/sample/profiles/stackcollapse/") + str(name);
        if (QFileInfo::exists(f)) {
            QTest::newRow(name) << f << str("folded");
            found << f;
        }
    }
    if (found.isEmpty()) QSKIP("no folded stack file under the fixtures folder");
}

void TestFoldedImporter::realFixtures()
{
    QFETCH(QString, path);
    QFETCH(QString, format);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Imported r = importPath(dir, path.toStdString(), format);
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(r.importer, std::string("folded")); // detected, when not forced

    const Reference ref = referenceParse(readDecoded(path));
    QVERIFY(ref.rows > 0);
    QCOMPARE(queryOne(r.db, "SELECT rows_read FROM import").toLongLong(), qlonglong(ref.rows));
    QVERIFY(qFuzzyCompare(queryOne(r.db, "SELECT sum(weight) FROM stack_sample").toDouble(), ref.weight));
    // The documented view agrees, and every row is untimed (folded stacks carry no time).
    QVERIFY(qFuzzyCompare(queryOne(r.db, "SELECT sum(total_weight) FROM stack_summary").toDouble(), ref.weight));
    QCOMPARE(queryOne(r.db, "SELECT sum(untimed_rows) FROM stack_summary"),
             queryOne(r.db, "SELECT count(*) FROM stack_sample"));
    QStringList invalid;
    for (int64_t line : ref.invalidLines)
        invalid << QString::number(line);
    QCOMPARE(queryRows(r.db, "SELECT line FROM diagnostic WHERE kind = 'invalid_line' ORDER BY id"), invalid);
    if (path.endsWith(QLatin1String("simple-with-invalids.txt"))) {
        QCOMPARE(invalid.size(), 1);
        QCOMPARE(queryOne(r.db, "SELECT count FROM diagnostic_count WHERE kind = 'comment_line'"), QStringLiteral("2"));
    }
    // py-spy root frames become thread rows, never frames.
    QCOMPARE(queryOne(r.db, "SELECT count(*) FROM frame WHERE name LIKE 'process %:\"%' OR name LIKE 'thread (%'"),
             QStringLiteral("0"));
}

QTEST_GUILESS_MAIN(TestFoldedImporter)
#include "tst_importers_folded.moc"
