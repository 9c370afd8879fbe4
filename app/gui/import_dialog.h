#pragma once

// File › Import: choose the run to import into (the open one or a new file), see how each file was detected
// (planned on a worker) and change its format or node, set the time zone and format options, then import on a
// worker with a progress bar over the bytes of all files and Cancel. A cancel rolls back the file being read;
// the summary names the files imported before it.

#include "app/jobs/import_job.h"
#include "importers/import_session.h"

#include <QDialog>
#include <QStringList>
#include <atomic>
#include <cstdint>
#include <memory>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QTableView;
class QTimer;

namespace runlens::app {

class ImportPlanModel;

class ImportDialog : public QDialog
{
    Q_OBJECT
public:
    // openRunPath: the run open in the window (empty: none; the import goes into a new run).
    explicit ImportDialog(const QString& openRunPath, QWidget* parent = nullptr);
    ~ImportDialog() override;

    void addPaths(const QStringList& paths); // files or folders; plans them again
    void setNewRunPath(const QString& path);
    QString targetPath() const;
    bool running() const { return m_job != nullptr; }
    ImportPlanModel* planModel() const { return m_model; }
    QString summaryText() const;

public Q_SLOTS:
    void startImport();
    void cancelImport();
    void reject() override;

Q_SIGNALS:
    void planned(int files);
    void importFinished(const QString& dbPath, std::shared_ptr<const runlens::app::ImportJobResult> result);

private:
    struct JobState
    {
        std::atomic<bool> cancel{false};
        std::atomic<uint64_t> done{0};
        std::atomic<uint64_t> total{0};
        std::atomic<uint64_t> file{0};
        std::atomic<bool> reported{false};
    };

    void replan();
    void browseNewRun();
    void addFiles();
    void addFolder();
    bool readOptions(importers::ImportOptions& options, QString& error) const;
    void showProgress();
    void finishImport(const ImportJobResult& result);
    void updateButtons();

    QStringList m_paths;
    QString m_openRunPath;
    uint64_t m_planGeneration = 0;
    ImportPlanModel* m_model;
    QRadioButton* m_intoOpen;
    QRadioButton* m_intoNew;
    QLineEdit* m_newPath;
    QLineEdit* m_timeZone;
    QLineEdit* m_extra;
    QLabel* m_planStatus;
    QTableView* m_table;
    QProgressBar* m_progress;
    QPlainTextEdit* m_summary;
    QPushButton* m_import;
    QPushButton* m_cancel;
    QDialogButtonBox* m_buttons;
    QTimer* m_progressTimer;
    std::shared_ptr<JobState> m_job;
    std::vector<std::string> m_jobFiles; // display paths, for the progress text
    bool m_closeWhenDone = false;
};

} // namespace runlens::app
