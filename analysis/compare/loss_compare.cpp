#include "analysis/compare/loss_compare.h"

#include "analysis/rules/episodes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace runlens::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double medianOf(std::vector<double> v)
{
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
    return v.empty() ? kNaN : medianInPlace(v);
}

// A run's median size of a step (tokens or samples), NaN when unknown.
double sizePerStep(const LossCurve& c)
{
    std::vector<double> sizes;
    for (size_t i = 1; i < c.size() && i < c.tokens.size(); ++i) {
        const double ds = c.step[i] - c.step[i - 1];
        if (ds > 0 && std::isfinite(c.tokens[i]) && std::isfinite(c.tokens[i - 1]))
            sizes.push_back((c.tokens[i] - c.tokens[i - 1]) / ds);
    }
    return medianOf(sizes);
}

// (x, smoothed loss) sorted by x, finite values only.
std::vector<std::pair<double, double>> smoothedAgainst(const std::vector<double>& x, const std::vector<double>& smooth)
{
    std::vector<std::pair<double, double>> out;
    for (size_t i = 0; i < x.size() && i < smooth.size(); ++i)
        if (std::isfinite(x[i]) && std::isfinite(smooth[i])) out.emplace_back(x[i], smooth[i]);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
}

double interpolate(const std::vector<std::pair<double, double>>& curve, double x)
{
    auto hi = std::lower_bound(curve.begin(), curve.end(), x, [](const auto& p, double v) { return p.first < v; });
    if (hi == curve.end()) return curve.back().second;
    if (hi == curve.begin() || hi->first == x) return hi->second;
    const auto lo = hi - 1;
    const double f = (x - lo->first) / (hi->first - lo->first);
    return lo->second + f * (hi->second - lo->second);
}

// The first time the smoothed loss is at or below the level, interpolated between points; NaN when never.
double timeToLevel(const std::vector<double>& timeS, const std::vector<double>& smooth, double level)
{
    for (size_t i = 0; i < smooth.size(); ++i) {
        if (!(smooth[i] <= level)) continue;
        if (i == 0 || !(smooth[i - 1] > smooth[i])) return timeS[i];
        const double f = (smooth[i - 1] - level) / (smooth[i - 1] - smooth[i]);
        return timeS[i - 1] + f * (timeS[i] - timeS[i - 1]);
    }
    return kNaN;
}

} // namespace

std::vector<double> rollingMedian(const std::vector<double>& v, size_t points)
{
    std::vector<double> out(v.size(), kNaN);
    const size_t half = std::max<size_t>(points, 1) / 2;
    for (size_t i = 0; i < v.size(); ++i) {
        const size_t from = i >= half ? i - half : 0, to = std::min(v.size(), i + half + 1);
        out[i] = medianOf(std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(from),
                                              v.begin() + static_cast<std::ptrdiff_t>(to)));
    }
    return out;
}

double lossNoise(const LossCurve& curve)
{
    const std::vector<double> smooth = rollingMedian(curve.loss);
    std::vector<double> residual;
    residual.reserve(curve.size());
    for (size_t i = 0; i < curve.size(); ++i)
        residual.push_back(std::fabs(curve.loss[i] - smooth[i]));
    const double noise = medianOf(residual), level = medianOf(curve.loss);
    if (!std::isfinite(noise)) return kNaN;
    return std::max(noise, kLossNoiseFloor * std::fabs(level));
}

Expected<LossCurve> readLossCurve(store::RunDatabase& db, store::TimeWindow window)
{
    LossCurve out;
    store::RunReader reader(db);
    auto series = reader.series();
    if (!series) return series.error();
    const auto present = [&](const store::SeriesInfo& s) -> Expected<std::vector<store::Point>> {
        RUNLENS_ASSIGN_OR_RETURN(auto pts, reader.readPoints(s.id, window));
        std::vector<store::Point> kept;
        for (const store::Point& p : pts)
            if (!p.missing && std::isfinite(p.value)) kept.push_back(p);
        return kept;
    };
    // The loss: the node's series with the most points in the window.
    std::vector<store::Point> loss;
    int64_t node = 0;
    for (const store::SeriesInfo& s : *series) {
        if (s.metric != "train.loss") continue;
        RUNLENS_ASSIGN_OR_RETURN(auto pts, present(s));
        if (pts.size() > loss.size()) {
            loss = std::move(pts);
            node = s.nodeId;
        }
    }
    if (loss.empty()) return out;
    // The same node's values of another metric by moment (the series with the most points).
    const auto byMoment = [&](const char* metric) -> Expected<std::map<int64_t, double>> {
        std::map<int64_t, double> best;
        for (const store::SeriesInfo& s : *series) {
            if (s.metric != metric || s.nodeId != node) continue;
            RUNLENS_ASSIGN_OR_RETURN(auto pts, present(s));
            if (pts.size() <= best.size()) continue;
            best.clear();
            for (const store::Point& p : pts)
                best[p.tsNs] = p.value;
        }
        return best;
    };
    RUNLENS_ASSIGN_OR_RETURN(auto steps, byMoment("train.step"));
    RUNLENS_ASSIGN_OR_RETURN(auto stepTimes, byMoment("train.step_time"));
    const int64_t t0 = loss.front().tsNs;
    for (size_t i = 0; i < loss.size(); ++i) {
        const auto st = steps.find(loss[i].tsNs);
        out.step.push_back(st != steps.end() ? st->second : static_cast<double>(i));
        out.timeS.push_back(static_cast<double>(loss[i].tsNs - t0) / 1e9);
        out.loss.push_back(loss[i].value);
    }
    // Step sizes: tokens (else samples) per second × the step's time at the same moment.
    out.tokens.assign(loss.size(), kNaN);
    for (const char* rate : {"train.tokens_per_s", "train.samples_per_s"}) {
        RUNLENS_ASSIGN_OR_RETURN(auto rates, byMoment(rate));
        std::vector<double> size(loss.size(), kNaN);
        std::vector<double> known;
        for (size_t i = 0; i < loss.size(); ++i) {
            const auto r = rates.find(loss[i].tsNs);
            const auto t = stepTimes.find(loss[i].tsNs);
            if (r != rates.end() && t != stepTimes.end() && r->second > 0 && t->second > 0) {
                size[i] = r->second * t->second;
                known.push_back(size[i]);
            }
        }
        if (known.empty()) continue;
        const double typical = medianOf(known); // for the points without a size
        double total = 0;
        for (size_t i = 0; i < loss.size(); ++i) {
            const double ds = i == 0 ? 1 : out.step[i] - out.step[i - 1];
            total += (std::isfinite(size[i]) ? size[i] : typical) * (ds > 0 ? ds : 1);
            out.tokens[i] = total;
        }
        out.sizeUnit = std::string(rate) == "train.tokens_per_s" ? "tokens" : "samples";
        break;
    }
    return out;
}

LossComparison compareLoss(const LossCurve& base, const LossCurve& cand)
{
    LossComparison r;
    r.verdict = r.timeVerdict = "n/a";
    if (base.size() < kLossMinPoints || cand.size() < kLossMinPoints) return r;
    const std::vector<double> sb = rollingMedian(base.loss), sc = rollingMedian(cand.loss);
    r.noiseBase = lossNoise(base);
    r.noiseCand = lossNoise(cand);
    r.noise = kLossNoiseMultiple * std::max(r.noiseBase, r.noiseCand);

    // Against step, or against tokens (samples) when the runs' steps differ in size.
    r.axis = "step";
    const double sizeB = sizePerStep(base), sizeC = sizePerStep(cand);
    if (!base.sizeUnit.empty() && base.sizeUnit == cand.sizeUnit && sizeB > 0 && sizeC > 0 &&
        std::fabs(sizeC / sizeB - 1) > kLossStepSizeTolerance)
        r.axis = base.sizeUnit;
    const std::vector<double>& xb = r.axis == "step" ? base.step : base.tokens;
    const std::vector<double>& xc = r.axis == "step" ? cand.step : cand.tokens;
    const auto curveB = smoothedAgainst(xb, sb), curveC = smoothedAgainst(xc, sc);
    if (!curveB.empty() && !curveC.empty()) {
        r.xFrom = std::max(curveB.front().first, curveC.front().first);
        r.xTo = std::min(curveB.back().first, curveC.back().first);
        std::vector<double> diffs;
        for (const auto& [x, y] : curveB)
            if (x >= r.xFrom && x <= r.xTo) diffs.push_back(interpolate(curveC, x) - y);
        r.points = diffs.size();
        if (diffs.size() >= kLossMinPoints) {
            r.medianDiff = medianOf(diffs);
            std::vector<double> dev;
            dev.reserve(diffs.size());
            for (double d : diffs)
                dev.push_back(std::fabs(d - r.medianDiff));
            r.diffSpread = medianOf(dev);
            r.verdict = std::fabs(r.medianDiff) <= r.noise ? "unchanged" : r.medianDiff < 0 ? "lower" : "higher";
        }
    }

    // Against wall time: when each run's smoothed loss first reaches the higher of their final smoothed losses plus
    // the noise (so a curve that flattens out reaches it on its way down, not at a dip of its noise).
    r.level = std::max(sb.back(), sc.back()) + (std::isfinite(r.noise) ? r.noise : 0);
    r.timeBaseS = timeToLevel(base.timeS, sb, r.level);
    r.timeCandS = timeToLevel(cand.timeS, sc, r.level);
    if (std::isfinite(r.timeBaseS) && std::isfinite(r.timeCandS) && r.timeBaseS > 0) {
        r.timeRatio = r.timeCandS / r.timeBaseS;
        r.timeVerdict = r.timeRatio < 1 - kTimeToLossTolerance   ? "better"
                        : r.timeRatio > 1 + kTimeToLossTolerance ? "worse"
                                                                 : "same";
    }
    return r;
}

QJsonObject toJson(const LossComparison& c)
{
    const auto num = [](double v) { return std::isfinite(v) ? QJsonValue(v) : QJsonValue(); };
    return QJsonObject{{QStringLiteral("axis"), QString::fromStdString(c.axis)},
                       {QStringLiteral("x_from"), num(c.xFrom)},
                       {QStringLiteral("x_to"), num(c.xTo)},
                       {QStringLiteral("points"), static_cast<qint64>(c.points)},
                       {QStringLiteral("median_difference"), num(c.medianDiff)},
                       {QStringLiteral("difference_spread"), num(c.diffSpread)},
                       {QStringLiteral("noise_a"), num(c.noiseBase)},
                       {QStringLiteral("noise_b"), num(c.noiseCand)},
                       {QStringLiteral("noise"), num(c.noise)},
                       {QStringLiteral("verdict"), QString::fromStdString(c.verdict)},
                       {QStringLiteral("level"), num(c.level)},
                       {QStringLiteral("time_a_s"), num(c.timeBaseS)},
                       {QStringLiteral("time_b_s"), num(c.timeCandS)},
                       {QStringLiteral("time_ratio"), num(c.timeRatio)},
                       {QStringLiteral("time_verdict"), QString::fromStdString(c.timeVerdict)}};
}

} // namespace runlens::analysis
