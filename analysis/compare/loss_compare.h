#pragma once

// Comparing loss curves (docs/design.md, "Comparing runs"): a run's training loss against its step, its wall
// time and (when the trainer log gives step sizes) its tokens or samples, and a candidate's curve set against the
// baseline's: is the curve unchanged against steps (or tokens), and does the candidate reach a common loss sooner?
// Nothing is written to the runs.

#include "analysis/store/error.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"

#include <QJsonObject>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace runlens::analysis {

// One run's loss curve, a point per logged loss, in time order.
struct LossCurve
{
    std::vector<double> step;   // train.step at the loss' moment, else the loss point's index
    std::vector<double> timeS;  // seconds since the run's first loss point (in the window)
    std::vector<double> tokens; // cumulative tokens (or samples, see sizeUnit) up to the point, NaN when unknown
    std::vector<double> loss;
    std::string sizeUnit; // "tokens", "samples" or "" (tokens all NaN)
    size_t size() const { return loss.size(); }
};

// The loss curve of a run within the window (whole run by default): the node with the most train.loss points;
// its steps from train.step at the same moments; its step sizes from train.tokens_per_s (else samples_per_s) ×
// train.step_time at the same moments, accumulated over the steps between loss points. An empty curve when the
// run logs no loss.
Expected<LossCurve> readLossCurve(store::RunDatabase& db, store::TimeWindow window = {});

// The rolling median over kLossSmoothPoints points (centred; shorter at the ends) that every comparison runs on.
inline constexpr size_t kLossSmoothPoints = 9;
// A curve's noise: the median absolute difference of the raw loss from its rolling median, floored at
// kLossNoiseFloor × the curve's median loss (a quantised or flat loss still has a tolerance).
inline constexpr double kLossNoiseFloor = 0.005;
// Against step or tokens: "unchanged" when |median difference| ≤ kLossNoiseMultiple × the larger curve noise.
inline constexpr double kLossNoiseMultiple = 1.0;
// The x axis is tokens (or samples) when both runs give them and their median sizes per step differ by more.
inline constexpr double kLossStepSizeTolerance = 0.10;
// Against time: "same" when the time-to-loss ratio is within 1 ± kTimeToLossTolerance.
inline constexpr double kTimeToLossTolerance = 0.05;
// Fewer points than this in a curve (or in the common x range): no verdict.
inline constexpr size_t kLossMinPoints = 5;

std::vector<double> rollingMedian(const std::vector<double>& v, size_t points = kLossSmoothPoints);
double lossNoise(const LossCurve& curve);

struct LossComparison
{
    // Against step (or tokens / samples).
    std::string axis; // "step", "tokens" or "samples"; "" when either run has too few loss points
    double xFrom = std::numeric_limits<double>::quiet_NaN(), xTo = std::numeric_limits<double>::quiet_NaN();
    size_t points = 0;                                            // baseline points in the common x range
    double medianDiff = std::numeric_limits<double>::quiet_NaN(); // candidate − baseline (smoothed curves)
    double diffSpread = std::numeric_limits<double>::quiet_NaN(); // median |difference − medianDiff|
    double noiseBase = std::numeric_limits<double>::quiet_NaN(), noiseCand = std::numeric_limits<double>::quiet_NaN();
    double noise = std::numeric_limits<double>::quiet_NaN(); // the tolerance: kLossNoiseMultiple × max of both
    std::string verdict;                                     // "unchanged", "lower", "higher" or "n/a"
    // Against wall time.
    double level = std::numeric_limits<double>::quiet_NaN(); // the higher final smoothed loss + noise
    double timeBaseS = std::numeric_limits<double>::quiet_NaN(), timeCandS = std::numeric_limits<double>::quiet_NaN();
    double timeRatio = std::numeric_limits<double>::quiet_NaN(); // candidate's time / baseline's
    std::string timeVerdict;                                     // "better", "worse", "same" or "n/a"
};

// The candidate's loss curve against the baseline's (see the constants above and docs/design.md §7).
LossComparison compareLoss(const LossCurve& base, const LossCurve& cand);

QJsonObject toJson(const LossComparison& c);

} // namespace runlens::analysis
