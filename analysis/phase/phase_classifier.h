#pragma once

// Stack frames classified into phases (communication, input, checkpoint, ...) by the rules of phase packs, so a
// flame graph can colour by phase and a rule can say "the autograd threads spend 70 % waiting for communication".
// A pack is a text file of `<phase> <name-pattern> [file=<pattern>] [module=<pattern>]` lines (README, "Phase
// packs"); the built-in packs come from resources/phases and are compiled into the library.

#include "analysis/store/error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::analysis {

// In ascending priority: when several frames of one sample match, the sample takes the highest phase.
enum class Phase : uint8_t
{
    Other = 0, // no rule matched
    Compute,
    Idle,
    GpuWait,
    Comm,
    Input,
    Checkpoint,
};

inline constexpr int kPhaseCount = 7;

// "other", "compute", "idle", "gpu_wait", "comm", "input", "checkpoint".
std::string_view phaseName(Phase phase);
std::optional<Phase> phaseFromName(std::string_view name);

constexpr Phase strongerPhase(Phase a, Phase b)
{
    return static_cast<uint8_t>(a) >= static_cast<uint8_t>(b) ? a : b;
}

// One frame as the importers store it: py-spy's `name (file:line)` already split into name and file.
struct FrameText
{
    std::string_view name;
    std::string_view file;   // source file, empty when unknown
    std::string_view module; // binary (perf, native frames), empty when unknown
};

// The rule that decided a frame's phase.
struct PhaseMatch
{
    Phase phase = Phase::Other;
    std::string pack;    // pack name ("deepspeed", or the name given to fromText)
    int line = 0;        // 1-based line in the pack
    std::string pattern; // the rule as written, without its comment
};

// Immutable once built; classify() and explain() may be called from several threads at once.
class PhaseClassifier
{
public:
    // Every pack in resources/phases (parsed once per process, then copied).
    static Expected<PhaseClassifier> builtIn();
    // One pack; errors read "pack:line:col: message" (unknown phase, invalid regular expression, ...).
    static Expected<PhaseClassifier> fromText(std::string_view text, const std::string& packName);

    // Adds the rules of other (for example a user's pack on top of the built-in ones). Fails when a pack of the
    // same name is already present.
    Status add(const PhaseClassifier& other);

    // The highest phase of the rules that match the frame, Other when none does.
    Phase classify(const FrameText& frame) const;
    // The highest phase over a stack's frames (any order).
    Phase classifyStack(std::span<const FrameText> frames) const;
    // The rule that decides classify(frame) (the first such rule in pack order), or nothing for Other.
    std::optional<PhaseMatch> explain(const FrameText& frame) const;

    std::vector<std::string> packNames() const;
    size_t ruleCount() const;

    struct Rule;

private:
    const Rule* decidingRule(const FrameText& frame) const;

    std::vector<std::string> m_packs;
    // Sorted by descending phase, pack order kept within a phase: the first match decides.
    std::vector<std::shared_ptr<const Rule>> m_rules;
};

} // namespace runlens::analysis
