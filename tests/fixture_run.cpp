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

Expected<analysis::RunAnalysis> importAndAnalyseFolder(const std::string& folder, const std::string& dbPath,
                                                       std::string* importSummary)
{
    importers::ImportOptions options;
    options.timeZone = "UTC"; // --tz UTC: the runs were recorded (or generated) with clocks in UTC
    auto plan = importers::planImport({folder}, options);
    if (!plan) return plan.error();
    const app::ImportJobResult job = app::runImport(dbPath, *plan, options);
    if (importSummary) *importSummary = job.summary();
    if (job.error || job.failed > 0 || job.cancelled) return makeError(ErrorCode::Io, "import: " + job.summary());
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadWrite);
    if (!db) return db.error();
    // as runlens import does after a run
    if (auto clocks = app::estimateAndDescribeClocks(**db, false, analysis::ClockScope::Changed); !clocks)
        return clocks.error();
    return analysis::analyzeRun(**db, analysis::RuleParams::defaults());
}

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
    auto analysed = importAndAnalyseFolder(
        copy.toStdString(), tmp.filePath(QStringLiteral("run.runlens")).toStdString(), &run.importSummary);
    if (!analysed) {
        run.error = analysed.error().toString();
        return run;
    }
    run.analysis = std::move(*analysed);
    return run;
}

} // namespace runlens::test
