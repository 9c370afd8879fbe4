// Which node each file of an import lands on: a folder per node (or files named per node) is that node, a host label
// names or confirms only the node of its own folder, a one-node capture folder joins its one label, and a folder whose
// label is another folder's node is reported, never merged. Generates its own runs; asserts where the data landed.

#include "analysis/store/run_database.h"
#include "importers/import_session.h"
#include "tests/test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QMap>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace runlens;

namespace {

// nvidia-smi --query-gpu CSV of 2 GPUs, 3 samples from second `start` (unlabelled).
std::string nvsmiCsv(int start)
{
    return runlens::test::nvsmiCsv(2, 3, start);
}

std::string folded(int rank)
{
    return QStringLiteral("python3;main;train_step_%1;forward 5\npython3;main;wait %2\n")
        .arg(rank)
        .arg(rank + 2)
        .toStdString();
}

std::string speedscope(int rank)
{
    return QString::fromUtf8(
               R"j({"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": [
        {"name": "main (train.py:12)"}, {"name": "step_%1"}]
}
, "profiles" : [ {
    "type" : "sampled",
    "name" : "Process 12 Thread 34 \"MainThread\"",
    "unit" : "seconds",
    "samples" : [ [ 0, 1 ], [0] ],
    "weights" : [ 0.01, 0.02 ]
} ]
})j")
        .arg(rank)
        .toStdString();
}

// A Kineto trace of one rank (distributedInfo), one CPU op and the kernel it launched.
std::string kineto(int rank)
{
    const double ts = 5084761999000.0 + 1000.0 * rank;
    return QString::fromUtf8(R"j({
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": %1, "world_size": 8}, "baseTimeNanoseconds": 1790857026000000000,
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 461, "tid": 498, "ts": %2, "dur": 80.5,
   "args": {"External id": 3}},
  {"ph": "X", "cat": "kernel", "name": "void gemm<128>(float*)", "pid": 0, "tid": 7, "ts": %3, "dur": 134.056,
   "args": {
        "External id" : 3, "device" : 0, "stream" : 7, "correlation" : 22}
}
  ],
  "traceName": "t.json"
  }
)j")
        .arg(rank)
        .arg(ts, 0, 'f', 3)
        .arg(ts + 90, 0, 'f', 3)
        .toStdString();
}

// A node_exporter text scrape with instance="<host>:9100"; `seed` keeps the contents of scrapes apart.
std::string scrape(const QString& host, int seed)
{
    return QStringLiteral("# TYPE node_load1 gauge\n"
                          "node_load1{instance=\"%1:9100\",job=\"node\"} %2 1767322800000\n"
                          "node_load1{instance=\"%1:9100\",job=\"node\"} %3 1767322801000\n")
        .arg(host)
        .arg(seed)
        .arg(seed + 0.5)
        .toStdString();
}

QString nodeName(int n)
{
    return QStringLiteral("node%1").arg(n, 2, 10, QLatin1Char('0'));
}

// A 4-node run: per node an nvidia-smi CSV, two ranks (2n-2, 2n-1) with folded and speedscope stacks and a Kineto
// trace each, and a node_exporter scrape where labels[n-1] is not empty. Layout "subfolders": run/node01/...;
// "flat": run/node01-nvidia-smi.csv... Returns each file (absolute) with the node it belongs to.
QMap<QString, QString> writeRun(const QTemporaryDir& dir, const QString& layout, const QStringList& labels)
{
    QMap<QString, QString> files;
    for (int n = 1; n <= 4; ++n) {
        const QString node = nodeName(n);
        const QString place =
            layout == QLatin1String("flat") ? QStringLiteral("run/%1-").arg(node) : QStringLiteral("run/%1/").arg(node);
        auto put = [&](const QString& name, const std::string& bytes) {
            files.insert(QDir::cleanPath(QString::fromStdString(test::writeFile(dir, place + name, bytes))), node);
        };
        put(QStringLiteral("nvidia-smi-query.csv"), nvsmiCsv(10 * n));
        for (int rank = 2 * n - 2; rank < 2 * n; ++rank) {
            put(QStringLiteral("stacks-rank%1.folded").arg(rank), folded(rank));
            put(QStringLiteral("stacks-rank%1.speedscope.json").arg(rank), speedscope(rank));
            put(QStringLiteral("kineto-rank%1.json").arg(rank), kineto(rank));
        }
        if (!labels.value(n - 1).isEmpty()) put(QStringLiteral("node-exporter.prom"), scrape(labels[n - 1], n));
    }
    return files;
}

std::vector<std::string> importPaths(const QTemporaryDir& dir, const QString& how)
{
    if (how == QLatin1String("folders")) {
        std::vector<std::string> paths;
        for (int n = 1; n <= 4; ++n)
            paths.push_back(dir.filePath(QStringLiteral("run/") + nodeName(n)).toStdString());
        return paths;
    }
    return {dir.filePath(QStringLiteral("run")).toStdString()};
}

// Plans and imports paths into db; every file must import.
void importAll(const std::string& db, const std::vector<std::string>& paths, const std::string& rankMap = {})
{
    importers::ImportOptions options;
    options.timeZone = "UTC";
    if (!rankMap.empty()) options.extra["rank_map"] = rankMap;
    auto plan = importers::planImport(paths, options);
    QVERIFY_OK(plan);
    auto run = store::RunDatabase::open(db, store::OpenMode::Create);
    QVERIFY_OK(run);
    for (const importers::PlannedFile& f : *plan) {
        const importers::FileResult r = importers::importFile(**run, f, options);
        QVERIFY2(r.outcome == importers::FileOutcome::Imported,
                 qPrintable(QString::fromStdString(f.displayPath) + QStringLiteral(": ") +
                            QString::fromLatin1(importers::outcomeName(r.outcome)) + QLatin1Char(' ') +
                            QString::fromStdString(r.error ? r.error->toString() : std::string())));
    }
}

// Per import: its file and the nodes its data (points, stack samples, trace slices) landed on.
QMap<QString, QString> landedOn(const std::string& db)
{
    const QStringList rows = test::queryRows(db, R"(
        SELECT i.path, group_concat(DISTINCT n.name) FROM import i JOIN (
            SELECT pc.import_id AS import_id, d.node_id AS node_id FROM point_chunk pc
                JOIN series s ON s.id = pc.series_id JOIN device d ON d.id = s.device_id
            UNION SELECT ss.import_id, t.node_id FROM stack_sample ss JOIN thread t ON t.id = ss.thread_id
            UNION SELECT sc.import_id, t.node_id FROM stack_chunk sc JOIN thread t ON t.id = sc.thread_id
            UNION SELECT ts.import_id, tt.node_id FROM trace_slice ts JOIN trace_track tt ON tt.id = ts.track_id
        ) x ON x.import_id = i.id JOIN node n ON n.id = x.node_id GROUP BY i.id)");
    QMap<QString, QString> landed;
    for (const QString& row : rows) {
        const qsizetype bar = row.lastIndexOf(QLatin1Char('|'));
        landed.insert(QDir::cleanPath(row.left(bar)), row.mid(bar + 1));
    }
    return landed;
}

void compareLanded(const std::string& db, const QMap<QString, QString>& expected)
{
    const QMap<QString, QString> landed = landedOn(db);
    for (auto it = expected.begin(); it != expected.end(); ++it)
        QVERIFY2(landed.value(it.key()) == it.value(),
                 qPrintable(QStringLiteral("%1: expected on %2, landed on '%3'")
                                .arg(it.key(), it.value(), landed.value(it.key()))));
    QCOMPARE(landed.size(), expected.size());
}

} // namespace

class TestImportNodes : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void nodePerFolder_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<QString>("paths"); // "parent": run/; "folders": run/node01 ... run/node04
        QTest::addColumn<QStringList>("labels");
        const QStringList twoLabelled{nodeName(1), QString(), nodeName(3), QString()};
        QTest::newRow("parent folder, two folders labelled") << "subfolders"
                                                             << "parent" << twoLabelled;
        QTest::newRow("four folders named, two labelled") << "subfolders"
                                                          << "folders" << twoLabelled;
        QTest::newRow("parent folder, one folder labelled")
            << "subfolders"
            << "parent" << QStringList{nodeName(1), QString(), QString(), QString()};
        QTest::newRow("parent folder, no labels") << "subfolders"
                                                  << "parent" << QStringList{};
        QTest::newRow("flat folder, files named per node") << "flat"
                                                           << "parent" << twoLabelled;
    }
    void nodePerFolder()
    {
        QFETCH(QString, layout);
        QFETCH(QString, paths);
        QFETCH(QStringList, labels);
        QTemporaryDir dir;
        const QMap<QString, QString> files = writeRun(dir, layout, labels);
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        importAll(db, importPaths(dir, paths));
        if (QTest::currentTestFailed()) return;
        compareLanded(db, files);
        QCOMPARE(test::queryOne(db, "SELECT group_concat(name) FROM (SELECT name FROM node ORDER BY name)"),
                 QStringList({nodeName(1), nodeName(2), nodeName(3), nodeName(4)}).join(QLatin1Char(',')));
        // Ranks land on the node of their folder: ranks 2n-2 and 2n-1 on node n.
        const QStringList ranks =
            test::queryRows(db, "SELECT DISTINCT rank, node FROM trace_summary ORDER BY rank, node");
        QCOMPARE(ranks.size(), 8);
        for (const QString& row : ranks) {
            const QStringList cells = row.split(QLatin1Char('|'));
            QCOMPARE(cells.value(1), nodeName(cells.value(0).toInt() / 2 + 1));
        }
        QCOMPARE(test::queryOne(db, "SELECT count(*) FROM diagnostic WHERE kind = 'node_conflict'"),
                 QStringLiteral("0"));
    }

    // A label naming another folder's node, or one label in two folders: each file stays on its folder's node, and
    // the labelled file reports node_conflict naming both folders.
    void conflictIsReported_data()
    {
        QTest::addColumn<QString>("paths");
        QTest::addColumn<QStringList>("labels");
        QTest::addColumn<QStringList>("conflicts"); // "<folder of the file>:<the other folder>"
        const QStringList otherNode{nodeName(1), QString(), nodeName(1), QString()};
        QTest::newRow("node03's scrape labelled node01, parent folder")
            << "parent" << otherNode << QStringList{QStringLiteral("node03:node01")};
        QTest::newRow("node03's scrape labelled node01, four folders")
            << "folders" << otherNode << QStringList{QStringLiteral("node03:node01")};
        const QStringList sameLabel{QString(), QStringLiteral("gpu-host-x"), QString(), QStringLiteral("gpu-host-x")};
        QTest::newRow("one label in two folders")
            << "parent" << sameLabel << QStringList{QStringLiteral("node02:node04"), QStringLiteral("node04:node02")};
    }
    void conflictIsReported()
    {
        QFETCH(QString, paths);
        QFETCH(QStringList, labels);
        QFETCH(QStringList, conflicts);
        QTemporaryDir dir;
        const QMap<QString, QString> files = writeRun(dir, QStringLiteral("subfolders"), labels);
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        importAll(db, importPaths(dir, paths));
        if (QTest::currentTestFailed()) return;
        compareLanded(db, files);
        QCOMPARE(test::queryOne(db, "SELECT count(*) FROM node"), QStringLiteral("4"));
        const QStringList found = test::queryRows(
            db, "SELECT path, message FROM import_diagnostic WHERE kind = 'node_conflict' ORDER BY path");
        QCOMPARE(found.size(), conflicts.size());
        for (qsizetype i = 0; i < conflicts.size(); ++i) {
            const QStringList pair = conflicts[i].split(QLatin1Char(':'));
            QVERIFY2(found[i].contains(QStringLiteral("/%1/node-exporter.prom|").arg(pair[0])), qPrintable(found[i]));
            QVERIFY2(found[i].contains(QStringLiteral("folder %1/").arg(pair[1])), qPrintable(found[i]));
            QVERIFY2(found[i].contains(QStringLiteral("folder %1/").arg(pair[0])), qPrintable(found[i]));
        }
        // The conflict counts in the stored summary of the import (runlens info, the problems bar).
        QCOMPARE(test::queryOne(db, "SELECT sum(diagnostics) FROM import"), QString::number(conflicts.size()));
    }

    // A one-node capture: every file joins the one host label of its folder (or of a labelled-only subfolder such as
    // prometheus/); names numbering ranks or GPUs are not nodes.
    void captureFolder_data()
    {
        QTest::addColumn<QStringList>("names"); // relative to capture/
        QTest::addColumn<QString>("label");     // of the .prom files; empty: none
        QTest::addColumn<QString>("node");
        const QStringList flat{QStringLiteral("nvidia-smi-query.csv"), QStringLiteral("stacks-rank0.folded"),
                               QStringLiteral("stacks-rank1.folded"), QStringLiteral("kineto-rank0.json"),
                               QStringLiteral("kineto-rank1.json")};
        QTest::newRow("one label among the files")
            << flat + QStringList{QStringLiteral("node-exporter.prom")} << "gpu-host-7"
            << "gpu-host-7";
        QTest::newRow("one label in a prometheus/ subfolder")
            << flat + QStringList{QStringLiteral("prometheus/node-exporter.prom")} << "gpu-host-7"
            << "gpu-host-7";
        QTest::newRow("no label") << flat << ""
                                  << "capture";
        QTest::newRow("files named per rank and GPU are not nodes")
            << QStringList{QStringLiteral("rank0-stacks.folded"), QStringLiteral("rank0-kineto.json"),
                           QStringLiteral("rank1-stacks.folded"), QStringLiteral("rank1-kineto.json"),
                           QStringLiteral("gpu0-nvidia-smi.csv"), QStringLiteral("gpu1-nvidia-smi.csv")}
            << ""
            << "capture";
    }
    void captureFolder()
    {
        QFETCH(QStringList, names);
        QFETCH(QString, label);
        QFETCH(QString, node);
        QTemporaryDir dir;
        QMap<QString, QString> files;
        int seed = 0;
        for (const QString& name : names) {
            ++seed;
            const int rank = QRegularExpression(QStringLiteral("rank(\\d)")).match(name).captured(1).toInt();
            std::string bytes = name.endsWith(QLatin1String(".csv"))      ? nvsmiCsv(10 * seed)
                                : name.endsWith(QLatin1String(".folded")) ? folded(rank)
                                : name.endsWith(QLatin1String(".prom"))   ? scrape(label, seed)
                                                                          : kineto(rank);
            files.insert(
                QDir::cleanPath(QString::fromStdString(test::writeFile(dir, QStringLiteral("capture/") + name, bytes))),
                node);
        }
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        importAll(db, {dir.filePath(QStringLiteral("capture")).toStdString()});
        if (QTest::currentTestFailed()) return;
        compareLanded(db, files);
        QCOMPARE(test::queryOne(db, "SELECT group_concat(name) FROM node"), node);
    }

    // --rank-map puts the files of a mapped rank (by a trace's distributedInfo, or "rank<N>" in the file name) on the
    // node it names; ranks it does not map follow the folder.
    void rankMap()
    {
        QTemporaryDir dir;
        QMap<QString, QString> files;
        auto put = [&](const QString& name, const std::string& bytes, const QString& node) {
            files.insert(
                QDir::cleanPath(QString::fromStdString(test::writeFile(dir, QStringLiteral("run/") + name, bytes))),
                node);
        };
        for (int rank = 0; rank < 5; ++rank) {
            const QString node = rank < 2   ? QStringLiteral("gpu-a")
                                 : rank < 4 ? QStringLiteral("gpu-b")
                                            : QStringLiteral("run");
            put(QStringLiteral("stacks-rank%1.folded").arg(rank), folded(rank), node);
            put(QStringLiteral("profile-%1.json").arg(QLatin1Char(static_cast<char>('a' + rank))), kineto(rank),
                node); // the rank only in distributedInfo
        }
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        importAll(db, {dir.filePath(QStringLiteral("run")).toStdString()}, "0-1=gpu-a, 2-3=gpu-b");
        if (QTest::currentTestFailed()) return;
        compareLanded(db, files);
        QCOMPARE(test::queryOne(db, "SELECT name_source FROM node WHERE name = 'gpu-b'"), QStringLiteral("rank map"));
    }

    void badRankMap_data()
    {
        QTest::addColumn<QString>("map");
        QTest::addColumn<QString>("error");
        QTest::newRow("no node") << "0-7"
                                 << "\"0-7\": expected RANKS=NODE";
        QTest::newRow("backwards range") << "7-0=node01"
                                         << "\"7-0=node01\": expected a rank or a range";
        QTest::newRow("rank twice") << "0-7=node01,7=node02"
                                    << "\"7=node02\": a rank mapped twice";
        QTest::newRow("not a number") << "x=node01"
                                      << "expected a rank";
    }
    void badRankMap()
    {
        QFETCH(QString, map);
        QFETCH(QString, error);
        QTemporaryDir dir;
        const std::string path = test::writeFile(dir, QStringLiteral("stacks-rank0.folded"), folded(0));
        importers::ImportOptions options;
        options.extra["rank_map"] = map.toStdString();
        auto plan = importers::planImport({path}, options);
        QVERIFY(!plan);
        QCOMPARE(plan.error().code, ErrorCode::Usage);
        QVERIFY2(QString::fromStdString(plan.error().message).contains(error), plan.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestImportNodes)
#include "tst_import_nodes.moc"
