#include "importers/common/counters.h"

#include <algorithm>

namespace runlens::importers {

void CpuSecondsAggregator::add(int64_t tsNs, std::string_view mode, double seconds)
{
    Sums& s = m_byTs[tsNs];
    s.all += seconds;
    if (mode == "idle" || mode == "iowait") s.idle += seconds;
    ++s.samples;
}

std::vector<CpuSecondsAggregator::Util> CpuSecondsAggregator::utilisation(int64_t* resets) const
{
    std::vector<Util> out;
    if (resets) *resets = 0;
    const Sums* prev = nullptr;
    for (const auto& [ts, s] : m_byTs) {
        // A timestamp where fewer CPU/mode series reported than before would fake a drop: compare only
        // timestamps with the same number of samples.
        if (prev && prev->samples == s.samples) {
            const double all = s.all - prev->all;
            const double idle = s.idle - prev->idle;
            if (all < 0 || idle < 0) {
                if (resets) ++*resets;
            } else if (all > 0) {
                out.push_back({ts, std::clamp(100.0 * (1.0 - idle / all), 0.0, 100.0)});
            }
        }
        prev = &s;
    }
    return out;
}

} // namespace runlens::importers
