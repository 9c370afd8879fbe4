#include "importers/sysstat/sadf_importer.h"

#include "analysis/store/ascii.h"
#include "importers/common/metric_map.h"
#include "importers/common/text_fields.h"
#include "importers/common/time_parse.h"
#include "importers/diagnostic_kinds.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>

namespace runlens::importers {
namespace {

constexpr int kCheckpointRows = 8192;
constexpr size_t kMaxName = 256; // longer host, interface or disk names are not names (a cut or garbled line)

bool isCpuKey(std::string_view v)
{
    if (v == "-1" || v == "all") return true;
    auto n = parseInteger(v);
    return n && *n >= 0 && v.find_first_not_of("0123456789") == std::string_view::npos;
}

// "# hostname;interval;timestamp;CPU;...": the header of a sadf -d section (or of every -dh line).
bool isHeaderLine(std::string_view line)
{
    if (line.empty() || line[0] != '#') return false;
    line = trim(line.substr(1));
    return line.rfind("hostname;interval;timestamp", 0) == 0;
}

struct Group
{
    int section = 0;
    size_t width = 0;
    bool repeating = false; // marked [...]: one run of `width` fields per item
    bool variable = false;  // CPU*: the width itself varies
    bool cpuKeyed = false;
};

class SadfParser
{
public:
    SadfParser(ImportContext& ctx, TimeZoneResolver tz) : m_ctx(ctx), m_tz(std::move(tz)), m_router(ctx) {}
    Status run();

private:
    void header(std::string_view line);
    Status row(std::string_view line);
    Status horizontal(int64_t nodeId, int64_t ts);
    std::optional<int64_t> timestamp(std::string_view v, int64_t nodeId, int section);
    void record(std::string_view text, std::string_view ts); // interval -1: LINUX-RESTART or COM

    ImportContext& m_ctx;
    TimeZoneResolver m_tz;
    SysstatRouter m_router;
    std::vector<Group> m_groups;
    size_t m_headerFields = 0;
    std::vector<std::string_view> m_fields;
    std::string m_lastHost;
    int64_t m_lastNodeId = -1;
    enum class TimeForm
    {
        Unknown,
        Utc,
        Local,
        Epoch
    } m_timeForm = TimeForm::Unknown;
    std::set<std::string, std::less<>> m_abbreviations;
    std::set<int64_t> m_zoneNodes; // nodes whose time zone was recorded
    int64_t m_restarts = 0;
    std::string m_firstRestart;
    std::optional<Error> m_fatal; // a database error met where a Status cannot be returned
};

void SadfParser::header(std::string_view line)
{
    std::vector<std::string_view> cols;
    splitFields(trim(trim(line).substr(1)), ';', cols);
    cols.erase(cols.begin(), cols.begin() + 3);
    m_groups.clear();
    m_headerFields = cols.size() + 3;
    // Split -dh headers into activity groups: a keyed group (CPU, IFACE, DEV...) runs to its "[...]" marker,
    // any other group to the next column that starts a section.
    std::vector<std::string> names;
    size_t start = 0;
    bool keyed = false;
    auto close = [&](size_t end, bool repeating) {
        if (end <= start) return;
        std::vector<std::string_view> views(names.begin() + static_cast<std::ptrdiff_t>(start),
                                            names.begin() + static_cast<std::ptrdiff_t>(end));
        Group g;
        g.section = m_router.section(views, static_cast<int64_t>(start + 4));
        g.width = end - start;
        g.repeating = repeating;
        g.variable = m_router.variableWidth(g.section);
        g.cpuKeyed = m_router.keyName(g.section) == "CPU";
        m_groups.push_back(g);
        start = end;
    };
    for (size_t i = 0; i < cols.size(); ++i) {
        std::string_view c = trim(cols[i]);
        const bool marker = c.size() > 5 && c.substr(c.size() - 5) == "[...]";
        if (marker) c.remove_suffix(5);
        if (i > start && !keyed && SysstatRouter::startsSection(c)) close(i, false);
        if (i == start)
            keyed = c == "CPU" || c == "IFACE" || c == "DEV" || c == "INTR" || c == "TTY" || c == "FCHOST" ||
                    c == "BAT" || c == "FILESYSTEM" || c == "MOUNTPOINT";
        names.emplace_back(c);
        if (marker) {
            close(i + 1, true);
            keyed = false;
        }
    }
    close(names.size(), false);
}

std::optional<int64_t> SadfParser::timestamp(std::string_view v, int64_t nodeId, int section)
{
    v = trim(v);
    if (v.size() >= 19) {
        if (auto t = parseLocalDateTime(v.substr(0, 19))) {
            const std::string_view zone = trim(v.substr(19));
            if (zone == "UTC" || zone == "GMT") {
                if (m_timeForm == TimeForm::Unknown) m_ctx.notes.emplace_back("timestamps in UTC");
                m_timeForm = TimeForm::Utc;
                return t->localNs;
            }
            if (m_timeForm == TimeForm::Unknown)
                m_ctx.notes.push_back(
                    fmt::format("local timestamps (sadf -T/-t) read in time zone {}", m_tz.description()));
            m_timeForm = TimeForm::Local;
            if (!zone.empty() && m_abbreviations.insert(std::string(zone)).second)
                m_ctx.notes.push_back(fmt::format("zone abbreviation \"{}\" seen in the timestamps; they were read in "
                                                  "{} (set --tz if that is not the zone of the capture)",
                                                  clip(zone), m_tz.id()));
            if (m_zoneNodes.insert(nodeId).second) {
                if (Status s = m_ctx.writer.setNodeTimeZone(nodeId, m_tz.id()); !s) m_fatal = s.error();
            }
            return m_tz.toUtcNs(*t, m_router.lastTs(section));
        }
    }
    if (auto n = parseInteger(v); n && *n >= 0 && *n < 100'000'000'000) {
        if (m_timeForm == TimeForm::Unknown) m_ctx.notes.emplace_back("timestamps are Unix epoch seconds (sadf -U)");
        m_timeForm = TimeForm::Epoch;
        return *n * 1'000'000'000;
    }
    m_ctx.report(diag::kBadTimestamp, 3, fmt::format("cannot read timestamp \"{}\"; row dropped", clip(v)));
    return std::nullopt;
}

void SadfParser::record(std::string_view text, std::string_view ts)
{
    if (text.rfind("LINUX-RESTART", 0) == 0) {
        std::string what(trim(text.substr(13)));
        m_ctx.report(diag::kRestartRecord, 4,
                     fmt::format("restart record at {}: the host rebooted {}", clip(trim(ts)), clip(what)));
        if (m_restarts++ == 0) m_firstRestart = std::string(trim(ts));
    } else if (text.rfind("COM", 0) == 0) {
        m_ctx.report(diag::kCommentLine, 4,
                     fmt::format("comment record at {}: \"{}\"", clip(trim(ts)), clip(trim(text.substr(3)))));
    } else {
        m_ctx.report(
            diag::kInvalidLine, 4,
            fmt::format("record with interval -1 that is neither LINUX-RESTART nor COM: \"{}\"; dropped", clip(text)));
    }
}

Status SadfParser::horizontal(int64_t nodeId, int64_t ts)
{
    const size_t n = m_fields.size();
    size_t pos = 3;
    auto wrongCount = [&] {
        m_ctx.report(diag::kWrongFieldCount, 0,
                     fmt::format("{} fields do not fit the groups of the header ({} fields); rest of the row dropped",
                                 n, m_headerFields));
        return okStatus();
    };
    for (size_t gi = 0; gi < m_groups.size(); ++gi) {
        const Group& g = m_groups[gi];
        size_t laterMin = 0;
        bool laterRepeats = false;
        for (size_t k = gi + 1; k < m_groups.size(); ++k) {
            laterMin += m_groups[k].width;
            laterRepeats = laterRepeats || m_groups[k].repeating || m_groups[k].variable;
        }
        if (g.variable) {
            m_ctx.report(diag::kSkippedColumns, static_cast<int64_t>(pos + 1),
                         fmt::format("fields {} to {} not read: the number of per-CPU values of group {} is not "
                                     "known in sadf -dh; use sadf -d",
                                     pos + 1, n, m_router.keyName(g.section)));
            return okStatus();
        }
        size_t items = 1;
        if (g.repeating) {
            if (!laterRepeats) {
                const size_t rest = n >= pos + laterMin ? n - pos - laterMin : 0;
                if (rest < g.width || rest % g.width != 0) return wrongCount();
                items = rest / g.width;
            } else if (g.cpuKeyed) {
                items = 0;
                while (pos + (items + 1) * g.width + laterMin <= n && isCpuKey(trim(m_fields[pos + items * g.width])))
                    ++items;
            } else {
                m_ctx.report(diag::kSkippedColumns, static_cast<int64_t>(pos + 1),
                             fmt::format("fields {} to {} not read: the items of group {} cannot be told apart from "
                                         "the groups after it in sadf -dh; use sadf -d",
                                         pos + 1, n, m_router.keyName(g.section)));
                return okStatus();
            }
        }
        if (items == 0 || pos + items * g.width > n) return wrongCount();
        for (size_t k = 0; k < items; ++k, pos += g.width) {
            std::span<const std::string_view> values(m_fields.data() + pos, g.width);
            RUNLENS_TRY(m_router.row(g.section, nodeId, ts, values, static_cast<int64_t>(pos + 1)));
        }
    }
    if (pos != n) return wrongCount();
    return okStatus();
}

Status SadfParser::row(std::string_view line)
{
    splitFields(line, ';', m_fields);
    if (m_fields.size() < 4) {
        m_ctx.report(diag::kInvalidLine, 0,
                     fmt::format("not a sadf -d row (host;interval;timestamp;values): \"{}\"; dropped", clip(line)));
        return okStatus();
    }
    const std::string_view host = trim(m_fields[0]);
    if (host.size() > kMaxName) {
        m_ctx.report(diag::kInvalidLine, 1,
                     fmt::format("host name of {} bytes (\"{}\"); row dropped", host.size(), clip(host)));
        return okStatus();
    }
    if (m_lastNodeId < 0 || host != m_lastHost) {
        RUNLENS_ASSIGN_OR_RETURN(auto node, m_ctx.nodeFor(host));
        m_lastNodeId = node;
        m_lastHost = std::string(host);
    }
    if (trim(m_fields[1]) == "-1") {
        record(trim(line.substr(m_fields[3].data() - line.data())), m_fields[2]);
        return okStatus();
    }
    if (m_groups.empty()) {
        m_ctx.report(diag::kInvalidLine, 0,
                     "data row before any \"# hostname;interval;timestamp;...\" header; dropped");
        return okStatus();
    }
    ++m_ctx.rowsRead;
    auto ts = timestamp(m_fields[2], m_lastNodeId, m_groups.front().section);
    if (m_fatal) return *m_fatal;
    if (!ts) return okStatus();
    if (m_groups.size() == 1 && !m_groups.front().repeating) {
        std::span<const std::string_view> values(m_fields.data() + 3, m_fields.size() - 3);
        return m_router.row(m_groups.front().section, m_lastNodeId, *ts, values, 4);
    }
    return horizontal(m_lastNodeId, *ts);
}

Status SadfParser::run()
{
    Line line;
    bool any = false, headerSeen = false;
    int64_t sinceCheckpoint = 0;
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(const bool more, m_ctx.nextLine(line));
        if (!more) break;
        const std::string_view text = trim(line.text);
        if (text.empty()) continue;
        any = true;
        if (isHeaderLine(text)) {
            header(text);
            headerSeen = true;
        } else if (text[0] == '#') {
            m_ctx.report(diag::kCommentLine, 0, fmt::format("comment \"{}\" skipped", clip(text)));
        } else if (Status s = row(text); !s) {
            return s;
        }
        RUNLENS_TRY(m_ctx.checkpointEvery(sinceCheckpoint, kCheckpointRows));
    }
    if (!any) return makeError(ErrorCode::Format, "empty file: no sadf -d header", m_ctx.lines.location());
    if (!headerSeen)
        return makeError(ErrorCode::Format,
                         "not sadf -d output: no \"# hostname;interval;timestamp;...\" header line (run sadf -d)",
                         m_ctx.lines.location());
    if (m_restarts > 0)
        m_ctx.notes.push_back(fmt::format("{} restart record{} (LINUX-RESTART), the first at {}: the host rebooted "
                                          "during the capture",
                                          m_restarts, m_restarts == 1 ? "" : "s", m_firstRestart));
    m_router.finish();
    return okStatus();
}

} // namespace

// --- SysstatRouter ---------------------------------------------------------------------------------------------

namespace {

struct SectionName
{
    std::string_view first, second, name;
};
// Activity names as sysstat calls them (sadf -H), by the first columns of their header; the first match wins.
// clang-format off
constexpr SectionName kSectionNames[] = {
    {"CPU", "total/s", "softnet"}, {"CPU", "MHz", "pwr-cpu"}, {"CPU", "wghMHz", "pwr-wghfreq"}, {"CPU", "", "cpu"},
    {"proc/s", "", "pcsw"}, {"INTR", "", "irq"},
    {"pswpin/s", "", "swap"}, {"pgpgin/s", "", "paging"}, {"tps", "", "io"},
    {"kbmemfree", "", "memory"}, {"kbswpfree", "", "swap-space"}, {"kbhugfree", "", "huge"},
    {"dentunusd", "", "ktables"}, {"runq-sz", "", "queue"}, {"TTY", "", "serial"},
    {"DEV", "", "disk"}, {"IFACE", "rxerr/s", "net-edev"}, {"IFACE", "", "net-dev"},
    {"call/s", "", "net-nfs"}, {"scall/s", "", "net-nfsd"}, {"totsck", "", "net-sock"},
    {"irec/s", "", "net-ip"}, {"ihdrerr/s", "", "net-eip"}, {"imsg/s", "", "net-icmp"},
    {"ierr/s", "", "net-eicmp"}, {"active/s", "", "net-tcp"}, {"atmptf/s", "", "net-etcp"},
    {"idgm/s", "", "net-udp"}, {"tcp6sck", "", "net-sock6"}, {"irec6/s", "", "net-ip6"},
    {"ihdrer6/s", "", "net-eip6"}, {"imsg6/s", "", "net-icmp6"}, {"ierr6/s", "", "net-eicmp6"},
    {"idgm6/s", "", "net-udp6"}, {"FCHOST", "", "fchost"}, {"BAT", "", "pwr-bat"},
    {"FILESYSTEM", "", "filesystem"}, {"MOUNTPOINT", "", "filesystem"}, {"FAN", "", "pwr-fan"},
    {"TEMP", "", "pwr-temp"}, {"IN", "", "pwr-in"}, {"manufact", "", "pwr-usb"}, {"BUS", "", "pwr-usb"},
    {"%scpu-10", "", "psi-cpu"}, {"%sio-10", "", "psi-io"},
    {"%smem-10", "", "psi-mem"},
};
// clang-format on

bool isKeyColumn(std::string_view c)
{
    for (std::string_view k : {"CPU", "IFACE", "DEV", "INTR", "TTY", "FCHOST", "BAT", "FILESYSTEM", "MOUNTPOINT", "FAN",
                               "TEMP", "IN", "DEVICE"})
        if (c == k) return true;
    return false;
}

// The unit of a column kept as it is, from its name.
std::string_view rawUnit(std::string_view c)
{
    if (!c.empty() && c[0] == '%') return "%";
    if (c.size() >= 4 && c.substr(c.size() - 4) == "kB/s") return "KiB/s";
    if (c.rfind("kb", 0) == 0) return "KiB";
    if (c.rfind("MB", 0) == 0) return "MiB";
    if (c == "MHz") return "MHz";
    if (c == "degC") return "C";
    return "";
}

// 100 - v rounded to the decimals v was printed with: 100 - 82.88 gives 17.12, not 17.120000000000005.
double complement(double v, std::string_view text)
{
    const size_t sep = text.find_first_of(".,");
    const size_t decimals = sep == std::string_view::npos ? 0 : std::min<size_t>(text.size() - sep - 1, 9);
    double scale = 1;
    for (size_t i = 0; i < decimals; ++i)
        scale *= 10;
    return std::round((100.0 - v) * scale) / scale;
}

enum class Role
{
    Key,
    Value,
    CpuIdle, // cpu.util = 100 - %idle
};

struct Column
{
    std::string name, metric, unit;
    Role role = Role::Value;
    double factor = 1.0;
    bool canonical = false;
    bool numeric = false; // a number was seen
    bool text = false;    // its first value was text: not imported
};

struct Section
{
    std::string name, keyName;
    std::vector<Column> columns;
    size_t keys = 0;
    bool cpuStar = false; // INTR;CPU*: one value for all CPUs, then one per CPU
    bool keyLast = false; // the key is the last column of the line (sar text FILESYSTEM, FCHOST)
    bool skipped = false;
    int64_t skippedRows = 0;
    std::optional<int64_t> lastTs;
};

struct Item
{
    int64_t deviceId = 0;
    std::string labels;
    std::vector<store::SeriesSink*> sinks;
    int64_t lastTs = std::numeric_limits<int64_t>::min();
};

} // namespace

struct SysstatRouter::Impl
{
    explicit Impl(ImportContext& context) : ctx(context) {}

    ImportContext& ctx;
    std::vector<Section> sections;
    std::map<std::string, int, std::less<>> byHeader;
    std::map<std::string, Item, std::less<>> items;
    std::map<std::tuple<int64_t, std::string, std::string>, int64_t> devices;
    enum class Decimal
    {
        Unknown,
        Point,
        Comma
    } decimal = Decimal::Unknown;
    std::string buffer;
    std::string key;
    std::vector<std::string_view> rotated;
    bool memFreeAsAvailable = false;

    Expected<int64_t> device(int64_t nodeId, std::string_view kind, std::string_view name);
    std::optional<double> number(std::string_view v);
    Status value(Section& s, Item& item, size_t col, int64_t nodeId, int64_t ts, std::string_view v, int64_t column);
};

Expected<int64_t> SysstatRouter::Impl::device(int64_t nodeId, std::string_view kind, std::string_view name)
{
    auto k = std::make_tuple(nodeId, std::string(kind), std::string(name));
    if (auto it = devices.find(k); it != devices.end()) return it->second;
    auto id = flaggedDevice(ctx.writer, nodeId, kind, name);
    if (!id) return id;
    devices.emplace(std::move(k), *id);
    return id;
}

// One file uses one convention: decimal points (C locale) or decimal commas (de_DE and the like).
std::optional<double> SysstatRouter::Impl::number(std::string_view v)
{
    if (v.find(',') != std::string_view::npos) {
        if (decimal == Decimal::Point || v.find('.') != std::string_view::npos) return std::nullopt;
        buffer.assign(v);
        for (char& c : buffer)
            if (c == ',') c = '.';
        auto n = parseNumber(buffer);
        if (n && decimal == Decimal::Unknown) {
            decimal = Decimal::Comma;
            ctx.notes.push_back(fmt::format("numbers with decimal commas (sadf/sar run in a locale such as de_DE), "
                                            "first at line {}",
                                            ctx.lines.location().line));
        }
        return n;
    }
    if (decimal == Decimal::Comma && v.find('.') != std::string_view::npos) return std::nullopt;
    auto n = parseNumber(v);
    if (n && decimal == Decimal::Unknown && v.find('.') != std::string_view::npos) decimal = Decimal::Point;
    return n;
}

SysstatRouter::SysstatRouter(ImportContext& context) : m(std::make_unique<Impl>(context)) {}
SysstatRouter::~SysstatRouter() = default;

bool SysstatRouter::startsSection(std::string_view column)
{
    if (column == "DEVICE" || column == "BUS") return false; // not first in sadf -d headers
    for (const SectionName& n : kSectionNames)
        if (n.first == column) return true;
    return false;
}

int SysstatRouter::section(std::span<const std::string_view> columns, int64_t firstColumn)
{
    std::string joined;
    for (std::string_view c : columns)
        joined.append(trim(c)).push_back(';');
    if (auto it = m->byHeader.find(joined); it != m->byHeader.end()) return it->second;

    Section s;
    for (std::string_view c : columns)
        s.columns.push_back(Column{std::string(trim(c)), {}, {}, Role::Value, 1.0, false, false, false});
    // sar text prints some keys last ("MBfsfree ... %Iused FILESYSTEM"): read them as if they came first.
    s.keyLast = s.columns.size() > 1 && isKeyColumn(s.columns.back().name) && !isKeyColumn(s.columns[0].name);
    if (s.keyLast) std::rotate(s.columns.begin(), s.columns.end() - 1, s.columns.end());
    auto lineColumn = [&](size_t i) {
        return firstColumn + static_cast<int64_t>(s.keyLast ? (i + s.columns.size() - 1) % s.columns.size() : i);
    };
    const std::string_view first = s.columns.empty() ? std::string_view() : std::string_view(s.columns[0].name);
    const std::string_view second = s.columns.size() > 1 ? std::string_view(s.columns[1].name) : std::string_view();
    for (const SectionName& n : kSectionNames)
        if (n.first == first && (n.second.empty() || n.second == second)) {
            s.name = std::string(n.name);
            break;
        }
    if (s.name.empty()) {
        for (char c : first)
            if (c != '%' && c != '/') s.name.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    }
    while (s.keys < s.columns.size() && s.keys < 2 && isKeyColumn(s.columns[s.keys].name)) {
        s.columns[s.keys].role = Role::Key;
        ++s.keys;
    }
    if (s.keys > 0) s.keyName = s.columns[0].name;
    s.skipped = s.name == "pwr-usb";
    s.cpuStar = s.name == "irq" && s.columns.size() == 2 && s.columns[1].name == "CPU*";
    bool hasAvail = false;
    for (const Column& c : s.columns)
        hasAvail = hasAvail || c.name == "kbavail";
    for (size_t i = s.keys; i < s.columns.size() && !s.skipped; ++i) {
        Column& c = s.columns[i];
        if (s.name == "cpu" && c.name == "%idle") {
            c = Column{c.name, "cpu.util", "%", Role::CpuIdle, 1.0, true, false, false};
            continue;
        }
        if (auto k = sysstatMetric(s.name, c.name)) { // the one mapping table (importers/common/metric_map)
            c.metric = std::string(k->metric);
            c.unit = std::string(k->unit);
            c.factor = unitFactor(k->sourceUnit, k->unit).value_or(1.0);
            c.canonical = true;
        }
        if (c.name == "kbmemfree" && !hasAvail) {
            c.metric = "host.mem_available"; // sysstat before 11.1 has no kbavail
            m->memFreeAsAvailable = true;
        }
        if (c.canonical) continue;
        c.metric = s.name == "irq" ? "sar.irq.intr/s" : fmt::format("sar.{}.{}", s.name, c.name);
        c.unit = std::string(rawUnit(c.name));
        if (s.name != "irq" || i == s.keys)
            m->ctx.report(diag::kUnmappedMetric, lineColumn(i),
                          fmt::format("column \"{}\" of section {} has no canonical metric; kept as {}", clip(c.name),
                                      s.name, clip(c.metric)));
    }
    m->sections.push_back(std::move(s));
    const int id = static_cast<int>(m->sections.size() - 1);
    m->byHeader.emplace(std::move(joined), id);
    return id;
}

bool SysstatRouter::variableWidth(int section) const
{
    return m->sections[static_cast<size_t>(section)].cpuStar;
}
std::string_view SysstatRouter::keyName(int section) const
{
    const Section& s = m->sections[static_cast<size_t>(section)];
    return s.keyName.empty() ? std::string_view(s.name) : std::string_view(s.keyName);
}
std::optional<int64_t> SysstatRouter::lastTs(int section) const
{
    return m->sections[static_cast<size_t>(section)].lastTs;
}

Status SysstatRouter::Impl::value(Section& s, Item& item, size_t col, int64_t nodeId, int64_t ts, std::string_view v,
                                  int64_t column)
{
    Column& c = s.columns[col];
    if (c.text) return okStatus();
    auto n = number(v);
    if (!n && !c.numeric && !c.canonical && !isMissingToken(v)) {
        c.text = true; // battery status and the like
        ctx.notes.push_back(
            fmt::format("column {} of section {} holds text (\"{}\"); not imported", clip(c.name), s.name, clip(v)));
        return okStatus();
    }
    store::SeriesSink*& sink = item.sinks[col];
    if (!sink) {
        int64_t deviceId = item.deviceId;
        if (s.name == "irq") { // one value per CPU: all, then CPU 0, 1, ... (sar text: "all", "CPU3")
            std::string cpu = s.cpuStar ? (col == 1 ? std::string() : std::to_string(col - 2)) : c.name;
            if (cpu == "all") cpu.clear();
            if (cpu.rfind("CPU", 0) == 0) cpu.erase(0, 3);
            RUNLENS_ASSIGN_OR_RETURN(auto d, device(nodeId, "cpu", cpu));
            deviceId = d;
        }
        RUNLENS_ASSIGN_OR_RETURN(auto created, ctx.writer.series(deviceId, c.metric, c.unit, c.name, item.labels));
        sink = created;
    }
    if (!n) {
        if (!isMissingToken(v))
            ctx.report(diag::kBadNumber, column,
                       fmt::format("expected a number for {} of section {}, got \"{}\"; stored as missing",
                                   clip(c.name), s.name, clip(v)));
        sink->appendMissing(ts, v);
    } else if (!std::isfinite(*n)) {
        ctx.report(diag::kNanValue, column,
                   fmt::format("\"{}\" for {} of section {} stored as missing", clip(v), clip(c.name), s.name));
        sink->appendMissing(ts, v);
    } else {
        c.numeric = true;
        sink->append(ts, c.role == Role::CpuIdle ? complement(*n, v) : c.factor == 0.01 ? *n / 100.0 : *n * c.factor);
    }
    return ctx.writer.flushIfNeeded(*sink);
}

Status SysstatRouter::row(int section, int64_t nodeId, int64_t tsNs, std::span<const std::string_view> values,
                          int64_t firstColumn)
{
    Section& s = m->sections[static_cast<size_t>(section)];
    if (s.skipped) {
        ++s.skippedRows;
        return okStatus();
    }
    if (s.cpuStar && values.size() >= 2) {
        while (s.columns.size() < values.size())
            s.columns.push_back(Column{"CPU*", "sar.irq.intr/s", "", Role::Value, 1.0, false, false, false});
    }
    if (values.size() != s.columns.size() && !(s.cpuStar && values.size() >= 2)) {
        m->ctx.report(diag::kWrongFieldCount, 0,
                      fmt::format("{} values where the header of section {} has {}; row dropped", values.size(), s.name,
                                  s.columns.size()));
        return okStatus();
    }
    if (s.keyLast) {
        m->rotated.assign(values.begin(), values.end());
        std::rotate(m->rotated.begin(), m->rotated.end() - 1, m->rotated.end());
        values = m->rotated;
    }
    auto lineColumn = [&](size_t i) {
        return firstColumn + static_cast<int64_t>(s.keyLast ? (i + values.size() - 1) % values.size() : i);
    };
    std::string& key = m->key;
    key = fmt::format("{};{};", nodeId, section);
    for (size_t i = 0; i < s.keys; ++i) {
        if (trim(values[i]).size() > kMaxName) {
            m->ctx.report(diag::kInvalidLine, lineColumn(i),
                          fmt::format("{} of {} bytes (\"{}\"); row dropped", s.columns[i].name, trim(values[i]).size(),
                                      clip(trim(values[i]))));
            return okStatus();
        }
        key.append(trim(values[i])).push_back(';');
    }
    auto it = m->items.find(key);
    if (it == m->items.end()) {
        Item item;
        const std::string_view k0 = s.keys > 0 ? trim(values[0]) : std::string_view();
        std::string_view kind = "host", name;
        if (s.keyName == "CPU") {
            kind = "cpu";
            name = k0 == "-1" || k0 == "all" ? std::string_view() : k0;
        } else if (s.keyName == "IFACE") {
            kind = "nic";
            name = k0;
        } else if (s.keyName == "DEV") {
            kind = "disk";
            name = k0;
        } else {
            for (size_t i = 0; i < s.keys; ++i) // TTY, BAT, FILESYSTEM, sensors, interrupts: labels
                item.labels += fmt::format("{}{}={}", i ? "," : "", asciiLower(s.columns[i].name), trim(values[i]));
        }
        RUNLENS_ASSIGN_OR_RETURN(auto d, m->device(nodeId, kind, name));
        item.deviceId = d;
        it = m->items.emplace(key, std::move(item)).first;
    }
    Item& item = it->second;
    if (tsNs <= item.lastTs) {
        const std::string what = s.keys > 0 ? fmt::format("{} {}", s.name, clip(trim(values[0]))) : s.name;
        if (tsNs == item.lastTs)
            m->ctx.report(diag::kDuplicateSample, 0,
                          fmt::format("a second row of {} for the same time; the first is kept", what));
        else
            m->ctx.report(diag::kBackwardsTime, 0,
                          fmt::format("a row of {} earlier than the previous one; row dropped", what));
        return okStatus();
    }
    item.lastTs = tsNs;
    s.lastTs = tsNs;
    item.sinks.resize(s.columns.size(), nullptr);
    for (size_t i = s.keys; i < values.size(); ++i)
        if (Status st = m->value(s, item, i, nodeId, tsNs, trim(values[i]), lineColumn(i)); !st) return st;
    return okStatus();
}

void SysstatRouter::finish()
{
    if (m->memFreeAsAvailable)
        m->ctx.notes.emplace_back("no kbavail column (sysstat before 11.1): host.mem_available is kbmemfree, which "
                                  "leaves out reclaimable cache");
    for (const Section& s : m->sections) {
        if (s.skipped && s.skippedRows > 0)
            m->ctx.notes.push_back(fmt::format("{} rows of section {} (USB device inventory, no metrics) not imported",
                                               s.skippedRows, s.name));
        if (s.cpuStar && s.columns.size() > 2)
            m->ctx.notes.emplace_back("per-CPU interrupt values (INTR;CPU*) are taken as all CPUs, then CPU 0, 1, ... "
                                      "(a sadf -P list of CPUs would shift them)");
    }
}

int SadfImporter::sniff(const SniffInput& input) const
{
    std::string_view head = input.head;
    while (!head.empty()) {
        const size_t nl = head.find('\n');
        const std::string_view line = trim(head.substr(0, nl));
        if (!line.empty()) {
            if (isHeaderLine(line)) return 100;
            std::vector<std::string_view> f;
            splitFields(line, ';', f);
            if (f.size() >= 4 && parseInteger(trim(f[1])) && trim(f[2]).size() >= 19 &&
                parseLocalDateTime(trim(f[2]).substr(0, 19)))
                return 80;
            return 0;
        }
        if (nl == std::string_view::npos) break;
        head.remove_prefix(nl + 1);
    }
    return 0;
}

std::optional<std::string> SadfImporter::hostLabel(const SniffInput& input) const
{
    std::string_view head = input.head;
    while (!head.empty()) {
        const size_t nl = head.find('\n');
        const std::string_view line = trim(head.substr(0, nl));
        if (nl == std::string_view::npos) break; // a line cut by the end of the head may be cut inside the host
        head.remove_prefix(nl + 1);
        if (line.empty() || line[0] == '#') continue;
        const size_t semi = line.find(';');
        if (semi == std::string_view::npos || semi == 0) return std::nullopt;
        return std::string(trim(line.substr(0, semi)));
    }
    return std::nullopt;
}

Status SadfImporter::run(ImportContext& context) const
{
    RUNLENS_ASSIGN_OR_RETURN(auto tz, TimeZoneResolver::fromSpec(context.options.timeZone));
    SadfParser parser(context, std::move(tz));
    return parser.run();
}

} // namespace runlens::importers
