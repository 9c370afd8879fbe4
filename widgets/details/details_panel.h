#pragma once

// What the timeline looks at, in words: the visible range, the selected window and its duration, the cursor
// time, and the series picked in the run browser (metric, unit, source, points, missing points, min/max,
// first/last). Times are shown in UTC and as an offset from the start of the run.

#include "analysis/store/run_reader.h"
#include "widgets/timeline/timeline_controller.h"

#include <QWidget>
#include <cstdint>
#include <initializer_list>
#include <optional>

class QGroupBox;
class QLabel;

namespace runlens::widgets {

class DetailsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit DetailsPanel(QWidget* parent = nullptr);

    void setRunStart(int64_t startNs); // the origin of the "+" offsets
    void setRange(TimeRange range);
    void setSelection(std::optional<TimeRange> selection);
    void setCursor(std::optional<int64_t> ns);
    // The series picked in the browser (null: none); node and device name it.
    void setSeries(const store::SeriesInfo* series, const QString& node, const QString& device);
    void clear();

    QString rangeText() const;
    QString selectionText() const;

    static QString formatTime(int64_t ns, int64_t startNs); // "2026-11-02 08:10:00.000 UTC (+10:00.000)"
    static QString formatDuration(int64_t ns);              // "1 min 5.250 s", "350 ms"

private:
    // A value row: where its label goes, and its name.
    struct Row
    {
        QLabel** label;
        QString name;
    };
    // A group box titled `title` with a form of value rows, each label showing "—" until set.
    QGroupBox* addGroup(const QString& title, std::initializer_list<Row> rows);

    int64_t m_startNs = 0;
    QLabel* m_range;
    QLabel* m_rangeSpan;
    QLabel* m_selection;
    QLabel* m_selectionSpan;
    QLabel* m_cursor;
    QLabel* m_seriesName;
    QLabel* m_seriesUnit;
    QLabel* m_seriesSource;
    QLabel* m_seriesPoints;
    QLabel* m_seriesMissing;
    QLabel* m_seriesMinMax;
    QLabel* m_seriesFirst;
    QLabel* m_seriesLast;
};

} // namespace runlens::widgets
