#include "app/gui/help_dialogs.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMessageBox>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace runlens::app {

namespace {

struct Shortcut
{
    const char* group;
    const char* keys;
    const char* what;
};

// The window's menu shortcuts, the timeline's keys and mouse (widgets/timeline/timeline_widget.h) and the flame
// graph's (widgets/flame/flame_graph_widget.h).
constexpr Shortcut kShortcuts[] = {
    {"File", "Ctrl+O", "Open a run"},
    {"File", "Ctrl+I", "Import files"},
    {"File", "Ctrl+Shift+I", "Import a folder"},
    {"File", "Ctrl+Shift+C", "Compare the open run with other runs"},
    {"File", "Ctrl+E", "Export the timeline (PNG, PDF or SVG)"},
    {"File", "Ctrl+Shift+E", "Export a report of the run (PDF)"},
    {"File", "Ctrl+Q", "Quit"},
    {"View", "Ctrl+1", "Show or hide the run browser"},
    {"View", "Ctrl+2", "Show or hide the details"},
    {"View", "Ctrl+3", "Show or hide the problems"},
    {"View", "Ctrl+4", "Show or hide the flame graph"},
    {"View", "Ctrl+5", "Show or hide the findings"},
    {"View", "Ctrl+6", "Show or hide the nodes' clock offsets"},
    {"Help", "F1", "This list"},
    {"Timeline", "W / S, Up / Down", "Zoom in / out"},
    {"Timeline", "A / D, Left / Right", "Pan earlier / later"},
    {"Timeline", "Backspace, Alt+Left", "Back to the previous range"},
    {"Timeline", "Alt+Right", "Forward"},
    {"Timeline", "F, 0", "Fit the whole run"},
    {"Timeline", "Z", "Zoom to the selected window"},
    {"Timeline", "Esc", "Clear the selection"},
    {"Timeline", "Page Up / Page Down", "Scroll the lanes"},
    {"Timeline", "Wheel", "Zoom at the mouse"},
    {"Timeline", "Drag", "Pan"},
    {"Timeline", "Shift+drag, drag on the time axis", "Select a window"},
    {"Timeline", "Double-click", "Fit the whole run"},
    {"Flame graph", "Double-click, Enter", "Focus Block"},
    {"Flame graph", "Backspace, Alt+Left", "Back in the focus history"},
    {"Flame graph", "Alt+Right", "Forward"},
    {"Flame graph", "Esc", "Reset the focus (the whole tree)"},
    {"Flame graph", "Left / Right", "The previous / next block in the row"},
    {"Flame graph", "Up / Down", "The parent / the widest child"},
    {"Flame graph", "/", "Search"},
    {"Flame graph", "F3, Shift+F3", "Next / previous match"},
    {"Flame graph", "Right-click", "Focus, copy name or stack, sandwich, search for the frame"},
};

} // namespace

std::vector<ShortcutHelp> shortcutHelp()
{
    std::vector<ShortcutHelp> out;
    for (const Shortcut& s : kShortcuts)
        out.push_back({QString::fromUtf8(s.group), QString::fromUtf8(s.keys), QString::fromUtf8(s.what)});
    return out;
}

void showShortcutsDialog(QWidget* parent)
{
    QDialog dialog(parent);
    dialog.setWindowTitle(QObject::tr("Keyboard shortcuts"));
    dialog.resize(560, 520);
    auto* tree = new QTreeWidget(&dialog);
    tree->setObjectName(QStringLiteral("shortcuts"));
    tree->setHeaderLabels({QObject::tr("Keys"), QObject::tr("Does")});
    tree->setRootIsDecorated(false);
    tree->setAlternatingRowColors(true);
    QTreeWidgetItem* group = nullptr;
    QString groupName;
    for (const ShortcutHelp& s : shortcutHelp()) {
        if (groupName != s.group) {
            groupName = s.group;
            group = new QTreeWidgetItem(tree, {groupName});
            QFont bold = group->font(0);
            bold.setBold(true);
            group->setFont(0, bold);
            group->setFirstColumnSpanned(true);
        }
        new QTreeWidgetItem(tree, {s.keys, s.what});
    }
    tree->header()->resizeSection(0, 240);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addWidget(tree);
    layout->addWidget(buttons);
    dialog.exec();
}

void showAboutDialog(QWidget* parent)
{
    QMessageBox::about(parent, QObject::tr("About RunLens"),
                       QObject::tr("<h3>RunLens %1</h3><p>A post-mortem workbench for distributed AI training runs: "
                                   "GPU, network, storage and host metrics beside stack samples and profiler traces "
                                   "of every node, on one timeline.</p><p>Built with Qt %2 and QCustomPlot.</p>")
                           .arg(QStringLiteral(RUNLENS_VERSION), QString::fromLatin1(qVersion())));
}

} // namespace runlens::app
