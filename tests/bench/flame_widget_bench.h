#pragma once

// The flame graph widget offscreen on a generated tree of about 100 k nodes: Focus Block, search and hover,
// each timed from the action until the widget has drawn its result (layout and search on the worker included).

namespace runlens::bench {

bool benchFlameWidget(bool quick);

} // namespace runlens::bench
