#pragma once

// How a comparison's numbers read, the same in `runlens compare`, the Compare window and the compare report:
// values with their unit (rates of bytes in kB/s … TB/s, large counts with k or M, percentages), differences
// with a sign (percentages in points), relative differences, and verdicts with their test. UTF-8; minus is "−".

#include "analysis/compare/run_compare.h"

#include <string>

namespace runlens::analysis {

// A value with its unit (s, %, 1/s, B/s, count); sign: a difference (+/−, a percentage in points). NaN: "n/a".
std::string formatCompareValue(double v, const std::string& unit, bool sign = false);
// "+12.3 %", "−4.0 %", "n/a".
std::string formatDeltaPct(double pct);
// "faster (MWU p<0.001)", "no significant change (MWU p=0.412)", "too few samples", "—" (not tested).
std::string formatVerdict(const CompareCell& cell);

} // namespace runlens::analysis
