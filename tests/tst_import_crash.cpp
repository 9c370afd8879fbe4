// An import killed at any moment (SIGKILL: no handler runs) leaves a run that opens read-only with exactly the
// files whose import had finished, each whole, and a database that passes SQLite's integrity check; the file's
// bytes are not changed by that read-only look, and the next import finishes the rest. The kill moments follow the
// import's own progress (after its k-th finished file, then a random part of a file's time), so they land inside
// the import however loaded the machine is.

#include "tests/cli_support.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <random>

using namespace runlens::test::binary;

namespace {

constexpr int kKills = 30; // moments to kill the import at

// Per imported file (its path): "rows/points/samples", as runlens info lists them.
std::map<QString, QString> importsOf(const QString& info)
{
    std::map<QString, QString> out;
    static const QRegularExpression re(
        QStringLiteral("  #\\d+ (\\S+)\\n\\s+\\S+ → node \\S+: (\\d+) rows, (\\d+) points, (\\d+) samples"));
    for (auto it = re.globalMatch(info); it.hasNext();) {
        const auto m = it.next();
        out[m.captured(1)] = m.captured(2) + QLatin1Char('/') + m.captured(3) + QLatin1Char('/') + m.captured(4);
    }
    return out;
}

// Waits until the import has said it finished `files` files (one line each on its standard output), or has ended.
void waitForFiles(QProcess& p, int files)
{
    QByteArray out;
    while (out.count("\xE2\x86\x92 node ") < files && p.state() == QProcess::Running) { // "→ node "
        if (!p.waitForReadyRead(kTimeoutMs)) break;
        out += p.readAllStandardOutput();
    }
}

QByteArray hashOf(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

} // namespace

class TestImportCrash : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void killedImportsKeepTheFinishedFiles()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // The demo's files (2 nodes, metrics, scrapes, stacks, traces, a trainer log), and a whole import of them.
        const QString demo = dir.filePath(QStringLiteral("demo"));
        EXPECT_EXIT(cli({QStringLiteral("demo"), QStringLiteral("--no-gui"), QStringLiteral("--hours"),
                         QStringLiteral("0.25"), QStringLiteral("-o"), demo}),
                    0);
        const QString inputs = demo + QStringLiteral("/inputs");
        const QString reference = dir.filePath(QStringLiteral("reference.runlens"));
        QElapsedTimer whole;
        whole.start();
        EXPECT_EXIT(cli({QStringLiteral("import"), QStringLiteral("--tz"), QStringLiteral("UTC"), QStringLiteral("-o"),
                         reference, inputs}),
                    0);
        const qint64 wholeMs = std::max<qint64>(whole.elapsed(), 50);
        const Run refInfo = cli({QStringLiteral("info"), reference});
        EXPECT_EXIT(refInfo, 0);
        const std::map<QString, QString> complete = importsOf(refInfo.out);
        QVERIFY2(complete.size() > 10, qPrintable(refInfo.out));

        // After file k (0: before the first ends), then up to twice a file's mean time.
        const auto files = static_cast<int>(complete.size());
        std::mt19937 rng(20261203);
        std::uniform_int_distribution<int> afterFile(0, files - 2);
        std::uniform_int_distribution<qint64> moment(0, 2 * wholeMs / files);
        int partial = 0;
        for (int k = 0; k < kKills; ++k) {
            const QString run = dir.filePath(QStringLiteral("killed-%1.runlens").arg(k));
            QProcess p;
            p.setProgram(QStringLiteral(RUNLENS_BINARY));
            p.setArguments({QStringLiteral("import"), QStringLiteral("--tz"), QStringLiteral("UTC"),
                            QStringLiteral("-o"), run, inputs});
            p.start();
            QVERIFY(p.waitForStarted(kTimeoutMs));
            const int afterFiles = afterFile(rng);
            const qint64 ms = moment(rng);
            waitForFiles(p, afterFiles);
            const QString at = QStringLiteral("%1 ms after file %2").arg(ms).arg(afterFiles);
            if (!p.waitForFinished(static_cast<int>(ms))) p.kill(); // SIGKILL
            p.waitForFinished(kTimeoutMs);
            if (!QFileInfo::exists(run)) continue; // killed before the file was created
            const QByteArray before = hashOf(run);
            const Run info = cli({QStringLiteral("info"), run});
            QVERIFY2(info.exitCode == 0, qPrintable(QStringLiteral("killed %1: ").arg(at) + info.describe()));
            // Exactly the finished files, each as a whole import has it.
            const std::map<QString, QString> got = importsOf(info.out);
            for (const auto& [file, counts] : got) {
                QVERIFY2(complete.count(file), qPrintable(file));
                QVERIFY2(complete.at(file) == counts, qPrintable(QStringLiteral("%1 killed %2: %3 against %4")
                                                                     .arg(file)
                                                                     .arg(at)
                                                                     .arg(counts, complete.at(file))));
            }
            partial += got.size() < complete.size();
            const Run check = cli({QStringLiteral("query"), run, QStringLiteral("PRAGMA integrity_check")});
            QVERIFY2(check.exitCode == 0 && check.out.contains(QStringLiteral("ok")), qPrintable(check.describe()));
            QCOMPARE(hashOf(run), before); // looked at read-only: unchanged
            // Importing again finishes it: every file, as the whole import has it.
            EXPECT_EXIT(cli({QStringLiteral("import"), QStringLiteral("--tz"), QStringLiteral("UTC"),
                             QStringLiteral("-o"), run, inputs}),
                        0);
            const Run after = cli({QStringLiteral("info"), run});
            QVERIFY2(importsOf(after.out) == complete, qPrintable(after.out));
        }
        qInfo("%d of %d kills left a partial run", partial, kKills);
        QVERIFY2(partial >= kKills / 4,
                 qPrintable(QStringLiteral("only %1 of %2 kills left a partial run").arg(partial).arg(kKills)));
    }
};

QTEST_GUILESS_MAIN(TestImportCrash)
#include "tst_import_crash.moc"
