#pragma once

// The timeline's lanes as a list: a check box per lane shows or hides it, Up/Down (or the context menu) move
// the current lane. It only asks; the timeline does it and the list is set again from the timeline's lanes.

#include "analysis/timeline/lane_catalog.h"

#include <QWidget>
#include <string>
#include <vector>

class QListWidget;
class QListWidgetItem;
class QToolButton;

namespace runlens::widgets {

class LaneListWidget : public QWidget
{
    Q_OBJECT
public:
    explicit LaneListWidget(QWidget* parent = nullptr);

    // The lanes in display order and which of them are shown. The current lane stays current.
    void setLanes(const std::vector<timeline::LaneSpec>& lanes, const std::vector<std::string>& visibleIds);
    QString currentLaneId() const;

Q_SIGNALS:
    void laneVisibilityRequested(const QString& laneId, bool visible);
    void laneMoveRequested(const QString& laneId, int delta); // -1 up, +1 down

private:
    void moveCurrent(int delta);
    void onItemChanged(QListWidgetItem* item);
    void showContextMenu(const QPoint& pos);
    void updateButtons();

    QListWidget* m_list;
    QToolButton* m_up;
    QToolButton* m_down;
    bool m_filling = false;
};

} // namespace runlens::widgets
