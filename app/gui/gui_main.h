#pragma once

// The GUI path of the runlens binary: whether there is a display, and the main window's event loop.

#include <QString>

namespace runlens::app {

// DISPLAY or WAYLAND_DISPLAY is set, or Qt was told a platform (QT_QPA_PLATFORM, e.g. offscreen for tests).
bool hasDisplay();

// Shows the main window (on runPath when given) and runs the event loop; a QApplication must exist.
int runMainWindow(const QString& runPath = {});

} // namespace runlens::app
