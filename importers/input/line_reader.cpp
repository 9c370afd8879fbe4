#include "importers/input/line_reader.h"

#include <cstring>

namespace runlens::importers {

LineReader::LineReader(InputStream& input, size_t maxLineBytes) : m_input(input), m_max(maxLineBytes) {}

Expected<bool> LineReader::next(Line& line)
{
    m_carry.clear();
    bool tooLong = false;
    m_offset = m_nextOffset;
    for (;;) {
        if (m_block.empty()) {
            if (m_eof) break;
            auto block = m_input.nextBlock();
            if (!block) {
                Error e = block.error();
                e.where = location();
                e.where.line = m_number + 1; // the line being read when the stream broke
                return e;
            }
            if (block->empty()) {
                m_eof = true;
                break;
            }
            m_block = *block;
        }
        const char* nl = static_cast<const char*>(std::memchr(m_block.data(), '\n', m_block.size()));
        const size_t take = nl ? static_cast<size_t>(nl - m_block.data()) : m_block.size();
        if (nl && m_carry.empty() && !tooLong) {
            // The common case: the whole line is inside the current block.
            std::string_view text = m_block.substr(0, take);
            m_block.remove_prefix(take + 1);
            m_nextOffset += static_cast<int64_t>(take + 1);
            if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
            if (text.size() > m_max) {
                text = text.substr(0, m_max);
                tooLong = true;
            }
            line = {text, ++m_number, m_offset, tooLong};
            return true;
        }
        const size_t room = m_max + 1 > m_carry.size() ? m_max + 1 - m_carry.size() : 0;
        if (take > room) tooLong = true;
        m_carry.append(m_block.substr(0, std::min(take, room)));
        m_nextOffset += static_cast<int64_t>(take + (nl ? 1 : 0));
        m_block.remove_prefix(nl ? take + 1 : take);
        if (nl) {
            takeCarry(line, tooLong);
            return true;
        }
    }
    // End of input: a last line without newline, or nothing.
    if (m_carry.empty() && !tooLong) return false;
    m_unterminated = true;
    takeCarry(line, tooLong);
    return true;
}

void LineReader::takeCarry(Line& line, bool tooLong)
{
    if (!m_carry.empty() && m_carry.back() == '\r') m_carry.pop_back();
    if (m_carry.size() > m_max) {
        m_carry.resize(m_max);
        tooLong = true;
    }
    line = {m_carry, ++m_number, m_offset, tooLong};
}

} // namespace runlens::importers
