#pragma once

// The demo's random numbers: splitmix64, small, fast and the same on every platform (std distributions are not),
// so a demo run is the same for the same seed everywhere.

#include <cstdint>

namespace runlens::app {

constexpr uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ull;

// One splitmix64 output for the state z (the state before its increment).
inline uint64_t splitMix(uint64_t z)
{
    z += kSplitMixGamma;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// 53 random bits as a double in [0, 1).
inline double unitInterval(uint64_t bits)
{
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// A splitmix64 stream and the distributions the demo draws from.
class DemoRandom
{
public:
    explicit DemoRandom(uint64_t seed) : m_state(seed) {}
    uint64_t next()
    {
        const uint64_t bits = splitMix(m_state);
        m_state += kSplitMixGamma;
        return bits;
    }
    double uniform() { return unitInterval(next()); }
    // Roughly normal (Irwin-Hall of 4), mean 0, standard deviation sd.
    double normal(double sd) { return (uniform() + uniform() + uniform() + uniform() - 2.0) * sd * 1.7320508; }
    // A duration around meanNs, ±spread (a fraction).
    int64_t around(int64_t meanNs, double spread)
    {
        return static_cast<int64_t>(static_cast<double>(meanNs) * (1.0 + spread * (2.0 * uniform() - 1.0)));
    }

private:
    uint64_t m_state;
};

} // namespace runlens::app
