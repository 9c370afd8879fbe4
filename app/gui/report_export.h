#pragma once

// File › Export report…: the report of the open run (analysis/report, widgets/report) as a PDF or as PNG pages. The
// dialogs ask where to write it and, when the timeline has a selection, whether to report on the whole run or on the
// selected window only. The model is built on a worker, which opens its own connection (a progress dialog shows its
// steps; Cancel stops it between steps), then the pages are drawn on the GUI thread, which holds no connection.

#include "widgets/timeline/timeline_controller.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <memory>
#include <optional>

class QProgressDialog;
class QTimer;
class QWidget;

namespace runlens::analysis {
struct ReportModel;
}

namespace runlens::app {

class ReportExport : public QObject
{
    Q_OBJECT
public:
    explicit ReportExport(QWidget* window);
    ~ReportExport() override;

    // The menu entries: the file (png: the folder) and the window asked for, then exportReport().
    void choose(const QString& runPath, std::optional<widgets::TimeRange> selection, bool png);
    // Without dialogs: writes the report of the run to `out` (a .pdf, or with png a folder of page-NNN.png), over
    // `window` when given. Returns at once; finished() or failed() follows. False when an export is running.
    bool exportReport(const QString& runPath, const QString& out, bool png,
                      std::optional<widgets::TimeRange> window = std::nullopt);
    bool busy() const { return m_job != nullptr; }

Q_SIGNALS:
    void busyChanged(bool busy);
    void finished(const QString& out, int pages);
    void failed(const QString& message); // not for a cancel
    void cancelled();

private:
    struct Job;
    void showProgress();
    void render(const std::shared_ptr<const analysis::ReportModel>& model);
    void finish(const QString& error, bool wasCancelled);

    QWidget* m_window;
    std::shared_ptr<Job> m_job;
    QPointer<QProgressDialog> m_progress;
    QTimer* m_progressTimer;
};

} // namespace runlens::app
