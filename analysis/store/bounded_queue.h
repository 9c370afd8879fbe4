#pragma once

// A small blocking queue with a capacity, for producer/consumer pipelines (file read-ahead, chunk
// encoding). close() wakes everyone: push then fails and pop drains what is left, then returns nothing.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace runlens {

template <typename T> class BoundedQueue
{
public:
    explicit BoundedQueue(size_t capacity) : m_capacity(capacity) {}

    bool push(T value)
    {
        std::unique_lock lock(m_mutex);
        m_notFull.wait(lock, [&] { return m_closed || m_items.size() < m_capacity; });
        if (m_closed) return false;
        m_items.push_back(std::move(value));
        m_notEmpty.notify_one();
        return true;
    }

    std::optional<T> pop()
    {
        std::unique_lock lock(m_mutex);
        m_notEmpty.wait(lock, [&] { return m_closed || !m_items.empty(); });
        if (m_items.empty()) return std::nullopt;
        T v = std::move(m_items.front());
        m_items.pop_front();
        m_notFull.notify_one();
        return v;
    }

    std::optional<T> tryPop()
    {
        std::lock_guard lock(m_mutex);
        if (m_items.empty()) return std::nullopt;
        T v = std::move(m_items.front());
        m_items.pop_front();
        m_notFull.notify_one();
        return v;
    }

    void close()
    {
        std::lock_guard lock(m_mutex);
        m_closed = true;
        m_notEmpty.notify_all();
        m_notFull.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_notEmpty, m_notFull;
    std::deque<T> m_items;
    size_t m_capacity;
    bool m_closed = false;
};

} // namespace runlens
