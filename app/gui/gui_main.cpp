#include "app/gui/gui_main.h"

#include "app/gui/main_window.h"

#include <QApplication>
#include <QIcon>
#include <cstdlib>

namespace runlens::app {

bool hasDisplay()
{
    for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) {
        const char* value = std::getenv(name);
        if (value && *value) return true;
    }
    return false;
}

int runMainWindow(const QString& runPath, const InitialView& view)
{
    QCoreApplication::setOrganizationName(QStringLiteral("RunLens"));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("runlens")));
    MainWindow window;
    window.show();
    if (!view.empty()) window.setInitialView(view);
    if (!runPath.isEmpty()) window.openRun(runPath);
    return QApplication::exec();
}

} // namespace runlens::app
