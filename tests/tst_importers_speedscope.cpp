// speedscope import: generated inputs for each behaviour, then the real fixtures checked against an
// independent reading of their weights.

#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

// Every stored stack as "thread|pid|tid|frame;frame|samples|weight|ts", a frame as name or name@file:line.
const std::string kStacksSql = std::string(test::kStackPathSql) + R"(
SELECT t.name, t.pid, t.tid, p.text, SUM(ss.sample_count), SUM(ss.weight), COALESCE(GROUP_CONCAT(ss.ts_ns), '')
FROM stack_samples ss JOIN thread t ON t.id = ss.thread_id JOIN path p ON p.leaf = ss.callsite_id AND p.next = 0
GROUP BY t.name, t.pid, t.tid, p.text ORDER BY t.name, p.text)";

// Imports one file as node node1.
Imported importInto(const std::string& db, const std::string& path, ImportOptions options = {})
{
    options.node = "node1";
    return test::importWith(db, path, options);
}

std::string profileFile(const std::string& frames, const std::string& profiles)
{
    return R"({"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": [)" + frames +
           R"(]}, "profiles": [)" + profiles + "]}";
}

const std::string kAbcd = R"({"name": "a"}, {"name": "b"}, {"name": "c", "file": "c.py", "line": 7}, {"name": "d"})";
const std::string kTwoSampled =
    R"({"type": "sampled","name": "one","unit": "seconds","startValue": 0,"endValue": 14,
 "samples": [[0, 1, 2], [0, 1, 2], [0, 1, 3], [0, 1, 2], [0, 1]],"weights": [1, 1, 4, 3, 5]})";

} // namespace

class TestSpeedscopeImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        m_tmp = std::make_unique<QTemporaryDir>();
        QVERIFY(m_tmp->isValid());
    }
    void twoSampled();
    void millisecondsWithStart();
    void startOption();
    void evented();
    void eventedUnbalanced();
    void pySpyThreadNames();
    void badFrameIndex();
    void invalidJsonLeavesDatabase();
    void gzipInput();
    void publicFixtures();
    void h200Fixture();

private:
    std::string write(const QString& name, const std::string& bytes) { return test::writeFile(*m_tmp, name, bytes); }
    std::string db() const { return m_tmp->filePath(QStringLiteral("run.runlens")).toStdString(); }
    std::unique_ptr<QTemporaryDir> m_tmp;
};

void TestSpeedscopeImporter::twoSampled()
{
    const auto r = importInto(db(), write(QStringLiteral("two.speedscope.json"), profileFile(kAbcd, kTwoSampled)));
    QCOMPARE(r.outcome, FileOutcome::Imported);
    QCOMPARE(r.importer, std::string("speedscope"));
    QCOMPARE(r.result.rowsRead, 5);
    QCOMPARE(queryRows(db(), kStacksSql),
             (QStringList{QStringLiteral("one|0|0|a;b|1|5|"), QStringLiteral("one|0|0|a;b;c@c.py:7|3|5|"),
                          QStringLiteral("one|0|0|a;b;d|1|4|")}));
    QCOMPARE(queryRows(db(), "SELECT samples, total_weight, untimed_rows FROM stack_summary"),
             QStringList{QStringLiteral("5|14|5")});
}

void TestSpeedscopeImporter::millisecondsWithStart()
{
    const std::string profile = R"({"type": "sampled", "name": "t", "unit": "milliseconds", "startValue": 0,
        "endValue": 35, "startUnixNs": 1795941742932915251, "samples": [[0], [0, 1], [0]], "weights": [10, 20, 5]})";
    const auto r = importInto(db(), write(QStringLiteral("ms.json"), profileFile(kAbcd, profile)));
    QCOMPARE(r.outcome, FileOutcome::Imported);
    QCOMPARE(queryRows(db(), "SELECT ts_ns, sample_count, weight FROM stack_samples ORDER BY ts_ns"),
             (QStringList{QStringLiteral("1795941742932915251|1|0.01"), QStringLiteral("1795941742942915251|1|0.02"),
                          QStringLiteral("1795941742962915251|1|0.005")}));
}

void TestSpeedscopeImporter::startOption()
{
    ImportOptions options;
    options.extra["start"] = "2026-01-01T00:00:00Z";
    const auto r = importInto(db(), write(QStringLiteral("s.json"), profileFile(kAbcd, kTwoSampled)), options);
    QCOMPARE(r.outcome, FileOutcome::Imported);
    QCOMPARE(queryRows(db(), "SELECT MIN(ts_ns), MAX(ts_ns) FROM stack_samples"),
             QStringList{QStringLiteral("1767225600000000000|1767225609000000000")});
}

void TestSpeedscopeImporter::evented()
{
    const std::string profile = R"({"type": "evented", "name": "ev", "unit": "none", "startValue": 0, "endValue": 10,
        "events": [{"type": "O", "at": 0, "frame": 0}, {"type": "O", "at": 2, "frame": 1},
                   {"type": "C", "at": 5, "frame": 1}, {"type": "C", "at": 10, "frame": 0}]})";
    const auto r = importInto(db(), write(QStringLiteral("ev.json"), profileFile(kAbcd, profile)));
    QCOMPARE(r.outcome, FileOutcome::Imported);
    QCOMPARE(queryRows(db(), kStacksSql),
             (QStringList{QStringLiteral("ev|0|0|a|2|7|"), QStringLiteral("ev|0|0|a;b|1|3|")}));
    QCOMPARE(queryRows(db(), "SELECT COUNT(*) FROM diagnostic"), QStringList{QStringLiteral("0")});
}

void TestSpeedscopeImporter::eventedUnbalanced()
{
    const std::string profile = R"({"type": "evented", "name": "ev", "unit": "none", "startValue": 0, "endValue": 10,
        "events": [{"type": "O", "at": 0, "frame": 0}, {"type": "C", "at": 3, "frame": 1},
                   {"type": "O", "at": 4, "frame": 1}, {"type": "O", "at": 2, "frame": 2},
                   {"type": "X", "at": 5, "frame": 0}, {"type": "C", "at": 6, "frame": 1}]},
        {"type": "weird", "name": "w"})";
    const auto r = importInto(db(), write(QStringLiteral("bad.json"), profileFile(kAbcd, profile)));
    QCOMPARE(r.outcome, FileOutcome::Imported);
    QCOMPARE(queryRows(db(), kStacksSql),
             (QStringList{QStringLiteral("ev|0|0|a|1|4|"), QStringLiteral("ev|0|0|a;b|1|2|")}));
    QCOMPARE(queryRows(db(), "SELECT count FROM diagnostic_count WHERE kind = 'invalid_line'"),
             QStringList{QStringLiteral("5")}); // bad close, out of order, bad type, unclosed, unknown profile type
}

void TestSpeedscopeImporter::pySpyThreadNames()
{
    const std::string frames = R"j({"name": "main (train.py:12)"}, {"name": "step", "file": "t.py", "line": null})j";
    const std::string profiles =
        R"({"type": "sampled", "name": "Process 12 Thread 34 \"MainThread\"", "unit": "seconds", "samples": [[0, 1]], "weights": [0.01]},
           {"type": "sampled", "name": "Thread 0x1f \"worker\"", "unit": "seconds", "samples": [[0]], "weights": [0.01]},
           {"type": "sampled", "name": "plain name", "unit": "seconds", "samples": [[1]], "weights": [0.01]})";
    const auto r = importInto(db(), write(QStringLiteral("py.json"), profileFile(frames, profiles)));
    QCOMPARE(r.outcome, FileOutcome::Imported);
    QCOMPARE(queryRows(db(), kStacksSql),
             (QStringList{QStringLiteral("MainThread|12|34|main@train.py:12;step@t.py:0|1|0.01|"),
                          QStringLiteral("plain name|0|0|step@t.py:0|1|0.01|"),
                          QStringLiteral("worker|0|31|main@train.py:12|1|0.01|")}));
}

void TestSpeedscopeImporter::badFrameIndex()
{
    const std::string profile = R"({"type": "sampled", "name": "t", "unit": "none",
        "samples": [[0, 1], [0, 9], [0, -1], [0]], "weights": [1, 2, 3]})";
    const auto r = importInto(db(), write(QStringLiteral("bad.json"), profileFile(kAbcd, profile)));
    QCOMPARE(r.outcome, FileOutcome::Imported);
    QCOMPARE(r.result.rowsRead, 3);
    QCOMPARE(queryRows(db(), kStacksSql), QStringList{QStringLiteral("t|0|0|a;b|1|1|")});
    QCOMPARE(queryRows(db(), "SELECT count FROM diagnostic_count WHERE kind = 'invalid_line'"),
             QStringList{QStringLiteral("3")}); // length mismatch, two bad indexes
}

void TestSpeedscopeImporter::invalidJsonLeavesDatabase()
{
    QCOMPARE(importInto(db(), write(QStringLiteral("ok.json"), profileFile(kAbcd, kTwoSampled))).outcome,
             FileOutcome::Imported);
    const QStringList before =
        queryRows(db(), "SELECT (SELECT COUNT(*) FROM stack_samples), (SELECT COUNT(*) FROM frame), "
                        "(SELECT COUNT(*) FROM thread), (SELECT COUNT(*) FROM diagnostic)");
    const std::string text = profileFile(kAbcd, kTwoSampled);
    ImportOptions forced;
    forced.format = "speedscope";
    const auto r = importInto(db(), write(QStringLiteral("cut.json"), text.substr(0, text.size() - 20)), forced);
    QCOMPARE(r.outcome, FileOutcome::Failed);
    QVERIFY2(r.error.find("cut.json") != std::string::npos, r.error.c_str());
    QVERIFY2(r.error.find("JSON") != std::string::npos, r.error.c_str());
    QCOMPARE(queryRows(db(), "SELECT (SELECT COUNT(*) FROM stack_samples), (SELECT COUNT(*) FROM frame), "
                             "(SELECT COUNT(*) FROM thread), (SELECT COUNT(*) FROM diagnostic)"),
             before);
}

void TestSpeedscopeImporter::gzipInput()
{
    const auto r = importInto(
        db(), write(QStringLiteral("two.speedscope.json.gz"), test::gzipCompress(profileFile(kAbcd, kTwoSampled))));
    QCOMPARE(r.outcome, FileOutcome::Imported);
    QCOMPARE(r.importer, std::string("speedscope"));
    QCOMPARE(queryRows(db(), "SELECT samples, total_weight FROM stack_summary"), QStringList{QStringLiteral("5|14")});
}

void TestSpeedscopeImporter::publicFixtures()
{
    const QString root = test::fixturesDir();
    if (root.isEmpty()) QSKIP("no fixtures folder (../shared/fixtures): real speedscope files not tested");
    QDirIterator it(root + QStringLiteral("/public/speedscope/sample/profiles/speedscope"), {QStringLiteral("*.json")},
                    QDir::Files, QDirIterator::Subdirectories);
    int n = 0;
    while (it.hasNext()) {
        const QString path = it.next();
        QTemporaryDir dir;
        const auto r = importInto(dir.filePath(QStringLiteral("r.runlens")).toStdString(), path.toStdString());
        QVERIFY2(r.outcome == FileOutcome::Imported,
                 qPrintable(path + QStringLiteral(": ") + QString::fromStdString(r.error)));
        QCOMPARE(r.importer, std::string("speedscope"));
        QVERIFY(r.result.rowsRead > 0);
        ++n;
    }
    QVERIFY(n > 0);
}

void TestSpeedscopeImporter::h200Fixture()
{
    const QString root = test::fixturesDir();
    if (root.isEmpty()) QSKIP("no fixtures folder (../shared/fixtures): real speedscope files not tested");
    const QString path = root + QStringLiteral("/h200-gloo-small/stacks-rank0.speedscope.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
    double total = 0;
    int64_t samples = 0;
    for (const QJsonValue p : doc.value(QStringLiteral("profiles")).toArray()) {
        const QJsonObject o = p.toObject();
        QCOMPARE(o.value(QStringLiteral("unit")).toString(), QStringLiteral("milliseconds"));
        for (const QJsonValue w : o.value(QStringLiteral("weights")).toArray())
            total += w.toDouble() / 1000.0;
        samples += o.value(QStringLiteral("samples")).toArray().size();
    }
    // startUnixNs exceeds a double's exact range: take its digits from the text.
    const QByteArray text = (f.seek(0), f.readAll());
    const qsizetype at = text.indexOf("\"startUnixNs\"");
    QVERIFY(at >= 0);
    const QString tail = QString::fromLatin1(text.mid(text.indexOf(':', at) + 1, 40));
    const qint64 start = QRegularExpression(QStringLiteral("\\d+")).match(tail).captured().toLongLong();
    QVERIFY(start > 0);

    const auto r = importInto(db(), path.toStdString());
    QCOMPARE(r.outcome, FileOutcome::Imported);
    QCOMPARE(r.result.rowsRead, samples);
    const QStringList sums =
        queryRows(db(), "SELECT SUM(samples), SUM(total_weight), SUM(untimed_rows) FROM stack_summary");
    QCOMPARE(sums.size(), 1);
    const QStringList parts = sums.front().split(QLatin1Char('|'));
    QCOMPARE(parts[0].toLongLong(), samples);
    QVERIFY2(qAbs(parts[1].toDouble() - total) < 1e-6 * qMax(1.0, total), qPrintable(sums.front()));
    QCOMPARE(parts[2].toLongLong(), 0);
    QCOMPARE(queryRows(db(), "SELECT MIN(ts_ns) FROM stack_samples"), QStringList{QString::number(start)});
}

QTEST_GUILESS_MAIN(TestSpeedscopeImporter)
#include "tst_importers_speedscope.moc"
