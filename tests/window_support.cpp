#include "tests/window_support.h"

#include "app/demo/demo_run.h"
#include "app/jobs/import_job.h"
#include "importers/import_session.h"
#include "tests/test_support.h"

#include <QAction>
#include <QWidget>

namespace runlens::test {

std::string csvWithProblems(const QTemporaryDir& dir)
{
    std::string csv = "timestamp, index, name, utilization.gpu [%], power.draw [W]\n";
    for (int i = 0; i < 20; ++i)
        for (int gpu = 0; gpu < 2; ++gpu)
            csv += "2026/11/02 08:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ".000, " +
                   std::to_string(gpu) + ", NVIDIA H100, " +
                   (i == 5 && gpu == 0 ? "1OO"
                    : i == 9           ? "N0"
                                       : "50") +
                   " %, 100.0 W\n";
    return test::writeFile(dir, QStringLiteral("node7/gpu.csv"), csv);
}

std::string demoRun(const QTemporaryDir& dir)
{
    app::DemoSpec spec;
    spec.nodes = 2;
    spec.gpusPerNode = 2;
    spec.hours = 0.2;
    if (!app::writeDemoRun(spec, dir.filePath(QStringLiteral("inputs")).toStdString())) return {};
    std::string db = dir.filePath(QStringLiteral("demo.runlens")).toStdString();
    importers::ImportOptions options;
    options.timeZone = "UTC";
    auto plan = importers::planImport({dir.filePath(QStringLiteral("inputs")).toStdString()}, options);
    if (!plan || app::runImport(db, plan.value(), options).imported == 0) return {};
    return db;
}

QAction* menuAction(const QWidget& window, const QString& text)
{
    for (QAction* a : window.findChildren<QAction*>())
        if (a->text() == text) return a;
    return nullptr;
}

} // namespace runlens::test
