// A job on a worker thread that throws reaches the view as an error of the job's own result type, so every view
// and dialog that waits for one leaves its busy state; what it threw is named in words.

#include "widgets/common/background_job.h"

#include <QSignalSpy>
#include <QTest>
#include <QtConcurrent/QtConcurrent>
#include <new>
#include <stdexcept>

using namespace runlens;

namespace {

struct Outcome
{
    int value = 0;
    QString error;
};

Outcome failedWith(const QString& error)
{
    return {0, error};
}

} // namespace

class TestBackgroundJob : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void resultPassesThrough()
    {
        const Outcome o = widgets::guardedJob([] { return Outcome{42, {}}; }, failedWith)();
        QCOMPARE(o.value, 42);
        QVERIFY(o.error.isEmpty());
    }

    void throwsBecomeErrors_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("memory exhausted") << 0 << QStringLiteral("out of memory");
        QTest::newRow("a standard exception") << 1 << QStringLiteral("internal error: index 7 past the end");
        QTest::newRow("anything else") << 2 << QStringLiteral("internal error");
    }

    void throwsBecomeErrors()
    {
        QFETCH(int, kind);
        QFETCH(QString, expected);
        auto job = widgets::guardedJob(
            [kind]() -> Outcome {
                if (kind == 0) throw std::bad_alloc();
                if (kind == 1) throw std::out_of_range("index 7 past the end");
                throw 7;
            },
            failedWith);
        QCOMPARE(job().error, expected);
    }

    // As the views use it: the job runs on a pool thread, its continuation on this thread gets the error and can
    // leave its busy state; without the guard the continuation would never run.
    void continuationRunsAfterAThrow()
    {
        bool busy = true;
        QString shown;
        QObject context;
        QThreadPool pool;
        auto future = QtConcurrent::run(&pool, widgets::guardedJob([]() -> Outcome { throw std::bad_alloc(); },
                                                                   failedWith))
                          .then(&context, [&](const Outcome& o) {
                              busy = false;
                              shown = o.error;
                          });
        QTRY_VERIFY_WITH_TIMEOUT(!busy, 10000);
        QCOMPARE(shown, QStringLiteral("out of memory"));
        future.waitForFinished();
    }
};

QTEST_GUILESS_MAIN(TestBackgroundJob)
#include "tst_background_job.moc"
