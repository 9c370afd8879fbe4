#pragma once

// Stack benchmarks: folded import throughput against the single-threaded whole-line-hash limit, and flame
// trees of windows over millions of timed samples.

#include <functional>
#include <string>
#include <vector>

namespace runlens::bench {

// runSeconds runs the runlens binary with these arguments and returns the wall time (< 0 on failure).
bool benchStacks(const std::string& dir, bool quick,
                 const std::function<double(const std::vector<std::string>&)>& runSeconds);

} // namespace runlens::bench
