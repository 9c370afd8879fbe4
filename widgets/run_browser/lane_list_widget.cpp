#include "widgets/run_browser/lane_list_widget.h"

#include <QHBoxLayout>
#include <QListWidget>
#include <QMenu>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace runlens::widgets {

namespace {

constexpr int kLaneIdRole = Qt::UserRole + 1;

} // namespace

LaneListWidget::LaneListWidget(QWidget* parent)
    : QWidget(parent), m_list(new QListWidget(this)), m_up(new QToolButton(this)), m_down(new QToolButton(this))
{
    m_list->setContextMenuPolicy(Qt::CustomContextMenu);
    m_up->setArrowType(Qt::UpArrow);
    m_up->setToolTip(tr("Move the lane up"));
    m_down->setArrowType(Qt::DownArrow);
    m_down->setToolTip(tr("Move the lane down"));

    auto* buttons = new QHBoxLayout;
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addWidget(m_up);
    buttons->addWidget(m_down);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_list);
    layout->addLayout(buttons);

    connect(m_up, &QToolButton::clicked, this, [this] { moveCurrent(-1); });
    connect(m_down, &QToolButton::clicked, this, [this] { moveCurrent(+1); });
    connect(m_list, &QListWidget::itemChanged, this, &LaneListWidget::onItemChanged);
    connect(m_list, &QListWidget::currentRowChanged, this, &LaneListWidget::updateButtons);
    connect(m_list, &QListWidget::customContextMenuRequested, this, &LaneListWidget::showContextMenu);
    updateButtons();
}

void LaneListWidget::setLanes(const std::vector<timeline::LaneSpec>& lanes, const std::vector<std::string>& visibleIds)
{
    const QString current = currentLaneId();
    m_filling = true;
    m_list->clear();
    for (const timeline::LaneSpec& lane : lanes) {
        const QString id = QString::fromStdString(lane.id);
        QString text = QString::fromStdString(lane.title);
        if (!lane.unit.empty()) text += QStringLiteral(" (") + QString::fromStdString(lane.unit) + QLatin1Char(')');
        auto* item = new QListWidgetItem(text, m_list);
        item->setData(kLaneIdRole, id);
        QStringList metrics;
        for (const timeline::LaneMetric& m : lane.metrics)
            metrics << QString::fromStdString(m.label.empty() ? m.metric : m.label);
        item->setToolTip(text + QLatin1Char('\n') + metrics.join(QStringLiteral(", "))); // a narrow list cuts the name
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        const bool shown = std::find(visibleIds.begin(), visibleIds.end(), lane.id) != visibleIds.end();
        item->setCheckState(shown ? Qt::Checked : Qt::Unchecked);
        if (id == current) m_list->setCurrentItem(item);
    }
    m_filling = false;
    updateButtons();
}

QString LaneListWidget::currentLaneId() const
{
    const QListWidgetItem* item = m_list->currentItem();
    return item ? item->data(kLaneIdRole).toString() : QString();
}

void LaneListWidget::moveCurrent(int delta)
{
    const QString id = currentLaneId();
    if (!id.isEmpty()) Q_EMIT laneMoveRequested(id, delta);
}

void LaneListWidget::onItemChanged(QListWidgetItem* item)
{
    if (m_filling) return;
    Q_EMIT laneVisibilityRequested(item->data(kLaneIdRole).toString(), item->checkState() == Qt::Checked);
}

void LaneListWidget::showContextMenu(const QPoint& pos)
{
    QListWidgetItem* item = m_list->itemAt(pos);
    if (!item) return;
    m_list->setCurrentItem(item);
    QMenu menu(this);
    const bool shown = item->checkState() == Qt::Checked;
    QAction* toggle = menu.addAction(shown ? tr("Hide lane") : tr("Show lane"));
    QAction* up = menu.addAction(tr("Move up"));
    QAction* down = menu.addAction(tr("Move down"));
    up->setEnabled(m_list->row(item) > 0);
    down->setEnabled(m_list->row(item) + 1 < m_list->count());
    QAction* chosen = menu.exec(m_list->viewport()->mapToGlobal(pos));
    if (chosen == toggle) item->setCheckState(shown ? Qt::Unchecked : Qt::Checked);
    if (chosen == up) moveCurrent(-1);
    if (chosen == down) moveCurrent(+1);
}

void LaneListWidget::updateButtons()
{
    const int row = m_list->currentRow();
    m_up->setEnabled(row > 0);
    m_down->setEnabled(row >= 0 && row + 1 < m_list->count());
}

} // namespace runlens::widgets
