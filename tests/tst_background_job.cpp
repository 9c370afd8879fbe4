// A job on a worker thread that throws reaches the view as an error of the job's own result type, so every view
// and dialog that waits for one leaves its busy state; what it threw is named in words. A result whose owner is gone
// is dropped, never delivered to a destroyed object.

#include "widgets/common/background_job.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <algorithm>
#include <atomic>
#include <memory>
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

    // As the views use it: the job runs on a pool thread, its result reaches this thread as an error and the view
    // can leave its busy state; without the guard nothing would be delivered.
    void deliveryAfterAThrow()
    {
        bool busy = true;
        QString shown;
        QObject owner;
        QThreadPool pool;
        widgets::startJob(
            &owner, &pool, []() -> Outcome { throw std::bad_alloc(); }, failedWith,
            [&](const Outcome& o) {
                busy = false;
                shown = o.error;
            });
        QTRY_VERIFY_WITH_TIMEOUT(!busy, 10000);
        QCOMPARE(shown, QStringLiteral("out of memory"));
    }

    // A dialog closed, or a window shut, while its job runs: the job finishes on its thread, its result is dropped
    // with the owner, nothing is delivered to the destroyed object and nothing aborts.
    void resultDroppedWhenTheOwnerIsGone()
    {
        QThreadPool pool;
        std::atomic<bool> release = false, ran = false;
        int delivered = 0;
        auto owner = std::make_unique<QObject>();
        widgets::startJob(
            owner.get(), &pool,
            [&] {
                while (!release)
                    QThread::msleep(1);
                ran = true;
                return Outcome{1, {}};
            },
            failedWith, [&](const Outcome&) { ++delivered; });
        owner.reset(); // the job is still waiting
        release = true;
        QVERIFY(pool.waitForDone(10000));
        QVERIFY(ran);
        QCoreApplication::processEvents();
        QTest::qWait(50);
        QCOMPARE(delivered, 0);
    }

    // Every job's result is delivered once, on the owner's thread; the watchers that carried them go afterwards.
    void eachResultDeliveredOnceOnTheOwnersThread()
    {
        QObject owner;
        std::vector<int> got;
        bool onOwnerThread = true;
        for (int i = 0; i < 5; ++i)
            widgets::startJob(
                &owner, nullptr,
                [i] {
                    return Outcome{i, {}};
                },
                failedWith,
                [&](const Outcome& o) {
                    onOwnerThread = onOwnerThread && QThread::currentThread() == owner.thread();
                    got.push_back(o.value);
                });
        QTRY_COMPARE_WITH_TIMEOUT(got.size(), size_t{5}, 10000);
        std::sort(got.begin(), got.end());
        QCOMPARE(got, (std::vector<int>{0, 1, 2, 3, 4}));
        QVERIFY(onOwnerThread);
        QTRY_COMPARE_WITH_TIMEOUT(owner.findChildren<QObject*>().size(), 0, 10000);
    }
};

QTEST_GUILESS_MAIN(TestBackgroundJob)
#include "tst_background_job.moc"
