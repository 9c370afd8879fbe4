// `runlens clock` and the clock offsets of `runlens import` end to end: a two-node run of Kineto traces whose node1
// clock is 2.5 s ahead is lined up on import; offsets shown, set by the user, kept, re-estimated, forced; bad
// arguments are usage errors.

#include "tests/cli_support.h"
#include "tests/test_support.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace runlens::test;
using namespace runlens::test::binary;

namespace {

// One rank's trace: twelve NCCL kernels ending 7.3 s apart (true time), written on a clock that reads
// true + clockErrorNs.
std::string trace(int rank, int64_t clockErrorNs)
{
    const int64_t base = 1'790'857'026'000'000'000;
    const int64_t firstEnd = base + 3'600'000'000'000; // true, ns
    std::string events;
    for (int k = 0; k < 12; ++k) {
        const int64_t end = firstEnd + k * 7'300'000'000LL + clockErrorNs + (rank * 1'000 + k * 700) % 3'000;
        const int64_t dur = 20'000'000 + (rank + 1) * 3'000'000 + k * 100'000;
        events +=
            QStringLiteral("%1{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllGather_RING_LL\", "
                           "\"pid\": 0, \"tid\": 20, \"ts\": %2, \"dur\": %3, \"args\": {\"device\": 0, "
                           "\"stream\": 20}}")
                .arg(QLatin1String(k ? ",\n" : ""))
                .arg(static_cast<double>(end - dur - base) / 1000.0, 0, 'f', 3)
                .arg(static_cast<double>(dur) / 1000.0, 0, 'f', 3)
                .toStdString();
    }
    return QStringLiteral("{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %1, "
                          "\"world_size\": 2}, \"baseTimeNanoseconds\": %2, \"traceEvents\": [\n")
               .arg(rank)
               .arg(base)
               .toStdString() +
           events + "\n]}\n";
}

// node0/rank0.json and node1/rank1.json under dir/logs (node1's clock 2.5 s ahead); returns the logs folder.
QString writeLogs(const QTemporaryDir& dir)
{
    QDir(dir.path()).mkpath(QStringLiteral("logs/node0"));
    QDir(dir.path()).mkpath(QStringLiteral("logs/node1"));
    writeFile(dir, QStringLiteral("logs/node0/rank0.json"), trace(0, 0));
    writeFile(dir, QStringLiteral("logs/node1/rank1.json"), trace(1, 2'500'000'000));
    return dir.filePath(QStringLiteral("logs"));
}

// "node|offset in ms|source" per node.
QString offsets(const QString& db)
{
    return queryRows(db.toStdString(),
                     "SELECT name, CAST(round(clock_offset_ns / 1e6) AS INTEGER), clock_offset_source "
                     "FROM node ORDER BY name")
        .join(QLatin1Char(' '));
}

QStringList args(std::initializer_list<QString> items)
{
    return QStringList(items);
}

} // namespace

class TestCliClock : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void estimatedOnImport()
    {
        QTemporaryDir dir;
        const QString logs = writeLogs(dir), db = dir.filePath(QStringLiteral("r.runlens"));
        const Run r = cli(args({QStringLiteral("import"), QStringLiteral("-o"), db, logs}));
        EXPECT_EXIT(r, 0);
        EXPECT_MATCH(r.out, QStringLiteral("^clock node0: \\+0 ns \\(traces\\): the reference"));
        EXPECT_MATCH(r.out, QStringLiteral("^clock node1: -2\\.500 s ±10\\.0 µs from traces: ends of 12 NCCL kernels"));
        QCOMPARE(offsets(db), QStringLiteral("node0|0|traces node1|-2500|traces"));

        const Run table = cli(args({QStringLiteral("clock"), db}));
        EXPECT_EXIT(table, 0);
        EXPECT_MATCH(table.out, QStringLiteral("^Clocks "));
        EXPECT_MATCH(table.out, QStringLiteral("^  node1 +-2\\.500 s +±10\\.0 µs  traces$"));
        const Run info = cli(args({QStringLiteral("info"), db}));
        EXPECT_EXIT(info, 0);
        EXPECT_MATCH(info.out, QStringLiteral("^  node0 +\\+0 ns +±0 ns  traces$"));

        // Set by the user: kept by --estimate, replaced by --estimate --force.
        const Run set = cli(args({QStringLiteral("clock"), db, QStringLiteral("node1=+1.25s")}));
        EXPECT_EXIT(set, 0);
        EXPECT_MATCH(set.out, QStringLiteral("^  node1 +\\+1\\.250 s +±0 ns  user$"));
        const Run kept = cli(args({QStringLiteral("clock"), db, QStringLiteral("--estimate")}));
        EXPECT_EXIT(kept, 0);
        EXPECT_MATCH(kept.out, QStringLiteral("^clock node1: \\+1\\.250 s set by the user \\(kept"));
        QCOMPARE(offsets(db), QStringLiteral("node0|0|traces node1|1250|user"));
        EXPECT_EXIT(cli(args({QStringLiteral("clock"), db, QStringLiteral("--estimate"), QStringLiteral("--force")})),
                    0);
        QCOMPARE(offsets(db), QStringLiteral("node0|0|traces node1|-2500|traces"));
    }

    void userOffsetOnImport()
    {
        QTemporaryDir dir;
        const QString logs = writeLogs(dir), db = dir.filePath(QStringLiteral("r.runlens"));
        const Run r = cli(args({QStringLiteral("import"), QStringLiteral("-o"), db, QStringLiteral("--clock-offset"),
                                QStringLiteral("node0=-300ms"), logs}));
        EXPECT_EXIT(r, 0);
        EXPECT_MATCH(r.out, QStringLiteral("^clock node0: -300\\.000 ms set by the user$"));
        // node0 is the reference and keeps its offset: node1 is placed relative to it.
        QCOMPARE(offsets(db), QStringLiteral("node0|-300|user node1|-2800|traces"));
    }

    // A finding over several nodes says when it rests on estimated offsets; offsets the user set are not estimates.
    void findingsNameEstimatedOffsets()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("z3")), db = out + QStringLiteral("/demo.runlens");
        EXPECT_EXIT(cli(args({QStringLiteral("demo"), QStringLiteral("--scenario"), QStringLiteral("zero3"),
                              QStringLiteral("--gpus"), QStringLiteral("2"), QStringLiteral("--hours"),
                              QStringLiteral("0.2"), QStringLiteral("--no-gui"), QStringLiteral("-o"), out})),
                    0);
        EXPECT_EXIT(cli(args({QStringLiteral("clock"), db, QStringLiteral("--estimate")})), 0);
        const auto evidence = [&] {
            const Run r =
                cli(args({QStringLiteral("analyze"), db, QStringLiteral("--json"), QStringLiteral("--no-store")}));
            QStringList found;
            for (const auto& f :
                 QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("findings")).toArray())
                found << f.toObject().value(QStringLiteral("rule")).toString() + QLatin1Char('|') +
                             f.toObject()
                                 .value(QStringLiteral("evidence"))
                                 .toObject()
                                 .value(QStringLiteral("estimated_clock_offsets"))
                                 .toString();
            return found;
        };
        const QStringList estimated = evidence();
        QVERIFY(!estimated.isEmpty());
        for (const QString& f : estimated)
            if (f.startsWith(QStringLiteral("COMM_BOUND|")))
                QVERIFY2(QRegularExpression(QStringLiteral("node1 [-+][0-9.]+ [mµn]?s ±[0-9.]+ [mµn]?s \\(traces\\)"))
                             .match(f)
                             .hasMatch(),
                         qPrintable(f));
        QVERIFY2(estimated.join(QLatin1Char(' ')).contains(QStringLiteral("COMM_BOUND|node")),
                 qPrintable(estimated.join(QLatin1Char('\n'))));
        EXPECT_EXIT(cli(args({QStringLiteral("clock"), db, QStringLiteral("node1=0"), QStringLiteral("node2=0"),
                              QStringLiteral("node3=0")})),
                    0);
        for (const QString& f : evidence())
            QVERIFY2(f.endsWith(QLatin1Char('|')), qPrintable(f));
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("arguments"); // RUN stands for the run
        QTest::addColumn<QString>("message");
        QTest::newRow("no run") << strs({"clock"}) << QStringLiteral("clock needs a RUN");
        QTest::newRow("not an assignment") << strs({"clock", "RUN", "node1"}) << QStringLiteral("expected NODE=OFFSET");
        QTest::newRow("bad offset") << strs({"clock", "RUN", "node1=soon"}) << QStringLiteral("expected NODE=OFFSET");
        QTest::newRow("unknown node") << strs({"clock", "RUN", "node7=1s"}) << QStringLiteral("no node \"node7\"");
        QTest::newRow("force alone") << strs({"clock", "RUN", "--force"}) << QStringLiteral("--force goes with");
        QTest::newRow("import bad offset") << strs({"import", "-o", "RUN", "--clock-offset", "node1", "LOGS"})
                                           << QStringLiteral("--clock-offset needs NODE=OFFSET");
    }

    void usageErrors()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString logs = writeLogs(dir), db = dir.filePath(QStringLiteral("r.runlens"));
        EXPECT_EXIT(cli(args({QStringLiteral("import"), QStringLiteral("-o"), db, logs})), 0);
        const QString before = offsets(db);
        for (QString& a : arguments)
            a = a == QLatin1String("RUN") ? db : a == QLatin1String("LOGS") ? logs : a;
        const Run r = cli(arguments);
        EXPECT_EXIT(r, 2);
        EXPECT_MATCH(r.err, QRegularExpression::escape(message));
        QCOMPARE(offsets(db), before);
    }
};

QTEST_GUILESS_MAIN(TestCliClock)
#include "tst_cli_clock.moc"
