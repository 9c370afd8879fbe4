#include "app/gui/flame_dock.h"

#include "analysis/flame/flame_tree.h"
#include "analysis/store/run_database.h"
#include "widgets/common/background_job.h"
#include "widgets/common/flush_column.h"
#include "widgets/flame/flame_graph_widget.h"
#include "widgets/flame/flame_panel.h"
#include "widgets/timeline/lane_plot_data.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QRegularExpression>
#include <QThreadPool>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <map>

namespace runlens::app {

std::vector<std::pair<std::string, int>> threadPatterns(const std::vector<store::ThreadStacks>& threads)
{
    std::map<std::string, int> count;
    static const QRegularExpression digits(QStringLiteral("\\d+"));
    for (const store::ThreadStacks& t : threads) {
        if (t.thread.empty()) continue;
        QString name = QRegularExpression::escape(QString::fromStdString(t.thread));
        name.replace(digits, QStringLiteral("\\d+"));
        ++count[QStringLiteral("^%1$").arg(name).toStdString()];
    }
    std::vector<std::pair<std::string, int>> out(count.begin(), count.end());
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

// The worker's connection and flame source, created on first use by the worker (never touched elsewhere).
struct FlameDockBackend
{
    std::string path;
    std::unique_ptr<store::RunDatabase> db;
    std::unique_ptr<analysis::FlameSource> source;
};
struct FlameDock::Backend : FlameDockBackend
{
};

namespace {
Expected<std::shared_ptr<const analysis::FlameTree>> buildTree(FlameDockBackend& backend, const analysis::FlameQuery& q)
{
    if (!backend.source) {
        RUNLENS_ASSIGN_OR_RETURN(auto db, store::RunDatabase::open(backend.path, store::OpenMode::ReadOnly));
        RUNLENS_ASSIGN_OR_RETURN(auto classifier, analysis::PhaseClassifier::builtIn());
        backend.db = std::move(db);
        backend.source = std::make_unique<analysis::FlameSource>(
            *backend.db, std::make_shared<analysis::PhaseClassifier>(std::move(classifier)));
    }
    return backend.source->tree(q);
}
} // namespace

struct FlameDock::Request
{
    uint64_t generation = 0;
    analysis::FlameQuery query;
    std::optional<widgets::TimeRange> window;
};

FlameDock::FlameDock(QMainWindow* window, widgets::TimelineController* controller)
    : QObject(window), m_controller(controller), m_panel(new widgets::FlamePanel),
      m_pool(std::make_unique<QThreadPool>())
{
    m_pool->setMaxThreadCount(1);
    m_nodesButton = new QToolButton;
    m_nodesButton->setText(tr("Nodes: all"));
    m_nodesButton->setPopupMode(QToolButton::InstantPopup);
    m_nodesMenu = new QMenu(m_nodesButton);
    m_nodesButton->setMenu(m_nodesMenu);
    m_threads = new QComboBox;
    m_threads->setEditable(true);
    m_threads->setMinimumContentsLength(24);
    m_threads->setToolTip(tr("Threads whose name (or process/name) matches this regular expression; empty: all"));
    m_threads->lineEdit()->setPlaceholderText(tr("all threads"));
    m_idle = new QCheckBox(tr("Idle frames"));
    m_idle->setChecked(true);
    m_idle->setToolTip(tr("Include samples whose stack is idle (waiting in the event loop, sleeping)"));
    auto* filters = new QHBoxLayout;
    filters->setContentsMargins(4, 2, 4, 0);
    filters->addWidget(m_nodesButton);
    filters->addWidget(new QLabel(tr("Threads:")));
    filters->addWidget(m_threads, 1);
    filters->addWidget(m_idle);
    auto* content = new QWidget;
    QVBoxLayout* layout = widgets::flushColumn(content);
    layout->addLayout(filters);
    layout->addWidget(m_panel, 1);
    m_dock = new QDockWidget(tr("Flame graph"), window);
    m_dock->setObjectName(QStringLiteral("flameDock"));
    m_dock->setWidget(content);
    window->addDockWidget(Qt::BottomDockWidgetArea, m_dock);

    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(80); // a drag of the selection settles before a tree is built
    connect(m_debounce, &QTimer::timeout, this, &FlameDock::requestTree);
    connect(m_controller, &widgets::TimelineController::selectionChanged, m_debounce, qOverload<>(&QTimer::start));
    connect(m_threads, &QComboBox::currentTextChanged, m_debounce, qOverload<>(&QTimer::start));
    connect(m_idle, &QCheckBox::toggled, m_debounce, qOverload<>(&QTimer::start));
}

FlameDock::~FlameDock()
{
    m_pool->waitForDone();
}

void FlameDock::setRun(std::shared_ptr<const timeline::RunCatalog> catalog)
{
    m_catalog = std::move(catalog);
    m_backend = std::make_shared<Backend>();
    m_backend->path = m_catalog ? m_catalog->path : std::string();
    m_nodesMenu->clear();
    if (m_catalog)
        for (const auto& n : m_catalog->nodes) {
            QAction* a = m_nodesMenu->addAction(QString::fromStdString(n.name));
            a->setCheckable(true);
            a->setChecked(true);
            connect(a, &QAction::toggled, this, [this] {
                int on = 0;
                for (QAction* x : m_nodesMenu->actions())
                    on += x->isChecked() ? 1 : 0;
                m_nodesButton->setText(on == m_nodesMenu->actions().size()
                                           ? tr("Nodes: all")
                                           : tr("Nodes: %1 of %2").arg(on).arg(m_nodesMenu->actions().size()));
                m_debounce->start();
            });
        }
    const QSignalBlocker block(m_threads);
    m_threads->clear();
    m_threads->addItem(QString());
    if (m_catalog)
        for (const auto& [pattern, n] : threadPatterns(m_catalog->stackThreads))
            if (n > 1) m_threads->addItem(QString::fromStdString(pattern));
    m_threads->setCurrentIndex(0);
    if (!m_catalog || m_catalog->stackThreads.empty()) {
        m_panel->setTree(nullptr);
        m_panel->setMessage(tr("This run has no stack samples: import py-spy, perf, folded or speedscope files."));
        return;
    }
    requestTree();
}

void FlameDock::clear()
{
    setRun(nullptr);
}

void FlameDock::setThreadPattern(const QString& pattern)
{
    m_threads->setCurrentText(pattern);
    m_debounce->stop();
    requestTree();
}

void FlameDock::requestTree()
{
    if (!m_catalog || m_catalog->stackThreads.empty()) return;
    if (m_inFlight) {
        m_pending = true;
        return;
    }
    startTree();
}

QStringList FlameDock::caption(const Request& r) const
{
    auto when = [](int64_t ns) {
        return QDateTime::fromMSecsSinceEpoch(ns / 1'000'000, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd hh:mm:ss"));
    };
    QStringList lines;
    lines << QFileInfo(QString::fromStdString(m_catalog->path)).fileName();
    lines << (r.window
                  ? tr("window %1 → %2 UTC (%3)")
                        .arg(when(r.window->fromNs), when(r.window->toNs), widgets::formatDuration(r.window->span()))
                  : tr("whole run"));
    QStringList nodes;
    for (const std::string& n : r.query.nodes)
        nodes << QString::fromStdString(n);
    lines << (nodes.isEmpty() ? tr("all nodes") : tr("nodes: %1").arg(nodes.join(QStringLiteral(", "))));
    lines << (r.query.threadPattern.empty() ? tr("all threads")
                                            : tr("threads: %1").arg(QString::fromStdString(r.query.threadPattern)));
    if (!r.query.phases.empty()) lines << tr("idle frames hidden");
    return lines;
}

FlameDock::Request FlameDock::makeRequest(std::optional<widgets::TimeRange> window) const
{
    Request r;
    r.window = window;
    if (r.window) r.query.window = {r.window->fromNs, r.window->toNs};
    for (QAction* a : m_nodesMenu->actions())
        if (a->isChecked()) r.query.nodes.push_back(a->text().toStdString());
    if (r.query.nodes.size() == static_cast<size_t>(m_nodesMenu->actions().size())) r.query.nodes.clear();
    r.query.threadPattern = m_threads->currentText().toStdString();
    if (!m_idle->isChecked())
        for (int p = 0; p < analysis::kPhaseCount; ++p)
            if (static_cast<analysis::Phase>(p) != analysis::Phase::Idle)
                r.query.phases.push_back(static_cast<analysis::Phase>(p));
    return r;
}

void FlameDock::startTree()
{
    m_inFlight = true;
    m_pending = false;
    Request r = makeRequest(m_controller->selection());
    r.generation = ++m_generation;
    const QList<QAction*> nodeActions = m_nodesMenu->actions();
    const bool none = std::none_of(nodeActions.begin(), nodeActions.end(), [](QAction* a) { return a->isChecked(); });
    if (none && !nodeActions.isEmpty()) {
        m_inFlight = false;
        m_panel->setTree(nullptr);
        m_panel->setMessage(tr("No node is selected (Nodes menu)."));
        return;
    }
    m_panel->setCaption(caption(r));
    m_panel->setMessage(tr("building…"));
    auto backend = m_backend;
    using Built = std::pair<uint64_t, Expected<std::shared_ptr<const analysis::FlameTree>>>;
    widgets::startJob(
        this, m_pool.get(),
        [backend, r]() -> Built {
            return {r.generation, buildTree(*backend, r.query)};
        },
        [generation = r.generation](const QString& error) -> Built {
            return {generation, Error{ErrorCode::Internal, error.toStdString(), {}}};
        },
        [this, backend,
         window = r.window](std::pair<uint64_t, Expected<std::shared_ptr<const analysis::FlameTree>>> result) {
            m_inFlight = false;
            if (backend != m_backend) { // another run meanwhile
                if (m_catalog) startTree();
                return;
            }
            if (m_pending) { // a newer window or filter: this tree is stale
                startTree();
                return;
            }
            if (!result.second) {
                m_panel->setTree(nullptr);
                m_panel->setMessage(QString::fromStdString(result.second.error().toString()));
                return;
            }
            m_panel->setTree(*result.second);
            if ((*result.second)->totalSamples() == 0)
                m_panel->setMessage(tr("No stack samples in this window and selection."));
            Q_EMIT treeShown(result.first);
            // A view from the command line applies to the tree of the selection it came with, not to an earlier one.
            if (m_view && window == m_controller->selection() && !m_debounce->isActive()) applyView();
        });
}

void FlameDock::applyView()
{
    const View v = *std::exchange(m_view, std::nullopt);
    if (!v.compare) {
        m_pending = false;
        applyViewToGraph(v);
        return;
    }
    // The baseline's tree with the same filters, built on the worker; then the diff, then the rest.
    const Request base = makeRequest(v.compare);
    const QStringList baseCaption = caption(base);
    auto backend = m_backend;
    m_inFlight = true;
    widgets::startJob(
        this, m_pool.get(), [backend, base] { return buildTree(*backend, base.query); },
        [](const QString& error) -> Expected<std::shared_ptr<const analysis::FlameTree>> {
            return Error{ErrorCode::Internal, error.toStdString(), {}};
        },
        [this, v, baseCaption, backend](Expected<std::shared_ptr<const analysis::FlameTree>> tree) {
            m_inFlight = false;
            if (backend != m_backend) return;
            if (!tree) {
                m_panel->setMessage(QString::fromStdString(tree.error().toString()));
                return;
            }
            m_panel->setBaseline(*tree, baseCaption);
            auto* graph = m_panel->graph();
            auto connection = std::make_shared<QMetaObject::Connection>();
            *connection = connect(graph, &widgets::FlameGraphWidget::layoutShown, this, [this, v, graph, connection] {
                if (!graph->diff()) return;
                disconnect(*connection);
                applyViewToGraph(v);
            });
            m_panel->setDiffShown(true);
            if (m_pending) startTree();
        });
}

void FlameDock::applyViewToGraph(const View& v)
{
    widgets::FlameGraphWidget* graph = m_panel->graph();
    if (!v.focus.isEmpty() && graph->tree()) {
        const int32_t node = graph->tree()->find(analysis::splitFramePath(v.focus.toStdString()));
        if (node > 0)
            graph->focusNode(node);
        else
            m_panel->setMessage(tr("--focus: no call path %1 in this selection").arg(v.focus));
    }
    if (!v.search.isEmpty()) m_panel->setSearchText(v.search, v.regex);
    if (!v.sandwich.isEmpty() && m_panel->tree()) {
        const auto& t = *m_panel->tree();
        int32_t best = -1;
        for (int32_t i = 1; i < static_cast<int32_t>(t.nodes().size()); ++i)
            if (t.name(i) == v.sandwich.toStdString() && (best < 0 || t.node(i).samples > t.node(best).samples))
                best = i;
        if (best > 0)
            m_panel->showSandwich(best);
        else
            m_panel->setMessage(tr("--sandwich: no function %1 in this selection").arg(v.sandwich));
    }
}

void FlameDock::setNodes(const std::vector<std::string>& nodes)
{
    for (QAction* a : m_nodesMenu->actions()) {
        const bool on = nodes.empty() || std::find(nodes.begin(), nodes.end(), a->text().toStdString()) != nodes.end();
        if (a->isChecked() != on) a->setChecked(on); // toggled: the label and a new tree follow
    }
}

} // namespace runlens::app
