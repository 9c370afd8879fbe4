#include "app/cli/cli.h"
#include "app/gui/gui_main.h"

#include <QApplication>
#include <QCoreApplication>
#include <QGuiApplication>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

bool hasArg(int argc, char** argv, const char* arg)
{
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], arg) == 0) return true;
    return false;
}

bool endsWith(const char* s, const char* suffix)
{
    const size_t n = std::strlen(s), m = std::strlen(suffix);
    return n >= m && std::strcmp(s + n - m, suffix) == 0;
}

void ensureRuntimeDir()
{
    // Qt wants a private runtime folder; without one it warns on every start.
    if (std::getenv("XDG_RUNTIME_DIR")) return;
    const std::string dir =
        std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/runtime-" + std::to_string(getuid());
    if (mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
}

void setIdentity()
{
    QCoreApplication::setApplicationName(QStringLiteral("runlens"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RUNLENS_VERSION));
}

} // namespace

int main(int argc, char** argv)
{
    using namespace runlens::app;
    // The window: no subcommand, `open RUN`, or a run file as the only argument.
    const bool openCommand = argc > 1 && std::strcmp(argv[1], "open") == 0;
    const bool runArgument = argc == 2 && argv[1][0] != '-' && endsWith(argv[1], ".runlens");
    if (argc == 1 || openCommand || runArgument) {
        InitialView view;
        QString runPath = argc > 1 ? QString::fromLocal8Bit(argv[openCommand ? 2 : 1]) : QString();
        if (openCommand) {
            if (argc < 3 || argv[2][0] == '-') {
                printError("open needs one RUN.runlens (runlens open RUN [--from T --to T] [--select-from T "
                           "--select-to T] [--focus PATH] [--search TEXT | --regex PATTERN] [--sandwich NAME] "
                           "[--compare-from T --compare-to T] [--finding N] [--compare OTHER.runlens]…)");
                return kExitUsage;
            }
            for (int i = 3; i < argc; i += 2) {
                const std::string opt = argv[i];
                if (i + 1 >= argc) {
                    printError(opt + " needs a value");
                    return kExitUsage;
                }
                const QString value = QString::fromLocal8Bit(argv[i + 1]);
                if (opt == "--from")
                    view.from = value;
                else if (opt == "--to")
                    view.to = value;
                else if (opt == "--select-from")
                    view.selectFrom = value;
                else if (opt == "--select-to")
                    view.selectTo = value;
                else if (opt == "--focus")
                    view.focus = value;
                else if (opt == "--search")
                    view.search = value;
                else if (opt == "--regex") {
                    view.search = value;
                    view.searchRegex = true;
                } else if (opt == "--sandwich")
                    view.sandwich = value;
                else if (opt == "--compare-from")
                    view.compareFrom = value;
                else if (opt == "--compare-to")
                    view.compareTo = value;
                else if (opt == "--compare")
                    view.compareWith << value;
                else if (opt == "--finding")
                    view.finding = value.toInt(); // 1-based; 0 (not a number): none
                else {
                    printError("unknown option for open: " + opt);
                    return kExitUsage;
                }
            }
        }
        if (!hasDisplay()) {
            printError("no display to open the window on (DISPLAY or WAYLAND_DISPLAY is not set); the subcommands "
                       "run headless, see runlens --help");
            return kExitFailure;
        }
        ensureRuntimeDir();
        QApplication app(argc, argv);
        setIdentity();
        return runMainWindow(runPath, view);
    }

    // The demo ends in the window when there is a display, unless told not to.
    const bool demo = std::strcmp(argv[1], "demo") == 0;
    if (demo && hasDisplay() && !hasArg(argc, argv, "--no-gui") && !hasArg(argc, argv, "--help") &&
        !hasArg(argc, argv, "-h")) {
        ensureRuntimeDir();
        QApplication app(argc, argv);
        setIdentity();
        return runCli(QCoreApplication::arguments(),
                      [](const std::string& dbPath) { return runMainWindow(QString::fromStdString(dbPath)); });
    }

    // Commands that draw (flame graphs as PNG/SVG, reports) need the GUI libraries; headless, they draw offscreen.
    // A report's timeline figures are QCustomPlot widgets (never shown): it needs a QApplication.
    // The headless demo ends in its report; a comparison may be written as one.
    const bool report = std::strcmp(argv[1], "report") == 0 || std::strcmp(argv[1], "compare") == 0 || demo;
    const bool draws = report || std::strcmp(argv[1], "flame") == 0;
    if (draws && !std::getenv("QT_QPA_PLATFORM") && !hasDisplay()) setenv("QT_QPA_PLATFORM", "offscreen", 1);
    if (draws) ensureRuntimeDir();
    std::unique_ptr<QCoreApplication> app;
    if (report)
        app = std::make_unique<QApplication>(argc, argv);
    else if (draws)
        app = std::make_unique<QGuiApplication>(argc, argv);
    else
        app = std::make_unique<QCoreApplication>(argc, argv);
    setIdentity();
    return runCli(QCoreApplication::arguments());
}
