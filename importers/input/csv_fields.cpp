#include "importers/input/csv_fields.h"

#include "importers/common/text_fields.h"

#include <algorithm>

namespace runlens::importers {

bool oddQuotes(std::string_view text)
{
    const size_t first = text.find('"'); // most lines have none: one memchr
    if (first == std::string_view::npos) return false;
    return std::count(text.begin() + static_cast<std::ptrdiff_t>(first), text.end(), '"') % 2 == 1;
}

bool CsvSplitter::split(std::string_view record, std::vector<std::string_view>& out)
{
    const bool trimmed = m_spaces == Spaces::Trim;
    if (m_quotes == Quotes::AsText || record.find('"') == std::string_view::npos) { // the common case: no copies
        splitFields(record, m_separator, out);
        if (trimmed)
            for (std::string_view& f : out)
                f = trim(f);
        return true;
    }
    out.clear();
    m_storage.clear();
    // Views into the storage must stay valid while it grows: one string per field at most.
    m_storage.reserve(static_cast<size_t>(std::count(record.begin(), record.end(), m_separator)) + 1);
    size_t i = 0;
    for (;;) {
        std::string field;
        while (i < record.size() && (record[i] == ' ' || (trimmed && record[i] == '\t')))
            ++i;
        bool closed = true;
        if (i < record.size() && record[i] == '"') {
            closed = false;
            for (++i; i < record.size(); ++i) {
                if (record[i] == '"' && i + 1 < record.size() && record[i + 1] == '"') {
                    field.push_back('"');
                    ++i;
                } else if (record[i] == '"') {
                    ++i;
                    closed = true;
                    break;
                } else {
                    field.push_back(record[i]);
                }
            }
        }
        const size_t end = closed ? std::min(record.find(m_separator, i), record.size()) : record.size();
        field.append(record.substr(i, end - i));
        m_storage.push_back(std::move(field));
        out.emplace_back(trimmed ? trim(std::string_view(m_storage.back())) : std::string_view(m_storage.back()));
        if (end == record.size()) return closed;
        i = end + 1;
    }
}

} // namespace runlens::importers
