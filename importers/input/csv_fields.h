#pragma once

// The one CSV field splitter of the importers (RFC 4180 as spreadsheets and pandas write it): fields separated by
// one character; a field may be quoted ("a,b"), with "" for a quote inside and line breaks kept (a record joined
// from several lines); spaces before an opening quote are skipped. Lines reach it without their CR (LineReader) and
// the first without a UTF-8 byte-order mark (InputStream). Unquoted text never copies: the fields are views into
// the record, or into the splitter's own storage for quoted ones (valid until its next split()).

#include <string>
#include <string_view>
#include <vector>

namespace runlens::importers {

class CsvSplitter
{
public:
    enum class Spaces
    {
        Keep, // a field as written (the generic long CSV: a value's spaces are its own)
        Trim, // spaces and tabs around a field and inside its quotes dropped ("  12.5 ", " \" 12.5\" ")
    };

    enum class Quotes
    {
        Rfc4180, // "..." quotes a field
        AsText,  // a quote is an ordinary character: for tools that never quote (nvidia-smi), where a stray quote is
                 // a damaged value that should cost that value, not the row
    };

    explicit CsvSplitter(char separator = ',', Spaces spaces = Spaces::Keep, Quotes quotes = Quotes::Rfc4180)
        : m_separator(separator), m_spaces(spaces), m_quotes(quotes)
    {
    }

    // Splits one record into out (cleared first). False when a quote opened in it is not closed: the rest of the
    // record is then the last field (a record broken by a line break, or a stray quote).
    bool split(std::string_view record, std::vector<std::string_view>& out);

    char separator() const { return m_separator; }

private:
    char m_separator;
    Spaces m_spaces;
    Quotes m_quotes;
    std::vector<std::string> m_storage;
};

// Whether the text holds an odd number of quotes: a quoted field in it is not closed (the record goes on in the
// next line), or a quote is stray. How the importers tell a record broken by a line break before splitting it.
bool oddQuotes(std::string_view text);

} // namespace runlens::importers
