// How `runlens import` places sources without wall-clock times (trainer logs with elapsed times only): a folder copied
// with new modification times gives the same run and findings, the log's steps land where the run's ground truth
// says they ended, a log of another run stays unanchored without widening the run, start= and a later import of the
// node's metrics place an unanchored log. Runs the real fixtures of ../shared/fixtures (skipped when absent).

#include "tests/cli_support.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>

using namespace runlens;
using namespace runlens::test::binary;

namespace {

using runlens::test::str;

// Copies a fixture run folder as `cp -r` would (new files, new modification times), without its truth/ folder (ground
// truth is never an input), then sets every file's modification time to now + shiftDays. Files whose name contains
// `without` (when given) are left out.
bool copyRun(const QString& from, const QString& to, int shiftDays, const QString& without = {})
{
    const QDateTime when = QDateTime::currentDateTimeUtc().addDays(shiftDays);
    QDirIterator it(from, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QString rel = QDir(from).relativeFilePath(path);
        if (rel.startsWith(str("truth/")) || (!without.isEmpty() && rel.contains(without))) continue;
        const QString target = to + QLatin1Char('/') + rel;
        if (!QDir().mkpath(QFileInfo(target).absolutePath()) || !QFile::copy(path, target)) return false;
        QFile f(target);
        // (the fixtures may be read-only: the copy keeps their permissions)
        f.setPermissions(f.permissions() | QFileDevice::WriteOwner);
        if (!f.open(QIODevice::ReadWrite) || !f.setFileTime(when, QFileDevice::FileModificationTime)) return false;
    }
    return true;
}

// The first row of a query on a run, cells joined by '|'.
QString one(const QString& db, const std::string& sql)
{
    return runlens::test::queryOne(db.toStdString(), sql);
}

QString fixture(const char* name)
{
    const QString dir = runlens::test::fixturesDir();
    if (dir.isEmpty()) return {};
    const QString path = dir + QLatin1Char('/') + str(name);
    return QDir(path).exists() ? path : QString();
}

// The run's time range from every series (first, last), ns.
std::pair<double, double> runRange(const QString& db)
{
    const QStringList row = one(db, "SELECT min(first_ns), max(last_ns) FROM series_summary").split(QLatin1Char('|'));
    if (row.size() != 2) return {0, 0};
    return {row[0].toDouble(), row[1].toDouble()};
}

// Ground-truth step ends of rank 0: step → ns.
std::map<int64_t, double> truthSteps(const QString& run)
{
    std::map<int64_t, double> out;
    QFile f(run + str("/truth/events-rank0.jsonl"));
    if (!f.open(QIODevice::ReadOnly)) return out;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value(str("event")).toString() == str("step"))
            out[o.value(str("step")).toInteger()] = o.value(str("ts_ns")).toDouble();
    }
    return out;
}

QJsonArray findings(const QString& db)
{
    const Run r = cli({str("analyze"), db, str("--json"), str("--no-store")});
    if (r.exitCode != 0) return {};
    return QJsonDocument::fromJson(r.out.toUtf8()).object().value(str("findings")).toArray();
}

QString describe(const QJsonArray& fs)
{
    QStringList out;
    for (const auto& v : fs) {
        const QJsonObject f = v.toObject();
        out << QStringLiteral("%1 %2 %3 impact %4 from %5 to %6")
                   .arg(f.value(str("rule")).toString(), f.value(str("severity")).toString())
                   .arg(f.value(str("primary")).toBool())
                   .arg(f.value(str("impact")).toDouble())
                   .arg(f.value(str("start_ns")).toDouble(), 0, 'f', 0)
                   .arg(f.value(str("end_ns")).toDouble(), 0, 'f', 0);
    }
    return out.join(QLatin1Char('\n'));
}

} // namespace

class TestCliAnchor : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void copiedFolderGivesTheSameRun_data();
    void copiedFolderGivesTheSameRun();
    void logOfAnotherRunStaysUnanchored();
    void unanchoredLogPlacedLater();
    void logOfItsOwnNodeMatchesEveryNode();
    void copiedUntimedCaptureFarFromRun();
};

void TestCliAnchor::copiedFolderGivesTheSameRun_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("h200-gloo-small") << str("h200-gloo-small");
    QTest::newRow("h200x2-fsdp-hang") << str("h200x2-fsdp-hang");
    QTest::newRow("h200-mixed-stalls") << str("h200-mixed-stalls");
    QTest::newRow("h200-spin-pair/before") << str("h200-spin-pair/before");
    QTest::newRow("h200-spin-pair/after") << str("h200-spin-pair/after");
}

void TestCliAnchor::copiedFolderGivesTheSameRun()
{
    QFETCH(QString, name);
    const QString source = fixture(name.toUtf8().constData());
    if (source.isEmpty()) QSKIP("../shared/fixtures not found: copied fixture runs not tested");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // As copied today, a year later (touch -d '+1 year'), and without the trainer log (the timed sources alone).
    const QString now = dir.filePath(str("now")), later = dir.filePath(str("later")),
                  timed = dir.filePath(str("timed"));
    QVERIFY(copyRun(source, now, 0));
    QVERIFY(copyRun(source, later, 365));
    QVERIFY(copyRun(source, timed, 0, str("trainer_log")));
    for (const QString& folder : {now, later, timed})
        EXPECT_EXIT(cli({str("import"), str("-o"), folder + str(".runlens"), folder}), 0);
    const Run imported = cli({str("info"), later + str(".runlens")});
    EXPECT_EXIT(imported, 0);

    // The log is aligned, never left where its new modification time would put it.
    const QString anchor = one(later + str(".runlens"), "SELECT anchor || '|' || anchor_uncertainty_ns FROM import "
                                                        "WHERE format = 'llamafactory-trainer-log'");
    QVERIFY2(anchor.startsWith(str("aligned|")), qPrintable(anchor + QLatin1Char('\n') + imported.describe()));
    const double uncertaintyNs = anchor.section(QLatin1Char('|'), 1).toDouble();
    QVERIFY2(uncertaintyNs > 0 && uncertaintyNs <= 1.5e9, qPrintable(anchor));

    // The same range as the timed sources alone, whatever the files' times.
    const auto [t0, t1] = runRange(timed + str(".runlens"));
    for (const QString& run : {now, later}) {
        const auto [a, b] = runRange(run + str(".runlens"));
        QVERIFY2(std::abs(a - t0) <= 1e9 && std::abs(b - t1) <= 1e9,
                 qPrintable(QStringLiteral("%1: %2..%3 against %4..%5").arg(run).arg(a).arg(b).arg(t0).arg(t1)));
    }

    // The logged steps end where the ground truth says they did (within the placement's uncertainty and the log's
    // whole-second elapsed times).
    const std::map<int64_t, double> truth = truthSteps(source);
    QVERIFY(!truth.empty());
    const QStringList points =
        cli({str("query"), later + str(".runlens"),
             str("SELECT CAST(value AS INTEGER), ts_ns FROM series_points WHERE metric = 'train.step'")})
            .out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    std::vector<double> errors;
    for (const QString& line : points) {
        const QStringList cells = line.split(QRegularExpression(str("[|,\\t ]+")), Qt::SkipEmptyParts);
        if (cells.size() < 2) continue;
        bool ok1 = false, ok2 = false;
        const int64_t step = cells[0].toLongLong(&ok1);
        const double ts = cells[1].toDouble(&ok2);
        if (!ok1 || !ok2) continue;
        if (auto it = truth.find(step); it != truth.end()) errors.push_back(ts - it->second);
    }
    QVERIFY2(errors.size() * 2 >= truth.size(), qPrintable(points.mid(0, 5).join(QLatin1Char('\n'))));
    std::sort(errors.begin(), errors.end());
    const double median = errors[errors.size() / 2];
    QVERIFY2(std::abs(median) <= uncertaintyNs + 1e9,
             qPrintable(QStringLiteral("median step error %1 s, ± %2 s").arg(median / 1e9).arg(uncertaintyNs / 1e9)));

    // The same findings from both copies.
    const QJsonArray a = findings(now + str(".runlens")), b = findings(later + str(".runlens"));
    QVERIFY2(!a.isEmpty(), "no findings");
    QCOMPARE(describe(b), describe(a));
}

void TestCliAnchor::logOfAnotherRunStaysUnanchored()
{
    const QString small = fixture("h200-gloo-small"), other = fixture("h200x2-fsdp-hang");
    if (small.isEmpty() || other.isEmpty()) QSKIP("../shared/fixtures not found: foreign trainer log not tested");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString run = dir.filePath(str("run"));
    QVERIFY(copyRun(small, run, 0, str("trainer_log")));
    const QString db = dir.filePath(str("r.runlens"));
    EXPECT_EXIT(cli({str("import"), str("-o"), db, run}), 0);
    const auto before = runRange(db);
    // Another run's log, filed with this run's node.
    const QString foreign = dir.filePath(str("trainer_log-other.jsonl"));
    QVERIFY(QFile::copy(other + str("/trainer_log-rank0.jsonl"), foreign));
    QFile(foreign).setPermissions(QFile(foreign).permissions() | QFileDevice::WriteOwner);
    const QString node = one(db, "SELECT name FROM node LIMIT 1");
    const Run r = cli({str("import"), str("-o"), db, str("--node"), node, foreign});
    EXPECT_EXIT(r, 0);
    EXPECT_MATCH(r.out, str("kept unanchored, off the timeline"));
    const Run info = cli({str("info"), db});
    EXPECT_MATCH(info.out, str("time: unanchored, not on the timeline: its (steps|pauses) "));
    QCOMPARE(one(db, "SELECT anchor FROM import WHERE format = 'llamafactory-trainer-log'"), str("unanchored"));
    QVERIFY(one(db, "SELECT count(*) FROM unanchored_point").toInt() > 100);
    QCOMPARE(one(db, "SELECT count(*) FROM series WHERE metric LIKE 'train.%'"), str("0"));
    QCOMPARE(runRange(db), before);

    // start= places it where the user says.
    const Run placed = cli({str("import"), str("-o"), db, str("--node"), node, str("--option"),
                            str("start=2026-11-29T08:42:20Z"), foreign});
    EXPECT_EXIT(placed, 0);
    QCOMPARE(one(db, "SELECT anchor || ' ' || count(*) FROM import WHERE format = "
                     "'llamafactory-trainer-log'"),
             str("option 1"));
    QCOMPARE(one(db, "SELECT count(*) FROM unanchored_point"), str("0"));
}

void TestCliAnchor::unanchoredLogPlacedLater()
{
    const QString small = fixture("h200-gloo-small");
    if (small.isEmpty()) QSKIP("../shared/fixtures not found: late placement not tested");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString run = dir.filePath(str("run"));
    QVERIFY(copyRun(small, run, 365));
    const QString db = dir.filePath(str("r.runlens"));
    // The log alone: nothing to align with.
    const Run first =
        cli({str("import"), str("-o"), db, str("--node"), str("vm"), run + str("/trainer_log-rank0.jsonl")});
    EXPECT_EXIT(first, 0);
    QCOMPARE(one(db, "SELECT anchor FROM import"), str("unanchored"));
    // Then the GPU metrics of its node: the log is placed, its earlier import replaced.
    const Run second =
        cli({str("import"), str("-o"), db, str("--node"), str("vm"), run + str("/nvidia-smi-query.csv")});
    EXPECT_EXIT(second, 0);
    EXPECT_MATCH(second.out, str("1 source imported earlier without a place in time now aligned"));
    QCOMPARE(one(db, "SELECT anchor FROM import WHERE format = "
                     "'llamafactory-trainer-log'"),
             str("aligned"));
    QCOMPARE(one(db, "SELECT count(*) FROM import"), str("2"));
    QVERIFY(one(db, "SELECT count(*) FROM series WHERE metric = 'train.loss'").toInt() == 1);
}

void TestCliAnchor::logOfItsOwnNodeMatchesEveryNode()
{
    const QString small = fixture("h200-gloo-small");
    if (small.isEmpty()) QSKIP("../shared/fixtures not found: a log on a node of its own not tested");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString run = dir.filePath(str("run"));
    QVERIFY(copyRun(small, run, 365));
    const QString db = dir.filePath(str("r.runlens"));
    QVERIFY(QFile::rename(run + str("/trainer_log-rank0.jsonl"), dir.filePath(str("trainer_log-rank0.jsonl"))));
    EXPECT_EXIT(cli({str("import"), str("-o"), db, run}), 0);
    // Filed under a node without GPU data: matched against the run's GPUs, and placed where the truth says.
    const Run r = cli(
        {str("import"), str("-o"), db, str("--node"), str("trainer"), dir.filePath(str("trainer_log-rank0.jsonl"))});
    EXPECT_EXIT(r, 0);
    EXPECT_MATCH(r.out, str("aligned with node trainer: .* of every node"));
    const std::map<int64_t, double> truth = truthSteps(small);
    const QStringList row = cli({str("query"), db,
                                 str("SELECT ts_ns FROM series_points WHERE node = 'trainer' AND metric = 'train.step' "
                                     "AND value = 100")})
                                .out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(row.size(), qsizetype(2));
    QVERIFY2(std::abs(row[1].toDouble() - truth.at(100)) <= 1.5e9, qPrintable(row.join(QLatin1Char(' '))));
}

// A dmon capture without time columns, copied a year later, placed by its modification time far from the run: the
// import says so.
void TestCliAnchor::copiedUntimedCaptureFarFromRun()
{
    const QString small = fixture("h200-gloo-small");
    if (small.isEmpty()) QSKIP("../shared/fixtures not found: a far capture not tested");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString db = dir.filePath(str("r.runlens"));
    EXPECT_EXIT(cli({str("import"), str("-o"), db, str("--node"), str("vm"), small + str("/nvidia-smi-query.csv")}), 0);
    const QString dmon = dir.filePath(str("dmon.txt"));
    {
        QFile f(dmon);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("# gpu    pwr  gtemp  mtemp     sm    mem\n# Idx      W      C      C      %      %\n");
        for (int i = 0; i < 5; ++i)
            f.write("    0    300     50     40     90     20\n");
        f.close();
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(QDateTime::currentDateTimeUtc().addDays(365), QFileDevice::FileModificationTime));
    }
    const Run r = cli({str("import"), str("-o"), db, str("--node"), str("vm"), dmon});
    EXPECT_EXIT(r, 0);
    EXPECT_MATCH(r.err, str("far_from_run: the times estimated from the file's modification time lie [0-9.]+ h after "
                            "the run's other data"));
}

QTEST_GUILESS_MAIN(TestCliAnchor)
#include "tst_cli_anchor.moc"
