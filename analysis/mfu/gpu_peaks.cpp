#include "analysis/mfu/gpu_peaks.h"

#include "analysis/store/ascii.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace runlens::analysis {
namespace detail {
std::string_view embeddedGpuPeaks(); // generated from resources/gpus/peaks.tsv
} // namespace detail

namespace {

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> out;
    for (size_t start = 0;;) {
        const size_t end = s.find(sep, start);
        out.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    return out;
}

// A TFLOP/s field: a positive number, or "-" (none). False when it is neither.
bool parsePeak(std::string_view field, std::optional<double>& out)
{
    field = trim(field);
    if (field == "-") return true;
    double v = 0;
    const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || ptr != field.data() + field.size() || !(v > 0)) return false;
    out = v;
    return true;
}

bool isWordChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// Whether word (lower case) appears in name (lower case) with no letter or digit on either side.
bool hasWord(const std::string& name, const std::string& word)
{
    for (size_t at = name.find(word); at != std::string::npos; at = name.find(word, at + 1)) {
        const bool left = at == 0 || !isWordChar(name[at - 1]);
        const size_t end = at + word.size();
        const bool right = end == name.size() || !isWordChar(name[end]);
        if (left && right) return true;
    }
    return false;
}

} // namespace

std::optional<double> GpuPeak::tflops(std::string_view precision) const
{
    const std::string p = asciiLower(precision);
    if (p == "bf16") return bf16;
    if (p == "fp16") return fp16;
    if (p == "fp8") return fp8;
    return std::nullopt;
}

std::vector<GpuPeak> parseGpuPeaks(std::string_view text)
{
    std::vector<GpuPeak> out;
    for (std::string_view line : split(text, '\n')) {
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trim(line).empty() || trim(line).front() == '#') continue;
        const std::vector<std::string_view> f = split(line, '\t');
        if (f.size() != 6) continue;
        GpuPeak p;
        p.model = std::string(trim(f[0]));
        for (std::string_view w : split(f[1], ','))
            if (!trim(w).empty()) p.match.push_back(asciiLower(trim(w)));
        if (p.model.empty() || p.match.empty() || !parsePeak(f[2], p.bf16) || !parsePeak(f[3], p.fp16) ||
            !parsePeak(f[4], p.fp8))
            continue;
        p.source = std::string(trim(f[5]));
        out.push_back(std::move(p));
    }
    return out;
}

const std::vector<GpuPeak>& gpuPeaks()
{
    static const std::vector<GpuPeak> table = parseGpuPeaks(detail::embeddedGpuPeaks());
    return table;
}

const GpuPeak* findGpuPeak(std::string_view gpuName, const std::vector<GpuPeak>& table)
{
    const std::string name = asciiLower(gpuName);
    for (const GpuPeak& p : table)
        if (std::all_of(p.match.begin(), p.match.end(), [&](const std::string& w) { return hasWord(name, w); }))
            return &p;
    return nullptr;
}

} // namespace runlens::analysis
