#include "tests/bench/process_run.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace runlens::bench {
namespace {

// Runs a program (no shell) with stdout/stderr sent to /dev/null; measures wall time and peak RSS.
ProcessRun spawnAndWait(const std::vector<std::string>& argv, const std::string& stdinFile)
{
    ProcessRun r;
    std::fflush(stdout); // the child must not print the parent's buffered output again
    std::fflush(stderr);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        std::vector<char*> args;
        args.reserve(argv.size() + 1);
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

// The pipe protocol: a request is a count of strings then each string (a length, then its bytes): the stdin file
// first, then argv; the answer is one ProcessRun. A count of 0 asks the launcher for its own peak RSS.
int g_toLauncher = -1, g_fromLauncher = -1;

bool writeAll(int fd, const void* data, size_t size)
{
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = write(fd, p, size);
        if (n <= 0) return false;
        p += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

bool readAll(int fd, void* data, size_t size)
{
    auto* p = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t n = read(fd, p, size);
        if (n <= 0) return false;
        p += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

bool readString(int fd, std::string& s)
{
    uint64_t size = 0;
    if (!readAll(fd, &size, sizeof size)) return false;
    s.resize(size);
    return readAll(fd, s.data(), size);
}

[[noreturn]] void serve(int requests, int answers)
{
    for (;;) {
        uint64_t count = 0;
        if (!readAll(requests, &count, sizeof count)) _exit(0); // the benchmark ended
        ProcessRun r;
        if (count == 0) {
            rusage self{};
            getrusage(RUSAGE_SELF, &self);
            r.peakRssMb = static_cast<double>(self.ru_maxrss) / 1024.0;
        } else {
            std::string stdinFile;
            std::vector<std::string> argv(count - 1);
            bool ok = readString(requests, stdinFile);
            for (std::string& a : argv)
                ok = ok && readString(requests, a);
            if (!ok) _exit(1);
            r = spawnAndWait(argv, stdinFile);
        }
        if (!writeAll(answers, &r, sizeof r)) _exit(1);
    }
}

bool send(const std::string& s)
{
    const uint64_t size = s.size();
    return writeAll(g_toLauncher, &size, sizeof size) && writeAll(g_toLauncher, s.data(), s.size());
}

} // namespace

void startLauncher()
{
    int requests[2], answers[2];
    // Close-on-exec: the programs the launcher runs do not inherit its pipes.
    if (pipe2(requests, O_CLOEXEC) != 0 || pipe2(answers, O_CLOEXEC) != 0) return; // runProcess forks from here instead
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) return;
    if (pid == 0) {
        close(requests[1]);
        close(answers[0]);
        serve(requests[0], answers[1]);
    }
    close(requests[0]);
    close(answers[1]);
    g_toLauncher = requests[1];
    g_fromLauncher = answers[0];
}

double launcherRssMb()
{
    if (g_toLauncher < 0) return 0;
    const uint64_t zero = 0;
    ProcessRun r;
    if (!writeAll(g_toLauncher, &zero, sizeof zero) || !readAll(g_fromLauncher, &r, sizeof r)) return 0;
    return r.peakRssMb;
}

ProcessRun runProcess(const std::vector<std::string>& argv, const std::string& stdinFile)
{
    if (g_toLauncher < 0) return spawnAndWait(argv, stdinFile);
    const uint64_t count = argv.size() + 1;
    bool ok = writeAll(g_toLauncher, &count, sizeof count) && send(stdinFile);
    for (const std::string& a : argv)
        ok = ok && send(a);
    ProcessRun r;
    if (!ok || !readAll(g_fromLauncher, &r, sizeof r)) return spawnAndWait(argv, stdinFile); // the launcher died
    return r;
}

} // namespace runlens::bench
