#include "app/cli/cli.h"

#include <QCoreApplication>

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("runlens"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RUNLENS_VERSION));
    return runlens::app::runCli(QCoreApplication::arguments());
}
