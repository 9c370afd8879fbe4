#include "app/gui/run_docks.h"

#include "analysis/clock/clock_estimate.h"
#include "widgets/details/details_panel.h"
#include "widgets/problems/problems_view.h"
#include "widgets/run_browser/lane_list_widget.h"
#include "widgets/run_browser/run_browser_model.h"
#include "widgets/timeline/timeline_widget.h"

#include <QDockWidget>
#include <QEvent>
#include <QHeaderView>
#include <QMainWindow>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QTreeView>

namespace runlens::app {

namespace {

QDockWidget* makeDock(QMainWindow* window, const QString& title, const QString& name, QWidget* content,
                      Qt::DockWidgetArea area)
{
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(name); // for saveState/restoreState
    dock->setWidget(content);
    window->addDockWidget(area, dock);
    return dock;
}

// Below this width the run browser shows names only: a device name matters more than its point count.
constexpr int kPointsColumnMinWidth = 240;

} // namespace

RunDocks::RunDocks(QMainWindow* window, widgets::TimelineWidget* timeline, widgets::TimelineController* controller)
    : QObject(window), m_timeline(timeline), m_controller(controller), m_model(new widgets::RunBrowserModel(this)),
      m_tree(new QTreeView), m_lanes(new widgets::LaneListWidget), m_details(new widgets::DetailsPanel),
      m_problems(new widgets::ProblemsView)
{
    m_tree->setObjectName(QStringLiteral("runBrowser"));
    m_tree->setModel(m_model);
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(widgets::RunBrowserModel::NameColumn, QHeaderView::Stretch);
    m_tree->header()->setSectionResizeMode(widgets::RunBrowserModel::PointsColumn, QHeaderView::ResizeToContents);
    m_tree->installEventFilter(this); // a narrow browser drops the points column (its tooltips keep the counts)
    auto* browser = new QSplitter(Qt::Vertical);
    browser->addWidget(m_tree);
    browser->addWidget(m_lanes);
    browser->setStretchFactor(0, 3);
    browser->setStretchFactor(1, 2);

    m_browserDock =
        makeDock(window, tr("Run browser"), QStringLiteral("runBrowserDock"), browser, Qt::LeftDockWidgetArea);
    // In a scroll area: a short window scrolls the details instead of growing past the screen.
    auto* detailsArea = new QScrollArea;
    detailsArea->setWidget(m_details);
    detailsArea->setWidgetResizable(true);
    detailsArea->setFrameShape(QFrame::NoFrame);
    m_detailsDock =
        makeDock(window, tr("Details"), QStringLiteral("detailsDock"), detailsArea, Qt::RightDockWidgetArea);
    m_problemsDock =
        makeDock(window, tr("Problems"), QStringLiteral("problemsDock"), m_problems, Qt::BottomDockWidgetArea);
    m_problemsDock->hide(); // opened from the problems bar
    // Each node's clock offset (added to its times as read), how sure it is and how it was found.
    m_clocks = new QTableWidget(0, 4);
    m_clocks->setObjectName(QStringLiteral("clocks"));
    m_clocks->setHorizontalHeaderLabels({tr("Node"), tr("Offset"), tr("±"), tr("Found from")});
    m_clocks->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_clocks->verticalHeader()->hide();
    m_clocks->horizontalHeader()->setStretchLastSection(true);
    m_clocks->setMinimumWidth(380); // node, offset, ± and source readable side by side
    m_clocks->setToolTip(tr("Added to every time of the node as it is read; the data stay as imported. Set or "
                            "estimate with runlens clock RUN node=+1.25s / --estimate."));
    m_clocksDock = makeDock(window, tr("Clocks"), QStringLiteral("clocksDock"), m_clocks, Qt::BottomDockWidgetArea);
    m_clocksDock->hide();

    connect(m_model, &widgets::RunBrowserModel::hiddenSeriesChanged, this,
            [this](const std::vector<int64_t>& hidden) { m_timeline->setHiddenSeries(hidden); });
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this, &RunDocks::showCurrentSeries);
    connect(m_lanes, &widgets::LaneListWidget::laneVisibilityRequested, this,
            [this](const QString& id, bool visible) { m_timeline->setLaneVisible(id.toStdString(), visible); });
    connect(m_lanes, &widgets::LaneListWidget::laneMoveRequested, this,
            [this](const QString& id, int delta) { m_timeline->moveLane(id.toStdString(), delta); });
    connect(m_timeline, &widgets::TimelineWidget::lanesChanged, this, &RunDocks::refreshLanes);
    connect(m_controller, &widgets::TimelineController::rangeChanged, m_details, &widgets::DetailsPanel::setRange);
    connect(m_controller, &widgets::TimelineController::selectionChanged, m_details,
            &widgets::DetailsPanel::setSelection);
    connect(m_controller, &widgets::TimelineController::cursorChanged, m_details, &widgets::DetailsPanel::setCursor);
}

void RunDocks::setCatalog(const std::shared_ptr<const timeline::RunCatalog>& catalog, bool keepHidden)
{
    const std::vector<int64_t> hidden = keepHidden ? m_model->hiddenSeries() : std::vector<int64_t>{};
    m_model->setCatalog(catalog);
    m_model->setHiddenSeries(hidden);
    m_tree->expandToDepth(0);
    m_details->setRunStart(catalog ? catalog->firstNs : 0);
    m_details->setSelection(std::nullopt);
    m_details->setCursor(std::nullopt);
    m_details->setSeries(nullptr, {}, {});
    m_problems->setImports(catalog ? catalog->imports : std::vector<timeline::ImportProblems>{});
    const std::vector<store::NodeInfo> nodes = catalog ? catalog->nodes : std::vector<store::NodeInfo>{};
    m_clocks->setRowCount(static_cast<int>(nodes.size()));
    for (int row = 0; row < static_cast<int>(nodes.size()); ++row) {
        const store::NodeInfo& n = nodes[static_cast<size_t>(row)];
        const QString source = QString::fromStdString(n.clockOffsetSource);
        const QStringList cells{
            QString::fromStdString(n.name), QString::fromStdString(analysis::formatClockDuration(n.clockOffsetNs)),
            n.clockOffsetUncertaintyNs
                ? QString::fromStdString(analysis::formatClockDuration(*n.clockOffsetUncertaintyNs, false))
                : QStringLiteral("–"),
            source.isEmpty() ? tr("not set") : source};
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col == 1 || col == 2) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_clocks->setItem(row, col, item);
        }
    }
    m_clocks->resizeColumnsToContents();
    refreshLanes();
}

void RunDocks::clear()
{
    setCatalog(nullptr, false);
    m_details->clear();
}

bool RunDocks::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_tree && event->type() == QEvent::Resize)
        m_tree->setColumnHidden(widgets::RunBrowserModel::PointsColumn, m_tree->width() < kPointsColumnMinWidth);
    return QObject::eventFilter(watched, event);
}

void RunDocks::showProblems()
{
    m_problemsDock->show();
    m_problemsDock->raise();
}

void RunDocks::refreshLanes()
{
    m_lanes->setLanes(m_timeline->lanes(), m_timeline->visibleLaneIds());
}

void RunDocks::showCurrentSeries()
{
    const QModelIndex current = m_tree->currentIndex();
    const store::SeriesInfo* s = m_model->seriesAt(current);
    if (!s) {
        m_details->setSeries(nullptr, {}, {});
        return;
    }
    // The series hangs under its device (if any) and its node: name them from the tree.
    const QModelIndex parent = current.parent();
    const QModelIndex grandParent = parent.parent();
    const QString parentText = parent.data().toString();
    if (grandParent.isValid())
        m_details->setSeries(s, grandParent.data().toString(), parentText);
    else
        m_details->setSeries(s, parentText, {});
}

} // namespace runlens::app
