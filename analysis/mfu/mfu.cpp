#include "analysis/mfu/mfu.h"

#include "analysis/rules/episodes.h"
#include "analysis/store/ascii.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/run_settings.h"

#include <QJsonArray>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <set>

namespace runlens::analysis {
namespace {

std::optional<double> number(const std::map<std::string, std::string>& settings, const char* key)
{
    const auto it = settings.find(key);
    return it == settings.end() ? std::nullopt : parseMfuNumber(it->second);
}

// The median of the present, positive values.
std::optional<double> median(std::vector<double> v)
{
    if (v.empty()) return std::nullopt;
    return medianInPlace(v);
}

// A trainer-log metric's typical value: the median of the series with the most values (when several logs carry it,
// as each rank-0 log reports the whole job's throughput, the fullest one).
Expected<std::optional<double>> typical(store::RunReader& reader, const std::vector<store::SeriesInfo>& series,
                                        std::string_view metric)
{
    const store::SeriesInfo* best = nullptr;
    for (const store::SeriesInfo& s : series)
        if (s.metric == metric && s.points > s.missingPoints &&
            (!best || s.points - s.missingPoints > best->points - best->missingPoints))
            best = &s;
    if (!best) return std::optional<double>();
    RUNLENS_ASSIGN_OR_RETURN(auto points, reader.readPoints(best->id, store::TimeWindow{}));
    std::vector<double> values;
    for (const store::Point& p : points)
        if (!p.missing && std::isfinite(p.value) && p.value > 0) values.push_back(p.value);
    return median(std::move(values));
}

std::string tflops(double v)
{
    return fmt::format("{:.4g}", v);
}

} // namespace

std::optional<double> parseMfuNumber(std::string_view text)
{
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    if (text.empty()) return std::nullopt;
    double scale = 1;
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
        scale = 1e3;
        break;
    case 'M':
        scale = 1e6;
        break;
    case 'B':
    case 'G':
        scale = 1e9;
        break;
    case 'T':
        scale = 1e12;
        break;
    default:
        break;
    }
    if (scale != 1) text.remove_suffix(1);
    double v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v * scale) || !(v > 0))
        return std::nullopt;
    return v * scale;
}

bool isPeakPrecision(std::string_view precision)
{
    const std::string p = asciiLower(precision);
    return p == "bf16" || p == "fp16" || p == "fp8";
}

MfuSettings MfuSettings::fromRunSettings(const std::map<std::string, std::string>& settings)
{
    MfuSettings s;
    s.params = number(settings, kSettingModelParams);
    s.layers = number(settings, kSettingModelLayers);
    s.hidden = number(settings, kSettingModelHidden);
    s.seqLen = number(settings, kSettingSeqLen);
    s.peakTflops = number(settings, kSettingPeakTflops);
    s.gpus = number(settings, kSettingGpuCount);
    if (const auto it = settings.find(kSettingPrecision); it != settings.end() && isPeakPrecision(it->second))
        s.precision = asciiLower(it->second);
    return s;
}

Mfu computeMfu(const MfuInputs& in)
{
    const MfuSettings& s = in.settings;
    Mfu m;
    m.precision = isPeakPrecision(s.precision) ? asciiLower(s.precision) : std::string("bf16");
    m.params = s.params;
    m.layers = s.layers;
    m.hidden = s.hidden;
    m.seqLen = s.seqLen;
    m.logTflopsPerGpu = in.logTflopsPerGpu;

    // The GPUs: how many, and their model (from the names the run stores).
    m.gpus = s.gpus ? static_cast<int>(std::llround(*s.gpus)) : static_cast<int>(in.gpuNames.size());
    m.gpusSource = s.gpus ? "user" : "run";
    std::set<std::string> names;
    for (const std::string& n : in.gpuNames)
        if (!n.empty()) names.insert(n);
    std::set<std::string> models, unknown;
    const GpuPeak* peak = nullptr;
    for (const std::string& n : names) {
        if (const GpuPeak* p = findGpuPeak(n)) {
            models.insert(p->model);
            peak = p;
        } else {
            unknown.insert(n);
        }
    }
    if (unknown.size() == 1 && models.empty())
        m.gpuModel = *unknown.begin();
    else if (models.size() == 1 && unknown.empty())
        m.gpuModel = peak->model;

    if (s.peakTflops) {
        m.peakTflops = s.peakTflops;
        m.peakSource = "user";
    } else if (names.empty()) {
        m.missing.push_back(
            in.gpuNames.empty()
                ? "the run has no GPUs: give --gpu-peak-tflops (dense TFLOP/s per GPU) and --gpu-count"
                : "the run does not name its GPUs' model: give --gpu-peak-tflops (dense TFLOP/s per GPU)");
    } else if (!unknown.empty()) {
        std::string list;
        for (const std::string& n : unknown)
            list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", n);
        m.missing.push_back(
            fmt::format("GPU {} not in the peak table: give --gpu-peak-tflops (dense TFLOP/s per GPU)", list));
    } else if (models.size() > 1) {
        std::string list;
        for (const std::string& n : models)
            list += fmt::format("{}{}", list.empty() ? "" : ", ", n);
        m.missing.push_back(
            fmt::format("the GPUs are of several models ({}): give --gpu-peak-tflops (dense TFLOP/s per GPU)", list));
    } else if (const std::optional<double> t = peak->tflops(m.precision); !t) {
        m.missing.push_back(
            fmt::format("the {} has no dense {} tensor-core peak: give --gpu-precision or --gpu-peak-tflops",
                        peak->model, m.precision));
    } else {
        m.peakTflops = t;
        m.peakSource = "table";
        m.datasheet = peak->source;
    }

    // The achieved FLOP/s: from the model and the tokens/s, else the trainer log's own figure.
    if (s.params) {
        m.formula = "6N";
        double perToken = 6 * *s.params;
        if (s.layers && s.hidden && s.seqLen) {
            perToken += 12 * *s.layers * *s.hidden * *s.seqLen;
            m.formula = "6N + attention";
        } else if (s.layers || s.hidden || s.seqLen) {
            m.notes.push_back("attention term left out: it needs --model-layers, --model-hidden and --seq-len");
        }
        m.flopsPerToken = perToken;
        if (in.tokensPerS) {
            m.tokensPerS = in.tokensPerS;
            m.tokensSource = "tokens_per_s";
        } else if (in.samplesPerS && s.seqLen) {
            m.tokensPerS = *in.samplesPerS * *s.seqLen;
            m.tokensSource = "samples_per_s";
        }
        if (!m.tokensPerS) {
            m.missing.push_back(in.samplesPerS ? "the trainer log has samples/s but no tokens/s: give --seq-len"
                                               : "no tokens/s: import the trainer log (tokens/s or samples/s)");
        } else if (m.gpus <= 0) {
            m.missing.push_back("the run has no GPUs: give --gpu-count");
        } else {
            m.achievedTflopsPerGpu = perToken * *m.tokensPerS / m.gpus / 1e12;
            m.flopsSource = "model";
        }
    } else if (in.logTflopsPerGpu) {
        m.achievedTflopsPerGpu = in.logTflopsPerGpu;
        m.flopsSource = "trainer_log";
    } else {
        m.missing.push_back("the model's size is not known: give --model-params (e.g. 7e9)");
    }
    if (m.achievedTflopsPerGpu && m.peakTflops) m.mfu = *m.achievedTflopsPerGpu / *m.peakTflops;
    return m;
}

Expected<Mfu> runMfu(store::RunDatabase& db, const MfuSettings& settings)
{
    store::RunReader reader(db);
    RUNLENS_ASSIGN_OR_RETURN(auto devices, reader.devices());
    RUNLENS_ASSIGN_OR_RETURN(auto series, reader.series());
    MfuInputs in;
    in.settings = settings;
    for (const store::DeviceInfo& d : devices) {
        if (d.kind != "gpu") continue;
        std::string name;
        for (const auto& [key, value] : d.attributes)
            if (key == "name") name = value;
        in.gpuNames.push_back(name);
    }
    for (auto [metric, out] :
         {std::pair{"train.tokens_per_s", &in.tokensPerS}, std::pair{"train.samples_per_s", &in.samplesPerS},
          std::pair{"train.tflops_per_gpu", &in.logTflopsPerGpu}}) {
        RUNLENS_ASSIGN_OR_RETURN(auto v, typical(reader, series, metric));
        *out = v;
    }
    return computeMfu(in);
}

Expected<Mfu> runMfu(store::RunDatabase& db)
{
    RUNLENS_ASSIGN_OR_RETURN(auto settings, store::loadRunSettings(db));
    return runMfu(db, MfuSettings::fromRunSettings(settings));
}

std::string shortNumber(double v)
{
    if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) {
        const int e = static_cast<int>(std::floor(std::log10(std::fabs(v))));
        double mant = v / std::pow(10.0, e);
        std::string m = fmt::format("{:.3g}", mant);
        if (m == "10") return fmt::format("1e{}", e + 1);
        return fmt::format("{}e{}", m, e);
    }
    return fmt::format("{:.6g}", v);
}

std::string mfuLine(const Mfu& m)
{
    if (!m.mfu) {
        std::string why;
        for (const std::string& w : m.missing)
            why += fmt::format("{}{}", why.empty() ? "" : "; ", w);
        return "MFU not known: " + why;
    }
    const double pct = 100 * *m.mfu;
    std::string out = fmt::format("MFU {} % (", pct < 10 ? fmt::format("{:.1f}", pct) : fmt::format("{:.0f}", pct));
    const std::string gpus = fmt::format("{} GPU{}", m.gpus, m.gpus == 1 ? "" : "s");
    if (m.peakSource == "user")
        out += fmt::format("{} TFLOP/s per GPU from --gpu-peak-tflops", tflops(*m.peakTflops));
    else
        out += fmt::format("{} {} dense {} TFLOP/s", m.gpuModel, m.precision, tflops(*m.peakTflops));
    if (m.flopsSource == "model") {
        out += fmt::format(" × {}; {}, N = {}", gpus, m.formula, shortNumber(*m.params));
        if (m.formula == "6N + attention")
            out += fmt::format(", L = {}, H = {}, S = {}", shortNumber(*m.layers), shortNumber(*m.hidden),
                               shortNumber(*m.seqLen));
        out += fmt::format("; {} tokens/s from the trainer log{})", shortNumber(*m.tokensPerS),
                           m.tokensSource == "samples_per_s" ? " (samples/s × sequence length)" : "");
    } else {
        out += fmt::format("; {} TFLOP/s per GPU from the trainer log)", tflops(*m.achievedTflopsPerGpu));
    }
    for (const std::string& n : m.notes)
        out += "; " + n;
    return out;
}

QJsonObject toJson(const Mfu& m)
{
    auto opt = [](const std::optional<double>& v) { return v ? QJsonValue(*v) : QJsonValue(QJsonValue::Null); };
    auto str = [](const std::string& s) {
        return s.empty() ? QJsonValue(QJsonValue::Null) : QJsonValue(QString::fromStdString(s));
    };
    QJsonArray missing, notes;
    for (const std::string& w : m.missing)
        missing.append(QString::fromStdString(w));
    for (const std::string& n : m.notes)
        notes.append(QString::fromStdString(n));
    return QJsonObject{{QStringLiteral("mfu"), opt(m.mfu)},
                       {QStringLiteral("text"), QString::fromStdString(mfuLine(m))},
                       {QStringLiteral("achieved_tflops_per_gpu"), opt(m.achievedTflopsPerGpu)},
                       {QStringLiteral("peak_tflops"), opt(m.peakTflops)},
                       {QStringLiteral("peak_source"), str(m.peakSource)},
                       {QStringLiteral("datasheet"), str(m.datasheet)},
                       {QStringLiteral("gpu_model"), str(m.gpuModel)},
                       {QStringLiteral("precision"), QString::fromStdString(m.precision)},
                       {QStringLiteral("gpus"), m.gpus},
                       {QStringLiteral("gpus_source"), QString::fromStdString(m.gpusSource)},
                       {QStringLiteral("flops_source"), str(m.flopsSource)},
                       {QStringLiteral("formula"), str(m.formula)},
                       {QStringLiteral("flops_per_token"), opt(m.flopsPerToken)},
                       {QStringLiteral("params"), opt(m.params)},
                       {QStringLiteral("layers"), opt(m.layers)},
                       {QStringLiteral("hidden"), opt(m.hidden)},
                       {QStringLiteral("seq_len"), opt(m.seqLen)},
                       {QStringLiteral("tokens_per_s"), opt(m.tokensPerS)},
                       {QStringLiteral("tokens_source"), str(m.tokensSource)},
                       {QStringLiteral("log_tflops_per_gpu"), opt(m.logTflopsPerGpu)},
                       {QStringLiteral("missing"), missing},
                       {QStringLiteral("notes"), notes}};
}

} // namespace runlens::analysis
