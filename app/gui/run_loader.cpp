#include "app/gui/run_loader.h"

#include "widgets/common/background_job.h"

#include <QFuture>
#include <chrono>

namespace runlens::app {

OpenedRun openRun(const QString& path)
{
    const auto started = std::chrono::steady_clock::now();
    OpenedRun run;
    run.path = path;
    auto catalog = timeline::loadRunCatalog(path.toStdString());
    if (!catalog) {
        run.error = QString::fromStdString(catalog.error().toString());
        return run;
    }
    run.catalog = *catalog;
    auto source = timeline::TimelineSource::open(path.toStdString(), run.catalog);
    if (!source) {
        run.error = QString::fromStdString(source.error().toString());
        run.catalog.reset();
        return run;
    }
    run.source = std::shared_ptr<timeline::TimelineSource>(std::move(*source));
    run.loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return run;
}

RunLoader::RunLoader(QObject* parent) : QObject(parent) {}

RunLoader::~RunLoader() = default;

void RunLoader::open(const QString& path)
{
    const uint64_t generation = ++m_generation;
    if (m_running++ == 0) Q_EMIT busyChanged(true);
    auto thrown = [path](const QString& error) {
        OpenedRun run;
        run.path = path;
        run.error = error;
        return run;
    };
    widgets::startJob(
        this, nullptr, [path] { return openRun(path); }, thrown,
        [this, generation](const OpenedRun& run) {
            if (--m_running == 0) Q_EMIT busyChanged(false);
            if (generation != m_generation) return; // a newer open is on its way
            if (!run.error.isEmpty())
                Q_EMIT failed(run.path, run.error);
            else
                Q_EMIT opened(run);
        });
}

} // namespace runlens::app
