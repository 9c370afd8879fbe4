#include "importers/trace/trace_fields.h"

#include "importers/common/text_fields.h"

#include <charconv>
#include <cmath>
#include <cstring>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace runlens::importers::trace {
namespace {

using store::TraceCategory;

char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
bool startsWithLower(std::string_view s, std::string_view lowerPrefix)
{
    if (s.size() < lowerPrefix.size()) return false;
    for (size_t i = 0; i < lowerPrefix.size(); ++i)
        if (lower(s[i]) != lowerPrefix[i]) return false;
    return true;
}
bool equalsLower(std::string_view s, std::string_view lowerWord)
{
    return s.size() == lowerWord.size() && startsWithLower(s, lowerWord);
}

bool isCommKernel(std::string_view name)
{
    name = trim(name);
    if (name.starts_with("void ")) name = trim(name.substr(5));
    return startsWithLower(name, "nccl") || startsWithLower(name, "rccl");
}

bool isCollectiveName(std::string_view name)
{
    for (std::string_view p : {"gloo:", "nccl:", "rccl:", "mpi:", "ucc:", "xccl:", "c10d::"})
        if (startsWithLower(name, p)) return true;
    return name == "record_param_comms";
}

// Bits of the bytes at p..p+15 that may change the scanner's state: quotes, backslashes, brackets, commas.
uint32_t specialMask(const char* p, const char* end)
{
#ifdef __SSE2__
    if (end - p >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        // { and } differ from [ and ] by 0x20: one comparison each for both after setting that bit.
        const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        const __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                         _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')),
                                      _mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')),
                                                   _mm_cmpeq_epi8(folded, _mm_set1_epi8('}')))));
        return static_cast<uint32_t>(_mm_movemask_epi8(hit));
    }
#endif
    uint32_t mask = 0;
    for (int i = 0; i < 16 && p + i < end; ++i) {
        const char c = p[i];
        if (c == '"' || c == '\\' || c == ',' || c == '[' || c == ']' || c == '{' || c == '}') mask |= 1u << i;
    }
    return mask;
}

} // namespace

EventLayout scanEventLayout(std::string_view text, size_t first, size_t chunkBytes)
{
    EventLayout out;
    const char* const base = text.data();
    const char* const end = base + text.size();
    const bool bare = first < text.size() && text[first] == '[';
    int depth = 0, eventDepth = -1;
    bool inString = false;
    size_t skipTo = 0; // a byte after a backslash is not special
    size_t stringStart = 0, lastKeyStart = 0, lastKeyEnd = 0, lastCut = 0;
    for (const char* block = base + first; block < end; block += 16) {
        for (uint32_t mask = specialMask(block, end); mask != 0; mask &= mask - 1) {
            const size_t at = static_cast<size_t>(block - base) + static_cast<size_t>(__builtin_ctz(mask));
            if (at < skipTo) continue;
            const char c = base[at];
            if (c == '\\') {
                skipTo = at + 2;
                continue;
            }
            if (inString) {
                if (c == '"') {
                    inString = false;
                    if (depth == 1) {
                        lastKeyStart = stringStart;
                        lastKeyEnd = at;
                    }
                }
                continue;
            }
            switch (c) {
            case '"':
                inString = true;
                stringStart = at + 1;
                break;
            case '[':
            case '{':
                ++depth;
                if (c == '[' && eventDepth < 0 &&
                    ((bare && depth == 1) ||
                     (!bare && depth == 2 && text.substr(lastKeyStart, lastKeyEnd - lastKeyStart) == "traceEvents"))) {
                    eventDepth = depth;
                    out.arrayOpen = at;
                    out.lastComplete = lastCut = at + 1;
                }
                break;
            case ']':
            case '}':
                if (depth == eventDepth) { // the event array closes
                    out.arrayClose = at;
                    return out;
                }
                if (--depth == eventDepth) out.lastComplete = at + 1;
                break;
            default: // ','
                if (depth == eventDepth && at - lastCut >= chunkBytes) {
                    out.cuts.push_back(at);
                    lastCut = at;
                }
                break;
            }
        }
    }
    return out;
}

std::optional<int64_t> microsToNs(std::string_view s)
{
    s = trim(s);
    size_t i = 0;
    const bool negative = !s.empty() && s[0] == '-';
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) ++i;
    int64_t whole = 0, fraction = 0;
    int wholeDigits = 0, fractionDigits = 0;
    bool roundUp = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++wholeDigits)
        if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, s[i] - '0', &whole))
            return std::nullopt;
    if (i < s.size() && s[i] == '.') {
        for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++fractionDigits) {
            if (fractionDigits < 3)
                fraction = fraction * 10 + (s[i] - '0');
            else if (fractionDigits == 3)
                roundUp = s[i] >= '5';
        }
        if (fractionDigits == 0) return std::nullopt;
    }
    if (wholeDigits == 0) return std::nullopt;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        double v = 0;
        const auto [end, ec] = std::from_chars(s.data() + (s[0] == '+' ? 1 : 0), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || std::fabs(v) > 9e15)
            return std::nullopt;
        return std::llround(v * 1000.0);
    }
    if (i != s.size()) return std::nullopt;
    for (int d = fractionDigits; d < 3; ++d)
        fraction *= 10;
    int64_t ns = 0;
    if (__builtin_mul_overflow(whole, 1000, &ns) || __builtin_add_overflow(ns, fraction + (roundUp ? 1 : 0), &ns))
        return std::nullopt;
    return negative ? -ns : ns;
}

TraceCategory canonicalCategory(std::string_view cat, std::string_view name, bool collectiveArg, bool& gpu)
{
    gpu = false;
    const auto is = [&](std::string_view w) { return equalsLower(cat, w); };
    if (is("kernel")) {
        gpu = true;
        return collectiveArg || isCommKernel(name) ? TraceCategory::CommKernel : TraceCategory::Kernel;
    }
    if (is("gpu_memcpy") || is("memcpy")) {
        gpu = true;
        return TraceCategory::Memcpy;
    }
    if (is("gpu_memset") || is("memset")) {
        gpu = true;
        return TraceCategory::Memset;
    }
    if (is("gpu_user_annotation")) {
        gpu = true;
        return TraceCategory::GpuUserAnnotation;
    }
    if (is("cuda_sync")) { // synchronisation records on a device stream
        gpu = true;
        return TraceCategory::Other;
    }
    if (is("collective_comm")) return TraceCategory::Collective;
    if (is("cpu_op") || is("operator"))
        return isCollectiveName(name) ? TraceCategory::Collective : TraceCategory::CpuOp;
    if (is("user_annotation"))
        return isCollectiveName(name) ? TraceCategory::Collective : TraceCategory::UserAnnotation;
    if (is("python_function")) return TraceCategory::PythonFunction;
    if (is("cuda_runtime") || is("runtime")) return TraceCategory::CudaRuntime;
    if (is("cuda_driver") || is("driver")) return TraceCategory::CudaDriver;
    return TraceCategory::Other;
}

} // namespace runlens::importers::trace
