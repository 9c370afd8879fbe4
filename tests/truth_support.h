#pragma once

// The fixture runs' ground truth (truth/ beside each recorded run under ../shared/fixtures): steps, phases,
// checkpoints, async checkpoints and host pauses as the run's truth/*.jsonl and train-stderr.txt record them.
// Shared by the tests that check an analysis or a comparison against it.

#include <QString>
#include <cstdint>
#include <string>
#include <vector>

namespace runlens::test {

// The phase read from a job's own error output (truth/train-stderr.txt): from the first NCCL error to the last
// line with a time (the abort).
inline constexpr const char* kHangPhase = "hang";

struct TruthStep
{
    int rank = 0;
    int64_t endNs = 0;
    double seconds = 0;
    std::string phase;
    int microSteps = 0;
    double slowWorkS = 0;
};

// A checkpoint or host pause, the union over the ranks (earliest start, latest end).
struct TruthEvent
{
    int step = 0;
    int64_t startNs = 0, endNs = 0;
    std::string frame; // host_pause
};

struct TruthAsync
{
    int step = 0;
    int64_t startNs = 0, copiedNs = 0, writeStartNs = 0, endNs = 0;
};

struct TruthPhase
{
    std::string name;
    int64_t startNs = 0, endNs = 0;
    std::vector<double> stepSeconds; // rank 0's
    int microSteps = 0;              // rank 0's (0: not in truth)
    std::string note;                // where its ends come from when not from phase_end events
    double seconds() const { return static_cast<double>(endNs - startNs) / 1e9; }
};

struct Truth
{
    std::vector<std::string> problems;
    std::vector<TruthStep> steps;
    std::vector<TruthEvent> checkpoints, hostPauses;
    std::vector<TruthAsync> asyncCheckpoints;
    std::vector<TruthPhase> phases;

    const TruthPhase* phase(const std::string& name) const
    {
        for (const TruthPhase& p : phases)
            if (p.name == name) return &p;
        return nullptr;
    }
    std::string phaseAt(int64_t ns) const
    {
        for (const TruthPhase& p : phases)
            if (ns >= p.startNs && ns < p.endNs) return p.name;
        return "(run)";
    }
};

// Reads runDir/truth; what it cannot read, or finds inconsistent, is listed in problems.
Truth readTruth(const QString& runDir);

// The median (the mean of the middle two for an even count), NaN when empty.
double median(std::vector<double> v);

// Copies a fixture folder without its truth/ folder (so nothing of truth can be read by the import); top: `from` is
// the run folder itself, whose truth/ is the one left out.
bool copyWithoutTruth(const QString& from, const QString& to, bool top = true);

} // namespace runlens::test
