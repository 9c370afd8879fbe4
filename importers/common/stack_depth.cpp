#include "importers/common/stack_depth.h"

#include "importers/common/text_fields.h"
#include "importers/diagnostic_kinds.h"

#include <cmath>
#include <fmt/format.h>

namespace runlens::importers {

Expected<size_t> maxStackDepth(const ImportOptions& options)
{
    auto it = options.extra.find("max_stack_depth");
    if (it == options.extra.end()) return kDefaultMaxStackDepth;
    const auto n = parseNumber(trim(it->second));
    if (!n || !std::isfinite(*n) || *n < 2 || *n > 1e9 || std::floor(*n) != *n)
        return makeError(ErrorCode::Usage, fmt::format("max_stack_depth={}: expected a whole number of frames, at "
                                                       "least 2",
                                                       clip(it->second)));
    return static_cast<size_t>(*n);
}

Expected<int64_t> cutRootCallsite(store::RunWriter& writer)
{
    RUNLENS_ASSIGN_OR_RETURN(auto cut, writer.frame(kCutFrameName, {}, 0, {}));
    return writer.callsite(0, cut);
}

void reportCutStack(ImportContext& ctx, size_t depth, size_t limit, std::optional<SourceLocation> where)
{
    ctx.diagnostics.report(
        diag::kStackTooDeep, where ? *where : ctx.lines.location(),
        fmt::format("a stack of {} frames: its {} innermost kept under \"{}\", the {} outer ones not "
                    "(the limit is max_stack_depth={})",
                    depth, limit - 1, kCutFrameName, depth - (limit - 1), limit));
}

} // namespace runlens::importers
