#pragma once

// What the window shows with no run open: how to start (Open…, Import…, the demo) and the recent runs.

#include <QStringList>
#include <QWidget>

class QListWidget;

namespace runlens::app {

class WelcomeWidget : public QWidget
{
    Q_OBJECT
public:
    explicit WelcomeWidget(QWidget* parent = nullptr);
    void setRecentFiles(const QStringList& files);

Q_SIGNALS:
    void openRequested();
    void importRequested();
    void openRecentRequested(const QString& path);

private:
    QListWidget* m_recent;
};

} // namespace runlens::app
