#include "analysis/rules/straggler_support.h"

#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <unordered_map>

namespace runlens::analysis::straggler {

namespace {

// At most this many sample gaps per rank are kept for its sampling interval (their median).
constexpr size_t kMaxGaps = 20000;
// However the budget falls, at least this many times straggler.min_steps windows are read.
constexpr double kMinReadsPerStep = 2;
// Contiguous evaluated windows are read together, this many at most.
constexpr size_t kWindowsPerRead = 64;
// The collective frames are learned from a few ranks and spans (the ranks run the same code): at most this many ranks,
// this many spans each (spread evenly), and a rank needs this many samples during them to speak.
constexpr int kLearnRanks = 8;
constexpr size_t kLearnSpans = 30;
constexpr int64_t kLearnMinSamples = 5;
// A rank's collective spans closer than this many of its sampling intervals are one (a sample may fall between them).
constexpr double kJoinIntervals = 2;
// top_frames compares the late rank with at most this many peers, over at most this many of its windows (spread
// evenly), and lists at most this many frames.
constexpr size_t kTopPeers = 8;
constexpr size_t kTopSpans = 40;
constexpr int kTopFrames = 5;
// The first frame named is the most exclusive (its peers' share the lowest) of the frames within this share of the
// largest excess; peers' shares closer than this tie (then the outermost frame, then the excess, decide).
constexpr double kLeadingExcessShare = 0.8;
constexpr double kPeersShareTie = 0.01;

// The number after a tag ("rank 3", "pid=618") in a thread or process name.
std::optional<int64_t> taggedNumber(const std::string& text, const char* tag)
{
    const QRegularExpression re(QStringLiteral("(?:^|[^A-Za-z])%1[\\s_:=#-]*(\\d+)").arg(QLatin1String(tag)),
                                QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(QString::fromStdString(text));
    if (!m.hasMatch()) return std::nullopt;
    bool ok = false;
    const qint64 v = m.captured(1).toLongLong(&ok);
    return ok ? std::optional<int64_t>(v) : std::nullopt;
}

// What a thread is across processes: its name without rank, pid and numbers ("MainThread", "pt_autograd_").
std::string threadRole(const std::string& name)
{
    QString s = QString::fromStdString(name);
    s.remove(QRegularExpression(QStringLiteral("(?:rank|pid|tid)[\\s_:=#-]*\\d+"),
                                QRegularExpression::CaseInsensitiveOption));
    s.remove(QRegularExpression(QStringLiteral("\\d+")));
    return s.simplified().toStdString();
}

// The timed samples of a unit's thread in [from, to), bucketed by window (windows sorted, disjoint); the gaps between
// consecutive samples go into the unit's gaps.
template <typename F>
Status readWindows(FlameSource& stacks, RankUnit& u, const std::vector<const Window*>& ws, F&& each)
{
    if (ws.empty()) return okStatus();
    RUNLENS_ASSIGN_OR_RETURN(auto samples, stacks.samples(u.threadId, {ws.front()->fromNs, ws.back()->toNs - 1}));
    int64_t prev = std::numeric_limits<int64_t>::min();
    size_t w = 0;
    for (const store::StackSample& s : samples) {
        if (prev != std::numeric_limits<int64_t>::min() && s.tsNs > prev && u.gaps.size() < kMaxGaps)
            u.gaps.push_back(static_cast<double>(s.tsNs - prev) / 1e9);
        prev = s.tsNs;
        while (w < ws.size() && ws[w]->toNs <= s.tsNs)
            ++w;
        if (w == ws.size()) break;
        if (s.tsNs >= ws[w]->fromNs) each(w, s);
    }
    return okStatus();
}

// The frame key of every catalogue frame: its name and file (one function, whatever line it was sampled at).
std::vector<int32_t> frameKeys(const store::StackCatalog& c, std::vector<std::string>* names)
{
    std::map<std::pair<std::string, std::string>, int32_t> ids;
    std::vector<int32_t> out(c.frames.size(), -1);
    std::vector<int64_t> line; // the key's one line; -1 when it was sampled at several
    for (size_t f = 1; f < c.frames.size(); ++f) {
        const store::FrameInfo& fr = c.frames[f];
        const auto [it, added] = ids.emplace(std::make_pair(fr.name, fr.file), static_cast<int32_t>(ids.size()));
        out[f] = it->second;
        if (added)
            line.push_back(fr.line);
        else if (line[static_cast<size_t>(it->second)] != fr.line)
            line[static_cast<size_t>(it->second)] = -1;
    }
    names->assign(ids.size(), std::string());
    for (const auto& [key, id] : ids) {
        const int64_t l = line[static_cast<size_t>(id)];
        (*names)[static_cast<size_t>(id)] = key.second.empty() ? key.first
                                            : l > 0            ? fmt::format("{} ({}:{})", key.first, key.second, l)
                                                               : fmt::format("{} ({})", key.first, key.second);
    }
    return out;
}

// The frame keys on a callsite's path (each once) with the depth of their outermost occurrence.
void keysOnPath(const store::StackCatalog& c, const std::vector<int32_t>& keyOf, int64_t callsite,
                std::vector<std::pair<int32_t, int32_t>>& out)
{
    out.clear();
    for (auto cs = static_cast<size_t>(callsite); cs != 0 && cs < c.callsiteCount();) {
        const int32_t key = keyOf[static_cast<size_t>(c.frame[cs])];
        const auto have = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == key; });
        if (have == out.end())
            out.emplace_back(key, c.depth[cs]);
        else
            have->second = std::min(have->second, c.depth[cs]);
        const auto parent = static_cast<size_t>(c.parent[cs]);
        if (parent >= cs) break;
        cs = parent;
    }
}

// The frames the ranks' collectives run under: per rank with profiled CPU-side collectives and stacks, the deepest
// frame on straggler.collective_frame_share of its training thread's samples taken during them (the sample just
// before a span shorter than the sampling interval). Learned from a few ranks and spans (they run the same code).
Expected<std::set<int32_t>> collectiveFrames(FlameSource& stacks, std::vector<RankUnit>& units,
                                             const std::map<int64_t, RankTrace>& traces, const store::StackCatalog& c,
                                             const std::vector<int32_t>& keyOf, const StragglerParams& q)
{
    std::set<int32_t> out;
    int learned = 0;
    std::vector<std::pair<int32_t, int32_t>> path;
    for (RankUnit& u : units) {
        if (learned >= kLearnRanks) break;
        const auto t = traces.find(u.rank);
        if (u.rank < 0 || t == traces.end() || t->second.node != u.node || t->second.collectiveSpans.empty()) continue;
        // The spans, joined when closer than two samples; at most 30, spread evenly.
        const auto join = static_cast<int64_t>(kJoinIntervals * u.nominalS * 1e9);
        std::vector<std::pair<int64_t, int64_t>> spans;
        for (const auto& s : t->second.collectiveSpans) {
            if (!spans.empty() && s.first <= spans.back().second + join)
                spans.back().second = std::max(spans.back().second, s.second);
            else
                spans.push_back(s);
        }
        const size_t take = std::min<size_t>(spans.size(), kLearnSpans);
        std::map<int64_t, int64_t> counts; // callsite -> samples
        int64_t total = 0;
        for (size_t k = 0; k < take; ++k) {
            const auto& [a, b] = spans[k * spans.size() / take];
            RUNLENS_ASSIGN_OR_RETURN(auto samples, stacks.samples(u.threadId, {a - join, b}));
            const store::StackSample* before = nullptr;
            int64_t inside = 0;
            for (const store::StackSample& s : samples) {
                if (s.tsNs < a)
                    before = &s;
                else {
                    counts[s.callsiteId] += s.count;
                    inside += s.count;
                }
            }
            if (inside == 0 && before) {
                counts[before->callsiteId] += before->count;
                inside = before->count;
            }
            total += inside;
        }
        if (total < kLearnMinSamples) continue;
        std::map<int32_t, std::pair<int64_t, int32_t>> keys; // key -> (samples, depth)
        for (const auto& [cs, n] : counts) {
            keysOnPath(c, keyOf, cs, path);
            for (const auto& [key, depth] : path) {
                auto [it, added] = keys.emplace(key, std::make_pair(int64_t(0), depth));
                it->second.first += n;
                it->second.second = std::min(it->second.second, depth);
            }
        }
        int32_t best = -1, bestDepth = -1;
        for (const auto& [key, v] : keys)
            if (static_cast<double>(v.first) >= q.collectiveFrameShare * static_cast<double>(total) &&
                v.second > bestDepth) {
                best = key;
                bestDepth = v.second;
            }
        if (best >= 0) out.insert(best);
        ++learned;
    }
    return out;
}

void chooseReads(Reads& r, const std::vector<Window>& groups, const std::vector<RankUnit>& units,
                 const StragglerParams& q)
{
    double seconds = 0, interval = std::numeric_limits<double>::max();
    for (const Window& g : groups)
        seconds += g.seconds();
    for (const RankUnit& u : units)
        interval = std::min(interval, u.nominalS);
    const double perWindow =
        seconds / static_cast<double>(groups.size()) / interval * static_cast<double>(units.size());
    const double budget = std::max(std::min(static_cast<double>(q.maxReads) / static_cast<double>(units.size()),
                                            static_cast<double>(q.maxSamples) / perWindow),
                                   kMinReadsPerStep * static_cast<double>(q.minSteps));
    const size_t take = std::min(groups.size(), static_cast<size_t>(std::max(1.0, budget)));
    for (size_t k = 0; k < take; ++k)
        r.evaluated.push_back(k * groups.size() / take);
    for (size_t k = 0; k < r.evaluated.size(); ++k)
        r.spanTo.push_back(k + 1 < r.evaluated.size() && r.evaluated[k + 1] > r.evaluated[k] + 1
                               ? groups[r.evaluated[k + 1] - 1].toNs
                               : groups[r.evaluated[k]].toNs);
}

} // namespace

// The ranks of the stacks: one training thread per process (the most sampled), in cohorts of at least two that are
// compared with each other (processes with a pid whatever their busiest thread is called; threads without one by
// role).
Expected<std::vector<RankUnit>> rankUnits(FlameSource& stacks,
                                          const std::map<std::pair<std::string, int64_t>, int64_t>& rankOfPid)
{
    RUNLENS_ASSIGN_OR_RETURN(auto threads, stacks.threads({}));
    std::map<std::string, RankUnit> byProcess;
    for (const store::StackThreadInfo& t : threads) {
        if (t.timedSamples < 2 || !t.firstNs || !t.lastNs || *t.lastNs <= *t.firstNs) continue;
        RankUnit u;
        u.node = t.node;
        u.process = t.process;
        u.thread = t.name;
        u.threadId = t.id;
        u.timedSamples = t.timedSamples;
        u.firstNs = *t.firstNs;
        u.lastNs = *t.lastNs;
        u.nominalS = static_cast<double>(u.lastNs - u.firstNs) / 1e9 / static_cast<double>(t.timedSamples - 1);
        u.pid = t.pid > 0 ? t.pid : taggedNumber(t.name, "pid").value_or(taggedNumber(t.process, "pid").value_or(0));
        u.rank = taggedNumber(t.name, "rank").value_or(taggedNumber(t.process, "rank").value_or(-1));
        // A main thread's tid is its process's pid.
        if (u.pid == 0 && t.tid > 0 && rankOfPid.count({t.node, t.tid})) u.pid = t.tid;
        if (u.rank < 0 && u.pid > 0 && rankOfPid.count({t.node, u.pid})) u.rank = rankOfPid.at({t.node, u.pid});
        u.cohort = u.pid > 0 ? std::string() : threadRole(t.name);
        const std::string key =
            u.pid > 0 ? fmt::format("{}/{}", t.node, u.pid) : fmt::format("{}/thread {}", t.node, t.id);
        auto [it, added] = byProcess.emplace(key, u);
        if (!added && u.timedSamples > it->second.timedSamples) it->second = u;
    }
    std::map<std::string, size_t> cohortSize;
    for (const auto& [key, u] : byProcess)
        ++cohortSize[u.cohort];
    std::vector<RankUnit> units;
    for (auto& [key, u] : byProcess)
        if (cohortSize[u.cohort] >= 2) units.push_back(std::move(u));
    return units;
}

Expected<Reads> readCells(FlameSource& stacks, std::vector<RankUnit>& units, const std::vector<Window>& groups,
                          const RankFrames& frames, const StragglerParams& q, const std::atomic<bool>* cancel)
{
    Reads r;
    if (groups.empty()) return r;
    chooseReads(r, groups, units, q);
    r.cells.assign(r.evaluated.size() * units.size(), Cell{});
    for (size_t u = 0; u < units.size(); ++u) {
        if (cancel && cancel->load()) return makeError(ErrorCode::Cancelled, "analysis cancelled");
        for (size_t k = 0; k < r.evaluated.size();) {
            std::vector<const Window*> run{&groups[r.evaluated[k]]};
            size_t j = k + 1;
            while (j < r.evaluated.size() && run.size() < kWindowsPerRead &&
                   groups[r.evaluated[j]].fromNs == run.back()->toNs)
                run.push_back(&groups[r.evaluated[j++]]);
            const size_t base = k;
            RUNLENS_TRY(readWindows(stacks, units[u], run, [&](size_t w, const store::StackSample& smp) {
                Cell& cell = r.cells[(base + w) * units.size() + u];
                cell.samples += smp.count;
                const auto cs = static_cast<size_t>(smp.callsiteId);
                const Kind kind = cs < frames.kinds.size() ? frames.kinds[cs] : Kind::Work;
                if (kind != Kind::Wait)
                    cell.work += smp.count;
                else if (cs != 0)
                    units[u].waits = true;
                if (kind == Kind::Checkpoint) cell.checkpoint += smp.count;
            }));
            k = j;
        }
        RankUnit& unit = units[u];
        unit.intervalS = unit.gaps.empty() ? unit.nominalS : medianOf(unit.gaps);
        unit.gaps = {};
    }
    return r;
}

Expected<RankFrames> rankFrames(FlameSource& stacks, std::vector<RankUnit>& units,
                                const std::map<int64_t, RankTrace>& traced, const StragglerParams& q)
{
    RankFrames out;
    RUNLENS_ASSIGN_OR_RETURN(auto cat, stacks.catalog());
    out.catalog = cat;
    RUNLENS_ASSIGN_OR_RETURN(auto phases, stacks.callsitePhases());
    const store::StackCatalog& c = *out.catalog;
    out.keyOf = frameKeys(c, &out.keyNames);
    RUNLENS_ASSIGN_OR_RETURN(auto learned, collectiveFrames(stacks, units, traced, c, out.keyOf, q));
    out.collectiveKeys = std::move(learned);
    out.kinds.assign(c.callsiteCount(), Kind::Work);
    std::vector<uint8_t> under(c.callsiteCount(), 0);
    for (size_t cs = 1; cs < c.callsiteCount(); ++cs) {
        const auto parent = static_cast<size_t>(c.parent[cs]);
        under[cs] =
            (parent < cs && under[parent]) || out.collectiveKeys.count(out.keyOf[static_cast<size_t>(c.frame[cs])]) ? 1
                                                                                                                    : 0;
        const Phase ph = cs < phases->size() ? (*phases)[cs] : Phase::Other;
        out.kinds[cs] = under[cs] || ph == Phase::Comm || ph == Phase::GpuWait || ph == Phase::Idle ? Kind::Wait
                        : ph == Phase::Checkpoint                                                   ? Kind::Checkpoint
                                                                                                    : Kind::Work;
    }
    out.kinds[0] = Kind::Wait;
    return out;
}

namespace {

// Per unit in `who`: its samples over (up to kTopSpans of) the spans per frame key on their paths, and in all; with
// each key's outermost depth.
struct KeyCounts
{
    std::vector<std::map<int32_t, int64_t>> keys;
    std::vector<int64_t> totals;
    std::map<int32_t, int32_t> depthOf;
};

Expected<KeyCounts> keyCounts(FlameSource& stacks, const RankFrames& frames, const std::vector<RankUnit>& units,
                              const std::vector<size_t>& who, const std::vector<Window>& spans)
{
    KeyCounts out{std::vector<std::map<int32_t, int64_t>>(who.size()), std::vector<int64_t>(who.size(), 0), {}};
    std::vector<std::pair<int32_t, int32_t>> path;
    const size_t take = std::min<size_t>(spans.size(), kTopSpans);
    for (size_t i = 0; i < who.size(); ++i) {
        std::unordered_map<int64_t, int64_t> counts;
        for (size_t k = 0; k < take; ++k) {
            const Window& w = spans[k * spans.size() / take];
            RUNLENS_ASSIGN_OR_RETURN(auto samples, stacks.samples(units[who[i]].threadId, {w.fromNs, w.toNs - 1}));
            for (const store::StackSample& s : samples) {
                counts[s.callsiteId] += s.count;
                out.totals[i] += s.count;
            }
        }
        for (const auto& [cs, n] : counts) {
            keysOnPath(*frames.catalog, frames.keyOf, cs, path);
            for (const auto& [key, depth] : path) {
                out.keys[i][key] += n;
                auto [it, added] = out.depthOf.emplace(key, depth);
                it->second = std::min(it->second, depth);
            }
        }
    }
    return out;
}

// Frames that are waits themselves are not the late work: the collective frames and the outermost wait on each path.
std::set<int32_t> waitKeysOf(const RankFrames& frames)
{
    const store::StackCatalog& catalog = *frames.catalog;
    std::set<int32_t> waitKeys(frames.collectiveKeys.begin(), frames.collectiveKeys.end());
    for (size_t cs = 1; cs < catalog.callsiteCount(); ++cs) {
        const auto parent = static_cast<size_t>(catalog.parent[cs]);
        if (frames.kinds[cs] == Kind::Wait && (parent >= cs || frames.kinds[parent] != Kind::Wait))
            waitKeys.insert(frames.keyOf[static_cast<size_t>(catalog.frame[cs])]);
    }
    return waitKeys;
}

} // namespace

Status topFrames(FlameSource& stacks, const RankFrames& frames, const std::vector<RankUnit>& units, size_t unit,
                 const std::vector<Window>& spans, const StragglerParams& q, QJsonArray* top, std::string* first)
{
    if (!frames.catalog || spans.empty()) return okStatus();
    std::vector<size_t> who{unit};
    for (size_t u = 0; u < units.size() && who.size() < kTopPeers + 1; ++u)
        if (u != unit && units[u].cohort == units[unit].cohort && (units[u].waits || units[u].rank >= 0))
            who.push_back(u);
    if (who.size() < 2) return okStatus();
    RUNLENS_ASSIGN_OR_RETURN(auto counts, keyCounts(stacks, frames, units, who, spans));
    std::vector<std::map<int32_t, int64_t>>& keys = counts.keys;
    const std::vector<int64_t>& totals = counts.totals;
    std::map<int32_t, int32_t>& depthOf = counts.depthOf;
    if (totals[0] == 0) return okStatus();
    const std::set<int32_t> waitKeys = waitKeysOf(frames);
    struct Candidate
    {
        int32_t key;
        double share, peers, excess;
    };
    std::vector<Candidate> cands;
    for (const auto& [key, n] : keys[0]) {
        if (waitKeys.count(key)) continue;
        const double share = static_cast<double>(n) / static_cast<double>(totals[0]);
        std::vector<double> peers;
        for (size_t i = 1; i < who.size(); ++i)
            if (totals[i] > 0)
                peers.push_back(keys[i].count(key) ? static_cast<double>(keys[i][key]) / static_cast<double>(totals[i])
                                                   : 0.0);
        const double peer = medianOf(peers);
        if (std::isfinite(peer) && share - peer > 0) cands.push_back({key, share, peer, share - peer});
    }
    if (cands.empty()) return okStatus();
    const double best = std::max_element(cands.begin(), cands.end(), [](const auto& a, const auto& b) {
                            return a.excess < b.excess;
                        })->excess;
    std::sort(cands.begin(), cands.end(), [&](const Candidate& a, const Candidate& b) {
        const bool ta = a.excess >= kLeadingExcessShare * best, tb = b.excess >= kLeadingExcessShare * best;
        if (ta != tb) return ta;
        if (ta && std::abs(a.peers - b.peers) > kPeersShareTie) return a.peers < b.peers;
        if (ta && depthOf[a.key] != depthOf[b.key]) return depthOf[a.key] < depthOf[b.key];
        return a.excess > b.excess;
    });
    for (size_t k = 0; k < cands.size() && top->size() < kTopFrames; ++k) {
        if (cands[k].excess < q.topFrameShare * best) continue;
        top->append(QJsonObject{
            {QStringLiteral("frame"), QString::fromStdString(frames.keyNames[static_cast<size_t>(cands[k].key)])},
            {QStringLiteral("share"), cands[k].share},
            {QStringLiteral("peers_share"), cands[k].peers}});
    }
    *first = frames.keyNames[static_cast<size_t>(cands.front().key)];
    return okStatus();
}

} // namespace runlens::analysis::straggler
