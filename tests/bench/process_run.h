#pragma once

// Running a program for a benchmark: no shell, output discarded, wall time and peak RSS measured.

#include <string>
#include <vector>

namespace runlens::bench {

struct ProcessRun
{
    double seconds = 0;
    double peakRssMb = 0;
    int exitCode = -1;
};

// stdinFile, when given, is the child's standard input.
ProcessRun runProcess(const std::vector<std::string>& argv, const std::string& stdinFile = {});

} // namespace runlens::bench
