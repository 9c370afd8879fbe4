#include "analysis/compare/compare_format.h"

#include <cmath>
#include <fmt/format.h>

namespace runlens::analysis {

namespace {

constexpr double kHoursFrom = 10'000; // seconds from which a duration reads in hours

std::string signOf(double v, bool sign)
{
    return v < 0 ? "−" : sign ? "+" : "";
}

} // namespace

std::string formatCompareValue(double v, const std::string& unit, bool sign)
{
    if (!std::isfinite(v)) return "n/a";
    const std::string s = signOf(v, sign);
    const double a = std::fabs(v);
    if (unit == "B/s") {
        static const char* const units[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
        double x = a;
        int u = 0;
        while (x >= 1000 && u < 4) {
            x /= 1000;
            ++u;
        }
        return fmt::format("{}{:.3g} {}", s, x, units[u]);
    }
    // Seconds up to a few hours; longer as hours (a day's saving is "19.4 h", not "6.983e+04 s").
    if (unit == "s") return a >= kHoursFrom ? fmt::format("{}{:.3g} h", s, a / 3600) : fmt::format("{}{:.4g} s", s, a);
    if (unit == "%") return fmt::format("{}{:.1f}{}", s, a, sign ? " pts" : " %");
    const std::string body = a >= 1e7        ? fmt::format("{:.4g}M", a / 1e6)
                             : a >= 1e4      ? fmt::format("{:.4g}k", a / 1e3)
                             : unit == "1/s" ? fmt::format("{:.4g}", a)
                                             : fmt::format("{:.0f}", a);
    return s + body + (unit == "1/s" ? "/s" : "");
}

std::string formatDeltaPct(double pct)
{
    if (!std::isfinite(pct)) return "n/a";
    return fmt::format("{}{:.1f} %", signOf(pct, true), std::fabs(pct));
}

std::string formatVerdict(const CompareCell& cell)
{
    if (cell.verdict.empty()) return "—";
    if (!std::isfinite(cell.p)) return cell.verdict;
    return cell.p < 0.001 ? fmt::format("{} (MWU p<0.001)", cell.verdict)
                          : fmt::format("{} (MWU p={:.3f})", cell.verdict, cell.p);
}

} // namespace runlens::analysis
