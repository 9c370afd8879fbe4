#pragma once

// Importing a planned set of files into a run database, synchronously, on the calling thread: the command line
// runs it directly, the GUI on a QtConcurrent worker. Each file is its own transaction, so a cancel or a failure
// leaves the database as it was before that file; the files imported before it stay imported.

#include "analysis/store/error.h"
#include "importers/import_session.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace runlens::app {

struct ImportJobCallbacks
{
    // Bytes done and in all over every file (file sizes on disk), and the file being read. May be empty.
    std::function<void(uint64_t doneBytes, uint64_t totalBytes, size_t fileIndex)> progress;
    // Called after each file, in order, with its result. May be empty.
    std::function<void(const importers::PlannedFile& file, const importers::FileResult& result)> fileDone;
};

struct ImportedFile
{
    std::string displayPath;
    std::string format; // "?" when not recognised
    std::string node;
    importers::FileResult result;
};

struct ImportJobResult
{
    std::optional<Error> error;      // the database could not be opened or created: nothing was imported
    std::vector<ImportedFile> files; // every file handled, in order (none after a cancel)
    int imported = 0, alreadyImported = 0, failed = 0, notRecognised = 0;
    int placedLater = 0; // sources of earlier imports that were unanchored and now match this import's data
    std::vector<std::string> clockLines; // the nodes' clock offsets estimated after the import (GUI), a line each
    bool cancelled = false;
    std::string cancelledFile; // the file that was being read when the cancel came
    int64_t points = 0, samples = 0, problems = 0, dataLoss = 0;

    std::vector<std::string> importedFiles() const; // display paths of the files imported
    std::string summary() const;                    // one line: "3 files: 2 imported, ..."
};

ImportJobResult runImport(const std::string& dbPath, const std::vector<importers::PlannedFile>& files,
                          const importers::ImportOptions& options, const ImportJobCallbacks& callbacks = {},
                          const std::atomic<bool>* cancel = nullptr);

} // namespace runlens::app
