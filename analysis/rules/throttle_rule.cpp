#include "analysis/rules/throttle_rule.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace runlens::analysis {

namespace {

constexpr uint64_t kThermal = kClockEventSwThermal | kClockEventHwThermal;
constexpr uint64_t kHwSlowdown = kClockEventHwSlowdown | kClockEventHwPowerBrake;

double at(const SlotValues& v, size_t i)
{
    return i < v.size() ? v[i] : std::numeric_limits<double>::quiet_NaN();
}

bool anyFinite(const SlotValues& v)
{
    return std::any_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// One GPU's throttled slots and what they showed.
struct GpuThrottle
{
    const GpuMetrics* gpu = nullptr;
    std::vector<uint8_t> flagged;
    std::vector<double> deficit;   // 1 - clock / reference per throttled slot (0 elsewhere and when unknown)
    std::vector<double> peerClock; // the peers' median SM clock per slot, NaN without peers
    int powerCap = 0, thermal = 0, hwSlowdown = 0; // flagged slots with each reason bit
    int atPowerLimit = 0, hot = 0;                 // flagged slots with the power at its limit, hot
    bool limitRecorded = false;
    double maxPower = std::numeric_limits<double>::quiet_NaN();
};

// Confidence: the driver's reason bits name the cause; without them the clock drop's company does (a recorded power
// limit, else the most the GPU drew, which may be below its limit).
constexpr double kConfidenceReasons = 0.9;
constexpr double kConfidenceRecordedLimit = 0.75;
constexpr double kConfidenceSeenPower = 0.6;

// A GPU counts as busy in a slot at throttle.busy_util or more, or when its utilization is unknown.
bool busyAt(const GpuMetrics& g, size_t i, double busyUtil)
{
    const double u = at(g.util, i);
    return !std::isfinite(u) || u >= busyUtil;
}

double limitAt(const GpuThrottle& t, size_t i)
{
    const GpuMetrics& g = *t.gpu;
    return std::isfinite(at(g.powerLimit, i)) ? g.powerLimit[i] : t.maxPower;
}

// Per slot: the busy GPUs' known clocks, from which each GPU's peers' median (the others') follows in O(1). One pass
// over the slots reading every GPU's values once, instead of every GPU's peers again for each GPU.
std::vector<MedianLeavingOneOut> slotClocks(const RunMetrics& m, const ThrottleParams& q)
{
    std::vector<MedianLeavingOneOut> out(m.grid.size);
    std::vector<double> clocks;
    clocks.reserve(m.gpus.size());
    for (size_t i = 0; i < m.grid.size; ++i) {
        clocks.clear();
        for (const GpuMetrics& g : m.gpus)
            if (busyAt(g, i, q.busyUtil)) clocks.push_back(at(g.smClock, i));
        out[i] = MedianLeavingOneOut(clocks); // drops the unknown clocks
    }
    return out;
}

// Per busy slot: whether the GPU is throttled (a reason bit, or a low clock at the power limit or hot), its clock
// deficit against its reference (the busy peers' median clock, else its own busy clock) and the peers' clock.
GpuThrottle flagSlots(const RunMetrics& m, const GpuMetrics& g, const std::vector<MedianLeavingOneOut>& slotClock,
                      const ThrottleParams& q)
{
    const TimeGrid& grid = m.grid;
    GpuThrottle t;
    t.gpu = &g;
    t.flagged.assign(grid.size, 0);
    t.deficit.assign(grid.size, 0.0);
    t.peerClock.assign(grid.size, std::numeric_limits<double>::quiet_NaN());
    t.limitRecorded = anyFinite(g.powerLimit);
    for (double w : g.power)
        if (std::isfinite(w) && !(w <= t.maxPower)) t.maxPower = w;
    // Its own busy clock: the reference when no peer has a clock.
    std::vector<double> busyClock;
    for (size_t i = 0; i < g.smClock.size(); ++i)
        if (busyAt(g, i, q.busyUtil)) busyClock.push_back(g.smClock[i]);
    const double ownClock = quantile(busyClock, q.ownClockQuantile);
    for (size_t i = 0; i < grid.size; ++i) {
        if (!busyAt(g, i, q.busyUtil)) continue;
        const double clock = at(g.smClock, i);
        // The GPU's own clock is among the slot's when finite (it is busy): its peers' median leaves it out.
        const double peer = std::isfinite(clock) ? slotClock[i].without(clock) : slotClock[i].all();
        t.peerClock[i] = peer;
        const double reference = std::isfinite(peer) ? peer : ownClock;
        const bool low = std::isfinite(clock) && std::isfinite(reference) && clock < q.clockRatio * reference;
        const double mask = at(g.clockEventReasons, i);
        const uint64_t bits = std::isfinite(mask) ? static_cast<uint64_t>(mask) : 0;
        const double limit = limitAt(t, i);
        const double power = at(g.power, i);
        const bool atLimit =
            std::isfinite(power) && std::isfinite(limit) && limit > 0 && power >= q.powerAtLimit * limit;
        const bool hot = std::isfinite(at(g.temp, i)) && g.temp[i] >= q.tempHotC;
        const bool byReason = (bits & (kThermal | kHwSlowdown)) != 0 ||
                              ((bits & kClockEventSwPowerCap) != 0 && (low || !std::isfinite(clock)));
        const bool byClock = low && std::isfinite(peer) && (atLimit || hot);
        if (std::isfinite(clock) && std::isfinite(reference) && reference > 0)
            t.deficit[i] = std::clamp(1 - clock / reference, 0.0, 1.0);
        t.flagged[i] = byReason || byClock ? 1 : 0;
    }
    return t;
}

// Keeps the throttled slots in episodes of at least throttle.min_s (their short gaps included) and counts what they
// showed; false when there are none.
bool keepEpisodes(GpuThrottle& t, const TimeGrid& grid, const ThrottleParams& q)
{
    const GpuMetrics& g = *t.gpu;
    std::vector<uint8_t> kept(grid.size, 0);
    bool any = false;
    for (const Episode& e : episodesOf(t.flagged, grid, q.common.episodeGapSamples)) {
        if (e.seconds() < q.minS) continue;
        std::fill(kept.begin() + static_cast<std::ptrdiff_t>(e.first),
                  kept.begin() + static_cast<std::ptrdiff_t>(e.last) + 1, 1);
        any = true;
    }
    if (!any) return false;
    t.flagged = std::move(kept);
    for (size_t i = 0; i < grid.size; ++i) {
        if (!t.flagged[i]) {
            t.deficit[i] = 0;
            continue;
        }
        const double mask = at(g.clockEventReasons, i);
        const uint64_t bits = std::isfinite(mask) ? static_cast<uint64_t>(mask) : 0;
        t.powerCap += (bits & kClockEventSwPowerCap) ? 1 : 0;
        t.thermal += (bits & kThermal) ? 1 : 0;
        t.hwSlowdown += (bits & kHwSlowdown) ? 1 : 0;
        const double limit = limitAt(t, i);
        t.atPowerLimit += std::isfinite(at(g.power, i)) && limit > 0 && g.power[i] >= q.powerAtLimit * limit ? 1 : 0;
        t.hot += std::isfinite(at(g.temp, i)) && g.temp[i] >= q.tempHotC ? 1 : 0;
    }
    return true;
}

// What a node's throttled GPUs showed, summed over them.
struct NodeCounts
{
    int powerCap = 0, thermal = 0, hwSlowdown = 0, atLimit = 0, hot = 0, slots = 0;
    bool reasonsKnown = false, limitsRecorded = true;
    std::vector<double> ratios; // per GPU: its median clock / its peers' median clock
    QJsonArray evidence;        // per GPU
};

// One GPU's evidence (median clock against the peers', power and its limit, temperature, which reasons and how
// often), added to the node's counts.
void addGpuEvidence(const GpuThrottle& t, const std::string& name, const TimeGrid& grid, NodeCounts& c)
{
    const GpuMetrics& g = *t.gpu;
    const double stepS = static_cast<double>(grid.stepNs) / 1e9;
    std::vector<double> clock, peer, power, limit, temp;
    int n = 0;
    for (size_t i = 0; i < grid.size; ++i) {
        if (!t.flagged[i]) continue;
        ++n;
        clock.push_back(at(g.smClock, i));
        peer.push_back(t.peerClock[i]);
        power.push_back(at(g.power, i));
        limit.push_back(limitAt(t, i));
        temp.push_back(at(g.temp, i));
    }
    const double medClock = quantile(clock, 0.5), medPeer = quantile(peer, 0.5);
    if (std::isfinite(medClock) && std::isfinite(medPeer) && medPeer > 0) c.ratios.push_back(medClock / medPeer);
    auto mhz = [](double hz) { return hz / 1e6; }; // NaN stays NaN
    QJsonObject o{{QStringLiteral("gpu"), QString::fromStdString(name)},
                  {QStringLiteral("throttled_s"), n * stepS},
                  {QStringLiteral("reasons"),
                   QJsonObject{{QStringLiteral("sw_power_cap"), n ? static_cast<double>(t.powerCap) / n : 0.0},
                               {QStringLiteral("thermal"), n ? static_cast<double>(t.thermal) / n : 0.0},
                               {QStringLiteral("hw_slowdown"), n ? static_cast<double>(t.hwSlowdown) / n : 0.0}}},
                  {QStringLiteral("at_power_limit_share"), n ? static_cast<double>(t.atPowerLimit) / n : 0.0},
                  {QStringLiteral("hot_share"), n ? static_cast<double>(t.hot) / n : 0.0},
                  {QStringLiteral("power_limit_source"),
                   t.limitRecorded ? QStringLiteral("recorded") : QStringLiteral("max_seen")}};
    // Absent numbers are left out rather than written as 0.
    auto put = [&o](const char* key, double v) {
        if (std::isfinite(v)) o.insert(QLatin1String(key), v);
    };
    put("median_sm_clock_mhz", mhz(medClock));
    put("peers_median_sm_clock_mhz", mhz(medPeer));
    put("clock_ratio", std::isfinite(medClock) && medPeer > 0 ? medClock / medPeer : std::nan(""));
    put("median_power_w", quantile(power, 0.5));
    put("power_limit_w", quantile(limit, 0.5));
    put("median_temp_c", quantile(temp, 0.5));
    c.evidence.append(o);
    c.powerCap += t.powerCap;
    c.thermal += t.thermal;
    c.hwSlowdown += t.hwSlowdown;
    c.atLimit += t.atPowerLimit;
    c.hot += t.hot;
    c.slots += n;
    c.reasonsKnown = c.reasonsKnown || anyFinite(g.clockEventReasons);
    c.limitsRecorded = c.limitsRecorded && t.limitRecorded;
}

std::string recommendationFor(const std::vector<std::string>& causes, const std::string& node)
{
    std::string rec;
    for (const std::string& c : causes) {
        if (c == "thermal")
            rec += fmt::format("Thermal slowdown: check {}'s fans, airflow and inlet (ambient) temperature, the "
                               "heat sinks and the data-centre cooling (nvidia-smi -q -d TEMPERATURE,PERFORMANCE). ",
                               node);
        else if (c == "power_cap")
            rec += "Power cap: compare the power limits (nvidia-smi -q -d POWER; raise a lowered one with "
                   "sudo nvidia-smi -pl <watts> up to the default), check the node's power supply and the "
                   "rack's power budget, or lock the clocks (nvidia-smi -lgc) so all GPUs run alike. ";
        else if (c == "hw_slowdown")
            rec += "Hardware slowdown (HW_SLOWDOWN / power brake): a failing GPU, power supply or an "
                   "external brake signal; check nvidia-smi -q -d PERFORMANCE and dmesg for Xid errors, "
                   "reseat or replace the GPU (or take the node out of the job). ";
    }
    if (rec.empty())
        rec = fmt::format("The GPUs on {} run slower clocks than their peers: compare nvidia-smi -q -d "
                          "CLOCK,POWER,TEMPERATURE,PERFORMANCE across nodes, check cooling and power limits. ",
                          node);
    rec += "Every rank waits for the slowest GPU at each collective, so one throttled GPU slows the whole job.";
    return rec;
}

// The finding of one node's throttled GPUs: its throttled time, the clock deficit of its slowest GPU per slot (the
// node's steps wait for it), and the cause with the most slots.
Finding nodeFinding(const NodeMetrics& node, const std::vector<const GpuThrottle*>& gpus, const TimeGrid& grid,
                    const ThrottleParams& q)
{
    const double wall = grid.seconds(), stepS = static_cast<double>(grid.stepNs) / 1e9;
    Finding f;
    f.rule = "THROTTLE";
    f.nodes = {node.node};
    std::vector<uint8_t> any(grid.size, 0);
    double savingS = 0;
    for (size_t i = 0; i < grid.size; ++i) {
        double worst = 0;
        for (const GpuThrottle* t : gpus) {
            any[i] = any[i] || t->flagged[i];
            worst = std::max(worst, t->deficit[i]);
        }
        savingS += worst * stepS; // the node's steps wait for its slowest GPU
    }
    double seconds = 0;
    for (const Episode& e : episodesOf(any, grid, 0)) {
        f.episodes.push_back({e.startNs, e.endNs});
        seconds += e.seconds();
    }
    NodeCounts c;
    for (const GpuThrottle* t : gpus) {
        f.gpus.push_back(fmt::format("{}:gpu{}", t->gpu->node, t->gpu->gpu));
        addGpuEvidence(*t, f.gpus.back(), grid, c);
    }
    // The cause: the reason bits when recorded, else what the clock drop came with.
    const int powerSlots = c.reasonsKnown ? c.powerCap : c.atLimit, thermalSlots = c.reasonsKnown ? c.thermal : c.hot;
    const int hwSlowdown = c.hwSlowdown;
    std::vector<std::string> causes;
    if (hwSlowdown > 0) causes.push_back("hw_slowdown");
    if (thermalSlots > 0) causes.push_back("thermal");
    if (powerSlots > 0) causes.push_back("power_cap");
    std::sort(causes.begin(), causes.end(), [&](const std::string& a, const std::string& b) {
        auto count = [&](const std::string& x) {
            return x == "hw_slowdown" ? hwSlowdown : x == "thermal" ? thermalSlots : powerSlots;
        };
        return count(a) > count(b);
    });
    const std::string cause = causes.empty() ? "clock" : causes.front();
    f.impact = wall > 0 ? seconds / wall : 0;
    f.savingS = savingS;
    f.severity = q.severity.of(f.impact);
    f.confidence = c.reasonsKnown     ? kConfidenceReasons
                   : c.limitsRecorded ? kConfidenceRecordedLimit
                                      : kConfidenceSeenPower;
    const double share =
        c.slots > 0 ? static_cast<double>(std::max({powerSlots, thermalSlots, hwSlowdown})) / c.slots : 0;
    f.primary = causes.size() <= 1 || share >= kPrimaryCover;
    const std::string what = cause == "hw_slowdown" ? "hardware slowdown"
                             : cause == "thermal"   ? "thermal slowdown"
                             : cause == "power_cap" ? "the power limit"
                                                    : "low clocks";
    const double medianRatio = quantile(c.ratios, 0.5);
    f.title =
        std::isfinite(medianRatio)
            ? fmt::format(
                  "GPU throttling on {} ({}): {} at {:.0f} % of the peers' SM clock for {:.0f} s ({:.0f} % of the run)",
                  node.node, what, fmt::join(f.gpus, ", "), 100 * medianRatio, seconds, 100 * f.impact)
            : fmt::format("GPU throttling on {} ({}): {} for {:.0f} s ({:.0f} % of the run)", node.node, what,
                          fmt::join(f.gpus, ", "), seconds, 100 * f.impact);
    if (!f.primary) f.title += " — mixed causes";
    QJsonArray jsonCauses;
    for (const std::string& x : causes)
        jsonCauses.append(QString::fromStdString(x));
    f.evidence =
        QJsonObject{{QStringLiteral("gpus"), c.evidence},     {QStringLiteral("cause"), QString::fromStdString(cause)},
                    {QStringLiteral("causes"), jsonCauses},   {QStringLiteral("reason_bits_recorded"), c.reasonsKnown},
                    {QStringLiteral("throttled_s"), seconds}, {QStringLiteral("clock_deficit_s"), savingS}};
    if (std::isfinite(medianRatio)) f.evidence.insert(QStringLiteral("median_clock_ratio"), medianRatio);
    f.recommendation = recommendationFor(causes, node.node);
    return f;
}

} // namespace

ThrottleParams ThrottleParams::from(const RuleParams& p)
{
    ThrottleParams q;
    q.common = CommonParams::from(p);
    q.busyUtil = p.get("throttle.busy_util");
    q.clockRatio = p.get("throttle.clock_ratio");
    q.ownClockQuantile = p.get("throttle.own_clock_quantile");
    q.powerAtLimit = p.get("throttle.power_at_limit");
    q.tempHotC = p.get("throttle.temp_hot_c");
    q.minS = p.get("throttle.min_s");
    q.severity = SeverityCuts::from(p, "throttle");
    return q;
}

std::vector<Finding> throttleRule(const RunMetrics& m, const RuleParams& params)
{
    const ThrottleParams q = ThrottleParams::from(params);
    const std::vector<MedianLeavingOneOut> slotClock = slotClocks(m, q);
    std::vector<GpuThrottle> throttled;
    for (const GpuMetrics& g : m.gpus) {
        GpuThrottle t = flagSlots(m, g, slotClock, q);
        if (keepEpisodes(t, m.grid, q)) throttled.push_back(std::move(t));
    }
    std::vector<Finding> out;
    for (const NodeMetrics& node : m.nodes) {
        std::vector<const GpuThrottle*> gpus;
        for (const GpuThrottle& t : throttled)
            if (t.gpu->node == node.node) gpus.push_back(&t);
        if (gpus.empty()) continue;
        out.push_back(nodeFinding(node, gpus, m.grid, q));
    }
    return out;
}

} // namespace runlens::analysis
