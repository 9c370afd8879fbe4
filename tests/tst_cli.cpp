// End-to-end tests of the `runlens` binary: each test runs it with QProcess (no shell) on inputs it writes
// itself and checks the exit code (0 ok, 1 failure, 2 usage), stdout and stderr.

#include "tests/cli_support.h"
#include "tests/test_support.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <map>
#include <sqlite3.h>

using namespace runlens::test;
using namespace runlens::test::binary;

namespace {

// runlens import -o DB --tz UTC PATHS...
QStringList importArgs(const QString& db, const QStringList& paths)
{
    return QStringList{QStringLiteral("import"), QStringLiteral("-o"), db, QStringLiteral("--tz"),
                       QStringLiteral("UTC")} +
           paths;
}

// The query's CSV output; fails the calling test (via the empty string) when the query fails.
QString query(const QString& db, const QString& sql)
{
    const Run r = cli({QStringLiteral("query"), db, sql});
    if (r.exitCode != 0) qWarning("%s", qPrintable(r.describe()));
    return r.exitCode == 0 ? r.out : QString();
}

QString snapshot(const QString& db)
{
    return query(db, QStringLiteral("SELECT (SELECT count(*) FROM import) AS imports, (SELECT count(*) FROM series) AS "
                                    "series, (SELECT count(*) FROM point_chunk) AS chunks, (SELECT sum(points) FROM "
                                    "series) AS points, (SELECT count(*) FROM node) AS nodes"));
}

bool execSqlite(const QString& path, const char* sql)
{
    sqlite3* db = nullptr;
    bool ok = sqlite3_open(path.toUtf8().constData(), &db) == SQLITE_OK &&
              sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
    ok = sqlite3_close(db) == SQLITE_OK && ok;
    return ok;
}

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The file's bytes, hashed: a command that only reads must leave them as they were.
QByteArray fileHash(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

} // namespace

class TstCli : public QObject
{
    Q_OBJECT

private:
    // A run with one import of gpu-host-7/nvsmi.csv (2 GPUs × 10 samples).
    QString makeRun(const QTemporaryDir& dir)
    {
        const QString csv = qs(writeFile(dir, QStringLiteral("gpu-host-7/nvsmi.csv"), nvsmiCsv(2, 10)));
        const QString db = dir.filePath(QStringLiteral("run.runlens"));
        const Run r = cli(importArgs(db, {csv}));
        if (r.exitCode != 0) qWarning("%s", qPrintable(r.describe()));
        return r.exitCode == 0 ? db : QString();
    }

private Q_SLOTS:
    void help_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("usage"); // what the Usage line names
        QTest::newRow("--help") << QStringList{QStringLiteral("--help")} << QStringLiteral("runlens <command>");
        QTest::newRow("-h") << QStringList{QStringLiteral("-h")} << QStringLiteral("runlens <command>");
        QTest::newRow("help") << QStringList{QStringLiteral("help")} << QStringLiteral("runlens <command>");
        for (const char* cmd : {"import", "info", "query", "demo", "flame", "analyze", "report"}) {
            const QString c = QString::fromLatin1(cmd);
            QTest::newRow(qPrintable(c + QStringLiteral(" --help")))
                << QStringList{c, QStringLiteral("--help")} << QStringLiteral("runlens ") + c;
        }
    }
    void help()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, usage);
        const Run r = cli(args);
        EXPECT_EXIT(r, 0);
        // The Usage line names the subcommand, e.g. "Usage: runlens import [options] PATH..." (a folder may
        // precede runlens: QProcess passes the full path as argv[0], as a shell does for ./build/.../runlens).
        EXPECT_MATCH(r.out,
                     QStringLiteral("^Usage: (\\S*/)?") + QRegularExpression::escape(usage) + QStringLiteral(" "));
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("stderrPattern");
        const auto l = [](std::initializer_list<const char*> a) {
            QStringList s;
            for (const char* x : a)
                s << QString::fromLatin1(x);
            return s;
        };
        // Without a command the window opens; `open` needs its run.
        QTest::newRow("open without RUN") << l({"open"}) << QStringLiteral("open needs one RUN");
        QTest::newRow("open, unknown option")
            << l({"open", "x.runlens", "--zoom", "2"}) << QStringLiteral("unknown option for open: --zoom");
        QTest::newRow("open, option without value")
            << l({"open", "x.runlens", "--from"}) << QStringLiteral("--from needs a value");
        QTest::newRow("unknown command") << l({"bogus"}) << QStringLiteral("unknown command \"bogus\"");
        QTest::newRow("info without RUN") << l({"info"}) << QStringLiteral("info needs exactly one RUN");
        QTest::newRow("query without SQL") << l({"query", "x.runlens"}) << QStringLiteral("query needs RUN and SQL");
        QTest::newRow("import without -o") << l({"import", "x.csv"}) << QStringLiteral("import needs -o");
        QTest::newRow("import without PATH") << l({"import", "-o", "x.runlens"}) << QStringLiteral("import needs -o");
        QTest::newRow("unknown option") << l({"info", "--bogus", "x.runlens"}) << QStringLiteral("Unknown option");
        // The hint should be a command line the user can run.
        QTest::newRow("-o without value") << l({"import", "-o"}) << QStringLiteral("Run \"runlens import --help\"");
        QTest::newRow("demo --nodes 0") << l({"demo", "--no-gui", "--nodes", "0"})
                                        << QStringLiteral("need positive numbers");
        QTest::newRow("analyze without RUN") << l({"analyze"}) << QStringLiteral("analyze needs exactly one RUN");
        QTest::newRow("analyze, unknown parameter") << l({"analyze", "x.runlens", "--param", "ckpt_gap.overlapp=1"})
                                                    << QStringLiteral("no rule parameter \"ckpt_gap.overlapp\"");
        QTest::newRow("analyze, parameter not a number")
            << l({"analyze", "x.runlens", "--param", "ckpt_gap.overlap=x"}) << QStringLiteral("\"x\" is not a number");
        QTest::newRow("report without -o")
            << l({"report", "x.runlens"}) << QStringLiteral("report needs one RUN and -o OUT");
        QTest::newRow("report -o x.txt") << l({"report", "x.runlens", "-o", "x.txt"}) << QStringLiteral("ends in .pdf");
        QTest::newRow("report --page a5")
            << l({"report", "x.runlens", "-o", "x.pdf", "--page", "a5"}) << QStringLiteral("--page: a4 or letter");
        QTest::newRow("report --format svg")
            << l({"report", "x.runlens", "-o", "x.pdf", "--format", "svg"}) << QStringLiteral("--format: pdf or png");
    }
    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, stderrPattern);
        QTemporaryDir dir;
        const Run r = cli(args, dir.path());
        EXPECT_EXIT(r, 2);
        EXPECT_MATCH(r.err, stderrPattern);
        QVERIFY(QDir(dir.path()).isEmpty()); // nothing created
    }

    void importNvsmi()
    {
        QTemporaryDir dir;
        const QString csv = qs(writeFile(dir, QStringLiteral("gpu-host-7/nvsmi.csv"), nvsmiCsv(2, 10)));
        const QString db = dir.filePath(QStringLiteral("run.runlens"));
        const Run r = cli(importArgs(db, {csv}));
        EXPECT_EXIT(r, 0);
        EXPECT_MATCH(r.out,
                     QStringLiteral("nvsmi\\.csv: nvidia-smi-query-csv → node gpu-host-7 .*: 20 rows, 40 points"));
        EXPECT_MATCH(r.out, QStringLiteral("^1 file: 1 imported, 0 already imported, 0 failed"));

        QCOMPARE(query(db, QStringLiteral("SELECT node, device, metric, points FROM series_summary ORDER BY device, "
                                          "metric")),
                 QStringLiteral("node,device,metric,points\n"
                                "gpu-host-7,gpu:0,gpu.mem_used,10\n"
                                "gpu-host-7,gpu:0,gpu.util,10\n"
                                "gpu-host-7,gpu:1,gpu.mem_used,10\n"
                                "gpu-host-7,gpu:1,gpu.util,10\n"));
        // Units are converted: 1000 MiB in bytes; utilisation of GPU 1 is (7 i + 1) % 101 for i = 0..9.
        QCOMPARE(
            query(db, QStringLiteral("SELECT min_value, max_value, first_ns, last_ns - first_ns FROM series_summary "
                                     "WHERE device = 'gpu:1' AND metric IN ('gpu.mem_used', 'gpu.util') "
                                     "ORDER BY metric")),
            QStringLiteral("min_value,max_value,first_ns,last_ns - first_ns\n"
                           "1048576000,1058013184,1767322800000000000,9000000000\n"
                           "1,64,1767322800000000000,9000000000\n"));

        const Run info = cli({QStringLiteral("info"), db});
        EXPECT_EXIT(info, 0);
        EXPECT_MATCH(info.out, QStringLiteral("^Series \\(4\\)"));
        EXPECT_MATCH(info.out, QStringLiteral("^  gpu-host-7 +gpu:0 +gpu\\.util +% +10 "));
        EXPECT_MATCH(info.out, QStringLiteral("^  gpu-host-7 +gpu:1 +gpu\\.mem_used +bytes +10 "));
        EXPECT_MATCH(info.out, QStringLiteral("^Imports \\(1\\)\n  #1 .*nvsmi\\.csv\n +nvidia-smi-query-csv → node "
                                              "gpu-host-7: 20 rows, 40 points"));
    }

    void analyzeJson()
    {
        // A run without checkpoints: no findings, exit 0, the documented JSON shape; --list-params lists them.
        QTemporaryDir dir;
        const QString csv = qs(writeFile(dir, QStringLiteral("node1/nvsmi.csv"), nvsmiCsv(2, 30)));
        const QString db = dir.filePath(QStringLiteral("run.runlens"));
        EXPECT_EXIT(cli(importArgs(db, {csv})), 0);
        // Without --store nothing is written: the file's bytes stay the same.
        const QByteArray before = fileHash(db);
        const Run look = cli({QStringLiteral("analyze"), db, QStringLiteral("--json"), QStringLiteral("--param"),
                              QStringLiteral("ckpt_gap.overlap=0.7")});
        EXPECT_EXIT(look, 0);
        QCOMPARE(QJsonDocument::fromJson(look.out.toUtf8()).object().value(QStringLiteral("stored")).toBool(), false);
        QCOMPARE(fileHash(db), before);
        const Run r = cli({QStringLiteral("analyze"), db, QStringLiteral("--json"), QStringLiteral("--store"),
                           QStringLiteral("--param"), QStringLiteral("ckpt_gap.overlap=0.6")});
        EXPECT_EXIT(r, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QVERIFY2(o.value(QStringLiteral("findings")).isArray(), qPrintable(r.describe()));
        QCOMPARE(o.value(QStringLiteral("findings")).toArray().size(), 0);
        QCOMPARE(o.value(QStringLiteral("params")).toObject().value(QStringLiteral("ckpt_gap.overlap")).toDouble(),
                 0.6);
        QVERIFY(o.value(QStringLiteral("rules")).toArray().contains(QStringLiteral("CKPT_GAP")));
        const Run table = cli({QStringLiteral("analyze"), db});
        EXPECT_EXIT(table, 0);
        EXPECT_MATCH(table.out, QStringLiteral("^No findings\\."));
        // The parameter set above is kept for the run and used again, until --reset-params.
        EXPECT_MATCH(table.out, QStringLiteral("parameters set for this run: ckpt_gap\\.overlap=0\\.6"));
        const Run again = cli({QStringLiteral("analyze"), db, QStringLiteral("--json")});
        QCOMPARE(QJsonDocument::fromJson(again.out.toUtf8())
                     .object()
                     .value(QStringLiteral("params"))
                     .toObject()
                     .value(QStringLiteral("ckpt_gap.overlap"))
                     .toDouble(),
                 0.6);
        const Run reset = cli({QStringLiteral("analyze"), db, QStringLiteral("--reset-params"),
                               QStringLiteral("--json"), QStringLiteral("--store")});
        QCOMPARE(QJsonDocument::fromJson(reset.out.toUtf8())
                     .object()
                     .value(QStringLiteral("params"))
                     .toObject()
                     .value(QStringLiteral("ckpt_gap.overlap"))
                     .toDouble(),
                 0.5);
        QCOMPARE(query(db, QStringLiteral("SELECT count(*) AS n FROM analysis")), QStringLiteral("n\n1\n"));
        const Run params = cli({QStringLiteral("analyze"), QStringLiteral("--list-params")});
        EXPECT_EXIT(params, 0);
        EXPECT_MATCH(params.out, QStringLiteral("^ckpt_gap\\.overlap +0\\.5 "));
    }

    void nodeName_data()
    {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("expected"); // node,name_source
        QTest::newRow("--node") << QStringList{QStringLiteral("--node"), QStringLiteral("trainer-3")}
                                << QStringLiteral("trainer-3,option");
        QTest::newRow("directory name") << QStringList{} << QStringLiteral("gpu-host-7,directory name");
    }
    void nodeName()
    {
        QFETCH(QStringList, extra);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString csv = qs(writeFile(dir, QStringLiteral("gpu-host-7/nvsmi.csv"), nvsmiCsv(1, 3)));
        const QString db = dir.filePath(QStringLiteral("run.runlens"));
        const Run r = cli(importArgs(db, QStringList{csv} + extra));
        EXPECT_EXIT(r, 0);
        const QStringList parts = expected.split(QLatin1Char(','));
        EXPECT_MATCH(r.out, QStringLiteral("→ node %1 \\(%2\\)").arg(parts[0], parts[1]));
        QCOMPARE(query(db, QStringLiteral("SELECT name, name_source FROM node")),
                 QStringLiteral("name,name_source\n") + expected + QLatin1Char('\n'));
        QCOMPARE(query(db, QStringLiteral("SELECT DISTINCT node FROM series_summary")),
                 QStringLiteral("node\n") + parts[0] + QLatin1Char('\n'));
    }

    // Per-node folders: node02 has no label and stays node02; node03's scrape names node01, which is reported (import
    // output and runlens info), and its samples stay on node03.
    void nodeConflict()
    {
        QTemporaryDir dir;
        auto scrape = [](const char* host, int value) {
            return QStringLiteral("# TYPE node_load1 gauge\nnode_load1{instance=\"%1:9100\",job=\"node\"} %2 "
                                  "1767322800000\n")
                .arg(QLatin1String(host))
                .arg(value)
                .toStdString();
        };
        for (int n = 1; n <= 3; ++n)
            writeFile(dir, QStringLiteral("run/node0%1/nvsmi.csv").arg(n), nvsmiCsv(1, 3, 10 * n));
        writeFile(dir, QStringLiteral("run/node01/node.prom"), scrape("node01", 1));
        writeFile(dir, QStringLiteral("run/node03/node.prom"), scrape("node01", 3));
        const QString db = dir.filePath(QStringLiteral("run.runlens"));
        const Run r = cli(importArgs(db, {dir.filePath(QStringLiteral("run"))}));
        EXPECT_EXIT(r, 0);
        EXPECT_MATCH(r.out, QStringLiteral("node02/nvsmi\\.csv: .*→ node node02 \\(directory name\\)"));
        EXPECT_MATCH(r.out, QStringLiteral("node03/node\\.prom: .*→ node node03 \\(directory name\\)"));
        EXPECT_MATCH(r.err, QStringLiteral("node03/node\\.prom: node_conflict: host label node01 names the node of "
                                           "folder node01/, but this file is in folder node03/"));
        QCOMPARE(query(db, QStringLiteral("SELECT node, points FROM series_summary WHERE metric = 'host.load1' "
                                          "ORDER BY node")),
                 QStringLiteral("node,points\nnode01,1\nnode03,1\n"));
        const Run info = cli({QStringLiteral("info"), db});
        EXPECT_EXIT(info, 0);
        EXPECT_MATCH(info.out, QStringLiteral("problems: 1 node_conflict"));
    }

    // The interconnect capacity a user knows but the data does not carry, stored on the node's host device.
    void linkCapacityOption_data()
    {
        QTest::addColumn<QString>("given");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stored"); // bytes/s, or empty when refused
        QTest::newRow("4 x 200 Gb/s") << QStringLiteral("4x200Gb/s") << 0 << QStringLiteral("100000000000");
        QTest::newRow("with a times sign and spaces")
            << QStringLiteral("4 × 200 Gb/s") << 0 << QStringLiteral("100000000000");
        QTest::newRow("bytes per second") << QStringLiteral("25GB/s") << 0 << QStringLiteral("25000000000");
        QTest::newRow("not a rate") << QStringLiteral("fast") << 2 << QString();
    }

    void linkCapacityOption()
    {
        QFETCH(QString, given);
        QFETCH(int, exitCode);
        QFETCH(QString, stored);
        QTemporaryDir dir;
        const QString csv = qs(writeFile(dir, QStringLiteral("n1/nvsmi.csv"), nvsmiCsv(1, 3)));
        const QString db = dir.filePath(QStringLiteral("run.runlens"));
        const Run r = cli(importArgs(db, {csv}) +
                          QStringList{QStringLiteral("--option"), QStringLiteral("link_capacity=") + given});
        EXPECT_EXIT(r, exitCode);
        if (exitCode != 0) {
            EXPECT_MATCH(r.err, QStringLiteral("link_capacity: cannot read"));
            QVERIFY(!QFile::exists(db));
            return;
        }
        QCOMPARE(
            query(db, QStringLiteral("SELECT value FROM device_attribute WHERE key = 'link_capacity_bytes_per_s'")),
            QStringLiteral("value\n") + stored + QLatin1Char('\n'));
    }

    void reimportIsSkipped()
    {
        QTemporaryDir dir;
        writeFile(dir, QStringLiteral("gpu-host-7/a.csv"), nvsmiCsv(2, 10));
        writeFile(dir, QStringLiteral("gpu-host-7/b.csv"), nvsmiCsv(2, 10, 100));
        const QString db = dir.filePath(QStringLiteral("run.runlens"));
        const QStringList args = importArgs(db, {dir.filePath(QStringLiteral("gpu-host-7"))});
        const Run first = cli(args);
        EXPECT_EXIT(first, 0);
        const QString before = snapshot(db);
        QCOMPARE(before, QStringLiteral("imports,series,chunks,points,nodes\n2,4,8,80,1\n"));

        const Run second = cli(args);
        EXPECT_EXIT(second, 0);
        EXPECT_MATCH(second.out, QStringLiteral("a\\.csv: already imported"));
        EXPECT_MATCH(second.out, QStringLiteral("b\\.csv: already imported"));
        QCOMPARE(second.out.count(QStringLiteral("already imported (import #")), 2);
        EXPECT_MATCH(second.out, QStringLiteral("^2 files: 0 imported, 2 already imported"));
        QCOMPARE(snapshot(db), before);
    }

    void truncatedZstd_data()
    {
        QTest::addColumn<int>("samples");
        QTest::addColumn<bool>("inFolder");
        QTest::newRow("cut after some blocks, file named") << 4000 << false;
        QTest::newRow("cut in the first block, file named") << 10 << false;
        QTest::newRow("cut in the first block, in a folder") << 10 << true;
    }
    void truncatedZstd()
    {
        QFETCH(int, samples);
        QFETCH(bool, inFolder);
        QTemporaryDir dir;
        const QString db = makeRun(dir);
        QVERIFY(!db.isEmpty());
        const QString before = snapshot(db);
        QVERIFY(!before.isEmpty());

        const std::string zst = zstdCompress(nvsmiCsv(2, samples));
        const QString path = qs(writeFile(dir, QStringLiteral("cut/name.csv.zst"), zst.substr(0, zst.size() / 2)));
        const Run r = cli(importArgs(db, {inFolder ? dir.filePath(QStringLiteral("cut")) : path}));
        EXPECT_EXIT(r, 1);
        EXPECT_MATCH(r.err, QStringLiteral("name\\.csv\\.zst:\\d+: .*truncated"));
        QCOMPARE(snapshot(db), before);
    }

    void dataLoss_data()
    {
        QTest::addColumn<bool>("strict");
        QTest::newRow("default") << false;
        QTest::newRow("--strict") << true;
    }
    void dataLoss()
    {
        QFETCH(bool, strict);
        QTemporaryDir dir;
        std::string csv = nvsmiCsv(1, 3);
        csv.insert(csv.find("\n2026/01/02 03:00:01") + 1, "2026/01/02 03:00:00.500, 0, NVIDIA H200, 5 %, 1 MiB\n");
        const QString path = qs(writeFile(dir, QStringLiteral("bad.csv"), csv));
        const QString db = dir.filePath(QStringLiteral("run.runlens"));
        QStringList args = importArgs(db, {path});
        if (strict) args << QStringLiteral("--strict");
        const Run r = cli(args);
        EXPECT_EXIT(r, strict ? 1 : 0);
        EXPECT_MATCH(r.err, QStringLiteral("bad\\.csv:3: wrong_field_count: 5 fields where the header has 6"));
        EXPECT_MATCH(r.out, QStringLiteral("bad\\.csv: .* 1 problem with data loss, 0 notices"));
        EXPECT_MATCH(r.out, QStringLiteral("1 problems \\(1 with data loss, 0 notices\\)"));
        if (strict) EXPECT_MATCH(r.err, QStringLiteral("--strict"));
        QCOMPARE(query(db, QStringLiteral("SELECT kind, line, status FROM import_diagnostic JOIN import_log USING "
                                          "(import_id)")),
                 QStringLiteral("kind,line,status\nwrong_field_count,3,data_loss\n"));
    }

    void queryIsReadOnly_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::newRow("insert") << QStringLiteral("INSERT INTO node(name) VALUES ('x')");
        QTest::newRow("delete") << QStringLiteral("DELETE FROM series");
        QTest::newRow("attach") << QStringLiteral("ATTACH DATABASE '%1' AS other");
        QTest::newRow("query_only off") << QStringLiteral("PRAGMA query_only = 0; DELETE FROM series");
        QTest::newRow("user_version") << QStringLiteral("PRAGMA user_version = 6");
        QTest::newRow("drop view") << QStringLiteral("DROP VIEW series_summary");
        QTest::newRow("vacuum into") << QStringLiteral("VACUUM INTO '%1'");
    }
    void queryIsReadOnly()
    {
        QFETCH(QString, sql);
        QTemporaryDir dir;
        const QString db = makeRun(dir);
        QVERIFY(!db.isEmpty());
        const QString before = snapshot(db);
        const QByteArray bytes = fileBytes(db);
        const QString other = dir.filePath(QStringLiteral("other.db"));
        const Run r = cli({QStringLiteral("query"), db, sql.contains(QLatin1String("%1")) ? sql.arg(other) : sql});
        EXPECT_EXIT(r, 1);
        EXPECT_MATCH(r.err, QStringLiteral("^runlens: SQL error: \\S"));
        QCOMPARE(snapshot(db), before);
        QVERIFY(fileBytes(db) == bytes);
        QVERIFY(!QFile::exists(other));
    }

    void queryErrorsAndQuoting()
    {
        QTemporaryDir dir;
        const QString db = makeRun(dir);
        QVERIFY(!db.isEmpty());
        const Run bad = cli({QStringLiteral("query"), db, QStringLiteral("SELEC 1")});
        EXPECT_EXIT(bad, 1);
        EXPECT_MATCH(bad.err, QStringLiteral("near \"SELEC\": syntax error"));
        const Run noTable = cli({QStringLiteral("query"), db, QStringLiteral("SELECT * FROM nope")});
        EXPECT_EXIT(noTable, 1);
        EXPECT_MATCH(noTable.err, QStringLiteral("no such table: nope"));

        QCOMPARE(query(db, QStringLiteral("SELECT 'a,b' AS x, 'say \"hi\"' AS y, NULL AS n, 'l1' || char(10) || 'l2' "
                                          "AS m, 2.5 AS f, 3 AS i")),
                 QStringLiteral("x,y,n,m,f,i\n\"a,b\",\"say \"\"hi\"\"\",,\"l1\nl2\",2.5,3\n"));
        const Run noHeader = cli(
            {QStringLiteral("query"), QStringLiteral("--no-header"), db, QStringLiteral("SELECT count(*) FROM node")});
        EXPECT_EXIT(noHeader, 0);
        QCOMPARE(noHeader.out, QStringLiteral("1\n"));
    }

    void notARunDatabase_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("message");
        QTest::newRow("text file") << QStringLiteral("text") << QStringLiteral("file is not a database");
        QTest::newRow("other SQLite database")
            << QStringLiteral("sqlite") << QStringLiteral("not a RunLens run database");
        QTest::newRow("user_version 99") << QStringLiteral("newer") << QStringLiteral("written by a newer RunLens");
        QTest::newRow("missing file") << QStringLiteral("missing") << QStringLiteral("no such run database");
    }
    void notARunDatabase()
    {
        QFETCH(QString, kind);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QString path = dir.filePath(QStringLiteral("x.runlens"));
        if (kind == QLatin1String("text")) {
            writeFile(dir, QStringLiteral("x.runlens"), "hello, this is not a database\n");
        } else if (kind == QLatin1String("sqlite")) {
            QVERIFY(execSqlite(path, "CREATE TABLE foo(x); INSERT INTO foo VALUES (1);"));
        } else if (kind == QLatin1String("newer")) {
            path = makeRun(dir);
            QVERIFY(!path.isEmpty());
            QVERIFY(execSqlite(path, "PRAGMA user_version = 99"));
        }
        const QByteArray bytes = fileBytes(path);
        for (const QStringList& args : {QStringList{QStringLiteral("info"), path},
                                        QStringList{QStringLiteral("query"), path, QStringLiteral("SELECT 1")}}) {
            const Run r = cli(args);
            EXPECT_EXIT(r, 1);
            EXPECT_MATCH(r.err, QStringLiteral("^runlens: \\S*\\.runlens: ") + QRegularExpression::escape(message));
            QVERIFY(r.out.isEmpty());
        }
        if (kind == QLatin1String("missing")) {
            QVERIFY(!QFile::exists(path));
            return;
        }
        // import -o must not turn it into a run (or add to it) either.
        const QString csv = qs(writeFile(dir, QStringLiteral("h/n.csv"), nvsmiCsv(1, 2)));
        const Run r = cli({QStringLiteral("import"), QStringLiteral("-o"), path, csv});
        EXPECT_EXIT(r, 1);
        EXPECT_MATCH(r.err, QRegularExpression::escape(message));
        QVERIFY(fileBytes(path) == bytes);
    }

    void zero3Scenario()
    {
        // The reference case (DESIGN §1), 2 h of it on 4 nodes × 2 GPUs: communication-bound and latency-bound
        // (link load ≈ 0.24) as the primary finding, with the illusion's numbers and the two DeepSpeed frames;
        // the checkpoint at the end real but small.
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("z3"));
        EXPECT_EXIT(zero3Demo(out), 0);
        const Run r = cli({QStringLiteral("analyze"), out + QStringLiteral("/demo.runlens"), QStringLiteral("--json")});
        EXPECT_EXIT(r, 0);
        const QJsonArray findings =
            QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("findings")).toArray();
        QVERIFY2(!findings.isEmpty(), qPrintable(r.describe()));
        const QJsonObject first = findings[0].toObject();
        QCOMPARE(first.value(QStringLiteral("rule")).toString(), QStringLiteral("COMM_BOUND"));
        QVERIFY(first.value(QStringLiteral("primary")).toBool());
        QCOMPARE(first.value(QStringLiteral("nodes")).toArray().size(), qsizetype(4));
        const QJsonObject ev = first.value(QStringLiteral("evidence")).toObject();
        QCOMPARE(ev.value(QStringLiteral("sub_type")).toString(), QStringLiteral("latency"));
        QVERIFY(std::abs(ev.value(QStringLiteral("link_load")).toDouble() - 0.24) < 0.03);
        QVERIFY(ev.value(QStringLiteral("median_gpu_util_pct")).toDouble() >= 95);
        QVERIFY(std::abs(ev.value(QStringLiteral("median_sm_active")).toDouble() - 0.21) < 0.03);
        QStringList frames;
        for (const auto& v : ev.value(QStringLiteral("top_comm_frames")).toArray())
            frames << v.toObject().value(QStringLiteral("frame")).toString();
        QVERIFY2(frames.size() >= 2 && frames[0].startsWith(QStringLiteral("fetch_sub_module")) &&
                     frames[1].contains(QStringLiteral("reduce_and_partition_ipg_grads")),
                 qPrintable(frames.join(QLatin1Char('\n'))));
        QVERIFY(first.value(QStringLiteral("recommendation"))
                    .toString()
                    .contains(QStringLiteral("stage3_prefetch_bucket_size")));
        bool checkpoint = false;
        for (const auto& v : findings) {
            const QJsonObject f = v.toObject();
            if (f.value(QStringLiteral("rule")).toString() != QStringLiteral("CKPT_GAP")) continue;
            checkpoint = true;
            QVERIFY(f.value(QStringLiteral("impact")).toDouble() < 0.05); // real but small
            QVERIFY(f.value(QStringLiteral("impact")).toDouble() > 0.005);
        }
        QVERIFY(checkpoint);
        for (const auto& v : findings) // nothing that is not in the run
            QVERIFY(v.toObject().value(QStringLiteral("rule")).toString() != QStringLiteral("HANG") &&
                    v.toObject().value(QStringLiteral("rule")).toString() != QStringLiteral("THROTTLE"));
    }

    void demo()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("demo"));
        const QStringList args{QStringLiteral("demo"),    QStringLiteral("--no-gui"),
                               QStringLiteral("--nodes"), QStringLiteral("2"),
                               QStringLiteral("--gpus"),  QStringLiteral("2"),
                               QStringLiteral("--hours"), QStringLiteral("0.05"),
                               QStringLiteral("-o"),      out};
        const Run r = cli(args);
        EXPECT_EXIT(r, 0);
        const QString db = out + QStringLiteral("/demo.runlens");
        QVERIFY(QFile::exists(db));
        EXPECT_MATCH(r.out, QStringLiteral("^Nodes \\(2\\)\n  node0 .*\n  node1 "));
        EXPECT_MATCH(r.out, QStringLiteral("^  node0 +gpu:1 +gpu\\.util "));
        EXPECT_MATCH(r.out, QStringLiteral("^  node1 +gpu:0 +gpu\\.util "));
        const QRegularExpressionMatch m =
            QRegularExpression(QStringLiteral("Stack samples \\((\\d+) in (\\d+) thread")).match(r.out);
        QVERIFY2(m.hasMatch() && m.captured(1).toLongLong() > 0 && m.captured(2).toInt() > 0, qPrintable(r.out));
        QCOMPARE(query(db, QStringLiteral("SELECT count(DISTINCT node) FROM series_summary WHERE metric = 'gpu.util'")),
                 QStringLiteral("count(DISTINCT node)\n2\n"));
        for (const char* frame : {"fetch_sub_module", "__reduce_and_partition_ipg_grads", "_next_data"}) {
            const QString n = query(db, QStringLiteral("SELECT count(*) FROM frame f JOIN callsite c ON c.frame_id = "
                                                       "f.id WHERE f.name = '%1'")
                                            .arg(QLatin1String(frame)));
            QVERIFY2(n.section(QLatin1Char('\n'), 1, 1).toInt() > 0, frame);
        }
        // Timed samples (speedscope with startUnixNs) for MainThread and pt_autograd_0 of every rank, all inside
        // the run's 180 s at 10 Hz.
        QCOMPARE(
            query(db, QStringLiteral("SELECT t.name, count(*), count(s.ts_ns), min(s.ts_ns) >= 1793606400000000000, "
                                     "max(s.ts_ns) < 1793606580000000000 FROM stack_samples s JOIN thread t ON "
                                     "t.id = s.thread_id GROUP BY t.name ORDER BY t.name")),
            QStringLiteral("name,count(*),count(s.ts_ns),min(s.ts_ns) >= 1793606400000000000,max(s.ts_ns) < "
                           "1793606580000000000\nMainThread,7200,7200,1,1\npt_autograd_0,7200,7200,1,1\n"));
        // A Kineto trace per rank: its NCCL kernels, and the busy series derived from them.
        EXPECT_MATCH(r.out, QStringLiteral("^Trace slices \\(\\d+ on \\d+ tracks\\)"));
        QCOMPARE(query(db, QStringLiteral("SELECT count(DISTINCT rank) FROM trace_summary WHERE category = "
                                          "'comm_kernel'")),
                 QStringLiteral("count(DISTINCT rank)\n4\n"));
        QCOMPARE(query(db, QStringLiteral("SELECT count(*) FROM series_summary WHERE metric = 'gpu.comm_busy' AND "
                                          "mean_value > 0.5")),
                 QStringLiteral("count(*)\n4\n"));

        // Same seed → byte-identical inputs; the run is replaced, not added to. Another seed → other data.
        const QString csv = out + QStringLiteral("/inputs/node0/nvidia-smi-query.csv");
        const QByteArray first = fileBytes(csv);
        QVERIFY(first.size() > 1000);
        const QString imports = query(db, QStringLiteral("SELECT count(*) FROM import"));
        EXPECT_EXIT(cli(args), 0);
        QVERIFY(fileBytes(csv) == first);
        QCOMPARE(query(db, QStringLiteral("SELECT count(*) FROM import")), imports);
        EXPECT_EXIT(cli(args + QStringList{QStringLiteral("--seed"), QStringLiteral("7")}), 0);
        QVERIFY(fileBytes(csv) != first);
    }

    // runlens flame: the same window written as an offset, epoch seconds and ISO 8601 gives the same graph;
    // folded, SVG and PNG outputs; focus; bad arguments are usage errors that name the option.
    void flame()
    {
        QTemporaryDir dir;
        // 600 samples 100 ms apart from 2026-11-02T08:00:00Z: even samples in a;b, odd ones in a;c.
        const int64_t start = 1793606400LL * 1000000000LL;
        std::string samples, weights;
        for (int i = 0; i < 600; ++i) {
            samples += std::string(i ? "," : "") + (i % 2 ? "[0,2]" : "[0,1]");
            weights += std::string(i ? "," : "") + "0.1";
        }
        const std::string json =
            "{\"shared\": {\"frames\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}]}, "
            "\"profiles\": [{\"type\": \"sampled\", \"name\": \"Thread 7 \\\"MainThread\\\"\", "
            "\"unit\": \"seconds\", \"startValue\": 0, \"endValue\": 60, \"startUnixNs\": " +
            std::to_string(start) + ", \"samples\": [" + samples + "], \"weights\": [" + weights + "]}]}";
        const QString input = QString::fromStdString(writeFile(dir, QStringLiteral("p.speedscope.json"), json));
        const QString db = dir.filePath(QStringLiteral("r.runlens"));
        EXPECT_EXIT(cli({QStringLiteral("import"), QStringLiteral("-o"), db, input}), 0);

        const auto folded = [&](const QStringList& extra) {
            QStringList args{QStringLiteral("flame"), db, QStringLiteral("-o"), QStringLiteral("-")};
            return cli(args + extra);
        };
        // Samples 10..20 (inclusive): 11 samples, 6 even, 5 odd.
        const Run offset = folded(
            {QStringLiteral("--from"), QStringLiteral("+1s"), QStringLiteral("--to"), QStringLiteral("+2000ms")});
        EXPECT_EXIT(offset, 0);
        QCOMPARE(offset.out, QStringLiteral("a;b 6\na;c 5\n"));
        const Run epoch = folded({QStringLiteral("--from"), QStringLiteral("1793606401"), QStringLiteral("--to"),
                                  QStringLiteral("1793606402.0")});
        EXPECT_EXIT(epoch, 0);
        QCOMPARE(epoch.out, offset.out);
        const Run iso = folded({QStringLiteral("--from"), QStringLiteral("2026-11-02T08:00:01Z"),
                                QStringLiteral("--to"), QStringLiteral("2026-11-02T09:00:02+01:00")});
        EXPECT_EXIT(iso, 0);
        QCOMPARE(iso.out, offset.out);
        const Run whole = folded({});
        EXPECT_EXIT(whole, 0);
        QCOMPARE(whole.out, QStringLiteral("a;b 300\na;c 300\n"));
        const Run focus = folded({QStringLiteral("--focus"), QStringLiteral("a;c")});
        EXPECT_EXIT(focus, 0);
        QCOMPARE(focus.out, QStringLiteral("a;c 300\n"));
        const Run perThread =
            folded({QStringLiteral("--per-thread"), QStringLiteral("--thread"), QStringLiteral("Main")});
        EXPECT_EXIT(perThread, 0);
        QCOMPARE(perThread.out, QStringLiteral("thread (7): MainThread;a;b 300\nthread (7): MainThread;a;c 300\n"));

        // Pictures: an SVG with one block per frame and a PNG that is an image.
        const QString svg = dir.filePath(QStringLiteral("f.svg"));
        EXPECT_EXIT(cli({QStringLiteral("flame"), db, QStringLiteral("-o"), svg}), 0);
        QFile svgFile(svg);
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QString svgText = QString::fromUtf8(svgFile.readAll());
        QVERIFY(svgText.startsWith(QStringLiteral("<?xml")));
        QCOMPARE(svgText.count(QStringLiteral("<title>")), 4); // all, a, b, c
        const QString png = dir.filePath(QStringLiteral("f.png"));
        EXPECT_EXIT(cli({QStringLiteral("flame"), db, QStringLiteral("-o"), png, QStringLiteral("--width"),
                         QStringLiteral("800")}),
                    0);
        QFile pngFile(png);
        QVERIFY(pngFile.open(QIODevice::ReadOnly));
        QVERIFY(pngFile.read(8) == QByteArray("\x89PNG\r\n\x1a\n", 8));

        // Errors.
        const Run badTime = folded({QStringLiteral("--from"), QStringLiteral("yesterday")});
        EXPECT_EXIT(badTime, 2);
        EXPECT_MATCH(badTime.err, QStringLiteral("--from: bad time \"yesterday\""));
        const Run backwards =
            folded({QStringLiteral("--from"), QStringLiteral("+2s"), QStringLiteral("--to"), QStringLiteral("+1s")});
        EXPECT_EXIT(backwards, 2);
        const Run badPhase = folded({QStringLiteral("--phase"), QStringLiteral("lunch")});
        EXPECT_EXIT(badPhase, 2);
        EXPECT_MATCH(badPhase.err, QStringLiteral("unknown phase \"lunch\""));
        const Run noPath = folded({QStringLiteral("--focus"), QStringLiteral("a;zz")});
        EXPECT_EXIT(noPath, 1);
        EXPECT_MATCH(noPath.err, QStringLiteral("--focus: no call path"));
        EXPECT_EXIT(cli({QStringLiteral("flame"), db, QStringLiteral("-o"), dir.filePath(QStringLiteral("f.jpg"))}), 2);
    }

    void realFixtures()
    {
        const QString fx = fixturesDir();
        if (fx.isEmpty()) QSKIP("../shared/fixtures is absent: real-capture tests skipped");
        const QString base = fx + QStringLiteral("/h200-gloo-small/");
        const QString csv = base + QStringLiteral("nvidia-smi-query.csv");
        const QStringList folded{base + QStringLiteral("stacks-rank0.folded"),
                                 base + QStringLiteral("stacks-rank1.folded")};
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("real.runlens"));
        const Run r = cli(importArgs(db, QStringList{csv} + folded));
        EXPECT_EXIT(r, 0);

        // Data lines per GPU, counted here from the CSV's index column.
        const QStringList lines = QString::fromUtf8(fileBytes(csv)).split(QLatin1Char('\n'));
        const QStringList header = lines.value(0).split(QLatin1Char(','));
        qsizetype indexCol = -1;
        for (qsizetype i = 0; i < header.size(); ++i)
            if (header[i].trimmed() == QLatin1String("index")) indexCol = i;
        QVERIFY(indexCol >= 0);
        std::map<int, int> perGpu;
        for (const QString& line : lines.mid(1)) {
            const QStringList f = line.split(QLatin1Char(','));
            bool ok = false;
            const int gpu = f.value(indexCol).trimmed().toInt(&ok);
            if (!line.trimmed().isEmpty() && ok) ++perGpu[gpu];
        }
        QVERIFY(!perGpu.empty());
        QString expected = QStringLiteral("device,points\n");
        for (const auto& [gpu, n] : perGpu)
            expected += QStringLiteral("gpu:%1,%2\n").arg(gpu).arg(n);
        QCOMPARE(query(db, QStringLiteral("SELECT device, points FROM series_summary WHERE metric = 'gpu.util' "
                                          "ORDER BY device")),
                 expected);

        // Total weight = the sum of the last number of every folded line.
        double weight = 0;
        for (const QString& path : folded)
            for (const QString& line : QString::fromUtf8(fileBytes(path)).split(QLatin1Char('\n')))
                if (!line.trimmed().isEmpty())
                    weight += line.trimmed().section(QRegularExpression(QStringLiteral("\\s+")), -1).toDouble();
        QVERIFY(weight > 0);
        const QString sum = query(db, QStringLiteral("SELECT sum(total_weight) FROM stack_summary"));
        QCOMPARE(sum.section(QLatin1Char('\n'), 1, 1).toDouble(), weight);
    }
};

QTEST_GUILESS_MAIN(TstCli)
#include "tst_cli.moc"
