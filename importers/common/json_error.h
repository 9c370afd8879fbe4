#pragma once

// The place of a JSON syntax error in a document parsed whole (speedscope, trainer_state.json). simdjson's DOM parser
// stops at the first error without saying where; the text is then walked again with the on-demand parser, value by
// value, up to the one that fails, so the message reads like any other: "file:line:column: invalid JSON: ...".

#include "analysis/store/error.h"

#include <simdjson.h>
#include <string>

namespace runlens::importers {

// The error of a failed parse of json (e, what the DOM parser returned), placed in displayName. A text that stops
// inside an object, an array or a string says so.
Error jsonDocumentError(const simdjson::padded_string& json, simdjson::error_code e, const std::string& displayName);

} // namespace runlens::importers
