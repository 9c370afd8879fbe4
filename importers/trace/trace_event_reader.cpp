#include "importers/trace/trace_event_reader.h"

#include "importers/common/text_fields.h"
#include "importers/trace/trace_fields.h"

#include <cmath>

namespace runlens::importers::trace {
namespace {

using store::TraceCategory;

constexpr int64_t kCheckpointEvery = 4096;

} // namespace

std::string_view stringOf(od::value& v)
{
    const std::string_view token = v.raw_json_token(); // the quoted string and the blanks after it
    if (token.size() >= 2 && token.front() == '"') {
        const std::string_view inner = token.substr(1, token.find_last_of('"') - 1);
        if (inner.find('\\') == std::string_view::npos) return inner;
    }
    std::string_view s;
    if (v.get_string().get(s)) return {};
    return s;
}

std::optional<std::string_view> scalarText(od::value& v)
{
    const std::string_view token = v.raw_json_token();
    if (token.empty()) return std::nullopt;
    if (token.front() == '"') return stringOf(v);
    if (token.front() == '-' || (token.front() >= '0' && token.front() <= '9')) return trim(token);
    return std::nullopt;
}

std::optional<int64_t> integerOf(od::value& v)
{
    auto text = scalarText(v);
    if (!text) return std::nullopt;
    if (auto n = parseInteger(trim(*text))) return n;
    auto d = parseNumber(trim(*text));
    if (d && std::isfinite(*d) && *d == std::floor(*d) && std::fabs(*d) < 9e18) return static_cast<int64_t>(*d);
    return std::nullopt;
}

// One event's fields, as read: views into the document or the parser's string buffer, valid for this event.
Status TraceEventReader::events(od::array all)
{
    for (auto item : all) {
        od::value v;
        if (auto e = std::move(item).get(v)) return jsonError(e, nullptr);
        RUNLENS_TRY(event(v));
        if (++m_out.events % kCheckpointEvery == 0)
            if (Status s = m_ctx.checkpoint(); !s) return s;
    }
    m_ctx.rowsRead = m_out.events;
    return okStatus();
}

Status TraceEventReader::event(od::value& value)
{
    const char* at = value.raw_json_token().data();
    od::object o;
    if (value.get_object().get(o)) {
        report(diag::kInvalidEvent, at, "an event that is not a JSON object, skipped");
        return okStatus();
    }
    RawEvent e;
    for (auto fieldResult : o) {
        od::field f;
        if (auto err = std::move(fieldResult).get(f)) return jsonError(err, at);
        const od::raw_json_string key = f.key();
        od::value& v = f.value();
        if (key == "ph") {
            e.ph = stringOf(v);
        } else if (key == "ts") {
            e.hasTs = true;
            e.ts = scalarText(v);
        } else if (key == "dur") {
            e.hasDur = true;
            e.dur = scalarText(v);
        } else if (key == "name") {
            e.name = stringOf(v);
        } else if (key == "cat") {
            e.cat = stringOf(v);
        } else if (key == "pid") {
            e.pid = scalarText(v).value_or(std::string_view());
        } else if (key == "tid") {
            e.tid = scalarText(v).value_or(std::string_view());
        } else if (key == "tdur") {
            e.tdur = scalarText(v);
        } else if (key == "args") {
            od::object args;
            if (v.get_object().get(args)) continue;
            for (auto argResult : args) {
                od::field a;
                if (auto err = std::move(argResult).get(a)) return jsonError(err, at);
                const od::raw_json_string k = a.key();
                if (k == "correlation")
                    e.correlation = integerOf(a.value());
                else if (k == "device")
                    e.device = integerOf(a.value());
                else if (k == "name")
                    e.argName = stringOf(a.value());
                else if (k == "Collective name")
                    e.collectiveArg = true;
            }
        }
    }
    if (e.ph.size() == 1) {
        switch (e.ph[0]) {
        case 'X':
        case 'B':
        case 'E':
        case 'i':
        case 'I':
            slice(e, at);
            return okStatus();
        case 'M':
            ++m_out.metadata;
            metadata(e);
            return okStatus();
        case 'C':
            ++m_out.counters;
            return okStatus();
        case 's':
        case 't':
        case 'f':
            ++m_out.flows;
            return okStatus();
        default:
            break;
        }
    }
    if (e.ph.empty())
        report(diag::kInvalidEvent, at, "an event without a phase (ph), skipped");
    else
        report(diag::kUnsupportedEvent, at,
               fmt::format("an event of phase \"{}\" (\"{}\"), not imported", clip(e.ph), clip(e.name)));
    return okStatus();
}

void TraceEventReader::slice(const RawEvent& e, const char* at)
{
    const char phase = e.ph[0];
    std::optional<int64_t> ts = e.ts ? microsToNs(*e.ts) : std::nullopt;
    if (!ts) {
        report(diag::kBadTimestamp, at,
               e.hasTs ? fmt::format("\"{}\": ts is not a number of microseconds, skipped", clip(e.name))
                       : fmt::format("\"{}\": no ts, skipped", clip(e.name)));
        return;
    }
    int64_t durNs = 0;
    if (phase == 'X') {
        const bool useTdur = !e.hasDur && e.tdur;
        const std::optional<std::string_view> text = useTdur ? e.tdur : e.dur;
        bool valid = false;
        if (text)
            if (const auto dur = microsToNs(*text)) {
                durNs = *dur;
                valid = durNs >= 0;
            }
        if (useTdur)
            report(diag::kThreadDuration, at, fmt::format("\"{}\": no dur, its tdur (thread time) used", clip(e.name)));
        if (!valid) {
            report(diag::kBadNumber, at,
                   e.hasDur || e.tdur
                       ? fmt::format("\"{}\": dur is not a duration in microseconds, skipped", clip(e.name))
                       : fmt::format("\"{}\": a complete event (X) without dur, skipped", clip(e.name)));
            return;
        }
    }
    bool gpu = false;
    const TraceCategory category = canonicalCategory(e.cat, e.name, e.collectiveArg, gpu);
    if (category == TraceCategory::Other && phase != 'E') {
        auto it = m_otherCategories.find(e.cat);
        if (it == m_otherCategories.end()) it = m_otherCategories.emplace(std::string(e.cat), 0).first;
        ++it->second;
    }
    const uint32_t t = track(gpu, e.pid, e.tid, e.device);
    if (phase == 'B' || phase == 'E') {
        m_pending.push_back({*ts, t, phase == 'B' ? name(e.name) : 0, static_cast<uint32_t>(m_pending.size()), category,
                             phase == 'B', e.correlation, inText(at)});
        return;
    }
    if (phase == 'X')
        ++m_out.complete;
    else
        ++m_out.instants;
    m_out.slices.push_back({*ts, durNs, e.correlation, t, name(e.name), category});
}

void TraceEventReader::metadata(const RawEvent& e)
{
    if (e.name == "process_name" && !e.argName.empty())
        m_processNames[std::string(e.pid)] = std::string(e.argName);
    else if (e.name == "thread_name" && !e.argName.empty())
        m_threadNames[fmt::format("{}\x1f{}", e.pid, e.tid)] = std::string(e.argName);
}

uint32_t TraceEventReader::track(bool gpu, std::string_view pid, std::string_view tid, std::optional<int64_t> device)
{
    m_key.assign(1, gpu ? 'g' : 'c');
    m_key.append(pid).append(1, '\x1f').append(tid);
    auto it = m_tracks.find(m_key);
    if (it == m_tracks.end()) {
        it = m_tracks.emplace(m_key, static_cast<uint32_t>(m_out.tracks.size())).first;
        m_out.tracks.push_back({gpu, std::string(pid), std::string(tid), {}, {}});
    }
    Track& t = m_out.tracks[it->second];
    if (gpu && !t.device) t.device = device ? device : parseInteger(pid);
    return it->second;
}

uint32_t TraceEventReader::name(std::string_view n)
{
    auto it = m_names.find(n);
    if (it != m_names.end()) return it->second;
    const auto id = static_cast<uint32_t>(m_out.names.size());
    m_names.emplace(std::string(n), id);
    m_out.names.emplace_back(n);
    return id;
}

void TraceEventReader::finish()
{
    m_docStart = nullptr; // the places kept with B/E events are in text already
    // B/E pairs: an E closes the latest open B of its thread, in time order (file order for equal times).
    std::sort(m_pending.begin(), m_pending.end(), [](const Pending& a, const Pending& b) {
        return std::tie(a.track, a.tsNs, a.order) < std::tie(b.track, b.tsNs, b.order);
    });
    std::vector<const Pending*> open;
    auto closeTrack = [&] {
        for (const Pending* b : open)
            report(diag::kUnbalancedEvent, b->at,
                   fmt::format("\"{}\": a B event never closed by an E, skipped", clip(m_out.names[b->name])));
        open.clear();
    };
    for (size_t i = 0; i < m_pending.size(); ++i) {
        const Pending& p = m_pending[i];
        if (i > 0 && m_pending[i - 1].track != p.track) closeTrack();
        if (p.begin) {
            open.push_back(&p);
            continue;
        }
        if (open.empty()) {
            report(diag::kUnbalancedEvent, p.at, "an E event with no open B on its thread, skipped");
            continue;
        }
        const Pending& b = *open.back();
        open.pop_back();
        m_out.slices.push_back({b.tsNs, p.tsNs - b.tsNs, b.correlation, b.track, b.name, b.category});
        ++m_out.durationPairs;
    }
    closeTrack();
    for (Track& t : m_out.tracks) {
        if (auto it = m_threadNames.find(fmt::format("{}\x1f{}", t.pid, t.tid)); it != m_threadNames.end())
            t.name = trim(it->second);
        else if (auto p = m_processNames.find(t.pid); p != m_processNames.end())
            t.name = trim(p->second);
    }
    for (const auto& [cat, n] : m_otherCategories)
        m_out.otherCategories[cat.empty() ? std::string("(none)") : cat] += n;
}

} // namespace runlens::importers::trace
