#include "analysis/compare/flame_compare.h"

#include "analysis/flame/flame_search.h"
#include "analysis/store/run_database.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <utility>

namespace runlens::analysis {

double FrameChange::change() const
{
    return std::fabs(selfDelta()) > std::fabs(delta()) ? selfDelta() : delta();
}

std::string FrameChange::label() const
{
    if (file.empty()) return name;
    const int64_t line = samplesA > 0 ? lineA : lineB;
    return line > 0 ? fmt::format("{} ({}:{})", name, file, line) : fmt::format("{} ({})", name, file);
}

namespace {

using FunctionKey = std::pair<std::string, std::string>; // name, file

// The line of each function's heaviest frame (the first of equals, in depth-first order).
std::map<FunctionKey, int64_t> functionLines(const FlameTree& tree)
{
    std::map<FunctionKey, std::pair<int64_t, int64_t>> best; // line, samples
    for (int32_t i = 1; i < static_cast<int32_t>(tree.nodes().size()); ++i) {
        auto [it, added] = best.try_emplace(FunctionKey{std::string(tree.name(i)), std::string(tree.file(i))},
                                            tree.line(i), tree.node(i).samples);
        if (!added && tree.node(i).samples > it->second.second) it->second = {tree.line(i), tree.node(i).samples};
    }
    std::map<FunctionKey, int64_t> out;
    for (const auto& [key, v] : best)
        out.emplace(key, v.first);
    return out;
}

double shareOf(int64_t n, int64_t total)
{
    return total > 0 ? static_cast<double>(n) / static_cast<double>(total) : 0;
}

Status refusePerThread(const FlameQuery& q, const char* side)
{
    if (q.perThread)
        return makeError(
            ErrorCode::Usage,
            fmt::format("run {}: per-thread flame trees do not compare across runs (thread ids differ)", side));
    return Ok{};
}

} // namespace

FlameComparison compareFlameTrees(std::shared_ptr<const FlameTree> a, std::shared_ptr<const FlameTree> b,
                                  const FlameCompareOptions& options)
{
    FlameComparison out;
    out.a = std::move(a);
    out.b = std::move(b);
    out.totalA = out.a->totalSamples();
    out.totalB = out.b->totalSamples();
    DiffOptions diffOptions;
    diffOptions.matchLines = options.matchLines;
    out.diff = diffTree(*out.a, *out.b, diffOptions);

    std::map<FunctionKey, FrameChange> changes;
    auto add = [&](const FlameTree& tree, bool sideA) {
        const auto lines = functionLines(tree);
        for (const FunctionTotal& t : functionTotals(tree)) {
            FunctionKey key{t.name, t.file};
            FrameChange& c = changes[key];
            c.name = t.name;
            c.file = t.file;
            const auto line = lines.find(key);
            (sideA ? c.lineA : c.lineB) = line == lines.end() ? 0 : line->second;
            (sideA ? c.samplesA : c.samplesB) = t.samples;
            (sideA ? c.selfA : c.selfB) = t.selfSamples;
        }
    };
    add(*out.a, true);
    add(*out.b, false);
    for (auto& [key, c] : changes) {
        c.shareA = shareOf(c.samplesA, out.totalA);
        c.shareB = shareOf(c.samplesB, out.totalB);
        c.selfShareA = shareOf(c.selfA, out.totalA);
        c.selfShareB = shareOf(c.selfB, out.totalB);
        // A side without samples says nothing about what changed: every function would look new or gone.
        if (out.totalA == 0 || out.totalB == 0) continue;
        const double change = c.change();
        if (std::fabs(change) < options.minChange || change == 0) continue;
        (change > 0 ? out.grew : out.shrank).push_back(c);
    }
    for (auto* list : {&out.grew, &out.shrank}) {
        std::stable_sort(list->begin(), list->end(), [](const FrameChange& x, const FrameChange& y) {
            const double mx = std::fabs(x.change()), my = std::fabs(y.change());
            if (mx != my) return mx > my;
            return std::fabs(x.selfDelta()) > std::fabs(y.selfDelta());
        });
        if (options.limit > 0 && list->size() > options.limit) list->resize(options.limit);
    }
    return out;
}

Expected<FlameComparison> compareFlames(FlameSource& a, const FlameQuery& queryA, FlameSource& b,
                                        const FlameQuery& queryB, const FlameCompareOptions& options,
                                        const std::atomic<bool>* cancel)
{
    RUNLENS_TRY(refusePerThread(queryA, "A"));
    RUNLENS_TRY(refusePerThread(queryB, "B"));
    RUNLENS_ASSIGN_OR_RETURN(auto treeA, a.tree(queryA, cancel));
    RUNLENS_ASSIGN_OR_RETURN(auto treeB, b.tree(queryB, cancel));
    return compareFlameTrees(std::move(treeA), std::move(treeB), options);
}

Expected<FlameComparison> compareRunFlames(const std::string& pathA, const FlameQuery& queryA, const std::string& pathB,
                                           const FlameQuery& queryB,
                                           const std::shared_ptr<const PhaseClassifier>& classifier,
                                           const FlameCompareOptions& options, const std::atomic<bool>* cancel)
{
    RUNLENS_ASSIGN_OR_RETURN(auto dbA, store::RunDatabase::open(pathA, store::OpenMode::ReadOnly));
    RUNLENS_ASSIGN_OR_RETURN(auto dbB, store::RunDatabase::open(pathB, store::OpenMode::ReadOnly));
    FlameSource a(*dbA, classifier);
    FlameSource b(*dbB, classifier);
    return compareFlames(a, queryA, b, queryB, options, cancel);
}

} // namespace runlens::analysis
