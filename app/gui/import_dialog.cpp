#include "app/gui/import_dialog.h"

#include "analysis/store/run_database.h"
#include "app/gui/import_plan_model.h"
#include "app/jobs/clock_job.h"
#include "widgets/common/background_job.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace runlens::app {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

ImportDialog::ImportDialog(const QString& openRunPath, QWidget* parent)
    : QDialog(parent), m_openRunPath(openRunPath), m_model(new ImportPlanModel(this)),
      m_intoOpen(new QRadioButton(this)), m_intoNew(new QRadioButton(tr("A &new run:"), this)),
      m_newPath(new QLineEdit(this)), m_timeZone(new QLineEdit(this)), m_extra(new QLineEdit(this)),
      m_planStatus(new QLabel(this)), m_table(new QTableView(this)), m_progress(new QProgressBar(this)),
      m_summary(new QPlainTextEdit(this)), m_import(new QPushButton(tr("&Import"), this)),
      m_cancel(new QPushButton(tr("C&ancel import"), this)),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Close, this)), m_progressTimer(new QTimer(this))
{
    setWindowTitle(tr("Import"));
    resize(1000, 600);
    m_intoOpen->setText(openRunPath.isEmpty() ? tr("The &open run (none is open)")
                                              : tr("The &open run: %1").arg(QDir::toNativeSeparators(openRunPath)));
    m_intoOpen->setEnabled(!openRunPath.isEmpty());
    (openRunPath.isEmpty() ? m_intoNew : m_intoOpen)->setChecked(true);
    m_newPath->setPlaceholderText(tr("run.runlens"));
    auto* browse = new QPushButton(tr("&Browse…"), this);
    auto* newRow = new QHBoxLayout;
    newRow->addWidget(m_intoNew);
    newRow->addWidget(m_newPath, 1);
    newRow->addWidget(browse);

    m_timeZone->setPlaceholderText(tr("this machine's zone; e.g. UTC, Europe/Berlin, +02:00"));
    m_extra->setPlaceholderText(tr("format options, KEY=VALUE separated by spaces"));
    auto* options = new QFormLayout;
    options->addRow(tr("Import into:"), m_intoOpen);
    options->addRow(QString(), newRow);
    options->addRow(tr("Time &zone of naive timestamps:"), m_timeZone);
    options->addRow(tr("Format o&ptions:"), m_extra);

    auto* addFilesButton = new QPushButton(tr("Add &files…"), this);
    auto* addFolderButton = new QPushButton(tr("Add fol&der…"), this);
    auto* inputs = new QHBoxLayout;
    inputs->addWidget(m_planStatus, 1);
    inputs->addWidget(addFilesButton);
    inputs->addWidget(addFolderButton);

    m_table->setModel(m_model);
    m_table->setItemDelegateForColumn(ImportPlanModel::FormatColumn, new FormatDelegate(m_table));
    m_table->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::SelectedClicked |
                             QAbstractItemView::EditKeyPressed);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setAlternatingRowColors(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Tab leaves the table for the next control (the arrows move between its cells); F2 edits a cell.
    m_table->setTabKeyNavigation(false);

    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setFormat(tr("Ready"));
    m_summary->setReadOnly(true);
    m_summary->setTabChangesFocus(true);
    m_summary->setMaximumHeight(110);
    m_summary->setPlaceholderText(tr("The summary of the import appears here."));
    m_import->setDefault(true);
    m_buttons->addButton(m_import, QDialogButtonBox::ActionRole);
    m_buttons->addButton(m_cancel, QDialogButtonBox::ActionRole);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(options);
    layout->addLayout(inputs);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_progress);
    layout->addWidget(m_summary);
    layout->addWidget(m_buttons);

    connect(browse, &QPushButton::clicked, this, &ImportDialog::browseNewRun);
    connect(addFilesButton, &QPushButton::clicked, this, &ImportDialog::addFiles);
    connect(addFolderButton, &QPushButton::clicked, this, &ImportDialog::addFolder);
    connect(m_newPath, &QLineEdit::textChanged, this, [this] {
        m_intoNew->setChecked(true);
        updateButtons();
    });
    connect(m_intoOpen, &QRadioButton::toggled, this, &ImportDialog::updateButtons);
    connect(m_import, &QPushButton::clicked, this, &ImportDialog::startImport);
    connect(m_cancel, &QPushButton::clicked, this, &ImportDialog::cancelImport);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &ImportDialog::reject);
    connect(m_progressTimer, &QTimer::timeout, this, &ImportDialog::showProgress);
    m_progressTimer->setInterval(50);
    updateButtons();
}

ImportDialog::~ImportDialog()
{
    if (m_job) m_job->cancel = true; // the worker stops at its next checkpoint; the file being read rolls back
}

void ImportDialog::addPaths(const QStringList& paths)
{
    for (const QString& p : paths)
        if (!m_paths.contains(p)) m_paths << p;
    replan();
}

void ImportDialog::setNewRunPath(const QString& path)
{
    m_newPath->setText(path);
    m_intoNew->setChecked(true);
}

QString ImportDialog::targetPath() const
{
    if (m_intoOpen->isChecked()) return m_openRunPath;
    QString path = m_newPath->text().trimmed();
    if (!path.isEmpty() && !path.endsWith(QStringLiteral(".runlens"))) path += QStringLiteral(".runlens");
    return path;
}

QString ImportDialog::summaryText() const
{
    return m_summary->toPlainText();
}

void ImportDialog::browseNewRun()
{
    const QString path =
        QFileDialog::getSaveFileName(this, tr("New run"), m_newPath->text(), tr("RunLens runs (*.runlens)"));
    if (!path.isEmpty()) setNewRunPath(path);
}

void ImportDialog::addFiles()
{
    addPaths(QFileDialog::getOpenFileNames(this, tr("Import files")));
}

void ImportDialog::addFolder()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Import folder"));
    if (!dir.isEmpty()) addPaths({dir});
}

bool ImportDialog::readOptions(importers::ImportOptions& options, QString& error) const
{
    options.timeZone = m_timeZone->text().trimmed().toStdString();
    const QStringList pairs = m_extra->text().split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts);
    for (const QString& kv : pairs) {
        const qsizetype eq = kv.indexOf(QLatin1Char('='));
        if (eq <= 0) {
            error = tr("A format option needs KEY=VALUE, got \"%1\".").arg(kv);
            return false;
        }
        options.extra[kv.left(eq).toStdString()] = kv.mid(eq + 1).toStdString();
    }
    return true;
}

void ImportDialog::replan()
{
    std::vector<std::string> paths;
    for (const QString& p : m_paths)
        paths.push_back(p.toStdString());
    importers::ImportOptions options;
    QString error;
    readOptions(options, error);
    const uint64_t generation = ++m_planGeneration;
    m_planStatus->setText(tr("Detecting the formats of %n input(s)…", nullptr, static_cast<int>(m_paths.size())));
    m_import->setEnabled(false);
    widgets::startJob(
        this, nullptr, [paths, options] { return importers::planImport(paths, options); },
        [](const QString& failure) -> Expected<std::vector<importers::PlannedFile>> {
            return Error{ErrorCode::Internal, failure.toStdString(), {}};
        },
        [this, generation](const Expected<std::vector<importers::PlannedFile>>& plan) {
            if (generation != m_planGeneration) return;
            if (!plan) {
                m_model->setPlan({});
                m_planStatus->setText(qs(plan.error().toString()));
            } else {
                m_model->setPlan(plan.value());
                const int n = static_cast<int>(plan->size());
                m_planStatus->setText(tr("%1 files, %2 recognised. Double-click a format or node to change it.")
                                          .arg(n)
                                          .arg(m_model->importableCount()));
                m_table->resizeColumnsToContents();
            }
            updateButtons();
            Q_EMIT planned(m_model->rowCount());
        });
}

void ImportDialog::updateButtons()
{
    const bool busy = running();
    m_import->setEnabled(!busy && m_model->importableCount() > 0 && !targetPath().isEmpty());
    m_cancel->setEnabled(busy);
    m_table->setEnabled(!busy);
}

void ImportDialog::startImport()
{
    if (running()) return;
    importers::ImportOptions options;
    QString error;
    if (!readOptions(options, error)) {
        m_summary->setPlainText(error);
        return;
    }
    const std::string dbPath = targetPath().toStdString();
    if (dbPath.empty()) return;
    auto state = std::make_shared<JobState>();
    m_job = state;
    const std::vector<importers::PlannedFile> plan = m_model->plan();
    m_jobFiles.clear();
    for (const importers::PlannedFile& f : plan)
        m_jobFiles.push_back(f.displayPath);
    m_summary->clear();
    m_progress->setValue(0);
    m_progressTimer->start();
    updateButtons();

    auto failed = [](const QString& failure) {
        ImportJobResult result;
        result.error = Error{ErrorCode::Internal,
                             "the import stopped (" + failure.toStdString() +
                                 "); the files whose import had finished are kept in the run",
                             {}};
        return result;
    };
    widgets::startJob(
        this, nullptr,
        [state, dbPath, plan, options] {
            ImportJobCallbacks callbacks;
            callbacks.progress = [state](uint64_t done, uint64_t total, size_t file) {
                state->done = done;
                state->total = total;
                state->file = file;
                state->reported = true;
            };
            ImportJobResult result = runImport(dbPath, plan, options, callbacks, &state->cancel);
            // A run of several nodes: their clocks lined up (offsets the user set are kept).
            if (!result.error && !result.cancelled && result.imported > 0)
                if (auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadWrite)) {
                    auto lines = estimateAndDescribeClocks(**db, false, analysis::ClockScope::Changed);
                    result.clockLines =
                        lines ? *lines : std::vector<std::string>{"clocks not estimated: " + lines.error().toString()};
                }
            return result;
        },
        failed, [this](const ImportJobResult& result) { finishImport(result); });
}

void ImportDialog::cancelImport()
{
    if (!m_job) return;
    m_job->cancel = true;
    m_progress->setFormat(tr("Cancelling…"));
}

void ImportDialog::reject()
{
    if (running()) {
        m_closeWhenDone = true;
        cancelImport();
        return;
    }
    QDialog::reject();
}

void ImportDialog::showProgress()
{
    if (!m_job || m_job->cancel) return;
    const uint64_t total = m_job->total, done = m_job->done, file = m_job->file;
    if (total == 0) return;
    m_progress->setValue(static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(total)));
    const QString name = file < m_jobFiles.size() ? qs(m_jobFiles[file]) : QString();
    m_progress->setFormat(tr("%p% of %1 MB — %2").arg(static_cast<double>(total) / 1e6, 0, 'f', 1).arg(name));
}

void ImportDialog::finishImport(const ImportJobResult& result)
{
    m_progressTimer->stop();
    m_job.reset();
    QStringList lines{qs(result.summary())};
    if (result.cancelled) {
        QStringList before;
        for (const std::string& f : result.importedFiles())
            before << qs(f);
        lines << (before.isEmpty()
                      ? tr("No file was imported before the cancel.")
                      : tr("Imported before the cancel (kept): %1.").arg(before.join(QStringLiteral(", "))));
        m_progress->setFormat(tr("Cancelled"));
    } else {
        m_progress->setValue(1000);
        m_progress->setFormat(result.error ? tr("Failed") : tr("Done"));
    }
    for (const ImportedFile& f : result.files) {
        if (f.result.outcome == importers::FileOutcome::Failed && f.result.error)
            lines << qs(f.result.error->toString()) + tr(" (nothing of this file was stored)");
        if (f.result.outcome == importers::FileOutcome::AlreadyImported)
            lines << tr("%1: already imported, nothing changed").arg(qs(f.displayPath));
    }
    for (const std::string& line : result.clockLines)
        lines << qs(line);
    m_summary->setPlainText(lines.join(QLatin1Char('\n')));
    updateButtons();
    const QString dbPath = targetPath();
    if (!result.error) {
        m_openRunPath = dbPath; // later imports from this dialog go into the same run
        Q_EMIT importFinished(dbPath, std::make_shared<const ImportJobResult>(result));
    }
    if (m_closeWhenDone) QDialog::reject();
}

} // namespace runlens::app
