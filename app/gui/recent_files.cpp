#include "app/gui/recent_files.h"

#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace runlens::app {

namespace {

const QString kKey = QStringLiteral("recentFiles");

} // namespace

RecentFiles::RecentFiles(QObject* parent) : QObject(parent)
{
    m_files = QSettings().value(kKey).toStringList().mid(0, kMax);
}

void RecentFiles::add(const QString& path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    m_files.removeAll(absolute);
    m_files.prepend(absolute);
    while (m_files.size() > kMax)
        m_files.removeLast();
    save();
}

void RecentFiles::remove(const QString& path)
{
    if (m_files.removeAll(QFileInfo(path).absoluteFilePath()) > 0) save();
}

void RecentFiles::clear()
{
    m_files.clear();
    save();
}

void RecentFiles::save()
{
    QSettings().setValue(kKey, m_files);
    fillMenu();
    Q_EMIT changed();
}

void RecentFiles::attachMenu(QMenu* menu)
{
    m_menu = menu;
    fillMenu();
}

void RecentFiles::fillMenu()
{
    if (!m_menu) return;
    m_menu->clear();
    int n = 0;
    for (const QString& path : m_files) {
        const QString text = QStringLiteral("&%1 %2").arg((n + 1) % 10).arg(QDir::toNativeSeparators(path));
        QAction* action = m_menu->addAction(text);
        action->setToolTip(path);
        connect(action, &QAction::triggered, this, [this, path] { Q_EMIT openRequested(path); });
        ++n;
    }
    if (m_files.isEmpty()) m_menu->addAction(tr("No recent runs"))->setEnabled(false);
    m_menu->addSeparator();
    QAction* clearAction = m_menu->addAction(tr("Clear list"));
    clearAction->setEnabled(!m_files.isEmpty());
    connect(clearAction, &QAction::triggered, this, &RecentFiles::clear);
}

} // namespace runlens::app
