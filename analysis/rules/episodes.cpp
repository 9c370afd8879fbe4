#include "analysis/rules/episodes.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace runlens::analysis {

size_t TimeGrid::slotOf(int64_t ts) const
{
    if (ts < startNs || stepNs <= 0) return size;
    const auto i = static_cast<size_t>((ts - startNs) / stepNs);
    return i < size ? i : size;
}

std::pair<size_t, size_t> TimeGrid::slotsOverlapping(int64_t fromNs, int64_t toNs) const
{
    const size_t first = slotOf(std::max(fromNs, startNs));
    size_t end = first;
    while (end < size && slotStart(end) < toNs)
        ++end;
    return {first, end};
}

size_t TimeGrid::slotsPerSlice(double seconds) const
{
    return static_cast<size_t>(
        std::max(1.0, std::round(seconds * 1e9 / static_cast<double>(std::max<int64_t>(stepNs, 1)))));
}

size_t TimeGrid::sliceCount(double seconds) const
{
    const size_t per = slotsPerSlice(seconds);
    return (size + per - 1) / per;
}

void accumulate(const std::vector<store::Point>& points, const TimeGrid& grid, std::vector<double>& sum,
                std::vector<int>& count)
{
    sum.resize(grid.size, 0.0);
    count.resize(grid.size, 0);
    for (const store::Point& p : points) {
        if (p.missing || !std::isfinite(p.value)) continue;
        const size_t i = grid.slotOf(p.tsNs);
        if (i >= grid.size) continue;
        sum[i] += p.value;
        ++count[i];
    }
}

void meansInPlace(std::vector<double>& sum, const std::vector<int>& count)
{
    for (size_t i = 0; i < sum.size(); ++i)
        sum[i] = i < count.size() && count[i] > 0 ? sum[i] / count[i] : std::numeric_limits<double>::quiet_NaN();
}

std::vector<Episode> episodesOf(const std::vector<uint8_t>& flagged, const TimeGrid& grid, int maxGap)
{
    std::vector<Episode> out;
    const size_t n = std::min(flagged.size(), grid.size);
    size_t i = 0;
    while (i < n) {
        if (!flagged[i]) {
            ++i;
            continue;
        }
        Episode e;
        e.first = e.last = i;
        size_t j = i + 1;
        while (j < n) {
            if (flagged[j]) {
                e.last = j++;
                continue;
            }
            // A gap: joined when the next flagged slot comes within maxGap slots.
            size_t k = j;
            while (k < n && !flagged[k] && k - j < static_cast<size_t>(std::max(maxGap, 0)))
                ++k;
            if (k < n && flagged[k]) {
                j = k;
                continue;
            }
            break;
        }
        e.startNs = grid.slotStart(e.first);
        e.endNs = grid.slotStart(e.last + 1);
        out.push_back(e);
        i = e.last + 1;
    }
    return out;
}

double quantile(std::vector<double> values, double q)
{
    values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
                 values.end());
    if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
    const auto k = static_cast<size_t>(std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1));
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    return values[k];
}

MedianLeavingOneOut::MedianLeavingOneOut(std::vector<double>& values)
{
    values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
                 values.end());
    m_count = values.size();
    if (m_count == 1) m_lower = values[0];
    if (m_count < 2) return;
    const auto k = static_cast<std::ptrdiff_t>((m_count - 2) / 2);
    std::nth_element(values.begin(), values.begin() + k, values.end());
    m_lower = values[static_cast<size_t>(k)];
    m_upper = *std::min_element(values.begin() + k + 1, values.end());
}

double MedianLeavingOneOut::all() const
{
    // quantile's slot (count - 1) / 2 is k for an even count and k + 1 for an odd one.
    if (m_count < 2) return m_lower;
    return m_count % 2 == 0 ? m_lower : m_upper;
}

double MedianLeavingOneOut::without(double v) const
{
    // Leaving out the first of the sorted values equal to v: at or before slot k it moves the (k+1)-th into slot k.
    if (m_count < 2) return std::numeric_limits<double>::quiet_NaN();
    return v <= m_lower ? m_upper : m_lower;
}

double medianInPlace(std::vector<double>& values)
{
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
    const double upper = values[mid];
    if (values.size() % 2 == 1) return upper;
    const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lower + upper) / 2;
}

} // namespace runlens::analysis
