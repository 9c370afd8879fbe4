#pragma once

// Internal to the Chrome trace importer: the reader of one trace's events and metadata from simdjson
// On-Demand documents (the top level, then the event array chunk by chunk), into a ParsedTrace.

#include "importers/diagnostic_kinds.h"
#include "importers/trace/chrome_trace_parse.h"

#include <algorithm>
#include <fmt/format.h>
#include <simdjson.h>
#include <string>
#include <string_view>
#include <unordered_map>

namespace runlens::importers::trace {

namespace od = simdjson::ondemand;

struct StringHash
{
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V> using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

// A string value: a view into the document when it has no escapes (most), else unescaped by simdjson into
// its parser's buffer; empty for other types.
std::string_view stringOf(od::value& v);
// The text of a number or string value (numbers as written, strings unescaped); nullopt for other types.
std::optional<std::string_view> scalarText(od::value& v);
std::optional<int64_t> integerOf(od::value& v);

struct RawEvent
{
    std::string_view ph, cat, name, pid, tid, argName;
    std::optional<std::string_view> ts, dur, tdur;
    bool hasTs = false, hasDur = false;
    std::optional<int64_t> correlation, device;
    bool collectiveArg = false;
};

class TraceEventReader
{
public:
    TraceEventReader(ImportContext& ctx, ParsedTrace& out, std::string_view text) : m_ctx(ctx), m_out(out), m_text(text)
    {
    }
    // The document parsed next is a copy of text starting at `start`, whose first byte is text[base]: its offsets
    // (from text's start) from `from` on are those of text plus shift.
    void setDocument(const char* start, size_t base, size_t from, int64_t shift)
    {
        m_docStart = start;
        m_docBase = base;
        m_docFrom = from;
        m_docShift = shift;
    }
    // The top level: an object with traceEvents (here given as the empty array, its events come in chunks),
    // or a bare array of events.
    Status document(od::document& doc);
    // A chunk of the event array, as a JSON array of its own.
    Status chunk(od::document& doc);
    // Matches B/E pairs and names the tracks, once every event was read.
    void finish();

private:
    Status events(od::array events);
    Status event(od::value& value);
    void slice(const RawEvent& e, const char* at);
    void metadata(const RawEvent& e);
    void distributed(od::value& value);
    void deviceProperties(od::value& value);
    uint32_t track(bool gpu, std::string_view pid, std::string_view tid, std::optional<int64_t> device);
    uint32_t name(std::string_view name);

    // A place in the current document as a place in text.
    // Null when it is not in the current document or the text (a crafted file's places are computed in integers
    // and bounded before they become pointers).
    const char* inText(const char* at) const
    {
        if (!at || !m_docStart) return at;
        const auto address = reinterpret_cast<uintptr_t>(at), start = reinterpret_cast<uintptr_t>(m_docStart);
        if (address < start) return nullptr;
        const uint64_t offset = address - start + m_docBase;
        const int64_t shifted = static_cast<int64_t>(offset) + (offset >= m_docFrom ? m_docShift : 0);
        if (shifted < 0 || static_cast<uint64_t>(shifted) > m_text.size()) return nullptr;
        return m_text.data() + shifted;
    }
    int64_t lineAt(const char* at)
    {
        at = inText(at);
        if (!at || at < m_text.data() || at > m_text.data() + m_text.size()) return 0;
        if (at < m_linePos) {
            m_linePos = m_text.data();
            m_line = 1;
        }
        m_line += std::count(m_linePos, at, '\n');
        m_linePos = at;
        return m_line;
    }
    void report(const store::DiagnosticKind& kind, const char* at, const std::string& message)
    {
        m_ctx.diagnostics.report(kind, {m_ctx.lines.input().displayName(), lineAt(at)}, message);
    }
    Error jsonError(simdjson::error_code e, const char* at)
    {
        return makeError(ErrorCode::Format, fmt::format("invalid JSON: {}", simdjson::error_message(e)),
                         {m_ctx.lines.input().displayName(), lineAt(at)});
    }

    struct Pending // a B or E event, matched per track once all are read
    {
        int64_t tsNs;
        uint32_t track, name, order;
        store::TraceCategory category;
        bool begin;
        std::optional<int64_t> correlation;
        const char* at; // in text
    };

    ImportContext& m_ctx;
    ParsedTrace& m_out;
    std::string_view m_text;
    const char* m_docStart = nullptr;
    size_t m_docBase = 0;
    size_t m_docFrom = 0;
    int64_t m_docShift = 0;
    const char* m_linePos = m_text.data();
    int64_t m_line = 1;
    StringMap<uint32_t> m_names, m_tracks;
    StringMap<int64_t> m_otherCategories;
    StringMap<std::string> m_processNames, m_threadNames; // by pid, by pid '\x1f' tid
    std::vector<Pending> m_pending;
    std::string m_key;
};

} // namespace runlens::importers::trace
