#include "importers/common/json_error.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <string_view>

namespace runlens::importers {
namespace {

namespace sj = simdjson;
namespace od = simdjson::ondemand;

// Reads every value below v, as the DOM parser would, and returns the first error. Depth is bounded by the
// on-demand parser's own limit (sj::DEFAULT_MAX_DEPTH), past which it fails with DEPTH_ERROR.
sj::error_code walk(od::value v)
{
    od::json_type type;
    if (auto e = v.type().get(type)) return e;
    switch (type) {
    case od::json_type::object: {
        od::object o;
        if (auto e = v.get_object().get(o)) return e;
        for (auto item : o) {
            od::field f;
            if (auto e = std::move(item).get(f)) return e;
            std::string_view key;
            if (auto e = f.unescaped_key().get(key)) return e;
            if (auto e = walk(f.value())) return e;
        }
        return sj::SUCCESS;
    }
    case od::json_type::array: {
        od::array a;
        if (auto e = v.get_array().get(a)) return e;
        for (auto item : a) {
            od::value element;
            if (auto e = std::move(item).get(element)) return e;
            if (auto e = walk(element)) return e;
        }
        return sj::SUCCESS;
    }
    case od::json_type::number: {
        od::number n;
        return v.get_number().get(n);
    }
    case od::json_type::string: {
        std::string_view s;
        return v.get_string().get(s);
    }
    case od::json_type::boolean: {
        bool b = false;
        return v.get_bool().get(b);
    }
    case od::json_type::null: {
        bool isNull = false;
        if (auto e = v.is_null().get(isNull)) return e;
        return isNull ? sj::SUCCESS : sj::N_ATOM_ERROR;
    }
    }
    return sj::TAPE_ERROR;
}

// Where the on-demand parser stops on json, or nothing when it reads it through (or cannot start).
std::optional<size_t> failureOffset(const sj::padded_string& json)
{
    od::parser parser;
    od::document doc;
    if (parser.iterate(json).get(doc)) return std::nullopt;
    od::value root;
    sj::error_code e = doc.get_value().get(root);
    if (!e) e = walk(root);
    const char* at = nullptr;
    if (!e) // read through: a place left is content after the document
        return doc.current_location().get(at) ? std::nullopt
                                              : std::optional<size_t>(static_cast<size_t>(at - json.data()));
    if (doc.current_location().get(at)) return json.size(); // past the last token: the text ended
    return static_cast<size_t>(std::max(at, json.data()) - json.data());
}

// Whether the text ends with an object or array still open (strings and their escapes skipped): a file cut short.
bool endsOpen(std::string_view text)
{
    int64_t depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    return inString || depth > 0;
}

} // namespace

Error jsonDocumentError(const sj::padded_string& json, sj::error_code e, const std::string& displayName)
{
    const std::string_view text(json.data(), json.size());
    SourceLocation where{displayName};
    std::optional<size_t> offset;
    // A text that stops inside an object, an array or a string was cut: it fails at its end, whatever the parser
    // made of its last token.
    const bool cut = e == sj::INCOMPLETE_ARRAY_OR_OBJECT || e == sj::UNCLOSED_STRING ||
                     (e != sj::DEPTH_ERROR && e != sj::TRAILING_CONTENT && endsOpen(text));
    if (cut)
        offset = text.size();
    else if (e != sj::DEPTH_ERROR && e != sj::CAPACITY && e != sj::MEMALLOC)
        offset = failureOffset(json);
    if (offset) {
        const std::string_view before = text.substr(0, std::min(*offset, text.size()));
        where.line = 1 + static_cast<int64_t>(std::count(before.begin(), before.end(), '\n'));
        const size_t lineStart = before.rfind('\n');
        where.column =
            static_cast<int64_t>(before.size() - (lineStart == std::string_view::npos ? 0 : lineStart + 1)) + 1;
        if (cut && where.column == 1 && where.line > 1) { // a final newline: the last line is where it ends
            const std::string_view upToLast = before.substr(0, before.size() - 1);
            const size_t prev = upToLast.rfind('\n');
            --where.line;
            where.column = static_cast<int64_t>(upToLast.size() - (prev == std::string_view::npos ? 0 : prev + 1)) + 1;
        }
    }
    std::string message = fmt::format("invalid JSON: {}", sj::error_message(e));
    const std::string_view at = offset && !cut ? text.substr(*offset) : std::string_view();
    if (cut)
        message = e == sj::UNCLOSED_STRING
                      ? "invalid JSON: the text ends inside a string (file cut while written?)"
                      : "invalid JSON: the text ends inside an object or array (file cut while written?)";
    else if (at.starts_with("NaN") || at.starts_with("Infinity") || at.starts_with("-Infinity"))
        message = fmt::format("invalid JSON: {} is not a JSON number (Python's json writes it; JSON has no NaN or "
                              "infinity)",
                              at.substr(0, at[0] == 'N'   ? 3
                                           : at[0] == 'I' ? 8
                                                          : 9));
    return makeError(ErrorCode::Format, std::move(message), std::move(where));
}

} // namespace runlens::importers
