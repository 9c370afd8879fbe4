#pragma once

// Numbers as people read them, in every view: unit prefixes instead of exponents, durations in h/min/s.

#include <QString>
#include <cstdint>
#include <string>

namespace runlens::widgets {

// "12.5 GB/s", "97 %", "1.41 GHz", "38.2 GiB", "150 k tokens/s": a value in its unit, short, never in exponent
// notation.
QString formatValue(double value, const std::string& unit);
// The same for an axis tick: a unit longer than a few letters is left to the axis title ("150 k").
QString formatTick(double value, const std::string& unit);
// "2 h 14 min", "35.2 s", "120 ms".
QString formatDuration(int64_t ns);
// An offset from the run's start with millisecond precision: "+27:59:59.250" (h:mm:ss), "+3:05.125" (m:ss),
// "−0:01.000".
QString formatOffset(int64_t ns);

} // namespace runlens::widgets
