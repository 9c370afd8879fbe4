#include "importers/node_assignment.h"

#include "importers/common/text_fields.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace runlens::importers {
namespace {

// Letters of a name prefix that number something other than a host.
constexpr std::string_view kNotHostStems[] = {"rank", "gpu",  "cuda",  "dev",  "device", "proc",  "pid",
                                              "tid",  "step", "epoch", "iter", "part",   "chunk", "shard",
                                              "run",  "log",  "trace", "try",  "attempt"};

struct Group
{
    std::string folder;    // absolute, normal
    std::string name;      // the node the folder (or the name prefix) gives
    std::string source;    // "directory name" or "file name prefix"
    std::string described; // for problems: "folder node01/" or "files node01-*"
    std::vector<size_t> files;
    std::set<std::string> labels;
    bool hasUnlabelled = false; // a recognised file without a host label: the group is a node's own folder
    bool byPrefix = false;
};

bool usableName(const std::string& name)
{
    return !name.empty() && name != "/" && name != ".";
}

bool isInside(const std::string& inner, const std::string& outer)
{
    if (inner.size() <= outer.size() || inner.compare(0, outer.size(), outer) != 0) return false;
    return outer.back() == '/' || inner[outer.size()] == '/';
}

bool recognised(const PlannedFile& f)
{
    return f.importer && !f.readError;
}

// Files named per node in one folder: every recognised file starts with a host-like prefix of the same letters,
// with at least two prefixes, each shared by at least two files. Returns the files of each prefix, or nothing.
std::map<std::string, std::vector<size_t>> splitByNamePrefix(const std::vector<PlannedFile>& plan, const Group& g,
                                                             const std::vector<FileOrigin>& origins)
{
    std::map<std::string, std::vector<size_t>> byPrefix;
    std::map<std::string, int> recognisedCount;
    std::string commonStem;
    for (size_t i : g.files) {
        if (!origins[i].direct) return {};
        std::string stem;
        const std::string prefix = nodeNamePrefix(fs::path(plan[i].path).filename().string(), &stem);
        if (!recognised(plan[i])) {
            if (!prefix.empty()) byPrefix[prefix].push_back(i);
            continue;
        }
        if (prefix.empty() || (!commonStem.empty() && stem != commonStem)) return {};
        commonStem = stem;
        byPrefix[prefix].push_back(i);
        ++recognisedCount[prefix];
    }
    if (recognisedCount.size() < 2) return {};
    for (const auto& [prefix, n] : recognisedCount)
        if (n < 2) return {};
    std::erase_if(byPrefix, [&](const auto& kv) { return !recognisedCount.contains(kv.first); });
    return byPrefix;
}

std::vector<Group> groupFiles(const std::vector<PlannedFile>& plan, const std::vector<FileOrigin>& origins)
{
    std::vector<Group> groups;
    std::map<std::string, size_t> byFolder;
    for (size_t i = 0; i < plan.size(); ++i) {
        auto [it, added] = byFolder.try_emplace(origins[i].folder, groups.size());
        if (added) {
            Group g;
            g.folder = origins[i].folder;
            g.name = origins[i].folderName;
            g.source = "directory name";
            g.described = fmt::format("folder {}/", g.name);
            groups.push_back(std::move(g));
        }
        groups[it->second].files.push_back(i);
    }
    // Flat folders of files named per node become one group per name prefix.
    const size_t folderGroups = groups.size();
    for (size_t gi = 0; gi < folderGroups; ++gi) {
        auto split = splitByNamePrefix(plan, groups[gi], origins);
        if (split.empty()) continue;
        std::vector<size_t> rest;
        for (size_t i : groups[gi].files)
            if (std::none_of(split.begin(), split.end(), [&](const auto& kv) {
                    return std::find(kv.second.begin(), kv.second.end(), i) != kv.second.end();
                }))
                rest.push_back(i);
        for (auto& [prefix, files] : split) {
            Group g;
            g.folder = groups[gi].folder;
            g.name = prefix;
            g.source = "file name prefix";
            g.described = fmt::format("files {}-* of folder {}/", prefix, groups[gi].name);
            g.files = std::move(files);
            g.byPrefix = true;
            groups.push_back(std::move(g));
        }
        groups[gi].files = std::move(rest);
    }
    for (Group& g : groups)
        for (size_t i : g.files) {
            if (!recognised(plan[i])) continue;
            if (plan[i].hostLabel)
                g.labels.insert(*plan[i].hostLabel);
            else
                g.hasUnlabelled = true;
        }
    return groups;
}

// The other group that label belongs to: a node's folder of that name, or another node's folder whose files carry
// it. Only a group of a node's own files (hasUnlabelled) can conflict: a folder of labelled files only (a central
// Prometheus dump) is routed by its labels.
const Group* claimedBy(const std::vector<Group>& groups, const Group& g, const std::string& label)
{
    if (!g.hasUnlabelled || label == g.name) return nullptr;
    for (const Group& h : groups) {
        if (&h == &g || h.files.empty()) continue;
        if (usableName(h.name) && h.name == label) return &h;
        if (h.hasUnlabelled && h.labels.contains(label)) return &h;
    }
    return nullptr;
}

void setNode(PlannedFile& f, const std::string& node, const char* source)
{
    f.node = node;
    f.nodeSource = source;
}

void setFolderNode(PlannedFile& f, const Group& g)
{
    if (usableName(g.name)) {
        f.node = g.name;
        f.nodeSource = g.source;
    } else {
        setNode(f, fs::path(f.path).stem().string(), "file name");
    }
}

} // namespace

std::string nodeNamePrefix(std::string_view fileName, std::string* stem)
{
    const size_t end = std::min(fileName.find_first_of("-_."), fileName.size());
    const std::string_view prefix = fileName.substr(0, end);
    size_t letters = 0;
    while (letters < prefix.size() && std::isalpha(static_cast<unsigned char>(prefix[letters])))
        ++letters;
    if (letters == 0 || letters == prefix.size()) return {};
    for (size_t i = letters; i < prefix.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(prefix[i]))) return {};
    std::string lower(prefix.substr(0, letters));
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::find(std::begin(kNotHostStems), std::end(kNotHostStems), lower) != std::end(kNotHostStems)) return {};
    if (stem) *stem = lower;
    return std::string(prefix);
}

Expected<RankMap> parseRankMap(std::string_view text)
{
    RankMap map;
    auto bad = [&](std::string_view part, const char* why) {
        return makeError(ErrorCode::Usage,
                         fmt::format("rank map: \"{}\": {} (e.g. 0-7=node01,8-15=node02)", part, why));
    };
    auto rankOf = [](std::string_view t) -> std::optional<int64_t> {
        t = trim(t);
        if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string_view::npos) return {};
        return std::stoll(std::string(t));
    };
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view part = text.substr(start, comma - start);
        start = comma + 1;
        if (trim(part).empty()) continue;
        const size_t eq = part.find('=');
        if (eq == std::string_view::npos) return bad(part, "expected RANKS=NODE");
        const std::string node(trim(part.substr(eq + 1)));
        if (node.empty()) return bad(part, "no node name");
        const std::string_view ranks = part.substr(0, eq);
        const size_t dash = ranks.find('-');
        const auto first = rankOf(ranks.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : rankOf(ranks.substr(dash + 1));
        if (!first || !last || *last < *first) return bad(part, "expected a rank or a range of ranks");
        for (int64_t r = *first; r <= *last; ++r)
            if (!map.try_emplace(r, node).second) return bad(part, "a rank mapped twice");
    }
    if (map.empty()) return bad(text, "no rank mapped");
    return map;
}

std::optional<int64_t> fileRank(std::string_view fileName, std::string_view head, bool isTrace)
{
    auto digitsAt = [](std::string_view s, size_t at) -> std::optional<int64_t> {
        size_t end = at;
        while (end < s.size() && end - at < 9 && std::isdigit(static_cast<unsigned char>(s[end])))
            ++end;
        // More than nine digits is no rank (cut to nine, it would name another one).
        if (end == at || (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])))) return {};
        return std::stoll(std::string(s.substr(at, end - at)));
    };
    if (isTrace) {
        if (const size_t info = head.find("\"distributedInfo\""); info != std::string_view::npos) {
            const std::string_view object = head.substr(info, head.find('}', info) - info);
            if (const size_t key = object.find("\"rank\""); key != std::string_view::npos) {
                size_t at = key + 6;
                while (at < object.size() && (object[at] == ' ' || object[at] == ':' || object[at] == '\n'))
                    ++at;
                if (auto rank = digitsAt(object, at)) return rank;
            }
        }
    }
    for (size_t at = fileName.find("rank"); at != std::string_view::npos; at = fileName.find("rank", at + 1)) {
        if (at > 0 && std::isalpha(static_cast<unsigned char>(fileName[at - 1]))) continue;
        if (auto rank = digitsAt(fileName, at + 4)) return rank;
    }
    return std::nullopt;
}

void assignNodes(std::vector<PlannedFile>& plan, const std::vector<FileOrigin>& origins, const ImportOptions& options,
                 const RankMap& rankMap)
{
    if (!options.node.empty()) {
        for (PlannedFile& f : plan)
            setNode(f, options.node, "option");
        return;
    }
    const std::vector<Group> groups = groupFiles(plan, origins);
    for (const Group& g : groups) {
        std::map<std::string, const Group*> conflicts;
        for (const std::string& label : g.labels)
            if (const Group* other = claimedBy(groups, g, label)) conflicts.emplace(label, other);
        if (!conflicts.empty()) {
            // Never merged silently: the folder keeps its node, and the labelled files say why.
            for (size_t i : g.files) {
                PlannedFile& f = plan[i];
                setFolderNode(f, g);
                if (!f.hostLabel || !conflicts.contains(*f.hostLabel)) continue;
                const Group& other = *conflicts.at(*f.hostLabel);
                f.nodeProblem = fmt::format("host label {} names the node of {}, but this file is in {}: kept on node "
                                            "{}; choose its node with --node or in the import dialog",
                                            *f.hostLabel, other.described, g.described, f.node);
            }
            continue;
        }
        std::optional<std::string> joined;
        const char* joinedSource = "host label of the folder";
        if (g.labels.size() == 1) {
            joined = *g.labels.begin();
        } else if (g.labels.empty() && !g.byPrefix) {
            // A capture folder whose subfolders hold only labelled files naming one host (prometheus/): that host.
            std::set<std::string> inside;
            for (const Group& h : groups)
                if (!h.hasUnlabelled && isInside(h.folder, g.folder)) inside.insert(h.labels.begin(), h.labels.end());
            if (inside.size() == 1) {
                joined = *inside.begin();
                joinedSource = "host label of a subfolder";
            }
        }
        for (size_t i : g.files) {
            PlannedFile& f = plan[i];
            if (f.hostLabel)
                setNode(f, *f.hostLabel, "host label");
            else if (joined)
                setNode(f, *joined, joinedSource);
            else
                setFolderNode(f, g);
        }
    }
    // A file of a mapped rank is on the node the map names, whatever its folder says.
    for (PlannedFile& f : plan) {
        if (!f.rank) continue;
        if (auto it = rankMap.find(*f.rank); it != rankMap.end()) {
            setNode(f, it->second, "rank map");
            f.nodeProblem.clear();
        }
    }
}

} // namespace runlens::importers
