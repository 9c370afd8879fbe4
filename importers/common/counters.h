#pragma once

// Cumulative counters (node_exporter *_total, DCGM energy) turned into rates per second, with resets
// handled the way Prometheus' rate() does: a value lower than the previous one means the counter restarted
// from zero, so the increase is the new value itself.

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

namespace runlens::importers {

class CounterRate
{
public:
    struct Rate
    {
        int64_t tsNs;
        double perSecond;
        bool afterReset; // the counter went down before this sample (count it as a diagnostic)
    };

    // Feed samples in time order. The first sample gives no rate; equal or earlier timestamps give none.
    std::optional<Rate> add(int64_t tsNs, double value)
    {
        std::optional<Rate> out;
        if (m_have && tsNs > m_lastTs) {
            const bool reset = value < m_lastValue;
            const double increase = reset ? value : value - m_lastValue;
            out = Rate{tsNs, increase * 1e9 / static_cast<double>(tsNs - m_lastTs), reset};
        }
        if (!m_have || tsNs > m_lastTs) {
            m_lastTs = tsNs;
            m_lastValue = value;
            m_have = true;
        }
        return out;
    }
    void clear() { m_have = false; }

private:
    bool m_have = false;
    int64_t m_lastTs = 0;
    double m_lastValue = 0;
};

// node_cpu_seconds_total of all CPUs and modes of one node → cpu.util (%): at each timestamp the seconds of
// every mode are summed, and utilisation between consecutive timestamps is 100 × (1 − Δ(idle + iowait) / Δall).
// Feed every sample (any order); take the result once all are in.
class CpuSecondsAggregator
{
public:
    void add(int64_t tsNs, std::string_view mode, double seconds);

    struct Util
    {
        int64_t tsNs;
        double percent;
    };
    // Points in time order. resets counts intervals skipped because the total went down (a reboot).
    std::vector<Util> utilisation(int64_t* resets = nullptr) const;
    bool empty() const { return m_byTs.empty(); }

private:
    struct Sums
    {
        double all = 0;
        double idle = 0;
        int samples = 0;
    };
    std::map<int64_t, Sums> m_byTs;
};

} // namespace runlens::importers
