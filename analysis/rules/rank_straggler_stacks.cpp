#include "analysis/rules/straggler_support.h"

#include <QJsonObject>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <unordered_map>

namespace runlens::analysis::straggler {

namespace {

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
                                             const std::vector<int32_t>& keyOf, const RuleParams& p)
{
    std::set<int32_t> out;
    int learned = 0;
    std::vector<std::pair<int32_t, int32_t>> path;
    for (RankUnit& u : units) {
        if (learned >= 8) break;
        const auto t = traces.find(u.rank);
        if (u.rank < 0 || t == traces.end() || t->second.node != u.node || t->second.collectiveSpans.empty()) continue;
        // The spans, joined when closer than two samples; at most 30, spread evenly.
        const auto join = static_cast<int64_t>(2 * u.nominalS * 1e9);
        std::vector<std::pair<int64_t, int64_t>> spans;
        for (const auto& s : t->second.collectiveSpans) {
            if (!spans.empty() && s.first <= spans.back().second + join)
                spans.back().second = std::max(spans.back().second, s.second);
            else
                spans.push_back(s);
        }
        const size_t take = std::min<size_t>(spans.size(), 30);
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
        if (total < 5) continue;
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
            if (static_cast<double>(v.first) >=
                    p.get("straggler.collective_frame_share") * static_cast<double>(total) &&
                v.second > bestDepth) {
                best = key;
                bestDepth = v.second;
            }
        if (best >= 0) out.insert(best);
        ++learned;
    }
    return out;
}

} // namespace

Expected<RankFrames> rankFrames(FlameSource& stacks, std::vector<RankUnit>& units,
                                const std::map<int64_t, RankTrace>& traced, const RuleParams& p)
{
    RankFrames out;
    RUNLENS_ASSIGN_OR_RETURN(auto cat, stacks.catalog());
    out.catalog = cat;
    RUNLENS_ASSIGN_OR_RETURN(auto phases, stacks.callsitePhases());
    const store::StackCatalog& c = *out.catalog;
    out.keyOf = frameKeys(c, &out.keyNames);
    RUNLENS_ASSIGN_OR_RETURN(auto learned, collectiveFrames(stacks, units, traced, c, out.keyOf, p));
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

Status topFrames(FlameSource& stacks, const RankFrames& frames, const std::vector<RankUnit>& units, size_t unit,
                 const std::vector<Window>& spans, const RuleParams& p, QJsonArray* top, std::string* first)
{
    const std::shared_ptr<const store::StackCatalog>& catalog = frames.catalog;
    const std::vector<int32_t>& keyOf = frames.keyOf;
    const std::vector<std::string>& keyNames = frames.keyNames;
    const std::vector<Kind>& kinds = frames.kinds;
    const std::set<int32_t>& collectiveKeys = frames.collectiveKeys;
    if (!catalog || spans.empty()) return okStatus();
    std::vector<size_t> who{unit};
    for (size_t u = 0; u < units.size() && who.size() < 9; ++u)
        if (u != unit && units[u].cohort == units[unit].cohort && (units[u].waits || units[u].rank >= 0))
            who.push_back(u);
    if (who.size() < 2) return okStatus();
    std::vector<std::map<int32_t, int64_t>> keys(who.size());
    std::vector<int64_t> totals(who.size(), 0);
    std::vector<std::pair<int32_t, int32_t>> path;
    std::map<int32_t, int32_t> depthOf;
    const size_t take = std::min<size_t>(spans.size(), 40);
    for (size_t i = 0; i < who.size(); ++i) {
        std::unordered_map<int64_t, int64_t> counts;
        for (size_t k = 0; k < take; ++k) {
            const Window& w = spans[k * spans.size() / take];
            RUNLENS_ASSIGN_OR_RETURN(auto samples, stacks.samples(units[who[i]].threadId, {w.fromNs, w.toNs - 1}));
            for (const store::StackSample& s : samples) {
                counts[s.callsiteId] += s.count;
                totals[i] += s.count;
            }
        }
        for (const auto& [cs, n] : counts) {
            keysOnPath(*catalog, keyOf, cs, path);
            for (const auto& [key, depth] : path) {
                keys[i][key] += n;
                auto [it, added] = depthOf.emplace(key, depth);
                it->second = std::min(it->second, depth);
            }
        }
    }
    if (totals[0] == 0) return okStatus();
    // Frames that are waits themselves are not the late work.
    std::set<int32_t> waitKeys(collectiveKeys.begin(), collectiveKeys.end());
    for (size_t cs = 1; cs < catalog->callsiteCount(); ++cs) {
        const auto parent = static_cast<size_t>(catalog->parent[cs]);
        if (kinds[cs] == Kind::Wait && (parent >= cs || kinds[parent] != Kind::Wait))
            waitKeys.insert(keyOf[static_cast<size_t>(catalog->frame[cs])]);
    }
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
        const bool ta = a.excess >= 0.8 * best, tb = b.excess >= 0.8 * best;
        if (ta != tb) return ta;
        if (ta && std::abs(a.peers - b.peers) > 0.01) return a.peers < b.peers;
        if (ta && depthOf[a.key] != depthOf[b.key]) return depthOf[a.key] < depthOf[b.key];
        return a.excess > b.excess;
    });
    for (size_t k = 0; k < cands.size() && top->size() < 5; ++k) {
        if (cands[k].excess < p.get("straggler.top_frame_share") * best) continue;
        top->append(
            QJsonObject{{QStringLiteral("frame"), QString::fromStdString(keyNames[static_cast<size_t>(cands[k].key)])},
                        {QStringLiteral("share"), cands[k].share},
                        {QStringLiteral("peers_share"), cands[k].peers}});
    }
    *first = keyNames[static_cast<size_t>(cands.front().key)];
    return okStatus();
}

} // namespace runlens::analysis::straggler
