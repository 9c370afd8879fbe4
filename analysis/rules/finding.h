#pragma once

// A finding: what a rule concluded, where and when, what it costs, the numbers behind it and what to change.
// The GUI, `runlens analyze` and the report show the same values.

#include <QJsonArray>
#include <QJsonObject>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace runlens::analysis {

struct FindingEpisode
{
    int64_t startNs = 0, endNs = 0;
    // Seconds this episode would save without its cause (its share of the finding's saving); negative: not known
    // per episode (the finding's saving is then spread over its episodes by duration).
    double savingS = -1;
};

struct Finding
{
    std::string rule;      // COMM_BOUND, CKPT_GAP, INPUT_STALL, STRAGGLER, LOW_SM_EFF, HANG, THROTTLE
    std::string severity;  // info, warn, critical
    double confidence = 1; // 0–1, lower when inputs are missing
    bool primary = true;   // the cause covers ≥ 80 % of the episodes; false: "mixed"
    std::string title;     // one line
    std::vector<std::string> nodes, gpus;
    std::vector<FindingEpisode> episodes;
    double impact = 0;  // fraction of the wall time
    double savingS = 0; // seconds removing it would save
    // A symptom of another finding (e.g. the waiting ranks' communication wait behind a straggler): that finding's
    // rule and title. Empty when the finding stands on its own.
    std::string causedBy;
    QJsonObject evidence;
    std::string recommendation;
};

// How a finding stands: "primary" (its cause covers ≥ 80 % of its episodes), "contributing" (LOW_SM_EFF where
// other findings explain the time), "symptom" (caused by another finding: causedBy) or "mixed" (the cause covers
// less, or the stack samples in its episodes show another cause more than its own; evidence.cause_shares lists
// the causes).
std::string roleOf(const Finding& f);
// A cause covering at least this share of its finding's episodes (slices, slots or GPU time) makes the finding
// primary; below it the finding is mixed. Part of what a finding's role means, not a tuning knob.
inline constexpr double kPrimaryCover = 0.8;
// Below this share of the busy stack samples in its episodes, a finding's own cause (communication for
// COMM_BOUND, input or host work for INPUT_STALL) does not make it primary when another cause has more.
inline constexpr double kOwnCauseMinShare = 0.2;
bool stacksShowOtherCause(const Finding& f);
// "(contributing) " / "(mixed: communication 55 %, host_compute 30 %) " / "" for primary.
std::string rolePrefix(const Finding& f);
// The mean interval between the episodes' starts (s) and its coefficient of variation; both 0 for fewer than two.
struct EpisodePeriod
{
    double periodS = 0, cv = 0;
};
EpisodePeriod periodOf(const std::vector<FindingEpisode>& episodes);

// The seconds the finding saves inside [fromNs, toNs): its episodes' savings where known, else its saving spread
// over its episodes by duration.
double savingWithin(const Finding& f, int64_t fromNs, int64_t toNs);

// The `count` largest amounts of a name → amount map (frames → samples, kernels → ns), largest first (equal
// amounts: the later name first), as evidence: [{nameKey: name, valueKey: amount / per}, …].
QJsonArray topAmounts(const std::map<std::string, int64_t>& amounts, size_t count, const QString& nameKey,
                      const QString& valueKey, double per);

QJsonObject toJson(const Finding& f);
// The inverse of toJson (missing fields keep their defaults).
Finding findingFromJson(const QJsonObject& o);

} // namespace runlens::analysis
