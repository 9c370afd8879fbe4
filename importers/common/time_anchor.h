#pragma once

// Placing a source without wall-clock times (a trainer log that only says how long each step took, or how long
// since training started) on the run's timeline. A file's modification time is no evidence: a copy with `cp`,
// `scp`, a download or a checkout gives it a new one. What the source says happened is matched against what the
// timed sources of its node recorded: the log says when steps ran and when training paused between them
// (checkpoints, evaluations, stalls) and when it started and stopped; the node's GPUs were busy and idle at those
// times. The offset that makes the two agree best (Pearson correlation of the log's activity with the GPUs'
// activity over every possible offset, computed by FFT on a coarse grid and refined on a fine one) places it,
// with an uncertainty from how sharp the agreement is and how finely the log gives its times. A match that is
// weak, or not clearly better than another offset, or that leaves most of the log outside the recorded GPU
// data, is no match: the source stays unanchored. The modification time is used only to choose between
// offsets that agree equally well.

#include "analysis/store/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace runlens::store {
class RunDatabase;
}

namespace runlens::importers::anchor {

// Every threshold, with its reason in README.md ("How RunLens decides every source's time").
struct Parameters
{
    double pauseFactor = 3.0;  // an interval whose time per step exceeds this × the local median step is a pause
    size_t paceWindow = 10;    // intervals on each side that make the local median pace
    double busyFraction = 0.2; // GPU activity counts fully from this × the node's 95th percentile
    int64_t coarseBinNs = 1'000'000'000;       // the grid every offset is scored on
    int64_t fineBinNs = 100'000'000;           // the grid the best offset is refined on
    int64_t fineRangeNs = 3'000'000'000;       // ± around the coarse best
    double minCorrelation = 0.5;               // the agreement a placement needs
    double minMargin = 0.1;                    // over the best other local maximum
    double minCoverage = 0.8;                  // of the log's active time that must lie in recorded GPU data
    int64_t minMarginNs = 30'000'000'000;      // idle time assumed around the log (before its start, after its end)
    int64_t edgeGuardNs = 5'000'000'000;       // beyond the log's first and last step: neither busy nor idle
    int64_t minCheckedPauseNs = 1'000'000'000; // pauses at least this long (plus the edges) are checked
    double pauseIdleRatio = 0.5;          // a pause is idle when its mean activity is below this × the active mean
    double minPauseAgreement = 0.75;      // of the checked pauses that must be idle, and of the idle runs
                                          // that must fall on pauses
    int64_t minIdleRunNs = 2'000'000'000; // GPU idle runs at least this long must fall on the log's pauses
};

// What the source says, at times relative to its own zero (the training start, or its first record).
struct LogActivity
{
    std::vector<std::pair<int64_t, int64_t>> active; // [from, to) where steps ran
    int64_t fromNs = 0, toNs = 0;                    // the span the log covers
    int64_t resolutionNs = 0;                        // how finely its times are known
    int64_t pauses = 0;                              // intervals read as pauses
};

// The activity of a log of steps: each record's time (relative, ascending) and step number. An interval whose
// time per step exceeds pauseFactor × the local median is a pause followed by its steps at that pace.
LogActivity activityFromSteps(const std::vector<int64_t>& relNs, const std::vector<int64_t>& steps,
                              int64_t resolutionNs, const Parameters& p = {});

struct Placement
{
    bool anchored = false;
    int64_t startNs = 0;       // the time of the source's zero on the node's own clock (before any node offset)
    int64_t uncertaintyNs = 0; // ±
    double correlation = 0;
    double nextBest = 0; // the best other local maximum
    double coverage = 0;
    int pausesChecked = 0, pausesIdle = 0;
    int idleRuns = 0, idleRunsInPauses = 0;
    std::string signal; // "SM activity of 2 GPUs" …
    std::string method; // one line: what was matched, and how well
    std::string why;    // when not anchored: why, in one line
};

// Places a log on the node's GPU activity (SM activity where recorded, else utilization). priorStartNs (from the
// file's modification time) only breaks ties.
Expected<Placement> placeOnNode(store::RunDatabase& db, int64_t nodeId, const LogActivity& log,
                                std::optional<int64_t> priorStartNs, const Parameters& p = {});

} // namespace runlens::importers::anchor
