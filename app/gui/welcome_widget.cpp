#include "app/gui/welcome_widget.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace runlens::app {

WelcomeWidget::WelcomeWidget(QWidget* parent) : QWidget(parent), m_recent(new QListWidget(this))
{
    auto* title = new QLabel(tr("RunLens"), this);
    QFont big = title->font();
    big.setPointSizeF(big.pointSizeF() * 2);
    big.setBold(true);
    title->setFont(big);
    auto* text = new QLabel(tr("Post-mortems of distributed training runs. Open a run (.runlens), or import log "
                               "files and folders: nvidia-smi and DCGM CSVs, Prometheus scrapes, sysstat, py-spy "
                               "and perf stacks, PyTorch profiler traces. You can also drop them on this window."),
                            this);
    text->setWordWrap(true);
    auto* demo = new QLabel(tr("No logs at hand? <code>runlens demo</code> writes a synthetic two-node run and "
                               "opens it."),
                            this);
    demo->setTextFormat(Qt::RichText);

    auto* open = new QPushButton(tr("Open run…"), this);
    auto* import = new QPushButton(tr("Import files…"), this);
    open->setObjectName(QStringLiteral("welcomeOpen"));
    import->setObjectName(QStringLiteral("welcomeImport"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(open);
    buttons->addWidget(import);
    buttons->addStretch();

    auto* recentTitle = new QLabel(tr("Recent runs"), this);
    QFont bold = recentTitle->font();
    bold.setBold(true);
    recentTitle->setFont(bold);
    m_recent->setObjectName(QStringLiteral("recentRuns"));

    auto* column = new QVBoxLayout;
    column->addWidget(title);
    column->addWidget(text);
    column->addWidget(demo);
    column->addSpacing(12);
    column->addLayout(buttons);
    column->addSpacing(12);
    column->addWidget(recentTitle);
    column->addWidget(m_recent, 1);
    auto* outer = new QHBoxLayout(this);
    outer->addStretch(1);
    outer->addLayout(column, 3);
    outer->addStretch(1);

    connect(open, &QPushButton::clicked, this, &WelcomeWidget::openRequested);
    connect(import, &QPushButton::clicked, this, &WelcomeWidget::importRequested);
    connect(m_recent, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { Q_EMIT openRecentRequested(item->data(Qt::UserRole).toString()); });
}

void WelcomeWidget::setRecentFiles(const QStringList& files)
{
    m_recent->clear();
    for (const QString& path : files) {
        const QFileInfo info(path);
        auto* item = new QListWidgetItem(
            info.fileName() + QStringLiteral("  —  ") + QDir::toNativeSeparators(info.absolutePath()), m_recent);
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
        if (!info.exists()) item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
    }
    if (files.isEmpty()) {
        auto* item = new QListWidgetItem(tr("None yet"), m_recent);
        item->setFlags(Qt::NoItemFlags);
    }
}

} // namespace runlens::app
