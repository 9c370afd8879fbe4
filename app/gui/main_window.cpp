#include "app/gui/main_window.h"

#include "analysis/timeline/lane_catalog.h"
#include "app/cli/window_args.h"
#include "app/gui/compare_window.h"
#include "app/gui/findings_dock.h"
#include "app/gui/flame_dock.h"
#include "app/gui/help_dialogs.h"
#include "app/gui/import_dialog.h"
#include "app/gui/recent_files.h"
#include "app/gui/report_export.h"
#include "app/gui/run_docks.h"
#include "app/gui/welcome_widget.h"
#include "widgets/common/background_job.h"
#include "widgets/common/flush_column.h"
#include "widgets/problems/problems_bar.h"
#include "widgets/run_browser/run_browser_model.h"
#include "widgets/timeline/timeline_controller.h"
#include "widgets/timeline/timeline_widget.h"

#include <QCloseEvent>
#include <QCryptographicHash>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QScreen>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <set>

namespace runlens::app {

namespace {

const QString kRunSuffix = QStringLiteral(".runlens");
// Default dock widths (px): the run browser a fifth of the window, findings three tenths, within these bounds.
constexpr int kRunLayoutsKept = 100; // runs whose lane layout is remembered
constexpr int kLeftDockMin = 200, kLeftDockMax = 320, kRightDockMin = 280, kRightDockMax = 520;

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_controller(new widgets::TimelineController(this)),
      m_timeline(new widgets::TimelineWidget(m_controller)), m_problemsBar(new widgets::ProblemsBar),
      m_welcome(new WelcomeWidget), m_stack(new QStackedWidget(this)), m_loader(new RunLoader(this)),
      m_recent(new RecentFiles(this)), m_status(new QLabel(this)), m_report(new ReportExport(this))
{
    setWindowTitle(tr("RunLens"));
    setAcceptDrops(true);
    auto* runPage = new QWidget;
    QVBoxLayout* runLayout = widgets::flushColumn(runPage);
    runLayout->addWidget(m_problemsBar);
    runLayout->addWidget(m_timeline, 1);
    m_stack->addWidget(m_welcome);
    m_stack->addWidget(runPage);
    setCentralWidget(m_stack);
    m_docks = new RunDocks(this, m_timeline, m_controller);
    m_flame = new FlameDock(this, m_controller);
    m_findings = new FindingsDock(this, m_controller, m_timeline, m_flame);
    connect(m_findings, &FindingsDock::findingsShown, this, &MainWindow::updateActions);
    connect(m_findings, &FindingsDock::keptInRun, this, &MainWindow::updateActions);
    // A finding's scope: the series of its nodes only (the run browser shows what is hidden; check a node to show
    // it again).
    connect(m_findings, &FindingsDock::scopeSelected, this,
            [this](const std::vector<std::string>& nodes, const std::vector<std::string>& gpus) {
                if (!m_catalog) return;
                const std::vector<int64_t> hidden = timeline::seriesOutside(*m_catalog, nodes, gpus);
                m_docks->browserModel()->setHiddenSeries(hidden);
                m_timeline->setHiddenSeries(hidden);
                QStringList names;
                for (const std::string& n : nodes)
                    names << QString::fromStdString(n);
                if (!hidden.empty())
                    m_status->setText(
                        tr("Showing the finding's nodes (%1); check the others in the run browser to show them")
                            .arg(names.join(QStringLiteral(", "))));
            });
    tabifyDockWidget(m_docks->detailsDock(), m_findings->dock());
    m_findings->dock()->raise();
    // A node unticked in the run browser (every series of it hidden) leaves the flame graph's node set too.
    connect(m_docks->browserModel(), &widgets::RunBrowserModel::hiddenSeriesChanged, this,
            [this](const std::vector<int64_t>& hidden) {
                if (!m_catalog) return;
                const std::set<int64_t> off(hidden.begin(), hidden.end());
                std::set<int64_t> shownNodes, nodesWithSeries;
                for (const store::SeriesInfo& s : m_catalog->series) {
                    nodesWithSeries.insert(s.nodeId);
                    if (!off.count(s.id)) shownNodes.insert(s.nodeId);
                }
                std::vector<std::string> nodes;
                for (const store::NodeInfo& n : m_catalog->nodes)
                    if (shownNodes.count(n.id) || !nodesWithSeries.count(n.id)) nodes.push_back(n.name);
                m_flame->setNodes(nodes.size() == m_catalog->nodes.size() ? std::vector<std::string>{} : nodes);
            });
    statusBar()->addWidget(m_status, 1);
    createMenus();

    connect(m_loader, &RunLoader::opened, this, &MainWindow::showOpened);
    connect(m_loader, &RunLoader::failed, this, &MainWindow::showFailed);
    connect(m_recent, &RecentFiles::openRequested, this, &MainWindow::openRun);
    connect(m_recent, &RecentFiles::changed, this, [this] { m_welcome->setRecentFiles(m_recent->files()); });
    connect(m_welcome, &WelcomeWidget::openRequested, this, &MainWindow::chooseRun);
    connect(m_welcome, &WelcomeWidget::importRequested, this, &MainWindow::chooseImportFiles);
    connect(m_welcome, &WelcomeWidget::openRecentRequested, this, &MainWindow::openRun);
    connect(m_problemsBar, &widgets::ProblemsBar::showRequested, m_docks, &RunDocks::showProblems);
    connect(m_report, &ReportExport::busyChanged, this, &MainWindow::updateActions);
    connect(m_report, &ReportExport::finished, this, [this](const QString& out, int pages) {
        m_status->setText(pages == 1 ? tr("%1: 1 page").arg(QFileInfo(out).fileName())
                                     : tr("%1: %2 pages").arg(QFileInfo(out).fileName()).arg(pages));
    });
    connect(m_report, &ReportExport::cancelled, this, [this] { m_status->setText(tr("Report cancelled")); });
    connect(m_report, &ReportExport::failed, this, [this](const QString& message) {
        m_status->setText(tr("The report was not written"));
        QMessageBox::warning(this, tr("Export report failed"), message);
    });
    connect(m_timeline, &widgets::TimelineWidget::fetchFailed, this,
            [this](const QString& message) { m_status->setText(tr("Timeline: %1").arg(message)); });
    m_welcome->setRecentFiles(m_recent->files());

    QSettings settings;
    const QRect screen = QGuiApplication::primaryScreen() ? QGuiApplication::primaryScreen()->availableGeometry()
                                                          : QRect(0, 0, 1600, 1000);
    const bool placed = restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    if (!placed || width() > screen.width() || height() > screen.height()) {
        // First start, or saved on a larger screen: most of this screen, the timeline wants width.
        resize(screen.size() * 0.96);
        move(screen.topLeft() + QPoint(screen.width() / 50, screen.height() / 50));
    }
    // The docks where they were left, at the sizes they had when the window had about this size: dock sizes are
    // pixels, so a layout saved in a squeezed window would come back squeezed in a large one.
    const QSize savedFor = settings.value(QStringLiteral("window/stateSize")).toSize();
    const bool restored = restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    const bool sameSize = savedFor.isValid() && std::abs(savedFor.width() - width()) <= width() / 7 &&
                          std::abs(savedFor.height() - height()) <= height() / 7;
    if (!restored || !sameSize) QTimer::singleShot(0, this, [this, restored] { resetLayout(!restored); });
    updateActions();
}

void MainWindow::resetLayout(bool placeDocks)
{
    if (placeDocks) {
        const std::pair<QDockWidget*, Qt::DockWidgetArea> places[] = {
            {m_docks->browserDock(), Qt::LeftDockWidgetArea},    {m_docks->detailsDock(), Qt::RightDockWidgetArea},
            {m_findings->dock(), Qt::RightDockWidgetArea},       {m_flame->dock(), Qt::BottomDockWidgetArea},
            {m_docks->problemsDock(), Qt::BottomDockWidgetArea}, {m_docks->clocksDock(), Qt::BottomDockWidgetArea}};
        for (const auto& [dock, area] : places) {
            dock->setFloating(false);
            addDockWidget(area, dock);
        }
        for (QDockWidget* dock : {m_docks->browserDock(), m_docks->detailsDock(), m_findings->dock(), m_flame->dock()})
            dock->show();
        m_docks->problemsDock()->hide();
        m_docks->clocksDock()->hide();
        tabifyDockWidget(m_docks->detailsDock(), m_findings->dock());
        m_findings->dock()->raise();
    }
    // Sizes for this window: the timeline keeps at least half the width and most of the height.
    const int w = width(), h = height();
    resizeDocks({m_docks->browserDock(), m_findings->dock()},
                {std::clamp(w / 5, kLeftDockMin, kLeftDockMax), std::clamp(w * 3 / 10, kRightDockMin, kRightDockMax)},
                Qt::Horizontal);
    resizeDocks({m_flame->dock()}, {h * 9 / 25}, Qt::Vertical);
}

MainWindow::~MainWindow() = default;

void MainWindow::createMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::chooseRun);
    m_recent->attachMenu(file->addMenu(tr("Open &Recent")));
    file->addSeparator();
    file->addAction(tr("&Import files…"), QKeySequence(tr("Ctrl+I")), this, &MainWindow::chooseImportFiles);
    file->addAction(tr("Import &folder…"), QKeySequence(tr("Ctrl+Shift+I")), this, &MainWindow::chooseImportFolder);
    file->addSeparator();
    m_compare =
        file->addAction(tr("&Compare with…"), QKeySequence(tr("Ctrl+Shift+C")), this, &MainWindow::chooseCompare);
    m_compare->setStatusTip(tr("Set other runs against the open one: step time, throughput, activity, findings "
                               "and stacks, each with a verdict"));
    m_keepFindings =
        file->addAction(tr("&Keep findings in run"), QKeySequence::Save, this, [this] { m_findings->keep(); });
    m_keepFindings->setStatusTip(tr("Write the findings analysed now into the run file (viewing never changes it)"));
    file->addSeparator();
    m_exportTimeline =
        file->addAction(tr("Export &timeline…"), QKeySequence(tr("Ctrl+E")), this, &MainWindow::exportTimeline);
    m_exportTimeline->setStatusTip(tr("The visible lanes as a PNG image, or as PDF or SVG vectors"));
    m_exportReport = file->addAction(tr("Export &report…"), QKeySequence(tr("Ctrl+Shift+E")), this, [this] {
        if (m_catalog) m_report->choose(QString::fromStdString(m_catalog->path), m_controller->selection(), false);
    });
    m_exportReport->setStatusTip(tr("A PDF report of the run: summary, goodput, key metrics, each finding with "
                                    "its figures"));
    m_exportReportPng = file->addAction(tr("Export report as P&NG pages…"), this, [this] {
        if (m_catalog) m_report->choose(QString::fromStdString(m_catalog->path), m_controller->selection(), true);
    });
    file->addSeparator();
    // Ctrl+Q as Help says, on every platform (the standard Quit binding is empty on some).
    file->addAction(tr("&Quit"), QKeySequence(tr("Ctrl+Q")), this, &QWidget::close);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    int n = 1;
    for (QDockWidget* dock : {m_docks->browserDock(), m_docks->detailsDock(), m_docks->problemsDock(), m_flame->dock(),
                              m_findings->dock(), m_docks->clocksDock()}) {
        QAction* toggle = dock->toggleViewAction();
        toggle->setShortcut(QKeySequence(tr("Ctrl+%1").arg(n++)));
        view->addAction(toggle);
    }
    view->addSeparator();
    view->addAction(tr("&Fit the whole run"), this, [this] { m_controller->fit(); });
    QAction* shade = view->addAction(tr("&Shade findings on the lanes"));
    shade->setCheckable(true);
    shade->setChecked(QSettings().value(QStringLiteral("timeline/shadeFindings"), true).toBool());
    shade->setToolTip(tr("Tint every lane where a finding's episodes are; off, they stay marked on the time ruler"));
    m_timeline->setSpanShading(shade->isChecked());
    connect(shade, &QAction::toggled, this, [this](bool on) {
        m_timeline->setSpanShading(on);
        QSettings().setValue(QStringLiteral("timeline/shadeFindings"), on);
    });
    view->addAction(tr("&Reset layout"), this, [this] { resetLayout(true); })
        ->setToolTip(tr("Put every panel back in its place, at sizes for this window"));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard shortcuts"), QKeySequence::HelpContents, this, [this] { showShortcutsDialog(this); });
    help->addAction(tr("&About RunLens"), this, [this] { showAboutDialog(this); });
}

void MainWindow::updateActions()
{
    const bool open = m_catalog != nullptr;
    m_exportTimeline->setEnabled(open);
    m_exportReport->setEnabled(open && !m_report->busy());
    m_exportReportPng->setEnabled(open && !m_report->busy());
    m_compare->setEnabled(open && !m_comparing);
    if (m_keepFindings) m_keepFindings->setEnabled(open && m_findings->hasUnkeptFindings());
}

bool MainWindow::exportReport(const QString& out, bool png, std::optional<widgets::TimeRange> window)
{
    if (!m_catalog) return false;
    return m_report->exportReport(QString::fromStdString(m_catalog->path), out, png, window);
}

bool MainWindow::loading() const
{
    return m_loader->busy();
}

void MainWindow::openRun(const QString& path)
{
    m_loadingPath = path;
    m_status->setText(tr("Opening %1…").arg(QDir::toNativeSeparators(path)));
    m_loader->open(path);
}

void MainWindow::showOpened(const OpenedRun& run)
{
    const bool reload = m_catalog && m_catalog->path == run.catalog->path;
    // Lane order, visibility and heights belong to a run: the one open keeps its own, the new one gets what it had
    // when last open here (or the defaults), never the other run's.
    saveRunLayout();
    m_catalog = run.catalog;
    m_timeline->setSource(run.source, run.catalog);
    m_timeline->setLanes(timeline::laneSpecs(*run.catalog));
    m_timeline->restoreLayout(QSettings().value(runLayoutKey(QString::fromStdString(run.catalog->path))).toByteArray());
    m_docks->setCatalog(run.catalog, reload);
    m_flame->setRun(run.catalog);
    m_findings->setRun(run.catalog);
    m_timeline->setHiddenSeries(m_docks->browserModel()->hiddenSeries());
    m_controller->setFullRange({run.catalog->firstNs, run.catalog->lastNs});
    applyInitialView();
    int importsWithProblems = 0, unanchored = 0;
    int64_t dataLoss = 0;
    for (const timeline::ImportProblems& p : run.catalog->imports) {
        if (p.import.diagnostics > 0) ++importsWithProblems;
        if (p.import.anchor == "unanchored") ++unanchored;
        dataLoss += p.import.dataLoss;
    }
    m_problemsBar->setCounts(run.catalog->problemCount(), dataLoss, importsWithProblems, unanchored);
    m_stack->setCurrentIndex(1);
    m_recent->add(run.path);
    setWindowTitle(tr("%1 — RunLens").arg(QFileInfo(run.path).fileName()));
    m_status->setText(tr("%1: %2 nodes, %3 devices, %4 series, %5 stack threads (opened in %6 ms)")
                          .arg(QDir::toNativeSeparators(run.path))
                          .arg(run.catalog->nodes.size())
                          .arg(run.catalog->devices.size())
                          .arg(run.catalog->series.size())
                          .arg(run.catalog->stackThreads.size())
                          .arg(run.loadMs, 0, 'f', 0));
    updateActions();
    Q_EMIT runOpened(run.path);
}

void MainWindow::applyInitialView()
{
    if (m_initialView.empty() || !m_catalog) return;
    const InitialView view = std::exchange(m_initialView, InitialView{});
    if (view.finding > 0) m_findings->setInitialFinding(view.finding - 1);
    const std::optional<int64_t> start = m_catalog->firstNs;
    auto window = [&](const QString& from, const QString& to) -> std::optional<widgets::TimeRange> {
        if (from.isEmpty() && to.isEmpty()) return std::nullopt;
        auto w = parseWindow(from.toStdString(), to.toStdString(), start);
        if (!w) {
            QMessageBox::warning(this, tr("RunLens"), QString::fromStdString(w.error().toString()));
            return std::nullopt;
        }
        return widgets::TimeRange{std::max(w->fromNs, m_catalog->firstNs), std::min(w->toNs, m_catalog->lastNs)};
    };
    if (auto r = window(view.from, view.to)) m_controller->setRange(*r);
    FlameDock::View flame;
    flame.compare = window(view.compareFrom, view.compareTo);
    flame.focus = view.focus;
    flame.search = view.search;
    flame.regex = view.searchRegex;
    flame.sandwich = view.sandwich;
    if (flame.compare || !flame.focus.isEmpty() || !flame.search.isEmpty() || !flame.sandwich.isEmpty())
        m_flame->setInitialView(flame);
    if (auto r = window(view.selectFrom, view.selectTo)) m_controller->setSelection(r);
    if (!view.compareWith.isEmpty()) compareWith(view.compareWith);
}

void MainWindow::showFailed(const QString& path, const QString& message)
{
    m_status->setText(tr("Could not open %1").arg(QDir::toNativeSeparators(path)));
    Q_EMIT runFailed(path, message);
    QMessageBox::warning(this, tr("Cannot open the run"), message);
}

void MainWindow::chooseRun()
{
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open run"), QString(), tr("RunLens runs (*.runlens);;All files (*)"));
    if (!path.isEmpty()) openRun(path);
}

void MainWindow::chooseCompare()
{
    if (!m_catalog) return;
    const QFileInfo run(QString::fromStdString(m_catalog->path));
    const QStringList paths =
        QFileDialog::getOpenFileNames(this, tr("Compare %1 with").arg(run.fileName()), run.dir().path(),
                                      tr("RunLens runs (*.runlens);;All files (*)"));
    if (!paths.isEmpty()) compareWith(paths);
}

bool MainWindow::compareWith(const QStringList& candidates)
{
    if (!m_catalog || m_comparing || candidates.isEmpty()) return false;
    const QStringList paths = QStringList{QString::fromStdString(m_catalog->path)} + candidates;
    m_comparing = true;
    updateActions();
    m_status->setText(tr("Comparing %1 with %2…")
                          .arg(QFileInfo(paths.front()).fileName())
                          .arg(candidates.size() == 1 ? QFileInfo(candidates.front()).fileName()
                                                      : tr("%1 runs").arg(candidates.size())));
    auto* progress = new QProgressDialog(tr("Reading and comparing the runs…"), tr("Cancel"), 0, 0, this);
    progress->setWindowTitle(tr("Compare runs"));
    progress->setMinimumDuration(300);
    progress->setMinimumWidth(420);
    progress->setAttribute(Qt::WA_DeleteOnClose);
    progress->setAutoClose(false);
    progress->setAutoReset(false);
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    connect(progress, &QProgressDialog::canceled, this, [this, cancel] {
        cancel->store(true);
        m_status->setText(tr("Cancelling the comparison…"));
    });
    widgets::startJob(
        this, nullptr, [paths, cancel] { return compareRunFiles(paths, {}, cancel.get()); }, failedComparison,
        [this, progress](RunComparison result) {
            progress->close();
            m_comparing = false;
            updateActions();
            if (result.cancelled) {
                m_status->setText(tr("Comparison cancelled"));
                Q_EMIT compareFailed(tr("cancelled"));
                return;
            }
            if (!result.error.isEmpty()) {
                m_status->setText(tr("The runs were not compared"));
                Q_EMIT compareFailed(result.error);
                QMessageBox::warning(this, tr("Cannot compare the runs"), result.error);
                return;
            }
            auto* window = new CompareWindow(std::move(result), this);
            window->show();
            m_status->setText(
                tr("Compared with %n run(s)", nullptr, static_cast<int>(window->comparison().runs.size() - 1)));
            Q_EMIT compareOpened(window);
        });
    return true;
}

void MainWindow::chooseImportFiles()
{
    const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Import files"));
    if (!paths.isEmpty()) importPaths(paths);
}

void MainWindow::chooseImportFolder()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Import folder"));
    if (!dir.isEmpty()) importPaths({dir});
}

void MainWindow::importPaths(const QStringList& paths)
{
    auto* dialog = new ImportDialog(m_catalog ? QString::fromStdString(m_catalog->path) : QString(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ImportDialog::importFinished, this,
            [this](const QString& dbPath, const std::shared_ptr<const ImportJobResult>&) { openRun(dbPath); });
    dialog->addPaths(paths);
    dialog->show();
}

void MainWindow::exportTimeline()
{
    if (!m_catalog) return;
    // The format is the file's suffix, else the chosen filter's (the last one chosen is offered first).
    const QStringList filters{tr("PNG image (*.png)"), tr("PDF, vectors (*.pdf)"), tr("SVG, vectors (*.svg)")};
    const QStringList suffixes{QStringLiteral("png"), QStringLiteral("pdf"), QStringLiteral("svg")};
    QSettings settings;
    const QString lastFormat = settings.value(QStringLiteral("export/timelineFormat")).toString();
    const auto last = static_cast<int>(suffixes.indexOf(lastFormat));
    QString filter = filters[std::max(0, last)];
    const QFileInfo run(QString::fromStdString(m_catalog->path)); // suggested beside the run
    const QString suggested =
        run.dir().filePath(run.completeBaseName() + QStringLiteral("-timeline.") + suffixes[std::max(0, last)]);
    QString path = QFileDialog::getSaveFileName(this, tr("Export timeline"), suggested,
                                                filters.join(QStringLiteral(";;")), &filter);
    if (path.isEmpty()) return;
    QString suffix = QFileInfo(path).suffix().toLower();
    if (!suffixes.contains(suffix)) {
        suffix = suffixes[std::max(0, static_cast<int>(filters.indexOf(filter)))];
        path += QLatin1Char('.') + suffix;
    }
    settings.setValue(QStringLiteral("export/timelineFormat"), suffix);
    const bool ok = suffix == QLatin1String("pdf")   ? m_timeline->exportPdf(path)
                    : suffix == QLatin1String("svg") ? m_timeline->exportSvg(path)
                                                     : m_timeline->exportPng(path);
    if (!ok)
        QMessageBox::warning(this, tr("Export failed"), tr("Could not write %1.").arg(QDir::toNativeSeparators(path)));
    else
        m_status->setText(tr("Exported the timeline to %1").arg(QDir::toNativeSeparators(path)));
}

void MainWindow::saveSettings()
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/stateSize"), size());
    saveRunLayout();
}

QString MainWindow::runLayoutKey(const QString& runPath)
{
    const QString canonical = QFileInfo(runPath).canonicalFilePath();
    const QByteArray id =
        QCryptographicHash::hash((canonical.isEmpty() ? runPath : canonical).toUtf8(), QCryptographicHash::Sha1)
            .toHex();
    return QStringLiteral("timelineLayouts/") + QString::fromLatin1(id.left(16));
}

void MainWindow::saveRunLayout()
{
    if (!m_catalog) return;
    QSettings settings;
    const QString key = runLayoutKey(QString::fromStdString(m_catalog->path));
    settings.setValue(key, m_timeline->saveLayout());
    // The most recent runs' layouts are kept; older ones are forgotten.
    QStringList order = settings.value(QStringLiteral("timeline/layoutOrder")).toStringList();
    order.removeAll(key);
    order.prepend(key);
    while (order.size() > kRunLayoutsKept)
        settings.remove(order.takeLast());
    settings.setValue(QStringLiteral("timeline/layoutOrder"), order);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    saveSettings();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile()) paths << url.toLocalFile();
    if (paths.isEmpty()) return;
    event->acceptProposedAction();
    // One run file opens it; anything else (log files, folders) is imported.
    if (paths.size() == 1 && paths.front().endsWith(kRunSuffix) && QFileInfo(paths.front()).isFile())
        openRun(paths.front());
    else
        importPaths(paths);
}

} // namespace runlens::app
