#pragma once

// Work on a worker thread (QtConcurrent::run) that throws, memory exhausted by a huge run or a bug, must end as an
// error the user sees, never as a view or dialog busy forever: QtConcurrent would keep the exception in the future
// and skip every .then() continuation. guardedJob turns what the job throws into a result of the job's own type
// (built by onThrow from the words), which the continuation already shows as an error.

#include <QString>
#include <exception>
#include <type_traits>
#include <utility>

namespace runlens::widgets {

// The words for an exception a job threw ("out of memory" for std::bad_alloc, else what() or a plain statement).
QString jobFailureText(const std::exception_ptr& error);

// fn, wrapped: its result, or onThrow(jobFailureText(...)) when it throws.
template <typename Fn, typename OnThrow>
auto guardedJob(Fn fn, OnThrow onThrow)
{
    return [fn = std::move(fn), onThrow = std::move(onThrow)]() mutable -> std::invoke_result_t<Fn&> {
        try {
            return fn();
        } catch (...) {
            return onThrow(jobFailureText(std::current_exception()));
        }
    };
}

} // namespace runlens::widgets
