#pragma once

// The runs opened lately, newest first, kept in QSettings (at most kMax), and the File › Open Recent menu.

#include <QObject>
#include <QStringList>

class QMenu;

namespace runlens::app {

class RecentFiles : public QObject
{
    Q_OBJECT
public:
    static constexpr int kMax = 10;

    explicit RecentFiles(QObject* parent = nullptr);

    QStringList files() const { return m_files; }
    void add(const QString& path); // moves it to the front
    void remove(const QString& path);
    void clear();
    // Fills the menu and refills it on every change; its actions emit openRequested.
    void attachMenu(QMenu* menu);

Q_SIGNALS:
    void changed();
    void openRequested(const QString& path);

private:
    void save();
    void fillMenu();

    QStringList m_files;
    QMenu* m_menu = nullptr;
};

} // namespace runlens::app
