#include "app/gui/findings_dock.h"

#include "analysis/report/report_model.h"
#include "analysis/rules/run_analysis.h"
#include "analysis/store/run_database.h"
#include "app/gui/flame_dock.h"
#include "widgets/common/background_job.h"
#include "widgets/findings/findings_panel.h"
#include "widgets/flame/flame_panel.h"
#include "widgets/timeline/timeline_controller.h"
#include "widgets/timeline/timeline_widget.h"

#include <QDateTime>
#include <QDockWidget>
#include <QJsonArray>
#include <QMainWindow>
#include <algorithm>
#include <exception>
#include <map>
#include <utility>

namespace runlens::app {

namespace {

// "no timed stack samples: …" as a sentence after another: capitalised, with its full stop.
QString sentence(QString text)
{
    if (!text.isEmpty()) text[0] = text[0].toUpper();
    if (!text.endsWith(QLatin1Char('.'))) text += QLatin1Char('.');
    return text;
}

struct Loaded
{
    uint64_t generation = 0;
    std::vector<analysis::Finding> findings;
    QString status;
    QString error;
    std::shared_ptr<const analysis::RunAnalysis> fresh; // analysed now, not in the run
    std::map<std::string, double> overrides;            // the parameters it ran with
};

// On a worker, with its own read-only connection: the stored analysis, or a new one held in memory (viewing never
// changes the file; keepFindings writes it when asked).
Loaded loadFindings(const std::string& path, bool rerun, uint64_t generation)
{
    Loaded out;
    out.generation = generation;
    auto db = store::RunDatabase::open(path, store::OpenMode::ReadOnly);
    if (!db) {
        out.error = QString::fromStdString(db.error().toString());
        return out;
    }
    auto stored = analysis::loadStoredAnalysis(**db);
    if (!stored) {
        out.error = QString::fromStdString(stored.error().toString());
        return out;
    }
    if (*stored && !rerun) {
        out.findings = (*stored)->analysis.findings;
        out.status = QObject::tr("%1 findings from the analysis of %2 (kept in the run).")
                         .arg(out.findings.size())
                         .arg(QDateTime::fromMSecsSinceEpoch((*stored)->ranAtNs / 1'000'000)
                                  .toString(QStringLiteral("yyyy-MM-dd HH:mm")));
        return out;
    }
    analysis::RuleParams params = analysis::RuleParams::defaults();
    std::map<std::string, double> overrides;
    if (*stored) overrides = (*stored)->overrides; // the parameters set for this run
    for (const auto& [name, value] : overrides)
        (void)params.set(name + "=" + QString::number(value, 'g', 17).toStdString());
    auto analysis = analysis::analyzeRun(**db, params);
    if (!analysis) {
        out.error = QString::fromStdString(analysis.error().toString());
        return out;
    }
    out.findings = analysis->findings;
    QStringList missing;
    for (const std::string& m : analysis->missing)
        missing << QString::fromStdString(m);
    out.status =
        QObject::tr("%1 findings (analysed now, not kept in the run: Keep in run writes them).%2")
            .arg(out.findings.size())
            .arg(missing.isEmpty() ? QString() : QStringLiteral(" ") + sentence(missing.join(QStringLiteral("; "))));
    out.fresh = std::make_shared<const analysis::RunAnalysis>(std::move(*analysis));
    out.overrides = std::move(overrides);
    return out;
}

} // namespace

FindingsDock::FindingsDock(QMainWindow* window, widgets::TimelineController* controller,
                           widgets::TimelineWidget* timeline, FlameDock* flame)
    : QObject(window), m_controller(controller), m_timeline(timeline), m_flame(flame)
{
    m_panel = new widgets::FindingsPanel;
    m_dock = new QDockWidget(tr("Findings"), window);
    m_dock->setObjectName(QStringLiteral("findingsDock"));
    m_dock->setWidget(m_panel);
    window->addDockWidget(Qt::RightDockWidgetArea, m_dock);
    connect(m_panel, &widgets::FindingsPanel::findingSelected, this, &FindingsDock::show);
    connect(m_panel, &widgets::FindingsPanel::analyzeRequested, this, &FindingsDock::analyze);
    connect(m_panel, &widgets::FindingsPanel::keepRequested, this, &FindingsDock::keep);
}

bool FindingsDock::keep()
{
    if (!m_catalog || !m_fresh || m_busy) return false;
    const std::string path = m_catalog->path;
    auto fresh = m_fresh;
    auto overrides = m_freshOverrides;
    const uint64_t generation = m_generation;
    m_busy = true;
    m_panel->setStatus(tr("Writing the findings into the run…"));
    widgets::startJob(
        this, nullptr,
        [path, fresh, overrides]() -> QString {
            auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
            if (!db) return QString::fromStdString(db.error().toString());
            if (Status s = analysis::storeAnalysis(**db, *fresh, overrides); !s)
                return QString::fromStdString(s.error().toString());
            return {};
        },
        [](const QString& error) { return error; },
        [this, generation, count = fresh->findings.size()](const QString& error) {
            m_busy = false;
            if (generation != m_generation) return; // another run meanwhile
            if (!error.isEmpty()) {
                m_panel->setStatus(tr("The findings were not kept: %1").arg(error));
                Q_EMIT keptInRun(false);
                return;
            }
            m_fresh.reset();
            m_panel->setKeepable(false);
            m_panel->setStatus(tr("%1 findings, kept in the run.").arg(count));
            Q_EMIT keptInRun(true);
        });
    return true;
}

void FindingsDock::setRun(std::shared_ptr<const timeline::RunCatalog> catalog)
{
    m_catalog = std::move(catalog);
    load(false);
}

void FindingsDock::analyze()
{
    load(true);
}

void FindingsDock::clear()
{
    m_catalog.reset();
    m_fresh.reset();
    m_panel->setKeepable(false);
    ++m_generation;
    m_panel->setFindings({}, QString());
    m_timeline->setSpans({});
}

void FindingsDock::load(bool rerun)
{
    if (!m_catalog) return;
    const uint64_t generation = ++m_generation;
    m_busy = true;
    m_panel->setStatus(rerun ? tr("Analysing the run…") : tr("Reading the findings…"));
    const std::string path = m_catalog->path;
    widgets::startJob(
        this, nullptr, [path, rerun, generation] { return loadFindings(path, rerun, generation); },
        [generation](const QString& error) {
            Loaded failed;
            failed.generation = generation;
            failed.error = error;
            return failed;
        },
        [this](Loaded loaded) {
            if (loaded.generation != m_generation) return; // another run or a newer analysis meanwhile
            m_busy = false;
            if (!loaded.error.isEmpty()) {
                m_panel->setFindings({}, tr("The analysis failed: %1").arg(loaded.error));
                Q_EMIT findingsShown();
                return;
            }
            // The primary findings' episodes as spans on the timeline (the longest few hundred).
            std::vector<widgets::TimelineSpan> spans;
            for (const analysis::Finding& f : loaded.findings) {
                if (!f.primary) continue;
                QColor c = widgets::severityColor(f.severity);
                c.setAlpha(60);
                for (const analysis::FindingEpisode& e : f.episodes)
                    spans.push_back({{e.startNs, e.endNs}, QString::fromStdString(f.rule), c});
            }
            std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
                return a.range.toNs - a.range.fromNs > b.range.toNs - b.range.fromNs;
            });
            if (spans.size() > 400) spans.resize(400);
            m_timeline->setSpans(std::move(spans));
            m_fresh = loaded.fresh;
            m_freshOverrides = loaded.overrides;
            m_panel->setFindings(std::move(loaded.findings), loaded.status);
            m_panel->setKeepable(m_fresh != nullptr);
            if (m_initialFinding >= 0) m_panel->select(std::exchange(m_initialFinding, -1));
            Q_EMIT findingsShown();
        });
}

QString FindingsDock::evidenceFrame(const analysis::Finding& f)
{
    return QString::fromStdString(analysis::evidenceFrame(f));
}

void FindingsDock::show(int index)
{
    const auto& findings = m_panel->findings();
    if (index < 0 || index >= static_cast<int>(findings.size())) return;
    const analysis::Finding& f = findings[static_cast<size_t>(index)];
    if (f.episodes.empty()) return;
    // The first episode, with a margin of a quarter of it on each side (at least 5 s), as the report shows it.
    const analysis::FindingEpisode& e = f.episodes.front();
    const auto [from, to] = analysis::episodeView(e);
    m_controller->setRange({from, to});
    m_controller->setSelection(widgets::TimeRange{e.startNs, e.endNs});
    Q_EMIT scopeSelected(f.nodes, f.gpus);
    if (m_flame) {
        m_flame->setNodes(f.nodes);
        m_flame->panel()->setSearchText(evidenceFrame(f), false);
    }
}

} // namespace runlens::app
