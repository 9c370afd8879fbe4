// Whole recorded runs from ../shared/fixtures imported the way a user would (one `runlens import` of the
// run's metric and stack files): the nodes, devices and series a post-mortem starts from, and the numbers
// checked against independent computations from the raw files. Skips when the fixtures are absent.

#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "importers/import_session.h"
#include "tests/test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace runlens;

namespace {

// The files of a fixture run that hold metrics and stacks (never truth/, which is ground truth for tests).
std::vector<std::string> runInputs(const QString& runDir)
{
    std::vector<std::string> files;
    const QDir dir(runDir);
    for (const QString& name : dir.entryList(
             {QStringLiteral("nvidia-smi-*.csv"), QStringLiteral("nvidia-smi-dmon*.txt"), QStringLiteral("*.folded")},
             QDir::Files, QDir::Name))
        files.push_back(dir.filePath(name).toStdString());
    const QDir prom(dir.filePath(QStringLiteral("prometheus")));
    for (const QString& name : prom.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
        files.push_back(prom.filePath(name).toStdString());
    return files;
}

struct Run
{
    std::string db;
    QStringList failures;
};

Run importRun(const QTemporaryDir& tmp, const QString& runDir)
{
    Run run;
    run.db = tmp.filePath(QStringLiteral("run.runlens")).toStdString();
    importers::ImportOptions options;
    options.timeZone = "UTC"; // the fixtures were recorded on a machine in UTC
    auto plan = importers::planImport(runInputs(runDir), options);
    auto db = store::RunDatabase::open(run.db, store::OpenMode::Create);
    if (!plan || !db) {
        run.failures << QStringLiteral("cannot plan or open");
        return run;
    }
    for (const importers::PlannedFile& f : *plan) {
        const importers::FileResult r = importers::importFile(**db, f, options);
        if (r.outcome == importers::FileOutcome::Imported) continue;
        QString failure = QString::fromStdString(f.displayPath) + QStringLiteral(": ") +
                          QString::fromLatin1(importers::outcomeName(r.outcome));
        if (r.error) failure += QLatin1Char(' ') + QString::fromStdString(r.error->toString());
        run.failures << failure;
    }
    return run;
}

QString one(const std::string& db, const std::string& sql)
{
    return test::queryRows(db, sql).value(0);
}

// (first, last) counter values and their times of a Prometheus query_range series, read with Qt's JSON.
struct CounterSpan
{
    double firstValue = 0, lastValue = 0, firstS = 0, lastS = 0, increase = 0;
};
CounterSpan counterSpan(const QString& file, const QString& device)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QJsonArray result =
        QJsonDocument::fromJson(f.readAll())[QStringLiteral("data")][QStringLiteral("result")].toArray();
    for (const auto& series : result) {
        if (series[QStringLiteral("metric")][QStringLiteral("device")].toString() != device) continue;
        const QJsonArray values = series[QStringLiteral("values")].toArray();
        CounterSpan s;
        s.firstS = values.first()[0].toDouble();
        s.lastS = values.last()[0].toDouble();
        s.firstValue = values.first()[1].toString().toDouble();
        s.lastValue = values.last()[1].toString().toDouble();
        double prev = s.firstValue;
        for (const auto& v : values) {
            const double x = v[1].toString().toDouble();
            s.increase += x >= prev ? x - prev : x; // a reset restarts from zero
            prev = x;
        }
        return s;
    }
    return {};
}

} // namespace

class TestFixtureRuns : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void h200GlooSmall()
    {
        const QString fixtures = test::fixturesDir();
        if (fixtures.isEmpty()) QSKIP("../shared/fixtures is absent: nothing to check against real runs");
        const QString runDir = fixtures + QStringLiteral("/h200-gloo-small");
        QTemporaryDir tmp;
        const Run run = importRun(tmp, runDir);
        QVERIFY2(run.failures.isEmpty(), qPrintable(run.failures.join(QLatin1Char('\n'))));

        // Every file lands on node vm: the Prometheus files name it, the others join it.
        QCOMPARE(one(run.db, "SELECT group_concat(name) FROM node"), QStringLiteral("vm"));
        for (const char* want :
             {"gpu:0|gpu.util", "gpu:0|gpu.sm_active", "gpu:0|gpu.tensor_active", "gpu:0|gpu.dram_active",
              "gpu:0|gpu.power", "nic:lo|net.rx", "nic:lo|net.tx", "disk:vda|disk.write", "cpu|cpu.util"}) {
            const QStringList parts = QString::fromLatin1(want).split(QLatin1Char('|'));
            QVERIFY2(one(run.db, "SELECT count(*) FROM series_summary WHERE node = 'vm' AND device = '" +
                                     parts[0].toStdString() + "' AND metric = '" + parts[1].toStdString() +
                                     "' AND points > 0") != QLatin1String("0"),
                     want);
        }
        // SM activity from the GPM smutil column is a 0-1 ratio.
        QCOMPARE(one(run.db, "SELECT min_value >= 0 AND max_value <= 1 AND max_value > 0 FROM series_summary "
                             "WHERE metric = 'gpu.sm_active'"),
                 QStringLiteral("1"));

        // Disk writes: the stored rates integrate to the counter's increase computed from the JSON here.
        const CounterSpan vda = counterSpan(runDir + QStringLiteral("/prometheus/node_disk_written_bytes_total.json"),
                                            QStringLiteral("vda"));
        QVERIFY(vda.increase > 1e9);
        store::TimeWindow all;
        auto db = store::RunDatabase::open(run.db, store::OpenMode::ReadOnly);
        QVERIFY(db.ok());
        store::RunReader reader(**db);
        auto series = reader.findSeries("vm", "disk", "vda", "disk.write");
        QVERIFY(series.ok() && series->has_value());
        auto points = reader.readPoints((*series)->id, all);
        QVERIFY(points.ok());
        double integrated = 0;
        int64_t prevTs = static_cast<int64_t>(std::llround(vda.firstS * 1e3)) * 1'000'000;
        for (const store::Point& p : *points) {
            integrated += p.value * static_cast<double>(p.tsNs - prevTs) / 1e9;
            prevTs = p.tsNs;
        }
        QVERIFY2(std::abs(integrated - vda.increase) <= 1e-6 * vda.increase,
                 qPrintable(QStringLiteral("integrated %1 bytes, counters say %2").arg(integrated).arg(vda.increase)));
        const double meanRate = vda.increase / (vda.lastS - vda.firstS);
        const double storedMean = integrated / (vda.lastS - vda.firstS);
        QVERIFY(std::abs(meanRate - storedMean) <= 1e-6 * meanRate);

        // The three checkpoints (~1.7 GB each, fsync'd) are write bursts above 500 MB/s.
        int bursts = 0;
        bool inBurst = false;
        for (const store::Point& p : *points) {
            const bool high = !p.missing && p.value > 500e6;
            if (high && !inBurst) ++bursts;
            inBurst = high;
        }
        QCOMPARE(bursts, 3);
    }

    void h200x2FsdpHang()
    {
        const QString fixtures = test::fixturesDir();
        if (fixtures.isEmpty()) QSKIP("../shared/fixtures is absent: nothing to check against real runs");
        QTemporaryDir tmp;
        const Run run = importRun(tmp, fixtures + QStringLiteral("/h200x2-fsdp-hang"));
        QVERIFY2(run.failures.isEmpty(), qPrintable(run.failures.join(QLatin1Char('\n'))));
        QCOMPARE(one(run.db, "SELECT group_concat(name) FROM node"), QStringLiteral("vm"));
        QCOMPARE(
            one(run.db, "SELECT group_concat(name) FROM (SELECT name FROM device WHERE kind = 'gpu' ORDER BY name)"),
            QStringLiteral("0,1"));
        // The NCCL traffic between the two ranks goes over loopback: several GB/s while training.
        const double peak = one(run.db, "SELECT max_value FROM series_summary WHERE device = 'nic:lo' AND "
                                        "metric = 'net.tx'")
                                .toDouble();
        QVERIFY2(peak > 2e9, qPrintable(QStringLiteral("peak lo tx %1 B/s").arg(peak)));
    }
};

QTEST_GUILESS_MAIN(TestFixtureRuns)
#include "tst_fixture_runs.moc"
