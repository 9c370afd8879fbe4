#pragma once

// Shared by the straggler rule's sources (straggler_rule.cpp, rank_straggler_*.cpp): not part of the rules' API.
// What the rules find is described in straggler_rule.h.

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/straggler_rule.h"
#include "analysis/store/trace_reader.h"

#include <QJsonArray>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace runlens::analysis::straggler {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// |N(0, σ)| has its lower quartile at 0.3186 σ (its median at 0.6745 σ: kMadToSigma).
inline constexpr double kQuartileToSigma = 1 / 0.3186;

double medianOf(std::vector<double> v);

// The median of the finite values except index `skip`.
double peersMedian(const std::vector<double>& v, size_t skip);

// Whether a unit late in `late` of its `judged` windows is late more often than chance allows: the chance that a unit
// late at its peers' rate (othersLate of othersJudged) is late that often, times the units compared (any of them
// could have been), is at most `significance` (straggler.significance). Among a thousand ranks a few are late in
// several windows by jitter alone; a straggler is late far beyond that.
bool lateBeyondChance(size_t late, size_t judged, size_t othersLate, size_t othersJudged, size_t units,
                      double significance);

// peersMedian of every index of one vector, each in O(1) after sorting its finite values once.
class PeersMedians
{
public:
    explicit PeersMedians(const std::vector<double>& v);
    // peersMedian(v, skip) for value = v[skip].
    double without(double value) const;

private:
    std::vector<double> m_sorted; // the finite values
};

// A window the ranks are compared in: [from, to).
struct Window
{
    int64_t fromNs = 0, toNs = 0;
    double stepS = kNaN; // the step time there; NaN when the run has no steps
    double seconds() const { return static_cast<double>(toNs - fromNs) / 1e9; }
};

struct RankUnit
{
    std::string node;
    int64_t rank = -1;
    int64_t pid = 0;
    std::string process, thread; // as stored
    std::string cohort;
    int64_t threadId = 0;
    int64_t timedSamples = 0;
    int64_t firstNs = 0, lastNs = 0;
    double nominalS = 0;      // the mean interval of its samples
    std::vector<double> gaps; // intervals between its samples, as read
    double intervalS = 0;     // their median
    bool waits = false;       // seen in a wait: it takes part in the collectives
};

// The trace evidence of one rank.
struct RankTrace
{
    std::string node;
    std::string pid;
    double steps = 0;     // profiled steps it was judged in
    double lateSteps = 0; // ... late in
    std::vector<double> latePerStepS;
    std::vector<double> peerLateSteps;
    std::vector<Window> lateSpans;                            // the late steps (or profiled windows)
    double lateS = 0;                                         // the others' wait in them
    std::vector<std::pair<int64_t, int64_t>> collectiveSpans; // its CPU-side collectives
};

// Per profiled window, the k-th collective of each name matched across the ranks; the latest rank's wait interval
// [the others' median arrival, its arrival] per instance, their union per rank and step.
Expected<std::map<int64_t, RankTrace>> traceLateness(store::TraceReader& traces,
                                                     const std::vector<store::TraceTrackInfo>& tracks,
                                                     const std::vector<Window>& windows, const StragglerParams& q);

enum class Kind : uint8_t
{
    Wait, // communication, GPU wait, idle, or under a collective frame
    Work,
    Checkpoint,
};

// The stack catalogue as the ranks are compared in it: frame keys (name and file), what each callsite counts as, and
// the frames the collectives run under.
struct RankFrames
{
    std::shared_ptr<const store::StackCatalog> catalog;
    std::vector<int32_t> keyOf;        // per catalogue frame
    std::vector<std::string> keyNames; // per key
    std::vector<Kind> kinds;           // per callsite
    std::set<int32_t> collectiveKeys;
};

// Reads the catalogue and classifies its callsites: communication, GPU-wait and idle frames, and the frames the
// collectives run under (learned from the units' samples during their profiled collectives), are waits.
Expected<RankFrames> rankFrames(FlameSource& stacks, std::vector<RankUnit>& units,
                                const std::map<int64_t, RankTrace>& traces, const StragglerParams& q);

// The ranks of the stacks: one training thread per process (the most sampled: its pid, a "pid N" in its name, or the
// thread itself), ranked by a "rank N" in its name or process or by the trace rank of its pid (rankOfPid: (node,
// pid) -> rank), in cohorts of at least two that are compared with each other (processes with a pid whatever their
// busiest thread is called; threads without one by role).
Expected<std::vector<RankUnit>> rankUnits(FlameSource& stacks,
                                          const std::map<std::pair<std::string, int64_t>, int64_t>& rankOfPid);

// Per window and unit: samples of its training thread, those in work (outside the waits) and in checkpoint work.
struct Cell
{
    int64_t samples = 0, work = 0, checkpoint = 0;
};

// The windows read: at most straggler.max_reads thread windows and about straggler.max_samples samples, spread evenly
// (each speaks for the unread ones up to the next read: spanTo), and per read window and unit its samples' cell.
struct Reads
{
    std::vector<size_t> evaluated; // indexes into the joined windows
    std::vector<int64_t> spanTo;   // the end of the span each evaluated window speaks for
    std::vector<Cell> cells;       // [evaluated window][unit]
};

// Chooses the windows to read and reads every unit's samples in them (the units' sampling intervals and whether they
// wait are set as they are read).
Expected<Reads> readCells(FlameSource& stacks, std::vector<RankUnit>& units, const std::vector<Window>& groups,
                          const RankFrames& frames, const StragglerParams& q, const std::atomic<bool>* cancel);

// The frames a late rank (units[unit]) spends the given windows in that its peers do not: per frame (name and file),
// its share of the rank's samples minus the peers' median share; the first is the most exclusive of those within
// 80 % of the largest excess, then by excess.
Status topFrames(FlameSource& stacks, const RankFrames& frames, const std::vector<RankUnit>& units, size_t unit,
                 const std::vector<Window>& spans, const StragglerParams& q, QJsonArray* top, std::string* first);

} // namespace runlens::analysis::straggler
