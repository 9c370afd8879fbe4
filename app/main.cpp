#include "app/cli/cli.h"

#include <QCoreApplication>
#include <QGuiApplication>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char** argv)
{
    // Commands that draw (flame graphs as PNG/SVG) need the GUI libraries; headless, they draw offscreen.
    const bool draws = argc > 1 && std::strcmp(argv[1], "flame") == 0;
    if (draws && !std::getenv("QT_QPA_PLATFORM") && !std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
        setenv("QT_QPA_PLATFORM", "offscreen", 1);
    if (draws && !std::getenv("XDG_RUNTIME_DIR")) {
        // Qt wants a private runtime folder; without one it warns on every start.
        const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/runtime-" +
                                std::to_string(getuid());
        if (mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
    }
    std::unique_ptr<QCoreApplication> app;
    if (draws)
        app = std::make_unique<QGuiApplication>(argc, argv);
    else
        app = std::make_unique<QCoreApplication>(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("runlens"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RUNLENS_VERSION));
    return runlens::app::runCli(QCoreApplication::arguments());
}
