#pragma once

// The flame graph widget offscreen on a generated tree of about 100 k nodes: Focus Block, search and hover,
// each timed from the action until the widget has drawn its result (layout and search on the worker included).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace runlens::bench {

bool benchFlameWidget(bool quick);

// The flame graph of windows of a run's stack samples: each from the query (the tree built from the store, as the
// window's flame dock does) until the widget has drawn it. The first includes opening the run and its catalogue.
struct FlameWindowFigures
{
    size_t windows = 0;
    double firstMs = 0, medianMs = 0, worstMs = 0;
    size_t nodes = 0;    // of the first window's tree
    int64_t samples = 0; // in the first window
};

// `count` windows of windowNs spread evenly over [firstNs, lastNs] (the whole range when it is shorter); nullopt
// when a tree could not be built (the message is printed).
std::optional<FlameWindowFigures> measureFlameWindows(const std::string& dbPath, int64_t firstNs, int64_t lastNs,
                                                      int64_t windowNs, int count);

} // namespace runlens::bench
