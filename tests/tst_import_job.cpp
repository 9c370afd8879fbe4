// The import job the GUI runs on a QtConcurrent worker: it reports progress over the bytes of all files, and a
// cancel leaves the database exactly as it was before the file being read (its transaction rolls back), while
// the files imported before the cancel stay.

#include "app/demo/demo_run.h"
#include "app/jobs/import_job.h"
#include "tests/test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QFuture>
#include <QTest>
#include <QtConcurrent/QtConcurrentRun>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>

using namespace runlens;

namespace {

// A node's nvidia-smi CSV of the demo: hours × 3600 rows per GPU.
std::string writeNvsmi(const QTemporaryDir& dir, const QString& name, int node, double hours, int gpus)
{
    const std::string path = dir.filePath(name).toStdString();
    QDir().mkpath(QFileInfo(dir.filePath(name)).absolutePath());
    app::DemoSpec spec;
    spec.hours = hours;
    spec.gpusPerNode = gpus;
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (!out) return {};
    const bool ok = app::writeDemoNvsmiCsv(spec, node, out).ok();
    std::fclose(out);
    return ok ? path : std::string();
}

// What the database holds: imports, series, stored points, chunks and diagnostics.
QStringList counts(const std::string& db)
{
    return test::queryRows(db, "SELECT (SELECT count(*) FROM import), (SELECT count(*) FROM series), "
                               "(SELECT coalesce(sum(count), 0) FROM point_chunk), (SELECT count(*) FROM point_chunk), "
                               "(SELECT count(*) FROM diagnostic), (SELECT count(*) FROM node)");
}

importers::ImportOptions utc()
{
    importers::ImportOptions options;
    options.timeZone = "UTC";
    return options;
}

std::vector<importers::PlannedFile> plan(const std::vector<std::string>& paths)
{
    auto planned = importers::planImport(paths, utc());
    return planned ? planned.value() : std::vector<importers::PlannedFile>{};
}

} // namespace

class TestImportJob : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void importsOnWorkerWithProgress()
    {
        QTemporaryDir dir;
        const std::string small = writeNvsmi(dir, QStringLiteral("node0.csv"), 0, 0.05, 2);
        QVERIFY(!small.empty());
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        const auto files = plan({small});
        QCOMPARE(files.size(), size_t(1));
        QVERIFY(files[0].importer);

        struct Seen
        {
            std::mutex mutex;
            std::vector<std::pair<uint64_t, uint64_t>> reports;
        };
        auto seen = std::make_shared<Seen>();
        QFuture<app::ImportJobResult> future = QtConcurrent::run([db, files, seen] {
            app::ImportJobCallbacks callbacks;
            callbacks.progress = [seen](uint64_t done, uint64_t total, size_t) {
                std::lock_guard lock(seen->mutex);
                seen->reports.emplace_back(done, total);
            };
            return app::runImport(db, files, utc(), callbacks);
        });
        QTRY_VERIFY_WITH_TIMEOUT(future.isFinished(), 60000);
        const app::ImportJobResult result = future.result();
        QVERIFY2(!result.error, result.summary().c_str());
        QCOMPARE(result.imported, 1);
        QVERIFY(!result.cancelled);
        QVERIFY(result.points > 0);
        QCOMPARE(result.importedFiles(), std::vector<std::string>{files[0].displayPath});

        // Progress over the file's size on disk, never backwards, ending at the total.
        QVERIFY(seen->reports.size() >= 2);
        const uint64_t total = seen->reports.back().second;
        QCOMPARE(total, static_cast<uint64_t>(QFileInfo(QString::fromStdString(small)).size()));
        QCOMPARE(seen->reports.back().first, total);
        for (size_t i = 1; i < seen->reports.size(); ++i)
            QVERIFY(seen->reports[i].first >= seen->reports[i - 1].first);

        // What the job reports is what the database holds: one import, its points.
        const QStringList after = counts(db);
        QCOMPARE(after.size(), 1);
        const QStringList cells = after.front().split(QLatin1Char('|'));
        QCOMPARE(cells.value(0), QStringLiteral("1"));
        QCOMPARE(cells.value(2).toLongLong(), result.points);
    }

    void cancelLeavesDatabaseUnchanged()
    {
        QTemporaryDir dir;
        // A first import, so the run is not empty; then a large file and one after it.
        const std::string first = writeNvsmi(dir, QStringLiteral("a/node0.csv"), 0, 0.02, 2);
        const std::string large = writeNvsmi(dir, QStringLiteral("b/node1.csv"), 1, 2.0, 8);
        const std::string last = writeNvsmi(dir, QStringLiteral("c/node2.csv"), 2, 0.02, 2);
        QVERIFY(!first.empty() && !large.empty() && !last.empty());
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        const app::ImportJobResult seed = app::runImport(db, plan({first}), utc());
        QCOMPARE(seed.imported, 1);
        const QStringList before = counts(db);
        QCOMPARE(before.size(), 1);

        const auto files = plan({large, last});
        QCOMPARE(files.size(), size_t(2));
        auto cancel = std::make_shared<std::atomic<bool>>(false);
        auto reportsAfterCancel = std::make_shared<std::atomic<int>>(0);
        QFuture<app::ImportJobResult> future = QtConcurrent::run([db, files, cancel, reportsAfterCancel] {
            app::ImportJobCallbacks callbacks;
            callbacks.progress = [cancel, reportsAfterCancel](uint64_t done, uint64_t, size_t) {
                // As soon as the importer reports that it has read something, the user cancels.
                if (cancel->load()) ++*reportsAfterCancel;
                if (done > 0) cancel->store(true);
            };
            return app::runImport(db, files, utc(), callbacks, cancel.get());
        });
        QTRY_VERIFY_WITH_TIMEOUT(future.isFinished(), 60000);
        const app::ImportJobResult result = future.result();
        QVERIFY(cancel->load());
        QVERIFY(result.cancelled);
        QCOMPARE(result.imported, 0);
        QVERIFY(result.files.empty()); // the large file was being read; the last was never started
        QCOMPARE(result.cancelledFile, files[0].displayPath);
        QVERIFY(result.summary().find("cancelled") != std::string::npos);
        QCOMPARE(counts(db), before);

        // The same file imports afterwards: the cancel left nothing half-written behind.
        const app::ImportJobResult again = app::runImport(db, files, utc());
        QCOMPARE(again.imported, 2);
        QVERIFY(counts(db) != before);
    }

    void cancelKeepsFilesImportedBefore()
    {
        QTemporaryDir dir;
        const std::string small = writeNvsmi(dir, QStringLiteral("a/node0.csv"), 0, 0.02, 2);
        const std::string large = writeNvsmi(dir, QStringLiteral("b/node1.csv"), 1, 2.0, 8);
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        const auto files = plan({small, large});
        QCOMPARE(files.size(), size_t(2));
        std::atomic<bool> cancel{false};
        app::ImportJobCallbacks callbacks;
        callbacks.progress = [&](uint64_t done, uint64_t, size_t index) {
            if (index == 1 && done > 0) cancel = true; // while the second file is read
        };
        const app::ImportJobResult result = app::runImport(db, files, utc(), callbacks, &cancel);
        QVERIFY(result.cancelled);
        QCOMPARE(result.importedFiles(), std::vector<std::string>{files[0].displayPath});
        QCOMPARE(test::queryOne(db, "SELECT count(*) FROM import"), QStringLiteral("1"));
    }

    // A trainer log without times imported alone stays unanchored; importing its node's GPU CSV later places it where
    // its steps and pauses match the GPUs' busy and idle times.
    void unanchoredLogPlacedByLaterImport()
    {
        QTemporaryDir dir;
        // True time: training from second 30 of 03:00, one step a second, pauses of 3.5 s after seconds 50 and 70,
        // steps until 95; the GPU busy (90 %) exactly then, sampled every 250 ms over two minutes.
        const auto busy = [](double t) {
            return t >= 30 && t < 95 && !(t >= 50 && t < 53.5) && !(t >= 70 && t < 73.5);
        };
        std::string csv = "timestamp, index, name, utilization.gpu [%]\n";
        for (int i = 0; i < 480; ++i) {
            const double t = i * 0.25;
            csv += QStringLiteral("2026/01/02 03:%1:%2.%3, 0, NVIDIA H200, %4 %\n")
                       .arg(static_cast<int>(t) / 60, 2, 10, QLatin1Char('0'))
                       .arg(static_cast<int>(t) % 60, 2, 10, QLatin1Char('0'))
                       .arg(i % 4 * 250, 3, 10, QLatin1Char('0'))
                       .arg(busy(t - 0.125) ? 90 : 0)
                       .toStdString();
        }
        // The log of a run that started at second 30 and paused 3.5 s after seconds pauseA and pauseB.
        const auto trainerLog = [](double pauseA, double pauseB) {
            std::string log;
            int step = 0;
            for (int second = 31; second <= 95; ++second) {
                const auto end = static_cast<double>(second);
                double t = end;
                if (end > pauseA) t += 3.5;
                if (end > pauseB - 3.5) t += 3.5;
                if (t > 95) break;
                const int elapsed = static_cast<int>(t - 30);
                log += QStringLiteral("{\"current_steps\": %1, \"total_steps\": 1000, \"loss\": 2.0, "
                                      "\"elapsed_time\": \"0:%2:%3\"}\n")
                           .arg(++step)
                           .arg(elapsed / 60, 2, 10, QLatin1Char('0'))
                           .arg(elapsed % 60, 2, 10, QLatin1Char('0'))
                           .toStdString();
            }
            return log;
        };
        const std::string log = trainerLog(50, 70);
        const std::string logPath = test::writeFile(dir, QStringLiteral("trainer_log.jsonl"), log);
        const std::string csvPath = test::writeFile(dir, QStringLiteral("gpu.csv"), csv);
        const std::string db = dir.filePath(QStringLiteral("run.runlens")).toStdString();
        importers::ImportOptions options = utc();
        options.node = "n1";
        auto first = importers::planImport({logPath}, options);
        QVERIFY_OK(first);
        QCOMPARE(app::runImport(db, first.value(), options).imported, 1);
        QCOMPARE(test::queryOne(db, "SELECT anchor FROM import"), QStringLiteral("unanchored"));

        auto second = importers::planImport({csvPath}, options);
        QVERIFY_OK(second);
        const app::ImportJobResult r = app::runImport(db, second.value(), options);
        QCOMPARE(r.imported, 1);
        QCOMPARE(r.placedLater, 1);
        QVERIFY2(r.summary().find("1 source imported earlier without a place in time now aligned") != std::string::npos,
                 r.summary().c_str());
        const QStringList placed =
            test::queryOne(db, "SELECT anchor, anchor_start_ns, anchor_uncertainty_ns FROM import WHERE format = "
                               "'llamafactory-trainer-log'")
                .split(QLatin1Char('|'));
        QCOMPARE(placed.value(0), QStringLiteral("aligned"));
        const double trueStartNs = 1767322800e9 + 30e9; // 2026-01-02T03:00:30Z
        const double error = std::abs(placed.value(1).toDouble() - trueStartNs);
        qInfo("start found %.3f s from the true start, ± %.3f s", error / 1e9, placed.value(2).toDouble() / 1e9);
        QVERIFY2(
            error <= placed.value(2).toDouble() && error <= 1e9,
            qPrintable(
                QStringLiteral("start off by %1 s, ± %2 s").arg(error / 1e9).arg(placed.value(2).toDouble() / 1e9)));
        QCOMPARE(test::queryOne(db, "SELECT count(*) FROM unanchored_point"), QStringLiteral("0"));

        // The log of another run, pausing at other times: matches nothing here.
        const std::string other = test::writeFile(dir, QStringLiteral("other/trainer_log.jsonl"), trainerLog(40, 85));
        auto third = importers::planImport({other}, options);
        QVERIFY_OK(third);
        QCOMPARE(app::runImport(db, third.value(), options).imported, 1);
        qInfo("%s", qPrintable(test::queryOne(db, "SELECT anchor_method FROM import ORDER BY id DESC LIMIT 1")));
        QCOMPARE(test::queryRows(db, "SELECT anchor FROM import WHERE format = 'llamafactory-trainer-log' ORDER BY id"),
                 QStringList({QStringLiteral("aligned"), QStringLiteral("unanchored")}));
    }

    void databaseErrorIsReported()
    {
        QTemporaryDir dir;
        const std::string csv = writeNvsmi(dir, QStringLiteral("node0.csv"), 0, 0.01, 1);
        const std::string notARun = test::writeFile(dir, QStringLiteral("x.runlens"), "not a database");
        const app::ImportJobResult result = app::runImport(notARun, plan({csv}), utc());
        QVERIFY(result.error);
        QVERIFY(result.files.empty());
    }
};

QTEST_GUILESS_MAIN(TestImportJob)
#include "tst_import_job.moc"
