#include "widgets/timeline/timeline_controller.h"

#include <algorithm>
#include <cmath>

namespace runlens::widgets {

namespace {
constexpr size_t kHistoryLimit = 100;
}

TimelineController::TimelineController(QObject* parent) : QObject(parent) {}

void TimelineController::setFullRange(TimeRange full)
{
    if (full.toNs < full.fromNs) std::swap(full.fromNs, full.toNs);
    if (full.span() < kMinSpanNs) full.toNs = full.fromNs + kMinSpanNs;
    m_full = full;
    m_back.clear();
    m_forward.clear();
    m_range = full;
    m_selection.reset();
    m_cursor.reset();
    Q_EMIT historyChanged();
    Q_EMIT selectionChanged(m_selection);
    Q_EMIT rangeChanged(m_range);
}

// Keeps the range inside the full range plus a margin of a tenth of it on each side, and at least kMinSpanNs wide.
TimeRange TimelineController::clamp(TimeRange r) const
{
    if (r.toNs < r.fromNs) std::swap(r.fromNs, r.toNs);
    const int64_t margin = m_full.span() / 10;
    const int64_t lo = m_full.fromNs - margin, hi = m_full.toNs + margin;
    const int64_t maxSpan = hi - lo;
    int64_t span = std::clamp<int64_t>(r.span(), kMinSpanNs, std::max(maxSpan, kMinSpanNs));
    int64_t from = r.fromNs + (r.span() - span) / 2;
    from = std::clamp<int64_t>(from, lo, std::max(lo, hi - span));
    return {from, from + span};
}

void TimelineController::setRange(TimeRange range, bool recordHistory)
{
    const TimeRange r = clamp(range);
    if (r == m_range) return;
    if (recordHistory) {
        m_back.push_back(m_range);
        if (m_back.size() > kHistoryLimit) m_back.erase(m_back.begin());
        m_forward.clear();
        Q_EMIT historyChanged();
    }
    m_range = r;
    Q_EMIT rangeChanged(m_range);
}

void TimelineController::beginGesture()
{
    m_back.push_back(m_range);
    if (m_back.size() > kHistoryLimit) m_back.erase(m_back.begin());
    m_forward.clear();
    Q_EMIT historyChanged();
}

void TimelineController::zoom(double factor, std::optional<int64_t> aroundNs, bool recordHistory)
{
    if (!(factor > 0) || !std::isfinite(factor)) return;
    const int64_t around = aroundNs.value_or(m_range.fromNs + m_range.span() / 2);
    const double left = static_cast<double>(around - m_range.fromNs) * factor;
    const double right = static_cast<double>(m_range.toNs - around) * factor;
    setRange({around - static_cast<int64_t>(std::llround(left)), around + static_cast<int64_t>(std::llround(right))},
             recordHistory);
}

void TimelineController::pan(double fractionOfSpan, bool recordHistory)
{
    const auto shift = static_cast<int64_t>(std::llround(static_cast<double>(m_range.span()) * fractionOfSpan));
    TimeRange r{m_range.fromNs + shift, m_range.toNs + shift};
    // Panning keeps the span: stop at the edge instead of shrinking.
    const int64_t margin = m_full.span() / 10;
    if (r.fromNs < m_full.fromNs - margin) r = {m_full.fromNs - margin, m_full.fromNs - margin + m_range.span()};
    if (r.toNs > m_full.toNs + margin) r = {m_full.toNs + margin - m_range.span(), m_full.toNs + margin};
    setRange(r, recordHistory);
}

void TimelineController::fit()
{
    setRange(m_full);
}

void TimelineController::back()
{
    if (m_back.empty()) return;
    m_forward.push_back(m_range);
    m_range = m_back.back();
    m_back.pop_back();
    Q_EMIT historyChanged();
    Q_EMIT rangeChanged(m_range);
}

void TimelineController::forward()
{
    if (m_forward.empty()) return;
    m_back.push_back(m_range);
    m_range = m_forward.back();
    m_forward.pop_back();
    Q_EMIT historyChanged();
    Q_EMIT rangeChanged(m_range);
}

void TimelineController::setSelection(std::optional<TimeRange> selection)
{
    if (selection && selection->toNs < selection->fromNs) std::swap(selection->fromNs, selection->toNs);
    if (selection == m_selection) return;
    m_selection = selection;
    Q_EMIT selectionChanged(m_selection);
}

void TimelineController::setCursor(std::optional<int64_t> ns)
{
    if (ns == m_cursor) return;
    m_cursor = ns;
    Q_EMIT cursorChanged(m_cursor);
}

} // namespace runlens::widgets
