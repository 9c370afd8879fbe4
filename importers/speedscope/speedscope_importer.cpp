#include "importers/speedscope/speedscope_importer.h"

#include "analysis/store/saturating.h"
#include "importers/common/frame_name.h"
#include "importers/common/json_error.h"
#include "importers/common/stack_depth.h"
#include "importers/common/text_fields.h"
#include "importers/common/text_map.h"
#include "importers/common/untimed.h"
#include "importers/common/whole_input.h"
#include "importers/diagnostic_kinds.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <optional>
#include <simdjson.h>
#include <span>
#include <string>
#include <vector>

namespace runlens::importers {
namespace {

namespace sj = simdjson;
namespace dom = simdjson::dom;

constexpr int64_t kCheckpointEvery = 4096;
constexpr size_t kMaxJsonBytes = 0xFFFFFFFFu - 2 * sj::SIMDJSON_PADDING;

struct Unit
{
    std::string_view name;
    double nsPerUnit; // 0 = not a time unit
};
constexpr Unit kUnits[] = {{"none", 0},           {"bytes", 0},          {"nanoseconds", 1},
                           {"microseconds", 1e3}, {"milliseconds", 1e6}, {"seconds", 1e9}};

struct ThreadName
{
    int64_t pid = 0;
    int64_t tid = 0;
    std::string_view name;
};

// `Thread <tid> "<name>"` or `Process <pid> Thread <tid> "<name>"` (py-spy); else the whole name.
ThreadName parseThreadName(std::string_view s)
{
    ThreadName out{0, 0, s};
    std::string_view rest = s;
    int64_t pid = 0;
    if (rest.starts_with("Process ")) {
        rest.remove_prefix(8);
        const size_t sp = rest.find(' ');
        auto p = sp == std::string_view::npos ? std::nullopt : parseInteger(rest.substr(0, sp));
        if (!p) return out;
        pid = *p;
        rest.remove_prefix(sp + 1);
    }
    if (!rest.starts_with("Thread ")) return out;
    rest.remove_prefix(7);
    const size_t sp = rest.find(' ');
    if (sp == std::string_view::npos) return out;
    auto tid = parseInteger(rest.substr(0, sp));
    const std::string_view quoted = rest.substr(sp + 1);
    if (!tid || quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"') return out;
    return {pid, *tid, quoted.substr(1, quoted.size() - 2)};
}

std::optional<double> number(sj::simdjson_result<dom::element> e)
{
    double v = 0;
    if (e.get_double().get(v) || !std::isfinite(v)) return std::nullopt;
    return v;
}

class Reader
{
public:
    Reader(ImportContext& ctx, std::optional<int64_t> optionStart, size_t depthLimit)
        : m_ctx(ctx), m_optionStart(optionStart), m_depthLimit(depthLimit)
    {
    }
    Status run(dom::element root);

private:
    void report(const store::DiagnosticKind& kind, const std::string& message)
    {
        m_ctx.diagnostics.report(kind, {m_ctx.lines.input().displayName()}, message);
    }
    Expected<int64_t> frameId(size_t index);
    Expected<int64_t> callsite(int64_t parent, size_t frameIndex);
    Status emit(const std::vector<size_t>& stack, std::optional<int64_t> ts, double weight);
    Status sampled(dom::object profile);
    Status evented(dom::object profile);
    // Unit and start of the profile being read.
    void begin(dom::object profile);
    // The time of a sample `offset` units after the profile's start; none when the profile is untimed, or when the
    // time is beyond what a nanosecond timestamp holds (counted, reported once).
    std::optional<int64_t> tsAt(double offset)
    {
        if (!m_start) return std::nullopt;
        if (m_unit.nsPerUnit <= 0) return m_start;
        const auto delta = store::roundToInt64(offset * m_unit.nsPerUnit);
        const auto ts = delta ? store::checkedAdd(*m_start, *delta) : std::nullopt;
        if (!ts) ++m_outOfRange;
        return ts;
    }
    double weightOf(double w) const { return m_unit.nsPerUnit > 0 ? w * m_unit.nsPerUnit / 1e9 : w; }

    ImportContext& m_ctx;
    std::optional<int64_t> m_optionStart;
    size_t m_depthLimit;
    std::vector<dom::object> m_frames;
    std::vector<int64_t> m_frameIds; // 0 = not written yet
    std::map<std::pair<int64_t, size_t>, int64_t> m_callsites;
    TextMap<int64_t> m_stackSites; // frame indices -> leaf
    int64_t m_thread = 0;
    Unit m_unit{"none", 0};
    std::optional<int64_t> m_start;
    std::string m_profileName;
    int64_t m_samples = 0, m_untimedProfiles = 0, m_outOfRange = 0;
    std::vector<std::string> m_units;
};

Expected<int64_t> Reader::frameId(size_t index)
{
    if (m_frameIds[index] != 0) return m_frameIds[index];
    const dom::object f = m_frames[index];
    std::string_view name, file;
    int64_t line = 0;
    if (f["name"].get_string().get(name)) name = "<unnamed>";
    if (f["file"].get_string().get(file)) file = {};
    if (f["line"].get_int64().get(line)) line = 0;
    FrameParts parts{name, file, line};
    if (file.empty()) parts = splitFrameName(name);
    auto id = m_ctx.writer.frame(parts.name, parts.file, parts.line, {});
    if (id) m_frameIds[index] = *id;
    return id;
}

Expected<int64_t> Reader::callsite(int64_t parent, size_t frameIndex)
{
    if (auto it = m_callsites.find({parent, frameIndex}); it != m_callsites.end()) return it->second;
    RUNLENS_ASSIGN_OR_RETURN(auto frame, frameId(frameIndex));
    auto id = m_ctx.writer.callsite(parent, frame);
    if (id) m_callsites.emplace(std::make_pair(parent, frameIndex), *id);
    return id;
}

Status Reader::emit(const std::vector<size_t>& stack, std::optional<int64_t> ts, double weight)
{
    // Samples repeat a few distinct stacks: look the whole stack up once, frame by frame only when it is new. A stack
    // too deep keeps its innermost frames under the cut frame (whose callsite is cached under the key of no frames).
    const size_t keep = keptFrames(stack.size(), m_depthLimit);
    const std::span<const size_t> frames = keep > 0 ? std::span<const size_t>(stack).last(keep) : stack;
    const std::string_view key(reinterpret_cast<const char*>(stack.data()), stack.size() * sizeof(size_t));
    int64_t site = 0;
    if (auto known = m_stackSites.find(key); known != m_stackSites.end()) {
        site = known->second;
    } else {
        if (keep > 0) {
            reportCutStack(m_ctx, stack.size(), m_depthLimit, SourceLocation{m_ctx.lines.input().displayName()});
            RUNLENS_ASSIGN_OR_RETURN(auto root, cutRootCallsite(m_ctx.writer));
            site = root;
        }
        for (const size_t f : frames) {
            RUNLENS_ASSIGN_OR_RETURN(auto next, callsite(site, f));
            site = next;
        }
        m_stackSites.emplace(std::string(key), site);
    }
    if (++m_samples % kCheckpointEvery == 0)
        if (Status s = m_ctx.checkpoint(); !s) return s;
    return m_ctx.writer.stackSample(m_thread, site, ts, 1, weightOf(weight));
}

void Reader::begin(dom::object profile)
{
    std::string_view unit = "none";
    if (profile["unit"].get_string().get(unit)) unit = "none";
    m_unit = {"none", 0};
    const auto* u = std::find_if(std::begin(kUnits), std::end(kUnits), [&](const Unit& k) { return k.name == unit; });
    if (u != std::end(kUnits))
        m_unit = *u;
    else
        report(diag::kUnknownUnit, fmt::format("profile \"{}\": unit \"{}\" read as none", m_profileName, unit));
    if (std::find(m_units.begin(), m_units.end(), m_unit.name) == m_units.end()) m_units.emplace_back(m_unit.name);
    m_start = m_optionStart;
    int64_t startNs = 0;
    dom::element start;
    if (profile["startUnixNs"].get(start)) {
        // absent: untimed unless start= was given
    } else if (!start.get_int64().get(startNs)) {
        m_start = startNs;
    } else if (auto d = number(dom::element(start)); d && *d >= 0 && *d < 9e18) {
        m_start = std::llround(*d);
    } else {
        // Past int64 nanoseconds (the year 2262), negative as a fraction, or not a number: not a time to trust.
        report(diag::kBadTimestamp, fmt::format("profile \"{}\": startUnixNs {} is not a time in nanoseconds since "
                                                "1970 (out of range or not a number); samples untimed",
                                                m_profileName, clip(sj::minify(start))));
    }
    if (!m_start) ++m_untimedProfiles;
}

Status Reader::sampled(dom::object profile)
{
    dom::array samples, weights;
    if (profile["samples"].get_array().get(samples)) {
        report(diag::kInvalidLine, fmt::format("profile \"{}\": no samples array, skipped", m_profileName));
        return okStatus();
    }
    const bool hasWeights = !profile["weights"].get_array().get(weights);
    size_t n = samples.size();
    if (!hasWeights)
        report(diag::kInvalidLine, fmt::format("profile \"{}\": no weights, each sample weighs 1", m_profileName));
    else if (weights.size() != n) {
        report(diag::kInvalidLine, fmt::format("profile \"{}\": {} samples but {} weights, the shorter kept",
                                               m_profileName, n, weights.size()));
        n = std::min(n, weights.size());
    }
    auto weightIt = hasWeights ? weights.begin() : dom::array::iterator{};
    double offset = 0;
    std::vector<size_t> stack;
    size_t i = 0;
    for (dom::element sample : samples) {
        if (i++ == n) break;
        double w = 1;
        if (hasWeights) {
            auto v = number(*weightIt);
            ++weightIt;
            if (!v || *v < 0) {
                ++m_ctx.rowsRead;
                report(diag::kBadNumber,
                       fmt::format("profile \"{}\": sample {}: bad weight, skipped", m_profileName, i));
                continue;
            }
            w = *v;
        }
        ++m_ctx.rowsRead;
        const double at = offset;
        offset += w;
        stack.clear();
        dom::array frames;
        bool ok = !sample.get_array().get(frames);
        for (dom::element f : ok ? frames : dom::array{}) {
            uint64_t index = 0;
            if (f.get_uint64().get(index) || index >= m_frames.size()) {
                ok = false;
                break;
            }
            stack.push_back(static_cast<size_t>(index));
        }
        if (!ok) {
            report(diag::kInvalidLine,
                   fmt::format("profile \"{}\": sample {}: bad frame index, skipped", m_profileName, i));
            continue;
        }
        RUNLENS_TRY(emit(stack, tsAt(at), w));
    }
    return okStatus();
}

Status Reader::evented(dom::object profile)
{
    dom::array events;
    if (profile["events"].get_array().get(events)) {
        report(diag::kInvalidLine, fmt::format("profile \"{}\": no events array, skipped", m_profileName));
        return okStatus();
    }
    std::vector<size_t> stack;
    std::optional<double> first, last;
    size_t i = 0;
    for (dom::element e : events) {
        ++i;
        std::string_view type;
        uint64_t frame = 0;
        std::optional<double> at;
        if (!e.get_object().error()) at = number(e["at"]);
        if (!at || e["type"].get_string().get(type) || (type != "O" && type != "C") ||
            e["frame"].get_uint64().get(frame) || frame >= m_frames.size()) {
            report(diag::kInvalidLine, fmt::format("profile \"{}\": event {}: not a valid O/C event with a frame "
                                                   "index, skipped",
                                                   m_profileName, i));
            continue;
        }
        if (last && *at < *last) {
            report(diag::kInvalidLine, fmt::format("profile \"{}\": event {}: at {} is before the previous {}, skipped",
                                                   m_profileName, i, *at, *last));
            continue;
        }
        if (type == "C" && (stack.empty() || stack.back() != frame)) {
            report(diag::kInvalidLine,
                   fmt::format("profile \"{}\": event {}: closes frame {} which is not the innermost open frame, "
                               "skipped",
                               m_profileName, i, frame));
            continue;
        }
        if (!first) first = at;
        if (last && *at > *last && !stack.empty()) {
            ++m_ctx.rowsRead;
            RUNLENS_TRY(emit(stack, tsAt(*last - *first), *at - *last));
        }
        last = at;
        if (type == "O")
            stack.push_back(frame);
        else
            stack.pop_back();
    }
    if (!stack.empty())
        report(diag::kInvalidLine, fmt::format("profile \"{}\": {} frame{} never closed", m_profileName, stack.size(),
                                               stack.size() == 1 ? "" : "s"));
    return okStatus();
}

Status Reader::run(dom::element root)
{
    dom::object top;
    dom::array frames, profiles;
    if (root.get_object().get(top) || top["profiles"].get_array().get(profiles))
        return makeError(ErrorCode::Format, "not a speedscope file: no \"profiles\" array",
                         {m_ctx.lines.input().displayName()});
    if (!top["shared"]["frames"].get_array().get(frames))
        for (dom::element f : frames) {
            dom::object o;
            if (f.get_object().get(o)) o = {};
            m_frames.push_back(o);
        }
    m_frameIds.assign(m_frames.size(), 0);
    for (dom::element p : profiles) {
        dom::object profile;
        std::string_view type, name;
        if (p.get_object().get(profile)) {
            report(diag::kInvalidLine, "a profile that is not an object, skipped");
            continue;
        }
        if (profile["name"].get_string().get(name)) name = {};
        m_profileName = std::string(name);
        if (profile["type"].get_string().get(type) || (type != "sampled" && type != "evented")) {
            report(diag::kInvalidLine, fmt::format("profile \"{}\": unknown type \"{}\", skipped", name, type));
            continue;
        }
        const ThreadName t = parseThreadName(name);
        RUNLENS_ASSIGN_OR_RETURN(auto thread, m_ctx.writer.thread(m_ctx.nodeId, {}, t.pid, t.name, t.tid));
        m_thread = thread;
        begin(profile);
        RUNLENS_TRY(type == "sampled" ? sampled(profile) : evented(profile));
    }
    m_ctx.notes.push_back(fmt::format("{} samples from {} profiles; unit {} (time weights stored in seconds)",
                                      m_samples, profiles.size(), fmt::join(m_units, ", ")));
    if (m_untimedProfiles > 0)
        m_ctx.notes.push_back(
            fmt::format("{} profile(s) without startUnixNs and no start= option: samples untimed", m_untimedProfiles));
    if (m_outOfRange > 0)
        report(diag::kBadTimestamp,
               fmt::format("{} sample(s) at offsets beyond the years a timestamp holds: stored untimed", m_outOfRange));
    return okStatus();
}

} // namespace

int SpeedscopeImporter::sniff(const SniffInput& input) const
{
    const std::string_view h = input.head;
    const auto has = [&](std::string_view s) { return h.find(s) != std::string_view::npos; };
    if ((has("\"$schema\"") && has("speedscope")) || (has("\"shared\"") && has("\"profiles\""))) return 95;
    return 0;
}

Status SpeedscopeImporter::run(ImportContext& ctx) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(ctx.options.timeZone));
    RUNLENS_ASSIGN_OR_RETURN(auto placement, untimed::readPlacement(ctx.options, tz, 1'000'000'000, 0));

    RUNLENS_ASSIGN_OR_RETURN(auto maxBytes, maxDocumentBytes(ctx.options, kMaxJsonBytes));
    RUNLENS_ASSIGN_OR_RETURN(auto depthLimit, maxStackDepth(ctx.options));

    InputStream& in = ctx.lines.input();
    std::string buf;
    RUNLENS_TRY(appendWholeInput(in, maxBytes, buf));
    const sj::padded_string json(buf);
    buf = std::string();
    dom::parser parser;
    dom::element root;
    if (sj::error_code e = parser.parse(json).get(root)) return jsonDocumentError(json, e, in.displayName());
    Reader reader(ctx, placement.startNs, depthLimit);
    return reader.run(root);
}

} // namespace runlens::importers
