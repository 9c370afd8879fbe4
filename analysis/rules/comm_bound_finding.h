#pragma once

// COMM_BOUND's finding from a node's episodes (comm_bound_rule.h): its numbers and title, the evidence and what to
// change. Shared by the rule's sources, not part of the rules' API.

#include "analysis/rules/comm_profile.h"

#include <vector>

namespace runlens::analysis::comm {

// The node's steps with the communication share they carry (see nodeSteps in comm_bound_rule.cpp).
struct NodeSteps
{
    const NodeProfile* profile = nullptr;
    std::vector<StepUnit> units;
    std::vector<Signature> signatures;
    double backwardFraction = kNaN; // the node's profile's, else the run's
};

// The flagged slices' evidence summed over the node's episodes (shares per slice, seconds, counts).
struct Tally
{
    double flaggedSlices = 0, spannedSlices = 0, illusion = 0, comm = 0, trace = 0, stepWaitS = 0, stepCoveredS = 0,
           otherWaitS = 0;
    double otherInput = 0, otherHost = 0, otherCheckpoint = 0, otherGpuWait = 0;
    int withStacks = 0, measuredSteps = 0, extrapolatedSteps = 0;
};

// The node's finding. traces may be null (no profiled kernels listed); tracks are the traces' tracks.
Expected<Finding> nodeFinding(FlameSource& stacks, store::TraceReader* traces,
                              const std::vector<store::TraceTrackInfo>& tracks, const NodeMetrics& node,
                              const std::vector<const GpuMetrics*>& gpus, const NodeSteps& steps,
                              std::vector<FindingEpisode> episodes, const Tally& tally, const TimeGrid& grid,
                              const CommBoundParams& q);

} // namespace runlens::analysis::comm
