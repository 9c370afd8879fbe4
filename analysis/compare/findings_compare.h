#pragma once

// Comparing the findings of two runs (issue 19): each finding of run A matched with the same finding of run B,
// if any (the same rule and the same character: sub_type / sub_cause / frame of the evidence, nodes by name),
// into gone (only in A), still there (in both: impact and saving before → after) and new (only in B). Savings are
// each side's within its own window (savingWithin), so a long run and a short one compare on matching windows.

#include "analysis/rules/finding.h"
#include "analysis/store/run_reader.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace runlens::analysis {

// What makes two findings of two runs the same one: rule, and the evidence's sub_type, sub_cause and frame
// ("" where absent). "COMM_BOUND/sub_type=…" style text for display and tests.
std::string findingCharacter(const Finding& f);

struct FindingChange
{
    enum class Status
    {
        Gone,  // in A only
        Still, // in both
        New,   // in B only
    };
    Status status = Status::Still;
    std::optional<Finding> a, b;     // the finding on each side (both for Still)
    double impactA = 0, impactB = 0; // Finding::impact (fraction of the run's wall time); 0 where absent
    double savingA = 0, savingB = 0; // seconds saved within the side's window; 0 where absent
    // The saving as a share of the side's window (0 where absent or the window unbounded).
    double savingShareA = 0, savingShareB = 0;
    bool sameNodes = true;                                 // Still: the same node names on both sides
    const Finding& finding() const { return b ? *b : *a; } // B's when still there
};

struct FindingsComparison
{
    std::vector<FindingChange> gone;  // the largest saving in A first
    std::vector<FindingChange> still; // the largest saving on either side first
    std::vector<FindingChange> added; // new in B, the largest saving in B first
};

// windowA / windowB: each run's window (inclusive bounds as TimeWindow gives them); unbounded: the whole run.
FindingsComparison compareFindings(const std::vector<Finding>& a, store::TimeWindow windowA,
                                   const std::vector<Finding>& b, store::TimeWindow windowB);

const char* statusName(FindingChange::Status s); // "gone", "still", "new"

} // namespace runlens::analysis
