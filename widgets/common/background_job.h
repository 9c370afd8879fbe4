#pragma once

// Work on a worker thread (QtConcurrent::run) that throws, memory exhausted by a huge run or a bug, must end as an
// error the user sees, never as a view or dialog busy forever: QtConcurrent would keep the exception in the future
// and deliver nothing. guardedJob turns what the job throws into a result of the job's own type (built by onThrow
// from the words), which the view already shows as an error; startJob runs a guarded job and delivers its result.

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <type_traits>
#include <utility>

namespace runlens::widgets {

// The words for an exception a job threw ("out of memory" for std::bad_alloc, else what() or a plain statement).
QString jobFailureText(const std::exception_ptr& error);

// fn, wrapped: its result, or onThrow(jobFailureText(...)) when it throws.
template <typename Fn, typename OnThrow> auto guardedJob(Fn fn, OnThrow onThrow)
{
    return [fn = std::move(fn), onThrow = std::move(onThrow)]() mutable -> std::invoke_result_t<Fn&> {
        try {
            return fn();
        } catch (...) {
            return onThrow(jobFailureText(std::current_exception()));
        }
    };
}

// Runs job on pool (nullptr: the application's global pool), guarded as above, and calls deliver(result) on owner's
// thread when it ends. The result is dropped when owner is destroyed first: the watcher that would deliver it is
// owner's child and goes with it. (Qt 6.4's QFuture::then(context, ...) asserts, and loses the promise, when the
// context dies before the job ends: a dialog closed or a window shut while its job runs.) A job must not touch
// owner itself: it captures what it reads by value or shared pointer.
template <typename Fn, typename OnThrow, typename Deliver>
void startJob(QObject* owner, QThreadPool* pool, Fn job, OnThrow onThrow, Deliver deliver)
{
    using Result = std::invoke_result_t<Fn&>;
    auto* watcher = new QFutureWatcher<Result>(owner);
    QObject::connect(watcher, &QFutureWatcherBase::finished, owner, [watcher, deliver = std::move(deliver)]() mutable {
        watcher->deleteLater();
        deliver(watcher->future().takeResult());
    });
    auto guarded = guardedJob(std::move(job), std::move(onThrow));
    watcher->setFuture(pool ? QtConcurrent::run(pool, std::move(guarded)) : QtConcurrent::run(std::move(guarded)));
}

} // namespace runlens::widgets
