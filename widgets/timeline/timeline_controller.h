#pragma once

// The shared view state of the timeline and every view that follows it: the visible range, the zoom history
// (Back/Forward), the selected window (what the flame graph, findings and reports look at) and the cursor.
// Views subscribe to its signals; only the GUI thread touches it.

#include <QObject>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace runlens::widgets {

struct TimeRange
{
    int64_t fromNs = 0;
    int64_t toNs = 0; // inclusive
    int64_t span() const { return toNs - fromNs; }
    bool operator==(const TimeRange&) const = default;
};

class TimelineController : public QObject
{
    Q_OBJECT
public:
    explicit TimelineController(QObject* parent = nullptr);

    // The run's extent: fit() shows it, ranges are kept inside it (with a margin). Resets history and selection.
    void setFullRange(TimeRange full);
    TimeRange fullRange() const { return m_full; }

    TimeRange range() const { return m_range; }
    // Sets the visible range (clamped, at least kMinSpanNs wide). recordHistory: the old range goes on the Back stack
    // (continuous gestures record once, at their start, with beginGesture()).
    void setRange(TimeRange range, bool recordHistory = true);
    // factor < 1 zooms in; continuous gestures (wheel, drag) pass recordHistory = false after beginGesture().
    void zoom(double factor, std::optional<int64_t> aroundNs = std::nullopt, bool recordHistory = true);
    void pan(double fractionOfSpan, bool recordHistory = true); // + moves later
    void fit();
    void beginGesture(); // records the current range once for a drag or a wheel burst

    bool canGoBack() const { return !m_back.empty(); }
    bool canGoForward() const { return !m_forward.empty(); }
    void back();
    void forward();

    std::optional<TimeRange> selection() const { return m_selection; }
    void setSelection(std::optional<TimeRange> selection);

    std::optional<int64_t> cursor() const { return m_cursor; }
    void setCursor(std::optional<int64_t> ns);

    static constexpr int64_t kMinSpanNs = 1'000'000; // 1 ms

Q_SIGNALS:
    void rangeChanged(runlens::widgets::TimeRange range);
    void selectionChanged(std::optional<runlens::widgets::TimeRange> selection);
    void cursorChanged(std::optional<int64_t> ns);
    void historyChanged();

private:
    TimeRange clamp(TimeRange r) const;
    TimeRange m_full;
    TimeRange m_range;
    std::vector<TimeRange> m_back, m_forward;
    std::optional<TimeRange> m_selection;
    std::optional<int64_t> m_cursor;
};

} // namespace runlens::widgets
