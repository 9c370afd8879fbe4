#pragma once

// Comparing the flame graphs of two runs (issue 19): run A's and run B's stack samples, each over its own window,
// node set and threads, merged by call path into one differential tree, each side normalised by its own total
// samples (runs and windows of different lengths compare), and the functions whose share grew or shrank, ranked.
//
// Frames are matched by name and file (and module), never by store ids, which differ between run files; lines are
// not matched by default (they move between code versions) and are kept for display. Per-thread trees do not
// compare across runs (thread ids differ): queries with perThread are refused.

#include "analysis/flame/flame_diff.h"
#include "analysis/flame/flame_tree.h"
#include "analysis/store/error.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace runlens::analysis {

// One function (name + file) whose share of its side's samples changed from A to B. Shares are of each side's
// total samples; a function reached along several paths (or recursively) counts each stack once, as
// functionTotals counts it.
struct FrameChange
{
    std::string name, file;
    int64_t lineA = 0, lineB = 0;       // of the function's heaviest frame on each side (0: none, or not known)
    int64_t samplesA = 0, samplesB = 0; // stacks the function is on (inclusive)
    int64_t selfA = 0, selfB = 0;       // stacks whose leaf it is
    double shareA = 0, shareB = 0;      // samples / the side's total
    double selfShareA = 0, selfShareB = 0;
    double delta() const { return shareB - shareA; } // inclusive, > 0: grew from A to B
    double selfDelta() const { return selfShareB - selfShareA; }
    // The larger of the two deltas by magnitude (self when a function's own time moved while its callees' did
    // the opposite): what the change is ranked by.
    double change() const;
    bool onlyInA() const { return samplesA > 0 && samplesB == 0; }
    bool onlyInB() const { return samplesB > 0 && samplesA == 0; }
    // "name (file:line)" with A's line (B's when only in B), "name (file)", or the bare name.
    std::string label() const;
};

struct FlameCompareOptions
{
    bool matchLines = false;  // match frames on their line too (same code version)
    double minChange = 0.005; // list a function when its change() is at least this (0.005: half a point)
    size_t limit = 0;         // at most this many per list (0: all)
};

struct FlameComparison
{
    std::shared_ptr<const FlameTree> a, b; // the two sides' trees
    std::shared_ptr<const DiffTree> diff;  // merged by call path (draw it with diffAsFlameTree)
    int64_t totalA = 0, totalB = 0;        // samples per side (0: that side has none in its selection)
    std::vector<FrameChange> grew, shrank; // change() > 0 / < 0, the largest magnitude first
};

// The comparison of two trees already built (any sources: frames are matched by what they are).
FlameComparison compareFlameTrees(std::shared_ptr<const FlameTree> a, std::shared_ptr<const FlameTree> b,
                                  const FlameCompareOptions& options = {});

// The trees of two sources (each over its own RunDatabase), each with its own query (window, nodes, threads).
Expected<FlameComparison> compareFlames(FlameSource& a, const FlameQuery& queryA, FlameSource& b,
                                        const FlameQuery& queryB, const FlameCompareOptions& options = {},
                                        const std::atomic<bool>* cancel = nullptr);

// The same from two run files, opened read-only; classifier may be null (phase filters in the queries are then
// refused, and the trees' phases are Other).
Expected<FlameComparison> compareRunFlames(const std::string& pathA, const FlameQuery& queryA, const std::string& pathB,
                                           const FlameQuery& queryB,
                                           const std::shared_ptr<const PhaseClassifier>& classifier,
                                           const FlameCompareOptions& options = {},
                                           const std::atomic<bool>* cancel = nullptr);

} // namespace runlens::analysis
