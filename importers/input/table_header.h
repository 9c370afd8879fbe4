#pragma once

// Tables whose first non-blank line is their header (nvidia-smi --query-gpu, wide CSV).

#include "analysis/store/error.h"
#include "importers/common/text_fields.h"

#include <string_view>

namespace runlens::importers {

// Blank lines are passed over, and the first other line is the header, given to parseHeader (which returns a
// Status); haveHeader says whether it was read. True when `line` was blank or the header, false for a data line.
template <class ParseHeader>
Expected<bool> blankOrHeader(std::string_view line, bool& haveHeader, ParseHeader&& parseHeader)
{
    if (trim(line).empty()) return true;
    if (haveHeader) return false;
    RUNLENS_TRY(parseHeader(line));
    haveHeader = true;
    return true;
}

} // namespace runlens::importers
