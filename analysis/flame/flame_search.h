#pragma once

// Questions asked of a flame tree by its views: which blocks match a search (and how much of the total they
// cover, nested matches counted once), every function's self and total, and the sandwich of one function (its
// callers and callees merged over all its occurrences).

#include "analysis/flame/flame_tree.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace runlens::analysis {

struct FlameSearch
{
    std::string pattern;
    std::vector<uint8_t> matched;  // per node: its frame matches
    std::vector<uint8_t> relevant; // per node: matched, or on the path to a match, or below one (not dimmed)
    std::vector<int32_t> matches;  // matched nodes in depth-first order (next / previous)
    int64_t matchedSamples = 0;    // samples under the outermost matches: a match inside a match counts once
    double share = 0;              // matchedSamples / the tree's total
};

// Matches the pattern against each frame's label ("name (file:line)"): a substring (case insensitive unless it
// has an upper-case letter), or, when `regex`, a regular expression (PCRE) matching the name or the label. An empty
// pattern matches nothing; a bad regular expression is an error naming the position.
Expected<FlameSearch> searchFlame(const FlameTree& tree, const std::string& pattern, bool regex);

// A function is a frame name with its file (lines differ inside one function).
struct FunctionTotal
{
    std::string name, file;
    int64_t selfSamples = 0;
    int64_t samples = 0; // of the stacks the function is on, each counted once (recursion too)
    double selfWeight = 0, weight = 0;
};
// Every function of the tree, the largest self first.
std::vector<FunctionTotal> functionTotals(const FlameTree& tree);

struct Sandwich
{
    std::string name, file;
    int64_t samples = 0;                      // the function's total, as functionTotals gives it
    std::shared_ptr<const FlameTree> callers; // root → the function → its callers, outwards (draw it upside down)
    std::shared_ptr<const FlameTree> callees; // root → the function → what it calls
};
// The sandwich of the function of `node` (its name and file), over every occurrence in the tree.
Sandwich sandwichOf(const FlameTree& tree, int32_t node);

} // namespace runlens::analysis
