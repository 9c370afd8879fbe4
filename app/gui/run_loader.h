#pragma once

// Opens a run on a worker: its catalog (loadRunCatalog) and a TimelineSource on its own connections. The GUI
// thread only receives the finished values; a newer open drops the result of an older one.

#include "analysis/timeline/run_catalog.h"
#include "analysis/timeline/timeline_source.h"

#include <QObject>
#include <QString>
#include <cstdint>
#include <memory>

namespace runlens::app {

struct OpenedRun
{
    QString path;
    std::shared_ptr<const timeline::RunCatalog> catalog;
    std::shared_ptr<timeline::TimelineSource> source; // used on the timeline's worker only
    QString error;                                    // set when opening failed
    double loadMs = 0;
};

// Synchronous; the worker's body (also usable from tests).
OpenedRun openRun(const QString& path);

class RunLoader : public QObject
{
    Q_OBJECT
public:
    explicit RunLoader(QObject* parent = nullptr);
    ~RunLoader() override;

    void open(const QString& path);
    bool busy() const { return m_running > 0; }

Q_SIGNALS:
    void opened(const runlens::app::OpenedRun& run);
    void failed(const QString& path, const QString& message);
    void busyChanged(bool busy);

private:
    uint64_t m_generation = 0;
    int m_running = 0;
};

} // namespace runlens::app
