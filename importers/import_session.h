#pragma once

// Importing files into a run: expanding folders, detecting each file's format from its content,
// resolving which node each file belongs to, and importing each file in its own transaction.
//
// Node identity (node_assignment.h): the --node option; a host label in the file's own data; the one host
// label of the other files of its folder (a node's folder, or a one-node capture folder); the folder name
// (or a per-node file name prefix); the file name. The reason is kept with the node and shown in the summary;
// a folder whose label is another folder's node is reported, never merged.

#include "analysis/store/diagnostics.h"
#include "analysis/store/error.h"
#include "importers/importer.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace runlens::store {
class RunDatabase;
}

namespace runlens::importers {

struct PlannedFile
{
    std::string path;                   // as found on disk
    std::string displayPath;            // as shown to the user
    const Importer* importer = nullptr; // null when the format was not recognised
    int confidence = 0;
    std::optional<std::string> hostLabel;
    std::optional<int64_t> rank; // the training rank the file is of (a trace's distributedInfo, "rank3" in its name)
    std::string node;
    std::string nodeSource;         // option, host label, host label of the folder, host label of a subfolder,
                                    // directory name, file name prefix, rank map, file name (node_assignment.h)
    std::string nodeProblem;        // a label naming another folder's node: kept on this folder's, reported
    std::string problem;            // why it cannot be imported (format not recognised)
    std::optional<Error> readError; // the file cannot be read or decompressed: importing it fails with this
};

// Expands folders (recursively, sorted), detects formats and assigns nodes.
Expected<std::vector<PlannedFile>> planImport(const std::vector<std::string>& paths, const ImportOptions& options);

// Detects the format of a head of text; returns the best importer and its confidence, or null.
std::pair<const Importer*, int> detectFormat(const SniffInput& input);

enum class FileOutcome
{
    Imported,
    AlreadyImported,
    Failed,
    NotRecognised,
    Cancelled
};

struct FileResult
{
    FileOutcome outcome = FileOutcome::Failed;
    std::optional<Error> error; // Failed/Cancelled: the fatal error; nothing of the file was stored
    int64_t importId = 0;       // Imported: the new import; AlreadyImported: the earlier one
    int64_t rowsRead = 0;
    int64_t points = 0;
    int64_t samples = 0;
    double durationMs = 0;
    store::Diagnostics diagnostics;
    std::vector<std::string> notes;
    std::string contentHash;
};

// Imports one planned file in one transaction: on any fatal error the database is left as it was.
FileResult importFile(store::RunDatabase& db, const PlannedFile& file, const ImportOptions& options,
                      const Progress* progress = nullptr);

// Imports again the unanchored sources (import.anchor) of imports before beforeImportId whose files are still
// where they were read, now that the run may hold timed data they match; each one placed replaces its earlier
// import, one that still matches nothing stays as it was. Returns the ones placed.
std::vector<std::pair<PlannedFile, FileResult>> placeUnanchored(store::RunDatabase& db, int64_t beforeImportId,
                                                                const Progress* progress = nullptr);

const char* outcomeName(FileOutcome outcome);

} // namespace runlens::importers
