#include "tests/bench/process_run.h"

#include <chrono>
#include <cstdio>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace runlens::bench {

// Runs a program (no shell) with stdout/stderr sent to /dev/null; measures wall time and peak RSS.
ProcessRun runProcess(const std::vector<std::string>& argv, const std::string& stdinFile)
{
    ProcessRun r;
    std::fflush(stdout); // the child must not print the parent's buffered output again
    std::fflush(stderr);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        std::vector<char*> args;
        for (const std::string& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        if (!stdinFile.empty()) {
            if (!std::freopen(stdinFile.c_str(), "r", stdin)) _exit(126);
        }
        if (!std::freopen("/dev/null", "w", stdout)) _exit(126);
        if (!std::freopen("/dev/null", "w", stderr)) _exit(126); // the import's notices are not the table
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.peakRssMb = static_cast<double>(usage.ru_maxrss) / 1024.0;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

} // namespace runlens::bench
