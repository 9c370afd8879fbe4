#pragma once

// COMM_BOUND's reading of the stack samples: inside backward, and its findings' top frames (comm_bound_rule.h). Shared
// by the rule's sources, not part of the rules' API.

#include "analysis/flame/flame_tree.h"
#include "analysis/rules/episodes.h"
#include "analysis/rules/finding.h"

#include <QJsonArray>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace runlens::analysis::comm {

// Per callsite, whether the stack is inside backward with the phase packs calling it gpu_wait (a communication frame
// below the backward frame makes it communication already).
Expected<std::vector<uint8_t>> backwardWaitCallsites(FlameSource& stacks);

// Per evidence slice, the node's stack samples at the callsites marked in `waits`, over the runs of slices
// [first, end) given.
Expected<std::vector<int64_t>> backwardWaitSamples(FlameSource& stacks, const std::vector<uint8_t>& waits,
                                                   const std::vector<store::StackThreadInfo>& threads,
                                                   const std::string& node, const TimeGrid& grid, size_t sliceSlots,
                                                   size_t slices, const std::vector<std::pair<size_t, size_t>>& runs);

// The node's top `count` communication frames over the episodes' span: each with its share of the busy (non-idle)
// stack samples, the most first.
Expected<QJsonArray> topCommFrames(FlameSource& stacks, const std::vector<FindingEpisode>& episodes,
                                   const std::string& node, size_t count);

} // namespace runlens::analysis::comm
