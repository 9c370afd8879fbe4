#pragma once

// The GUI path of the runlens binary: whether there is a display, and the main window's event loop.

#include <QString>
#include <QStringList>

namespace runlens::app {

// DISPLAY or WAYLAND_DISPLAY is set, or Qt was told a platform (QT_QPA_PLATFORM, e.g. offscreen for tests).
bool hasDisplay();

// Where the timeline starts when a run is opened from the command line (runlens open RUN --from T --to T
// --select-from T --select-to T); T as for the other commands (ISO 8601, epoch seconds, +offset from the run start).
// The flame graph too: --focus 'a;b;c' (a call path from the root), --search TEXT or --regex PATTERN, --sandwich
// NAME (a function), and --compare-from T --compare-to T (a baseline window: the flame graph shows the selected
// window against it). --compare RUN (repeatable) opens the Compare window: the run against RUN.
struct InitialView
{
    QString from, to;             // the visible range
    QString selectFrom, selectTo; // the selected window
    QString focus, search, sandwich;
    bool searchRegex = false;
    QString compareFrom, compareTo;
    int finding = 0;         // select the N-th finding (1-based) once the findings are shown
    QStringList compareWith; // --compare RUN (repeatable): open the Compare window against these runs
    bool empty() const
    {
        return finding == 0 && compareWith.isEmpty() && from.isEmpty() && to.isEmpty() && selectFrom.isEmpty() &&
               selectTo.isEmpty() && focus.isEmpty() && search.isEmpty() && sandwich.isEmpty() &&
               compareFrom.isEmpty() && compareTo.isEmpty();
    }
};

// Shows the main window (on runPath when given) and runs the event loop; a QApplication must exist.
int runMainWindow(const QString& runPath = {}, const InitialView& view = {});

} // namespace runlens::app
