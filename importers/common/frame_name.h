#pragma once

// Frame names as Python samplers write them. py-spy names a frame `function (file:line)`, or `function (file)` when
// it has no line; its folded stacks and speedscope profiles carry such a name whole, and the file and line are
// stored apart from the function name.

#include <cstdint>
#include <string_view>

namespace runlens::importers {

struct FrameParts
{
    std::string_view name;
    std::string_view file;
    int64_t line = 0;
};

// The function, file and line of `function (file:line)` or `function (file)`; any other text (a native symbol, a
// name with unbalanced parentheses) is a bare function name with no file and line 0. The views point into f.
FrameParts splitFrameName(std::string_view f);

} // namespace runlens::importers
