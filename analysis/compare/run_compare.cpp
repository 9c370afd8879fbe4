#include "analysis/compare/run_compare.h"

#include "analysis/mfu/mfu.h"
#include "analysis/rules/steady_state.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

namespace runlens::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> finite(const std::vector<double>& v)
{
    std::vector<double> out;
    out.reserve(v.size());
    for (double x : v)
        if (std::isfinite(x)) out.push_back(x);
    return out;
}

double mean(const std::vector<double>& v)
{
    const auto f = finite(v);
    return f.empty() ? kNaN : std::accumulate(f.begin(), f.end(), 0.0) / static_cast<double>(f.size());
}

// The rules' parameters for this run: the defaults and the overrides stored with its analysis.
RuleParams paramsOf(const std::optional<StoredRunAnalysis>& stored)
{
    RuleParams p = RuleParams::defaults();
    if (stored)
        for (const auto& [name, value] : stored->overrides)
            (void)p.set(fmt::format("{}={}", name, value));
    return p;
}

// Per-slot values (NaN: none) into means over blocks of `block` slots within [first, last); each block's first
// slot into `starts` when given.
std::vector<double> blockMeans(const std::vector<double>& perSlot, size_t first, size_t last, size_t block,
                               std::vector<size_t>* starts = nullptr)
{
    std::vector<double> out;
    for (size_t b = first; b < last; b += block) {
        double sum = 0;
        int n = 0;
        for (size_t i = b; i < std::min(last, b + block); ++i)
            if (std::isfinite(perSlot[i])) {
                sum += perSlot[i];
                ++n;
            }
        if (n > 0) { // (a metric sampled more coarsely than the grid has few samples a block)
            out.push_back(sum / n);
            if (starts) starts->push_back(b);
        }
    }
    return out;
}

// Seconds of [from, to) covered by the union of the intervals.
double coveredSeconds(std::vector<std::pair<int64_t, int64_t>> intervals, int64_t from, int64_t to)
{
    std::sort(intervals.begin(), intervals.end());
    double s = 0;
    int64_t reached = from;
    for (auto [a, b] : intervals) {
        a = std::max(a, reached);
        b = std::min(b, to);
        if (b > a) {
            s += static_cast<double>(b - a) / 1e9;
            reached = b;
        }
    }
    return s;
}

struct RowDef
{
    const char* id;
    const char* label;
    const char* unit;
    const char* kind; // "time": lower is faster; "rate": higher/lower; "": no test
};

// The fixed rows, in the order shown (finding rows follow).
constexpr RowDef kRows[] = {
    {"step_time_median", "step time (median)", "s", "time"},
    {"step_time_p90", "step time (p90)", "s", ""},
    {"steps", "steps", "count", ""},
    {"iterations_per_s", "iterations/s", "1/s", "rate"},
    {"samples_per_s", "samples/s", "1/s", "rate"},
    {"tokens_per_s", "tokens/s", "1/s", "rate"},
    {"mfu", "MFU (model FLOPs utilization)", "%", "rate"},
    {"step_size", "step size (tokens or samples)", "count", ""},
    {"step_time_base_size", "step time at the baseline's step size", "s", "time"},
    {"gpu_util", "GPU utilization while training", "%", "rate"},
    {"sm_active", "SM activity while training", "%", "rate"},
    {"tensor_active", "tensor activity while training", "%", "rate"},
    {"network", "network (tx + rx)", "B/s", "rate"},
    {"infiniband", "InfiniBand (tx + rx, all nodes)", "B/s", "rate"},
    {"link_per_port", "interconnect per port and direction", "B/s", "rate"},
    {"storage_write", "storage writes", "B/s", "rate"},
    {"checkpoint_s", "checkpoint stalls (CKPT_GAP)", "s", ""},
    {"checkpoint_pct", "checkpoint stalls, share of window", "%", ""},
    {"budget_compute", "time: compute", "%", ""},
    {"budget_comm_wait", "time: communication wait", "%", ""},
    {"budget_input", "time: input / host wait", "%", ""},
    {"budget_checkpoint", "time: checkpoint", "%", ""},
    {"budget_hang", "time: hang", "%", ""},
    {"budget_idle", "time: other idle", "%", ""},
    {"budget_startup", "time: start-up", "%", ""},
};

} // namespace

MannWhitney mannWhitneyU(const std::vector<double>& aIn, const std::vector<double>& bIn)
{
    const std::vector<double> a = finite(aIn), b = finite(bIn);
    MannWhitney r;
    const size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
    if (n1 == 0 || n2 == 0) return r;
    std::vector<std::pair<double, int>> all; // value, 0: a, 1: b
    all.reserve(n);
    for (double x : a)
        all.emplace_back(x, 0);
    for (double x : b)
        all.emplace_back(x, 1);
    std::sort(all.begin(), all.end());
    double rankSumB = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && all[j].first == all[i].first)
            ++j;
        const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2; // mid-rank of the tied run
        for (size_t k = i; k < j; ++k)
            if (all[k].second == 1) rankSumB += rank;
        const double t = static_cast<double>(j - i);
        ties += t * t * t - t;
        i = j;
    }
    const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2), dn = static_cast<double>(n);
    r.u = rankSumB - dn2 * (dn2 + 1) / 2;
    const double mu = dn1 * dn2 / 2;
    const double var = dn1 * dn2 / 12 * ((dn + 1) - ties / (dn * (dn - 1)));
    if (!(var > 0)) return r; // every value the same
    const double diff = r.u - mu;
    const double corrected = std::max(0.0, std::fabs(diff) - 0.5);
    r.z = std::copysign(corrected / std::sqrt(var), diff);
    r.p = std::erfc(std::fabs(r.z) / std::sqrt(2.0));
    return r;
}

namespace {

// The run being summarised, once its window is chosen: its metrics, the rules' parameters, the slots starting in
// the window [first, last), and the summary being filled.
struct SummaryContext
{
    const RunMetrics& m;
    const RuleParams& params;
    size_t first = 0, last = 0;
    RunSummary& out;

    double windowS() const { return static_cast<double>(out.toNs - out.fromNs) / 1e9; }
    bool inWindow(int64_t t) const { return t >= out.fromNs && t < out.toNs; }
    double sinceFrom(int64_t t) const { return static_cast<double>(t - out.fromNs) / 1e9; }
};

// The window: given, the whole run, or from the latest node's steady start on.
void chooseWindow(const RunMetrics& m, const RuleParams& params, const CompareWindowRequest& request, RunSummary& out)
{
    const TimeGrid& grid = m.grid;
    const int64_t gridEnd = grid.slotStart(grid.size);
    size_t steadyFirst = 0;
    for (const NodeMetrics& node : m.nodes) {
        const bool hasGpus =
            std::any_of(m.gpus.begin(), m.gpus.end(), [&](const GpuMetrics& g) { return g.node == node.node; });
        if (!hasGpus) continue;
        const size_t s = steadyStartSlot(m, node.node, params);
        if (s < grid.size) steadyFirst = std::max(steadyFirst, s);
    }
    if (request.window) {
        out.windowKind = "given";
        out.fromNs = std::max(request.window->fromNs, grid.startNs);
        out.toNs = std::min(request.window->toNs, gridEnd);
    } else if (request.wholeRun) {
        out.windowKind = "whole run";
        out.fromNs = grid.startNs;
        out.toNs = gridEnd;
    } else {
        out.windowKind = "steady state";
        out.fromNs = grid.slotStart(steadyFirst);
        out.toNs = gridEnd;
    }
}

// The first slot starting at or after t.
size_t slotAtOrAfter(const TimeGrid& grid, int64_t t)
{
    if (t <= grid.startNs) return size_t{0};
    const auto i = static_cast<size_t>((t - grid.startNs + grid.stepNs - 1) / grid.stepNs);
    return std::min(i, grid.size);
}

// Steps: the trainer log's step times in the window (the node logging the most), else detected steps; their
// rows. Returns the node whose log gave them (none for detected steps).
const NodeMetrics* addStepTimes(const SummaryContext& c, std::vector<double>& steps)
{
    RunSummary& out = c.out;
    const auto inWindow = [&](int64_t t) { return c.inWindow(t); };
    const NodeMetrics* logNode = nullptr;
    size_t logged = 0;
    for (const NodeMetrics& node : c.m.nodes) {
        const size_t n = static_cast<size_t>(std::count_if(node.stepTimes.begin(), node.stepTimes.end(),
                                                           [&](const store::Point& p) { return inWindow(p.tsNs); }));
        if (n > logged) {
            logged = n;
            logNode = &node;
        }
    }
    CompareSeries& stepLine = out.series["step_time_median"];
    if (logNode) {
        out.stepSource = "trainer log";
        for (const store::Point& p : logNode->stepTimes)
            if (inWindow(p.tsNs) && std::isfinite(p.value) && p.value > 0) {
                steps.push_back(p.value);
                stepLine.tS.push_back(c.sinceFrom(p.tsNs));
                stepLine.value.push_back(p.value);
            }
    } else {
        const std::vector<StepTimes> detected = computeStepTimes(c.m, c.params);
        const StepTimes* best = nullptr;
        size_t most = 0;
        for (const StepTimes& st : detected) {
            const size_t n = static_cast<size_t>(std::count_if(st.startsNs.begin(), st.startsNs.end(), inWindow));
            if (n > most) {
                most = n;
                best = &st;
            }
        }
        if (best) {
            out.stepSource = "detected steps";
            for (size_t i = 1; i < best->startsNs.size(); ++i)
                if (inWindow(best->startsNs[i - 1]) && inWindow(best->startsNs[i])) {
                    steps.push_back(static_cast<double>(best->startsNs[i] - best->startsNs[i - 1]) / 1e9);
                    stepLine.tS.push_back(c.sinceFrom(best->startsNs[i]));
                    stepLine.value.push_back(steps.back());
                }
        }
    }
    out.stepEndsS = stepLine.tS;
    if (stepLine.tS.empty()) out.series.erase("step_time_median");
    if (!steps.empty()) {
        auto& metric = out.metrics;
        metric["step_time_median"] = {quantile(steps, 0.5), steps};
        metric["step_time_p90"] = {quantile(steps, 0.9), {}};
        metric["steps"] = {static_cast<double>(steps.size()), {}};
        std::vector<double> rates;
        rates.reserve(steps.size());
        for (double s : steps)
            rates.push_back(1 / s);
        metric["iterations_per_s"] = {1 / mean(steps), rates};
    }
    return logNode;
}

// The trainer log's throughput and, with its step times (logNode's) at the same moments, the step size.
Status addThroughput(store::RunDatabase& db, const SummaryContext& c, const NodeMetrics* logNode)
{
    RunSummary& out = c.out;
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto series, reader.series());
    const auto loggedPoints = [&](const char* name) -> Expected<std::vector<store::Point>> {
        std::vector<store::Point> best;
        for (const store::SeriesInfo& s : series) {
            if (s.metric != name) continue;
            RUNLENS_ASSIGN_OR_RETURN(auto pts, reader.readPoints(s.id, {out.fromNs, out.toNs - 1}));
            std::vector<store::Point> present;
            for (const store::Point& p : pts)
                if (!p.missing && std::isfinite(p.value)) present.push_back(p);
            if (present.size() > best.size()) best = std::move(present);
        }
        return best;
    };
    std::map<int64_t, double> stepAt; // the step time logged at each moment
    if (logNode)
        for (const store::Point& p : logNode->stepTimes)
            if (c.inWindow(p.tsNs)) stepAt[p.tsNs] = p.value;
    for (const char* name : {"train.tokens_per_s", "train.samples_per_s"}) {
        RUNLENS_ASSIGN_OR_RETURN(auto pts, loggedPoints(name));
        if (pts.empty()) continue;
        std::vector<double> values;
        CompareSeries& line = out.series[std::string(name).substr(6)];
        for (const store::Point& p : pts) {
            values.push_back(p.value);
            line.tS.push_back(c.sinceFrom(p.tsNs));
            line.value.push_back(p.value);
        }
        out.metrics[std::string(name).substr(6)] = {quantile(values, 0.5), values};
        if (!out.stepSizeUnit.empty()) continue; // tokens first
        for (const store::Point& p : pts)
            if (auto it = stepAt.find(p.tsNs); it != stepAt.end() && it->second > 0 && p.value > 0)
                out.sizedSteps.emplace_back(it->second, p.value * it->second);
        if (!out.sizedSteps.empty()) {
            out.stepSizeUnit = std::string(name) == "train.tokens_per_s" ? "tokens" : "samples";
            std::vector<double> sizes;
            sizes.reserve(out.sizedSteps.size());
            for (const auto& s : out.sizedSteps)
                sizes.push_back(s.second);
            out.metrics["step_size"] = {quantile(sizes, 0.5), {}};
        }
    }
    return okStatus();
}

// MFU: linear in the logged throughput (or the log's own TFLOP/s), so each logged value gives one.
Status addMfu(store::RunDatabase& db, RunSummary& out)
{
    auto mfu = runMfu(db);
    if (!mfu) return mfu.error();
    out.mfuText = mfuLine(*mfu);
    if (!mfu->mfu) return okStatus();
    std::string from;
    double perUnit = kNaN; // MFU in % per unit of the logged metric
    if (mfu->flopsSource == "model" && mfu->tokensPerS && *mfu->tokensPerS > 0) {
        from = mfu->tokensSource == "samples_per_s" ? "samples_per_s" : "tokens_per_s";
        perUnit = 100 * *mfu->mfu / *mfu->tokensPerS * (from == "samples_per_s" && mfu->seqLen ? *mfu->seqLen : 1);
    }
    if (const auto it = out.series.find(from); std::isfinite(perUnit) && it != out.series.end()) {
        CompareSeries line = it->second;
        for (double& v : line.value)
            v *= perUnit;
        out.metrics["mfu"] = {quantile(line.value, 0.5), line.value};
        out.series["mfu"] = std::move(line);
    } else if (!mfu->flopsSource.empty()) {
        out.metrics["mfu"] = {100 * *mfu->mfu, {}}; // the log's TFLOP/s: one typical value, no test
    }
    return okStatus();
}

// The findings: the run's stored ones, else an analysis now (kept in memory only).
Expected<RunAnalysis> findingsOf(store::RunDatabase& db, const std::optional<StoredRunAnalysis>& stored,
                                 const RuleParams& params, RunSummary& out)
{
    if (stored) {
        out.analysisStored = true;
        return stored->analysis;
    }
    return analyzeRun(db, params);
}

// The slots the GPUs' activity rows leave out. The GPUs' activity describes them while they train: the slots
// inside a checkpoint stall or a hang, and the slots where the GPUs idle (mean utilization at most
// stall.util_max, the waterfall's "other idle"), are left out. Those have rows of their own; kept here, how often a
// run checkpoints or idles in its window would move every activity row. Network and storage rates keep every slot:
// a checkpoint's writes are storage traffic.
std::vector<uint8_t> stalledSlots(const SummaryContext& c, const RunAnalysis& analysis)
{
    const TimeGrid& grid = c.m.grid;
    std::vector<uint8_t> stalled(grid.size, 0);
    for (const Finding& f : analysis.findings)
        if (f.rule == "CKPT_GAP" || f.rule == "HANG")
            for (const FindingEpisode& e : f.episodes) {
                const auto [first, end] = grid.slotsOverlapping(e.startNs, e.endNs);
                for (size_t i = first; i < end; ++i)
                    stalled[i] = 1;
            }
    const double idleMax = c.params.get("stall.util_max");
    for (size_t i = c.first; i < c.last; ++i) {
        // Unlike the waterfall's idle time, a slot without utilization values is kept.
        double sum = 0;
        int n = 0;
        for (const GpuMetrics& g : c.m.gpus)
            if (i < g.util.size() && std::isfinite(g.util[i])) {
                sum += g.util[i];
                ++n;
            }
        if (n > 0 && sum / n <= idleMax) stalled[i] = 1;
    }
    return stalled;
}

// Per slot of the window outside `stalled`: the mean over the GPUs of member (times scale); NaN elsewhere.
std::vector<double> gpuMean(const SummaryContext& c, const std::vector<uint8_t>& stalled,
                            SlotValues GpuMetrics::*member, double scale)
{
    std::vector<double> perSlot(c.m.grid.size, kNaN);
    for (size_t i = c.first; i < c.last; ++i) {
        if (stalled[i]) continue;
        double sum = 0;
        int n = 0;
        for (const GpuMetrics& g : c.m.gpus) {
            const SlotValues& v = g.*member;
            if (const double x = i < v.size() ? v[i] : kNaN; std::isfinite(x)) {
                sum += x * scale;
                ++n;
            }
        }
        if (n > 0) perSlot[i] = sum / n;
    }
    return perSlot;
}

// Per slot of the window: the sum over the nodes (those on InfiniBand only, when asked) of the members.
std::vector<double> nodeSum(const SummaryContext& c, std::initializer_list<SlotValues NodeMetrics::*> members,
                            bool infiniBandOnly)
{
    std::vector<double> perSlot(c.m.grid.size, kNaN);
    for (size_t i = c.first; i < c.last; ++i) {
        double sum = 0;
        int n = 0;
        for (const NodeMetrics& node : c.m.nodes) {
            if (infiniBandOnly && !node.linkIsInfiniBand) continue;
            for (auto member : members) {
                const SlotValues& v = node.*member;
                if (const double x = i < v.size() ? v[i] : kNaN; std::isfinite(x)) {
                    sum += x;
                    ++n;
                }
            }
        }
        if (n > 0) perSlot[i] = sum;
    }
    return perSlot;
}

// Rates: per-slot values over the GPUs (means) or nodes (sums), compared as means over blocks of about a step.
void addRates(const SummaryContext& c, const RunAnalysis& analysis, const std::vector<double>& steps)
{
    RunSummary& out = c.out;
    const TimeGrid& grid = c.m.grid;
    const size_t first = c.first, last = c.last;
    const double slotS = static_cast<double>(grid.stepNs) / 1e9;
    const double stepS = steps.empty() ? slotS : quantile(steps, 0.5);
    const size_t block = std::clamp<size_t>(static_cast<size_t>(std::llround(stepS / slotS)), 1,
                                            std::max<size_t>(1, (last - first) / 10));
    out.blockS = static_cast<double>(block) * slotS;
    const std::vector<uint8_t> stalled = stalledSlots(c, analysis);
    const auto addRate = [&](const char* id, const std::vector<double>& perSlot) {
        std::vector<double> inside(perSlot.begin() + static_cast<std::ptrdiff_t>(first),
                                   perSlot.begin() + static_cast<std::ptrdiff_t>(last));
        const double value = mean(inside);
        if (!std::isfinite(value)) return;
        std::vector<size_t> starts;
        out.metrics[id] = {value, blockMeans(perSlot, first, last, block, &starts)};
        CompareSeries& line = out.series[id];
        line.value = out.metrics[id].samples;
        for (size_t b : starts)
            line.tS.push_back(c.sinceFrom(grid.slotStart(b)) +
                              static_cast<double>(std::min(block, last - b)) * slotS / 2);
    };
    addRate("gpu_util", gpuMean(c, stalled, &GpuMetrics::util, 1));
    addRate("sm_active", gpuMean(c, stalled, &GpuMetrics::smActive, 100));
    addRate("tensor_active", gpuMean(c, stalled, &GpuMetrics::tensorActive, 100));
    addRate("network", nodeSum(c, {&NodeMetrics::netTx, &NodeMetrics::netRx}, false));
    addRate("infiniband", nodeSum(c, {&NodeMetrics::linkTx, &NodeMetrics::linkRx}, true));
    // The interconnect per port and direction: what a port's capacity (25 GB/s for 200 Gb/s) is set against.
    size_t ports = 0;
    for (const NodeMetrics& node : c.m.nodes)
        if (!node.linkTx.empty() || !node.linkRx.empty()) ports += node.linkPorts;
    std::vector<double> perPort = nodeSum(c, {&NodeMetrics::linkTx, &NodeMetrics::linkRx}, false);
    if (ports > 0) {
        for (double& v : perPort)
            v /= static_cast<double>(2 * ports);
        addRate("link_per_port", perPort);
    }
    addRate("storage_write", nodeSum(c, {&NodeMetrics::diskWrite}, false));
}

// The checkpoint rows, and per rule its saving and its impact as the model defines it (the window's share
// inside its episodes).
void addFindingRows(const SummaryContext& c, const RunAnalysis& analysis)
{
    RunSummary& out = c.out;
    const double windowS = c.windowS();
    std::vector<std::pair<int64_t, int64_t>> checkpoints;
    for (const Finding& f : analysis.findings)
        if (f.rule == "CKPT_GAP")
            for (const FindingEpisode& e : f.episodes)
                checkpoints.emplace_back(e.startNs, e.endNs);
    const double ckptS = coveredSeconds(checkpoints, out.fromNs, out.toNs);
    out.metrics["checkpoint_s"] = {ckptS, {}};
    out.metrics["checkpoint_pct"] = {100 * ckptS / windowS, {}};
    std::map<std::string, double> savingByRule;
    std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> episodesByRule;
    for (const Finding& f : analysis.findings) {
        if (!f.causedBy.empty()) continue; // a symptom: its cause's saving counts
        const double s = savingWithin(f, out.fromNs, out.toNs);
        if (!(s > 0)) continue;
        if (!savingByRule.count(f.rule)) out.findingRules.push_back(f.rule);
        savingByRule[f.rule] += s;
        for (const FindingEpisode& e : f.episodes)
            episodesByRule[f.rule].emplace_back(e.startNs, e.endNs);
    }
    out.findings = analysis.findings;
    for (const auto& [rule, s] : savingByRule) {
        out.metrics["finding_" + rule + "_saving"] = {s, {}};
        out.metrics["finding_" + rule + "_saving_pct"] = {100 * s / windowS, {}};
        out.metrics["finding_" + rule + "_impact"] = {
            100 * coveredSeconds(episodesByRule[rule], out.fromNs, out.toNs) / windowS, {}};
    }
}

// One node's waterfall within the window (as the analysis' budget of the node, windowed); false without GPUs.
bool addNodeBudget(const SummaryContext& c, const RunAnalysis& analysis, const NodeMetrics& node, TimeBudget& b)
{
    const std::vector<const GpuMetrics*> gpus = gpusOf(c.m, node.node);
    if (gpus.empty()) return false;
    const TimeGrid& grid = c.m.grid;
    const double slotS = static_cast<double>(grid.stepNs) / 1e9;
    const size_t first = c.first, last = c.last;
    const size_t start = steadyStartSlot(c.m, node.node, c.params);
    const auto on = [&](const Finding& f) {
        return std::find(f.nodes.begin(), f.nodes.end(), node.node) != f.nodes.end();
    };
    std::vector<uint8_t> covered(grid.size, 0);
    double nHang = 0, nCkpt = 0, nInput = 0, nComm = 0, nIdle = 0;
    for (const Finding& f : analysis.findings) {
        if (!on(f)) continue;
        if (f.rule == "HANG" || f.rule == "CKPT_GAP") {
            for (const FindingEpisode& e : f.episodes)
                coverEpisode(grid, e, std::max(first, start), last, covered, f.rule == "HANG" ? nHang : nCkpt);
        } else if (f.rule == "INPUT_STALL" && f.causedBy.empty()) {
            nInput += savingWithin(f, c.out.fromNs, c.out.toNs);
        } else if (f.rule == "COMM_BOUND" && f.causedBy.empty()) {
            nComm += savingWithin(f, c.out.fromNs, c.out.toNs);
        }
    }
    double nStartup = 0;
    const double idleMax = c.params.get("stall.util_max");
    for (size_t i = first; i < last; ++i) {
        if (i < start)
            nStartup += slotS;
        else if (!covered[i] && gpusIdleAt(gpus, i, idleMax))
            nIdle += slotS;
    }
    const double nWall = static_cast<double>(last - first) * slotS;
    const double fixed = nStartup + nHang + nCkpt + nIdle, waits = nInput + nComm;
    if (fixed + waits > nWall && waits > 0) { // the estimates overlap: the waits scaled down to fit
        const double room = std::max(0.0, nWall - fixed);
        nInput *= room / waits;
        nComm *= room / waits;
    }
    b.wallS += nWall;
    b.startupS += nStartup;
    b.hangS += nHang;
    b.checkpointS += nCkpt;
    b.inputS += nInput;
    b.commWaitS += nComm;
    b.idleS += nIdle;
    return true;
}

// The goodput waterfall within the window, over the nodes with GPUs (as the analysis' budgets, windowed).
void addBudget(const SummaryContext& c, const RunAnalysis& analysis)
{
    TimeBudget all;
    for (const NodeMetrics& node : c.m.nodes)
        addNodeBudget(c, analysis, node, all);
    if (!(all.wallS > 0)) return;
    const double wall = all.wallS;
    const auto pct = [&](double s) { return CompareMetric{100 * s / wall, {}}; };
    auto& metric = c.out.metrics;
    metric["budget_startup"] = pct(all.startupS);
    metric["budget_hang"] = pct(all.hangS);
    metric["budget_checkpoint"] = pct(all.checkpointS);
    metric["budget_input"] = pct(all.inputS);
    metric["budget_comm_wait"] = pct(all.commWaitS);
    metric["budget_idle"] = pct(all.idleS);
    metric["budget_compute"] = pct(
        std::max(0.0, wall - (all.startupS + all.hangS + all.checkpointS + all.inputS + all.commWaitS + all.idleS)));
}

} // namespace

Expected<RunSummary> summarizeRun(store::RunDatabase& db, const std::string& label, const CompareWindowRequest& request)
{
    RunSummary out;
    out.label = label;
    auto stored = loadStoredAnalysis(db);
    if (!stored) return stored.error();
    const RuleParams params = paramsOf(*stored);
    auto metrics = loadRunMetrics(db, static_cast<int64_t>(params.get("rules.grid_s") * 1e9));
    if (!metrics) return metrics.error();
    const RunMetrics& m = *metrics;
    if (m.grid.size == 0)
        return makeError(ErrorCode::Usage, fmt::format("{}: the run has no metrics to compare", label));
    chooseWindow(m, params, request, out);
    const size_t first = slotAtOrAfter(m.grid, out.fromNs), last = slotAtOrAfter(m.grid, out.toNs);
    if (out.toNs <= out.fromNs || last <= first)
        return makeError(ErrorCode::Usage,
                         fmt::format("{}: the window is empty (the run's metrics do not reach into it)", label));
    const SummaryContext c{m, params, first, last, out};
    std::vector<double> steps;
    const NodeMetrics* logNode = addStepTimes(c, steps);
    RUNLENS_TRY(addThroughput(db, c, logNode));
    RUNLENS_TRY(addMfu(db, out));
    RUNLENS_ASSIGN_OR_RETURN(const RunAnalysis analysis, findingsOf(db, *stored, params, out));
    addRates(c, analysis, steps);
    addFindingRows(c, analysis);
    addBudget(c, analysis);
    return out;
}

double stepsAt(const RunSummary& run, double tS)
{
    const std::vector<double>& ends = run.stepEndsS;
    if (ends.empty()) return kNaN;
    const auto it = std::lower_bound(ends.begin(), ends.end(), tS);
    const size_t i = static_cast<size_t>(it - ends.begin()); // steps ended before tS
    // Within a step: the share of it done, linearly (the first step from the window's start, the ones after the
    // last at the last step's length).
    const double from = i == 0 ? 0.0 : ends[i - 1];
    const double to =
        i < ends.size() ? ends[i] : from + (ends.size() > 1 ? ends.back() - ends[ends.size() - 2] : ends.back());
    return static_cast<double>(i) +
           (to > from ? std::clamp((tS - from) / (to - from), 0.0, i < ends.size() ? 1.0 : 1e9) : 0.0);
}

namespace {

// A candidate's difference from the baseline in a row, and its test on the metrics' samples when the row has one
// (kind "time" or "rate").
CompareCell compareCell(double base, double value, const CompareMetric* baseMetric, const CompareMetric* metric,
                        const std::string& kind)
{
    CompareCell cell;
    if (std::isfinite(base) && std::isfinite(value)) {
        cell.delta = value - base;
        if (base != 0) cell.deltaPct = 100 * (value - base) / std::fabs(base);
    }
    if (kind.empty() || !baseMetric || !metric) return cell;
    const auto a = finite(baseMetric->samples), c = finite(metric->samples);
    if (a.size() < kCompareMinSamples || c.size() < kCompareMinSamples) {
        cell.verdict = "too few samples";
        return cell;
    }
    const MannWhitney t = mannWhitneyU(a, c);
    cell.p = t.p;
    if (t.p >= kCompareAlpha)
        cell.verdict = "no significant change";
    else if (std::isfinite(cell.deltaPct) && std::fabs(cell.deltaPct) < 100 * kCompareMinEffect)
        cell.verdict = fmt::format("no significant change (under {:.0f} %)", 100 * kCompareMinEffect);
    else if (kind == "time")
        cell.verdict = t.z < 0 ? "faster" : "slower";
    else
        cell.verdict = t.z > 0 ? "higher" : "lower";
    return cell;
}

// One row: every run's value (the step times scaled to the baseline's step size, `scaled`, for
// step_time_base_size) and each candidate's cell; none when no run has a value.
std::optional<CompareRow> compareRow(const std::vector<RunSummary>& runs, const std::vector<CompareMetric>& scaled,
                                     const std::string& id, const std::string& label, const std::string& unit,
                                     const std::string& kind)
{
    CompareRow row;
    row.id = id;
    row.label = label;
    row.unit = unit;
    if (kind == "time")
        row.samplesOf = "steps";
    else if (kind == "rate")
        row.samplesOf = id == "iterations_per_s"                                       ? "steps"
                        : id == "samples_per_s" || id == "tokens_per_s" || id == "mfu" ? "logged values"
                                                                                       : "per-step means";
    const CompareMetric none{0, {}};
    std::vector<const CompareMetric*> ms;
    bool any = false;
    for (size_t r = 0; r < runs.size(); ++r) {
        const CompareMetric* c = nullptr;
        if (id == "step_time_base_size") {
            if (!scaled[r].samples.empty()) c = &scaled[r];
        } else if (auto it = runs[r].metrics.find(id); it != runs[r].metrics.end()) {
            c = &it->second;
        }
        if (!c && id.starts_with("finding_")) c = &none; // no finding of the rule in the window: it costs nothing
        ms.push_back(c);
        row.values.push_back(c ? c->value : kNaN);
        any |= c && std::isfinite(c->value);
    }
    if (!any) return std::nullopt;
    for (size_t r = 1; r < runs.size(); ++r)
        row.cells.push_back(compareCell(row.values[0], row.values[r], ms[0], ms[r], kind));
    return row;
}

} // namespace

std::vector<CompareRow> compareRuns(const std::vector<RunSummary>& runs)
{
    std::vector<CompareRow> rows;
    if (runs.empty()) return rows;
    const RunSummary& base = runs.front();
    std::vector<std::string> rules; // the finding rows: every run's rules, in order of first appearance
    for (const RunSummary& r : runs)
        for (const std::string& rule : r.findingRules)
            if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
    // Step time at the baseline's step size: each step's time scaled by the baseline's median size over its own.
    const double baseSize = [&] {
        std::vector<double> sizes;
        sizes.reserve(base.sizedSteps.size());
        for (const auto& s : base.sizedSteps)
            sizes.push_back(s.second);
        return quantile(sizes, 0.5);
    }();
    std::vector<CompareMetric> scaled(runs.size());
    for (size_t r = 0; r < runs.size(); ++r) {
        if (!std::isfinite(baseSize) || runs[r].stepSizeUnit != base.stepSizeUnit) continue;
        for (const auto& [seconds, size] : runs[r].sizedSteps)
            scaled[r].samples.push_back(seconds * baseSize / size);
        if (!scaled[r].samples.empty()) scaled[r].value = quantile(scaled[r].samples, 0.5);
    }
    const auto addRow = [&](const std::string& id, const std::string& label, const std::string& unit,
                            const std::string& kind) {
        if (auto row = compareRow(runs, scaled, id, label, unit, kind)) rows.push_back(std::move(*row));
    };
    for (const RowDef& d : kRows) {
        std::string label = d.label;
        if (std::string(d.id) == "step_size" && !base.stepSizeUnit.empty())
            label = "step size (" + base.stepSizeUnit + ")";
        addRow(d.id, label, d.unit, d.kind);
    }
    for (const std::string& rule : rules) {
        addRow("finding_" + rule + "_impact", "finding " + rule + ": impact (time in its episodes)", "%", "");
        addRow("finding_" + rule + "_saving", "finding " + rule + ": saving", "s", "");
        addRow("finding_" + rule + "_saving_pct", "finding " + rule + ": saving, share of window", "%", "");
    }
    return rows;
}

QJsonObject toJson(const RunSummary& run)
{
    return QJsonObject{{QStringLiteral("run"), QString::fromStdString(run.label)},
                       {QStringLiteral("window"),
                        QJsonObject{{QStringLiteral("from_ns"), static_cast<qint64>(run.fromNs)},
                                    {QStringLiteral("to_ns"), static_cast<qint64>(run.toNs)},
                                    {QStringLiteral("seconds"), static_cast<double>(run.toNs - run.fromNs) / 1e9},
                                    {QStringLiteral("kind"), QString::fromStdString(run.windowKind)}}},
                       {QStringLiteral("steps_from"), QString::fromStdString(run.stepSource)},
                       {QStringLiteral("step_size_unit"), QString::fromStdString(run.stepSizeUnit)},
                       {QStringLiteral("rate_sample_s"), run.blockS},
                       {QStringLiteral("findings_stored"), run.analysisStored}};
}

QJsonObject toJson(const CompareRow& row)
{
    const auto number = [](double v) { return std::isfinite(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null); };
    QJsonArray values, cells;
    for (double v : row.values)
        values.append(number(v));
    for (const CompareCell& c : row.cells)
        cells.append(
            QJsonObject{{QStringLiteral("delta"), number(c.delta)},
                        {QStringLiteral("delta_pct"), number(c.deltaPct)},
                        {QStringLiteral("verdict"), c.verdict.empty() ? QJsonValue(QJsonValue::Null)
                                                                      : QJsonValue(QString::fromStdString(c.verdict))},
                        {QStringLiteral("p_value"), number(c.p)}});
    return QJsonObject{{QStringLiteral("metric"), QString::fromStdString(row.id)},
                       {QStringLiteral("label"), QString::fromStdString(row.label)},
                       {QStringLiteral("unit"), QString::fromStdString(row.unit)},
                       {QStringLiteral("test_on"), row.samplesOf.empty()
                                                       ? QJsonValue(QJsonValue::Null)
                                                       : QJsonValue(QString::fromStdString(row.samplesOf))},
                       {QStringLiteral("values"), values},
                       {QStringLiteral("candidates"), cells}};
}

} // namespace runlens::analysis
