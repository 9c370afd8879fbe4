#include "app/jobs/clock_job.h"

#include "analysis/clock/clock_estimate.h"
#include "analysis/store/run_reader.h"

#include <fmt/format.h>

namespace runlens::app {

Expected<std::vector<std::string>> estimateAndDescribeClocks(store::RunDatabase& db, bool force,
                                                             analysis::ClockScope scope)
{
    std::vector<std::string> lines;
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto nodes, reader.nodes());
    if (nodes.size() < 2) return lines;
    RUNLENS_ASSIGN_OR_RETURN(auto estimates, analysis::estimateClockOffsets(db, {}, scope));
    RUNLENS_ASSIGN_OR_RETURN(auto changes, analysis::applyClockEstimates(db, estimates, force));
    for (const analysis::ClockChange& c : changes) {
        const std::string offset = analysis::formatClockDuration(c.offsetNs);
        if (c.keptUser)
            lines.push_back(fmt::format("clock {}: {} set by the user (kept; --force to estimate it)", c.node, offset));
        else if (c.node == estimates.reference)
            lines.push_back(
                fmt::format("clock {}: {} ({}): the reference the others are lined up with", c.node, offset, c.source));
        else if (c.changed)
            lines.push_back(fmt::format("clock {}: {} {} from {}: {}", c.node, offset,
                                        c.uncertaintyNs ? "±" + analysis::formatClockDuration(*c.uncertaintyNs, false)
                                                        : std::string("-"),
                                        c.source, c.method));
        else
            lines.push_back(fmt::format("clock {}: not estimated ({}); stays {}", c.node, c.method, offset));
    }
    if (estimates.unchanged == 1)
        lines.emplace_back("clock: 1 other node kept its offset (neither it nor the reference changed)");
    else if (estimates.unchanged > 1)
        lines.push_back(fmt::format("clock: {} other nodes kept their offsets (neither they nor the reference changed)",
                                    estimates.unchanged));
    return lines;
}

} // namespace runlens::app
