#pragma once

// Splits an InputStream into lines, tracking line number and byte offset (in the decoded stream).
// "\n" and "\r\n" both end a line; the last line may lack a newline. Lines longer than maxLineBytes are
// returned cut to that length with tooLong set, so an importer can report them instead of running out of memory.

#include "importers/input/input_stream.h"

#include <string>

namespace runlens::importers {

struct Line
{
    std::string_view text;  // without the line ending
    int64_t number = 0;     // 1-based
    int64_t byteOffset = 0; // of the first byte of the line
    bool tooLong = false;
};

class LineReader
{
public:
    // A line of any format read by lines is a few KB at most (a deep folded stack a few hundred KB); a longer one is
    // a file without line breaks (binary data, a decompression bomb), whose line is held while it is read, in about
    // twice its size (the carry, grown by copying). 16 MiB keeps that to some tens of MB.
    static constexpr size_t kDefaultMaxLine = 16u << 20;

    explicit LineReader(InputStream& input, size_t maxLineBytes = kDefaultMaxLine);

    // true with a line, false at the end; an Error (with file:line) when the stream is corrupt.
    Expected<bool> next(Line& line);

    // The place of the current line, for diagnostics: "file:line" or "file:line:column".
    SourceLocation location(int64_t column = 0) const { return {m_input.displayName(), m_number, column, m_offset}; }
    bool lastLineUnterminated() const { return m_unterminated; }
    InputStream& input() { return m_input; }

private:
    // The carried line as the next line: without its CR, cut to the limit (then, or when tooLong, marked too long).
    void takeCarry(Line& line, bool tooLong);
    InputStream& m_input;
    size_t m_max;
    std::string_view m_block; // unread rest of the current block
    std::string m_carry;      // a line spanning blocks
    int64_t m_number = 0;
    int64_t m_offset = 0;
    int64_t m_nextOffset = 0;
    bool m_eof = false;
    bool m_unterminated = false;
};

} // namespace runlens::importers
