#pragma once

// Running a program for a benchmark: no shell, output discarded, wall time and peak RSS measured.
//
// A child's peak RSS (wait4's ru_maxrss) is the larger of its own and that of the process it was forked from at the
// fork: Linux keeps the old address space's high-water mark across exec, for fork and posix_spawn alike. Forked from
// the benchmark after it has built a run in memory, `/usr/bin/true` would report hundreds of MB. So the children
// are started by a small launcher process, forked at the very start of main before the benchmark holds anything;
// their figures include at most the launcher's own few MB (launcherRssMb()).

#include <string>
#include <vector>

namespace runlens::bench {

struct ProcessRun
{
    double seconds = 0;
    double peakRssMb = 0;
    int exitCode = -1;
};

// Forks the launcher; call first thing in main. Without it runProcess forks from the benchmark itself.
void startLauncher();

// The launcher's peak RSS: the floor of every child's peakRssMb (0 without a launcher).
double launcherRssMb();

// stdinFile, when given, is the child's standard input.
ProcessRun runProcess(const std::vector<std::string>& argv, const std::string& stdinFile = {});

} // namespace runlens::bench
