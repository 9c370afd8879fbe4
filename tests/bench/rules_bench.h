#pragma once

// The diagnosis rules on the reference run: `runlens demo --scenario zero3` written and imported (4 nodes × 8
// GPUs, 28 h at 1 s with stacks, exporter scrapes and traces; 1 h in quick mode), then `runlens analyze` as its
// own process: wall time and peak RSS against the targets (≤ 10 s, < 1 GB); then `runlens report` of it (the
// analysis, key metrics, figures and the PDF) against ≤ 15 s.

#include <string>

namespace runlens::bench {

bool benchRules(const std::string& dir, bool quick);

} // namespace runlens::bench
