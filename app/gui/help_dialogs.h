#pragma once

// Help › Keyboard shortcuts and Help › About.

#include <QString>
#include <vector>

class QWidget;

namespace runlens::app {

struct ShortcutHelp
{
    QString group; // "File", "Timeline", "Flame graph" …
    QString keys;  // "W / S, Up / Down": alternatives separated by ", ", pairs by " / "
    QString what;
};

// Every shortcut the Help list shows, in its order (a test drives each one).
std::vector<ShortcutHelp> shortcutHelp();
void showShortcutsDialog(QWidget* parent);
void showAboutDialog(QWidget* parent);

} // namespace runlens::app
