#pragma once

// Helpers shared by the main window's tests: a demo run imported into a run file, an nvidia-smi CSV with bad
// numbers, and a window's action found by its text.

#include <QString>
#include <QTemporaryDir>
#include <string>

class QAction;
class QWidget;

namespace runlens::test {

// An nvidia-smi CSV of two GPUs with two bad numbers.
std::string csvWithProblems(const QTemporaryDir& dir);

// A demo run (2 nodes of 2 GPUs, 12 min: communication-bound, a checkpoint stall every 6 min) in `dir`.
std::string demoRun(const QTemporaryDir& dir);

// The action of the window (or of any of its children) whose text is `text`, mnemonic included; nullptr when none.
QAction* menuAction(const QWidget& window, const QString& text);

} // namespace runlens::test
