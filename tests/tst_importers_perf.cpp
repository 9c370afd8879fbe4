// perf script text import: detection, the anchor, an invalid line and an empty file, then the real fixtures checked
// against an independent count of their sample header lines. The docs/formats.md §10 variants are folders under
// tests/golden/perf.

#include "importers/import_session.h"
#include "importers/perf/perf_script_importer.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

// Imports one file as node node1 into a new dir/run.runlens.
Imported importPath(const QTemporaryDir& dir, const std::string& path, const QString& format = {},
                    const std::map<std::string, std::string>& extra = {})
{
    const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
    QFile::remove(QString::fromStdString(db));
    ImportOptions options = test::importOptions(format, {}, {}, QStringLiteral("node1"));
    options.extra = extra;
    return test::importWith(db, path, options);
}

} // namespace

class TestPerfScriptImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sniff_data();
    void sniff();
    void anchor();
    void invalidLine();
    void emptyFile();
    void realFixtures_data();
    void realFixtures();
};

void TestPerfScriptImporter::sniff_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<int>("score");
    QTest::newRow("pid/tid") << QByteArray("iperf 27409/28744 [000] 441995.133575: cpu-clock: \n"
                                           "\t          59fef5 copy_user (/lib/vmlinux)\n")
                             << 90;
    QTest::newRow("legacy") << QByteArray("java 19983 cycles:\nffffffff8103d0ca native_write ([kernel.kallsyms])\n")
                            << 90;
    QTest::newRow("folded") << QByteArray("a;b;c 1\na;b 2\n") << 0;
    QTest::newRow("csv") << QByteArray("time,gpu,util\n1,0,99\n") << 0;
    QTest::newRow("json") << QByteArray("{\"loss\": 1.5, \"step\": 3}\n") << 0;
    QTest::newRow("empty") << QByteArray() << 0;
}

void TestPerfScriptImporter::sniff()
{
    QFETCH(QByteArray, head);
    QFETCH(int, score);
    const PerfScriptImporter importer;
    QCOMPARE(importer.sniff({std::string_view(head.constData(), static_cast<size_t>(head.size())), "x.txt"}), score);
}

void TestPerfScriptImporter::anchor()
{
    QTemporaryDir dir;
    const std::string path = test::writeFile(dir, QStringLiteral("p.txt"),
                                             "app 5/6 [001] 441995.133575: cpu-clock: \n\t 1 f (/bin/app)\n\n"
                                             "app 5/6 [001] 441995.133576: 7 cpu-clock: \n\t 1 f (/bin/app)\n");
    const auto r = importPath(dir, path, {}, {{"anchor", "2026-01-01T00:00:00Z"}});
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(queryRows(r.db, "SELECT ts_ns, weight FROM stack_samples ORDER BY ts_ns, rowid"),
             strs({"1767667595133575000|1", "1767667595133576000|7"}));
    const auto e = importPath(dir, path, {}, {{"anchor", "1000"}});
    QCOMPARE(queryRows(e.db, "SELECT min(ts_ns) FROM stack_samples"), strs({"442995133575000"}));
    QCOMPARE(queryRows(e.db, "SELECT samples, untimed_rows, pid, tid FROM stack_summary"), strs({"2|0|5|6"}));
}

void TestPerfScriptImporter::invalidLine()
{
    QTemporaryDir dir;
    const std::string path =
        test::writeFile(dir, QStringLiteral("p.txt"),
                        "app 5 1.5: cpu-clock:\n\t1 f (/bin/app)\n\tnot a frame\n\napp 5 1.6: cpu-clock:\n\ngarbage\n");
    const auto r = importPath(dir, path, QStringLiteral("perf-script"));
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
             strs({"invalid_line|3", "empty_stack|6", "invalid_line|7"}));
    QCOMPARE(queryRows(r.db, "SELECT rows_read, samples FROM import"), strs({"2|1"}));
}

void TestPerfScriptImporter::emptyFile()
{
    QTemporaryDir dir;
    const std::string path = test::writeFile(dir, QStringLiteral("p.txt"), "");
    const auto r = importPath(dir, path, QStringLiteral("perf-script"));
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(queryRows(r.db, "SELECT count(*) FROM stack_samples"), strs({"0"}));
}

void TestPerfScriptImporter::realFixtures_data()
{
    QTest::addColumn<QString>("path");
    const QString root = test::fixturesDir();
    if (root.isEmpty()) return;
    const QStringList patterns{QStringLiteral("/public/FlameGraph/test"),
                               QStringLiteral("/public/speedscope/sample/profiles/linux-perf")};
    for (const QString& sub : patterns) {
        QDirIterator it(root + sub, {QStringLiteral("perf-*.txt"), QStringLiteral("*.linux-perf.txt")}, QDir::Files);
        while (it.hasNext()) {
            const QString p = it.next();
            QTest::newRow(qPrintable(p.mid(root.size()))) << p;
        }
    }
}

void TestPerfScriptImporter::realFixtures()
{
    if (test::fixturesDir().isEmpty()) QSKIP("../shared/fixtures is absent: real perf script files not checked");
    QFETCH(QString, path);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    // Independent count: unindented lines ending with "<event>:" that carry a pid (and optional /tid).
    static const QRegularExpression header(QStringLiteral("^\\S.*\\s\\d+(/\\d+)?\\s.*:\\s*$"));
    int64_t expected = 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (!line.startsWith('#') && header.match(QString::fromUtf8(line)).hasMatch()) ++expected;
    QVERIFY(expected > 0);
    QTemporaryDir dir;
    const auto r = importPath(dir, path.toStdString());
    QCOMPARE(r.importer, std::string("perf-script"));
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    QCOMPARE(queryRows(r.db, "SELECT sum(samples) FROM stack_summary"), QStringList{QString::number(expected)});
    QCOMPARE(queryRows(r.db, "SELECT rows_read FROM import"), QStringList{QString::number(expected)});
    QCOMPARE(queryRows(r.db, "SELECT count(*) FROM diagnostic WHERE kind = 'invalid_line'"), strs({"0"}));
}

QTEST_GUILESS_MAIN(TestPerfScriptImporter)
#include "tst_importers_perf.moc"
