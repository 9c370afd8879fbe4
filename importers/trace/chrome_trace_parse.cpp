#include "importers/trace/chrome_trace_parse.h"

#include "importers/common/text_fields.h"
#include "importers/trace/trace_event_reader.h"
#include "importers/trace/trace_fields.h"

namespace runlens::importers::trace {
namespace {

constexpr size_t kChunkBytes = 4u << 20; // of event text parsed as one document

} // namespace

Status TraceEventReader::document(od::document& doc)
{
    od::json_type type;
    if (auto e = doc.type().get(type)) return jsonError(e, m_docStart);
    if (type == od::json_type::array) return chunk(doc);
    od::object top;
    if (type != od::json_type::object)
        return makeError(ErrorCode::Format, "not a Chrome trace: neither an object with traceEvents nor an array",
                         {m_ctx.lines.input().displayName(), 1});
    if (auto e = doc.get_object().get(top)) return jsonError(e, m_text.data() + m_text.size());
    bool sawEvents = false;
    for (auto fieldResult : top) {
        od::field field;
        if (auto e = std::move(fieldResult).get(field)) return jsonError(e, nullptr);
        const od::raw_json_string key = field.key();
        od::value& v = field.value();
        if (key == "traceEvents") {
            od::array all;
            if (v.get_array().get(all))
                return makeError(ErrorCode::Format, "traceEvents is not an array", {m_ctx.lines.input().displayName()});
            sawEvents = true;
            RUNLENS_TRY(events(all));
        } else if (key == "baseTimeNanoseconds") {
            const std::string_view token = v.raw_json_token();
            const char* at = token.data();
            if (auto n = integerOf(v))
                m_out.baseTimeNs = n;
            else
                report(diag::kBadTimestamp, at,
                       fmt::format("baseTimeNanoseconds {} is not a whole number of nanoseconds since 1970 (up to the "
                                   "year 2262): ignored",
                                   clip(trim(token))));
        } else if (key == "distributedInfo") {
            distributed(v);
        } else if (key == "deviceProperties") {
            deviceProperties(v);
        }
    }
    if (!sawEvents)
        return makeError(ErrorCode::Format, "not a Chrome trace: no traceEvents array",
                         {m_ctx.lines.input().displayName()});
    return okStatus();
}

Status TraceEventReader::chunk(od::document& doc)
{
    od::array all;
    if (auto e = doc.get_array().get(all)) return jsonError(e, m_docStart);
    return events(all);
}

void TraceEventReader::distributed(od::value& value)
{
    od::object o;
    if (value.get_object().get(o)) return;
    m_out.distributedInfo = true;
    // A rank or world size that is not a whole number from 0 (from 1) is ignored, and said so: the file would
    // otherwise land on a node by a rank it does not have.
    const auto count = [&](od::value& v, const char* name, int64_t least) -> std::optional<int64_t> {
        const std::string_view token = v.raw_json_token();
        auto n = integerOf(v);
        if (n && *n >= least) return n;
        report(diag::kBadNumber, token.data(),
               fmt::format("distributedInfo {} {} is not a whole number from {}: ignored", name, clip(trim(token)),
                           least));
        return std::nullopt;
    };
    for (auto fieldResult : o) {
        od::field f;
        if (std::move(fieldResult).get(f)) return;
        const od::raw_json_string key = f.key();
        if (key == "rank")
            m_out.rank = count(f.value(), "rank", 0);
        else if (key == "world_size")
            m_out.worldSize = count(f.value(), "world_size", 1);
        else if (key == "backend")
            m_out.backend = std::string(stringOf(f.value()));
    }
}

void TraceEventReader::deviceProperties(od::value& value)
{
    od::array all;
    if (value.get_array().get(all)) return;
    for (auto item : all) {
        od::value v;
        od::object o;
        if (std::move(item).get(v)) return;
        if (v.get_object().get(o)) continue;
        DeviceProperties d;
        bool hasId = false;
        for (auto fieldResult : o) {
            od::field f;
            if (std::move(fieldResult).get(f)) return;
            const od::raw_json_string key = f.key();
            if (key == "id") {
                auto id = integerOf(f.value());
                hasId = id.has_value();
                d.id = id.value_or(0);
            } else if (key == "name") {
                d.name = std::string(stringOf(f.value()));
            } else if (key == "totalGlobalMem") {
                d.totalMemoryBytes = integerOf(f.value());
            } else if (key == "numSms") {
                d.smCount = integerOf(f.value());
            } else if (key == "computeMajor") {
                d.computeMajor = integerOf(f.value());
            } else if (key == "computeMinor") {
                d.computeMinor = integerOf(f.value());
            }
        }
        if (hasId) m_out.devices.push_back(std::move(d));
    }
}

Status parseChromeTrace(std::string_view text, ImportContext& ctx, ParsedTrace& out)
{
    const std::string& display = ctx.lines.input().displayName();
    const size_t begin = text.starts_with("\xef\xbb\xbf") ? 3 : 0; // a UTF-8 byte-order mark
    const size_t first = text.find_first_not_of(" \t\r\n", begin);
    if (first == std::string_view::npos) return makeError(ErrorCode::Format, "empty input: no trace events", {display});
    const auto lastLine = [&] {
        return 1 + static_cast<int64_t>(std::count(text.begin(), text.end(), '\n')) -
               (!text.empty() && text.back() == '\n' ? 1 : 0);
    };
    const auto invalid = [&](std::string_view what, int64_t line) {
        return makeError(ErrorCode::Format, fmt::format("invalid JSON: {}", what), {display, line});
    };
    if (text[first] != '{' && text[first] != '[')
        return makeError(ErrorCode::Format, "not a Chrome trace: neither an object with traceEvents nor an array",
                         {display, 1});

    // The events are parsed chunk by chunk, each a small document of its own: simdjson's index of a whole
    // large trace would cost more memory (and page faults) than the text itself.
    const EventLayout layout = scanEventLayout(text, first, kChunkBytes);
    const bool bare = text[first] == '[';
    out.bareArray = bare;
    size_t eventsEnd = layout.arrayClose;
    if (layout.arrayOpen != EventLayout::npos && layout.arrayClose == EventLayout::npos) {
        if (!bare) return invalid("the text ends inside traceEvents (file cut while written?)", lastLine());
        // A bare array may lack its closing ] (the format allows it; a file cut while written): it ends after
        // its last complete event.
        eventsEnd = layout.lastComplete;
        std::string_view rest = trim(std::string_view(text).substr(eventsEnd));
        if (!rest.empty() && rest.front() == ',') rest = trim(rest.substr(1));
        if (!rest.empty())
            ctx.diagnostics.report(
                diag::kTruncatedTrace, {display, lastLine()},
                fmt::format("the event array stops inside an event: its last {} bytes dropped", rest.size()));
        out.unclosedArray = true;
    } else if (bare && !trim(std::string_view(text).substr(eventsEnd + 1)).empty()) {
        return invalid("more text after the event array", lastLine());
    }

    od::parser parser;
    od::document doc;
    TraceEventReader p(ctx, out, text);
    std::string piece; // the document parsed: the top level without its events, then each chunk of events
    // Parses piece, whose offsets from `from` on are those of text plus shift (after base: piece[0] is text[base]).
    auto parse = [&](size_t base, size_t from, int64_t shift, bool events) -> Status {
        piece.reserve(piece.size() + simdjson::SIMDJSON_PADDING);
        p.setDocument(piece.data(), base, from, shift);
        auto e = parser.iterate(simdjson::padded_string_view(piece.data(), piece.size(), piece.capacity())).get(doc);
        if (e) {
            const bool atEnd = e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || e == simdjson::UNCLOSED_STRING;
            return invalid(simdjson::error_message(e),
                           atEnd && !events
                               ? lastLine()
                               : 1 + std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(base), '\n'));
        }
        return events ? p.chunk(doc) : p.document(doc);
    };
    if (!bare) {
        // The top level without its events (the event array read as []): metadata, and a check of the JSON.
        if (layout.arrayOpen == EventLayout::npos) {
            piece.assign(text, begin);
            return parse(begin, 0, 0, false); // it fails: there is no event array
        }
        piece.assign(text, begin, layout.arrayOpen - begin);
        piece += "[]";
        piece.append(text, layout.arrayClose + 1);
        const int64_t shift = static_cast<int64_t>(layout.arrayClose) - static_cast<int64_t>(layout.arrayOpen) - 1;
        RUNLENS_TRY(parse(begin, layout.arrayOpen + 2, shift, false));
    }
    out.slices.reserve((eventsEnd - layout.arrayOpen) / 256); // Kineto writes 250-600 bytes an event
    // One allocation for the largest chunk: a parser growing chunk by chunk would take fresh memory each time.
    size_t largest = piece.size(), previous = layout.arrayOpen;
    for (const size_t cut : layout.cuts) {
        const size_t end = std::min(cut, eventsEnd);
        largest = std::max(largest, end - previous);
        previous = end;
    }
    largest = std::max(largest, eventsEnd - previous) + 2;
    if (auto e = parser.allocate(largest)) return invalid(simdjson::error_message(e), 0);
    piece.reserve(largest + simdjson::SIMDJSON_PADDING);
    for (size_t i = 0, from = layout.arrayOpen + 1;; ++i) {
        const size_t to = i < layout.cuts.size() && layout.cuts[i] < eventsEnd ? layout.cuts[i] : eventsEnd;
        piece.assign(1, '[');
        piece.append(text, from, to - from);
        piece += ']';
        RUNLENS_TRY(parse(from - 1, 0, 0, true));
        if (to == eventsEnd) break;
        from = to + 1;
    }
    p.finish();
    return okStatus();
}

} // namespace runlens::importers::trace
