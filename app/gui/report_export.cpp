#include "app/gui/report_export.h"

#include "analysis/report/report_model.h"
#include "widgets/common/background_job.h"
#include "widgets/findings/findings_panel.h"
#include "widgets/report/report_renderer.h"
#include "widgets/timeline/lane_plot_data.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QTimer>
#include <atomic>
#include <mutex>
#include <string>

namespace runlens::app {

// What the worker and the GUI thread share while a model is built: the progress, and the cancel the worker reads.
struct ReportExport::Job
{
    std::atomic<bool> cancel{false};
    std::atomic<int> done{0};
    std::atomic<int> total{0};
    std::mutex mutex;
    std::string what; // the step being done (guarded by mutex)
    QString out;      // GUI thread only
    bool png = false;
};

namespace {

struct Built
{
    std::shared_ptr<const analysis::ReportModel> model; // null: error or cancelled
    QString error;
    bool cancelled = false;
};

} // namespace

ReportExport::ReportExport(QWidget* window) : QObject(window), m_window(window), m_progressTimer(new QTimer(this))
{
    m_progressTimer->setInterval(50);
    connect(m_progressTimer, &QTimer::timeout, this, &ReportExport::showProgress);
}

ReportExport::~ReportExport()
{
    // The worker stops at its next step; its result is dropped with this object (the continuation's context).
    if (m_job) m_job->cancel = true;
}

void ReportExport::choose(const QString& runPath, std::optional<widgets::TimeRange> selection, bool png)
{
    if (busy() || runPath.isEmpty()) return;
    std::optional<widgets::TimeRange> window;
    if (selection) {
        QMessageBox box(QMessageBox::Question, tr("Export report"),
                        tr("The timeline has a selection: %1 → %2 UTC (%3).\n\nReport on the whole run, or on the "
                           "selected window only (its findings, figures over the window)?")
                            .arg(widgets::clockTime(selection->fromNs), widgets::clockTime(selection->toNs),
                                 widgets::formatDuration(selection->span())),
                        QMessageBox::Cancel, m_window);
        QPushButton* whole = box.addButton(tr("Whole run"), QMessageBox::AcceptRole);
        QPushButton* selected = box.addButton(tr("Selected window only"), QMessageBox::AcceptRole);
        box.setDefaultButton(whole);
        box.exec();
        if (box.clickedButton() == selected)
            window = selection;
        else if (box.clickedButton() != whole)
            return;
    }
    QString out;
    if (png) {
        out = QFileDialog::getExistingDirectory(m_window, tr("Export report as PNG pages: the folder for the pages"),
                                                QFileInfo(runPath).absolutePath());
    } else {
        const QFileInfo run(runPath); // suggested beside the run
        out = QFileDialog::getSaveFileName(m_window, tr("Export report"),
                                           run.dir().filePath(run.completeBaseName() + QStringLiteral("-report.pdf")),
                                           tr("PDF (*.pdf)"));
        if (!out.isEmpty() && !out.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive)) out += QStringLiteral(".pdf");
    }
    if (out.isEmpty()) return;
    exportReport(runPath, out, png, window);
}

bool ReportExport::exportReport(const QString& runPath, const QString& out, bool png,
                                std::optional<widgets::TimeRange> window)
{
    if (busy()) return false;
    auto job = std::make_shared<Job>();
    job->out = out;
    job->png = png;
    m_job = job;

    m_progress = new QProgressDialog(tr("Reading the run…"), tr("Cancel"), 0, 0, m_window);
    m_progress->setWindowTitle(tr("Export report"));
    m_progress->setAutoReset(false);
    m_progress->setMinimumDuration(300);
    m_progress->setMinimumWidth(420);
    connect(m_progress, &QProgressDialog::canceled, this, [this, job] {
        job->cancel = true;
        if (m_progress) m_progress->setLabelText(tr("Cancelling…"));
    });
    m_progressTimer->start();
    Q_EMIT busyChanged(true);

    analysis::ReportOptions options;
    if (window) {
        options.fromNs = window->fromNs;
        options.toNs = window->toNs;
    }
    const std::string path = runPath.toStdString();
    auto failed = [](const QString& error) {
        Built built;
        built.error = error;
        return built;
    };
    widgets::startJob(
        this, nullptr,
        [job, path, options] {
            Built built;
            auto model = analysis::buildReportModel(
                path, options,
                [job](int done, int total, const std::string& what) {
                    {
                        const std::lock_guard lock(job->mutex);
                        job->what = what;
                    }
                    job->total = total;
                    job->done = done;
                },
                &job->cancel);
            if (model)
                built.model = std::make_shared<const analysis::ReportModel>(std::move(*model));
            else if (model.error().code == ErrorCode::Cancelled)
                built.cancelled = true;
            else
                built.error = QString::fromStdString(model.error().toString());
            return built;
        },
        failed,
        [this, job](Built built) {
            if (job != m_job) return;
            if (!built.model || job->cancel) {
                finish(built.error, built.cancelled || job->cancel);
                return;
            }
            // The pages are drawn on this thread; the label says so before the drawing holds it.
            m_progressTimer->stop();
            if (m_progress) {
                const int total = job->total;
                m_progress->setLabelText(tr("Drawing the pages…"));
                m_progress->setRange(0, total + 1);
                m_progress->setValue(total);
                m_progress->setCancelButton(nullptr);
            }
            QMetaObject::invokeMethod(
                this, [this, model = std::move(built.model)] { render(model); }, Qt::QueuedConnection);
        });
    return true;
}

void ReportExport::showProgress()
{
    if (!m_job || !m_progress || m_job->cancel) return;
    const int total = m_job->total, done = m_job->done;
    if (total <= 0) return;
    QString what;
    {
        const std::lock_guard lock(m_job->mutex);
        what = QString::fromStdString(m_job->what);
    }
    // One step more than the model's: drawing the pages.
    m_progress->setRange(0, total + 1);
    m_progress->setValue(done);
    m_progress->setLabelText(tr("Step %1 of %2: %3").arg(done + 1).arg(total + 1).arg(what));
}

void ReportExport::render(const std::shared_ptr<const analysis::ReportModel>& model)
{
    if (!m_job) return;
    if (m_job->cancel) { // closed before the drawing started
        finish({}, true);
        return;
    }
    widgets::ReportPageSetup setup;
    setup.pageSize = widgets::defaultPageSize();
    auto result = widgets::renderReport(*model, m_job->out, m_job->png, setup);
    if (!result) {
        finish(QString::fromStdString(result.error().toString()), false);
        return;
    }
    const QString out = m_job->out;
    finish({}, false);
    Q_EMIT finished(out, result->pages);
}

void ReportExport::finish(const QString& error, bool wasCancelled)
{
    m_progressTimer->stop();
    m_job.reset();
    if (m_progress) {
        m_progress->reset();
        m_progress->deleteLater();
    }
    Q_EMIT busyChanged(false);
    if (wasCancelled)
        Q_EMIT cancelled();
    else if (!error.isEmpty())
        Q_EMIT failed(error);
}

} // namespace runlens::app
