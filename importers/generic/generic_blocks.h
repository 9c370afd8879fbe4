#pragma once

// The data rows of a generic long CSV (docs/formats.md §19) read and parsed on a thread of their own, in blocks of
// lines, while the importer stores the rows of the blocks before. A record of this format is one line (a quote
// left open at a line's end is not continued on the next line), so a block may end after any line: the rows of a
// file read in many blocks are those of the file read in one, a quoted field with a line break included.
// A row in the common form (no quote, as many fields as the header, an epoch-number time, a finite number, a
// metric) is parsed here: its time in ns, its value and the index of its series key, the node, device, metric,
// unit and label cells as written. Any other row is handed on as its text, for the importer's general path.

#include "analysis/store/error.h"
#include "importers/input/line_reader.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::importers {

// Epoch number → ns, the unit from the magnitude of its whole part (below 1e11 seconds, 1e14 milliseconds, 1e17
// microseconds, else nanoseconds); the fraction is read as decimal digits, so 1768471211.25 is exact.
std::optional<int64_t> epochNs(std::string_view s);

// Where the header put each column; kNone for one it does not have.
struct CsvLayout
{
    static constexpr size_t kNone = static_cast<size_t>(-1);
    char separator = ',';
    size_t columns = 0;
    size_t ts = kNone, value = kNone, metric = kNone, unit = kNone;
    std::vector<size_t> keyColumns; // the cells that name a series: node, device, metric, unit and the labels
};

struct BlockRow
{
    static constexpr uint32_t kGeneral = UINT32_MAX; // key of a row the importer parses itself
    uint32_t offset = 0, size = 0; // the line, trimmed, in the block's text; a line too long: only its size
    uint32_t key = kGeneral;       // the series key, numbered in the order the file first names them
    bool tooLong = false;          // a line over the reader's limit, dropped
    int64_t line = 0, byte = 0;    // its number and the offset of its first byte
    int64_t tsNs = 0;
    double value = 0;
};

struct CsvBlock
{
    std::string text;
    std::vector<BlockRow> rows;        // blank and comment lines left out
    std::vector<std::string> newUnits; // the unit cell of each key first named in this block, in key order
    uint64_t rawBytes = 0;             // of the input read when the block was done (progress)
    std::optional<Error> error;        // the input broke after the block's rows
    bool last = false;                 // the end of the input (or the error) follows
};

class CsvBlockReader
{
public:
    // Blocks of about blockBytes of text (a block holds at least one line). Reads the lines after the header
    // from `lines`, which nothing else may use until this reader is destroyed.
    CsvBlockReader(LineReader& lines, CsvLayout layout, size_t blockBytes);
    ~CsvBlockReader(); // stops the thread, also before the end of the input
    CsvBlockReader(const CsvBlockReader&) = delete;
    CsvBlockReader& operator=(const CsvBlockReader&) = delete;

    // The next block in file order; the last has `last` set.
    std::unique_ptr<CsvBlock> next();

private:
    class Worker;
    std::unique_ptr<Worker> m_worker;
};

} // namespace runlens::importers
