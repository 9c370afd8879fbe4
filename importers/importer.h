#pragma once

// The importer interface and the context an importer runs in. An importer reads one input through the
// LineReader (or the InputStream for binary formats), writes through the RunWriter, reports recoverable
// problems as counted diagnostics and fatal ones as an Error. It never opens dialogs or prints.

#include "analysis/store/diagnostics.h"
#include "analysis/store/error.h"
#include "analysis/store/run_writer.h"
#include "importers/input/line_reader.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::importers {

struct ImportOptions
{
    std::string format;   // forced format name; empty = detect from content
    std::string node;     // forced node name; empty = host label, then import-wide label, then directory/file name
    std::string timeZone; // for naive local timestamps: IANA name or UTC±hh:mm; empty = this machine's zone
    std::map<std::string, std::string> extra; // format-specific options, key=value

    std::string toJson() const;
};

// The first bytes of an input (decompressed, UTF-8), for format detection.
struct SniffInput
{
    std::string_view head;
    std::string fileName; // without directories
};

struct Progress
{
    std::function<void(uint64_t doneBytes, uint64_t totalBytes)> report; // may be empty
    const std::atomic<bool>* cancel = nullptr;
};

struct ImportContext
{
    LineReader& lines;
    store::RunWriter& writer;
    store::Diagnostics& diagnostics;
    const ImportOptions& options;
    int64_t nodeId = 0;
    std::string nodeName;
    const Progress* progress = nullptr;

    int64_t rowsRead = 0;           // data records read; the importer counts them
    std::vector<std::string> notes; // shown in the import summary ("timestamps read as UTC+01:00 (Europe/Berlin)")
    std::string path;               // the file on disk (for its modification time; read through `lines`)
    std::string keptHostLabel;      // a label kept on this file's node although it names another (a reported conflict)

    // How a source without wall-clock times was placed in time (import.anchor): option, aligned or unanchored.
    // An unanchored source writes its values with RunWriter::unanchoredPoint instead of series.
    struct TimeAnchor
    {
        std::string state;
        std::optional<int64_t> startNs, uncertaintyNs;
        std::string method;
    } anchor;

    // The node a host label in the data names ("vm:9100" → "vm", hostname labels as they are). The --node
    // option wins over any label; an empty label, or keptHostLabel, gives the file's own node (nodeId).
    Expected<int64_t> nodeFor(std::string_view hostLabel);

    void report(const store::DiagnosticKind& kind, int64_t column, const std::string& message)
    {
        diagnostics.report(kind, lines.location(column), message);
    }
    // The next line of the input that fits the reader; false at the end. A longer line is skipped and reported
    // (line_too_long, "line of more than N bytes dropped"); with countSkipped it also counts as a row read.
    Expected<bool> nextLine(Line& line, bool countSkipped = false);
    // Reports progress and returns a Cancelled error when the user cancelled. Cheap: call every few thousand rows.
    Status checkpoint();
    // checkpoint() at every `every`-th call: count (the caller's, of rows, lines or events) goes up by one each call.
    Status checkpointEvery(int64_t& count, int64_t every) { return ++count % every == 0 ? checkpoint() : okStatus(); }
    // onLine(line), which returns a Status, for each line nextLine() gives, with a checkpoint every `every` lines;
    // the first error ends the reading.
    template <class OnLine> Status forEachLine(int64_t every, OnLine&& onLine)
    {
        Line line;
        int64_t sinceCheckpoint = 0;
        for (;;) {
            RUNLENS_ASSIGN_OR_RETURN(const bool more, nextLine(line));
            if (!more) return okStatus();
            RUNLENS_TRY(onLine(line));
            RUNLENS_TRY(checkpointEvery(sinceCheckpoint, every));
        }
    }
};

// A host label as a node name: an instance label's ":port" is dropped ("vm:9100" → "vm", "[::1]:9100" → "::1").
std::string nodeNameFromLabel(std::string_view label);

class Importer
{
public:
    virtual ~Importer() = default;
    virtual std::string_view format() const = 0;      // stable id, e.g. "nvidia-smi-query-csv"
    virtual std::string_view description() const = 0; // one line for --help and the import dialog
    virtual int version() const = 0;                  // bumped when the output for the same input changes
    // 0 = not this format, 100 = certain. Reads only the head.
    virtual int sniff(const SniffInput& input) const = 0;
    // A host name found in the head (a hostname column or label), if the format carries one.
    virtual std::optional<std::string> hostLabel(const SniffInput&) const { return std::nullopt; }
    virtual Status run(ImportContext& context) const = 0;
    // True when the format may lack wall-clock times and is placed by matching the node's timed data (trainer
    // logs): such files are imported after the others of the same import.
    virtual bool placedByOthers() const { return false; }
};

// Every importer this build knows, in detection priority order.
const std::vector<const Importer*>& allImporters();
const Importer* importerByFormat(std::string_view format);

} // namespace runlens::importers
