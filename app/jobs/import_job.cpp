#include "app/jobs/import_job.h"

#include "analysis/store/import_queries.h"
#include "analysis/store/run_database.h"

#include <filesystem>
#include <fmt/format.h>

namespace runlens::app {

namespace {

uint64_t sizeOnDisk(const std::string& path)
{
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    return ec ? 0 : static_cast<uint64_t>(size);
}

} // namespace

std::vector<std::string> ImportJobResult::importedFiles() const
{
    std::vector<std::string> out;
    for (const ImportedFile& f : files)
        if (f.result.outcome == importers::FileOutcome::Imported) out.push_back(f.displayPath);
    return out;
}

std::string ImportJobResult::summary() const
{
    if (error) return error->toString();
    std::string s = fmt::format("{} file{}: {} imported, {} already imported, {} failed, {} not recognised; {} points, "
                                "{} stack samples, {} problems ({} with data loss)",
                                files.size(), files.size() == 1 ? "" : "s", imported, alreadyImported, failed,
                                notRecognised, points, samples, problems, dataLoss);
    if (placedLater > 0)
        s += fmt::format("; {} source{} imported earlier without a place in time now aligned with this data",
                         placedLater, placedLater == 1 ? "" : "s");
    if (cancelled) s += fmt::format("; cancelled while reading {}: nothing of it was stored", cancelledFile);
    return s;
}

ImportJobResult runImport(const std::string& dbPath, const std::vector<importers::PlannedFile>& files,
                          const importers::ImportOptions& options, const ImportJobCallbacks& callbacks,
                          const std::atomic<bool>* cancel)
{
    ImportJobResult job;
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::Create);
    if (!db) {
        job.error = db.error();
        return job;
    }
    std::vector<uint64_t> sizes;
    uint64_t totalBytes = 0;
    for (const importers::PlannedFile& f : files) {
        sizes.push_back(sizeOnDisk(f.path));
        totalBytes += sizes.back();
    }

    int64_t firstNewImport = 1; // imports from this id on are this job's
    if (auto next = store::nextImportId(**db)) firstNewImport = *next;

    uint64_t doneBefore = 0;
    for (size_t i = 0; i < files.size(); ++i) {
        const importers::PlannedFile& file = files[i];
        if (cancel && cancel->load()) {
            job.cancelled = true;
            job.cancelledFile = file.displayPath;
            break;
        }
        importers::Progress progress;
        progress.cancel = cancel;
        if (callbacks.progress) {
            const uint64_t fileBytes = sizes[i];
            progress.report = [&, i, fileBytes](uint64_t done, uint64_t total) {
                // The importer counts the bytes it has read (decompressed for .zst/.gz): scale to the file's size.
                const double fraction = total > 0 ? std::min(1.0, static_cast<double>(done) / total) : 0.0;
                callbacks.progress(doneBefore + static_cast<uint64_t>(fraction * fileBytes), totalBytes, i);
            };
            callbacks.progress(doneBefore, totalBytes, i);
        }
        importers::FileResult r = importers::importFile(**db, file, options, &progress);
        doneBefore += sizes[i];

        ImportedFile handled{file.displayPath, file.importer ? std::string(file.importer->format()) : std::string("?"),
                             file.node, r};
        switch (r.outcome) {
        case importers::FileOutcome::Imported:
            ++job.imported;
            job.points += r.points;
            job.samples += r.samples;
            job.problems += r.diagnostics.total();
            job.dataLoss += r.diagnostics.dataLoss();
            break;
        case importers::FileOutcome::AlreadyImported:
            ++job.alreadyImported;
            break;
        case importers::FileOutcome::NotRecognised:
            ++job.notRecognised;
            break;
        case importers::FileOutcome::Cancelled:
            job.cancelled = true;
            job.cancelledFile = file.displayPath;
            break;
        case importers::FileOutcome::Failed:
            ++job.failed;
            break;
        }
        if (callbacks.fileDone) callbacks.fileDone(file, r);
        if (job.cancelled) break; // the cancelled file is not among the files handled
        job.files.push_back(std::move(handled));
    }
    // Sources imported earlier that matched nothing may match the data this job brought.
    if (!job.cancelled && job.imported > 0)
        for (auto& [file, r] : importers::placeUnanchored(**db, firstNewImport)) {
            ++job.placedLater;
            job.points += r.points;
            job.problems += r.diagnostics.total();
            job.dataLoss += r.diagnostics.dataLoss();
            if (callbacks.fileDone) callbacks.fileDone(file, r);
            job.files.push_back({file.displayPath, std::string(file.importer->format()), file.node, r});
        }
    if (callbacks.progress && !job.cancelled) callbacks.progress(totalBytes, totalBytes, files.size());
    return job;
}

} // namespace runlens::app
