#pragma once

// Help › Keyboard shortcuts and Help › About.

class QWidget;

namespace runlens::app {

void showShortcutsDialog(QWidget* parent);
void showAboutDialog(QWidget* parent);

} // namespace runlens::app
