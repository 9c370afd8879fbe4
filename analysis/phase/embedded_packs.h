#pragma once

// The phase packs of resources/phases, compiled into the library by embed_phase_packs.cmake.

#include <span>
#include <string_view>

namespace runlens::analysis::detail {

struct EmbeddedPack
{
    std::string_view name; // the file name without .phases
    std::string_view text;
};

std::span<const EmbeddedPack> embeddedPhasePacks();

} // namespace runlens::analysis::detail
