#include "tests/fixture_run.h"

#include "analysis/rules/rule_params.h"
#include "analysis/store/run_database.h"
#include "app/jobs/clock_job.h"
#include "app/jobs/import_job.h"
#include "importers/import_session.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>

namespace runlens::test {

FixtureRun importAndAnalyse(const QString& fixtures, const std::string& id)
{
    FixtureRun run;
    run.id = id;
    const QString runDir = fixtures + QLatin1Char('/') + QString::fromStdString(id);
    if (!QFileInfo(runDir).isDir()) return run;
    run.present = true;
    run.truth = readTruth(runDir);

    // `runlens import FOLDER` on the fixture as it is would read truth/ too: none of it may be taken as input.
    importers::ImportOptions options;
    options.timeZone = "UTC"; // --tz UTC: the runs were recorded on machines whose local time was UTC
    if (auto whole = importers::planImport({runDir.toStdString()}, options); whole) {
        const std::string truthDir = QDir(runDir).filePath(QStringLiteral("truth")).toStdString() + "/";
        for (const importers::PlannedFile& f : *whole)
            if (f.path.rfind(truthDir, 0) == 0 && f.importer)
                run.truthImportable.push_back("truth/" + f.path.substr(truthDir.size()) + " as " +
                                              std::string(f.importer->format()));
    }

    // The folder keeps its name (a node may be named after it), the truth/ folder stays behind.
    QTemporaryDir tmp;
    const QString copy = tmp.filePath(QFileInfo(runDir).fileName());
    if (!tmp.isValid() || !copyWithoutTruth(runDir, copy)) {
        run.error = "cannot copy the run's files";
        return run;
    }
    auto plan = importers::planImport({copy.toStdString()}, options);
    if (!plan) {
        run.error = plan.error().toString();
        return run;
    }
    const std::string dbPath = tmp.filePath(QStringLiteral("run.runlens")).toStdString();
    const app::ImportJobResult job = app::runImport(dbPath, *plan, options);
    run.importSummary = job.summary();
    if (job.error || job.failed > 0 || job.cancelled) {
        run.error = "import: " + job.summary();
        return run;
    }
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadWrite);
    if (!db) {
        run.error = db.error().toString();
        return run;
    }
    if (auto clocks = app::estimateAndDescribeClocks(**db, false); !clocks) { // as runlens import does after a run
        run.error = clocks.error().toString();
        return run;
    }
    auto analysed = analysis::analyzeRun(**db, analysis::RuleParams::defaults());
    if (!analysed) {
        run.error = analysed.error().toString();
        return run;
    }
    run.analysis = std::move(*analysed);
    return run;
}

} // namespace runlens::test
