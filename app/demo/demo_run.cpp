#include "app/demo/demo_run.h"

#include "analysis/mfu/mfu.h"
#include "app/demo/demo_random.h"
#include "app/demo/demo_stacks.h"
#include "app/demo/demo_trace.h"
#include "importers/common/time_parse.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <numbers>

namespace fs = std::filesystem;

namespace runlens::app {
namespace {

// Where the run is at time t (seconds from its start): warm-up, a checkpoint stall, or training, and
// whether a step boundary (a short dip) falls in this sample.
struct Phase
{
    bool warmup;
    bool stall;
    bool stepEdge;
};

// Model loading and sharding before training: the GPUs idle, then warm up (rampUp).
constexpr double kWarmupS = 60.0;

Phase phaseAt(const DemoSpec& spec, double t, double sampleS)
{
    const double inPeriod = std::fmod(t, spec.checkpointEveryS);
    const bool warmup = t < kWarmupS;
    return {warmup, !warmup && inPeriod >= spec.checkpointEveryS - spec.checkpointStallS,
            std::fmod(t, spec.stepS) < sampleS};
}

// The GPUs' share of their working level during warm-up: idle while the model is loaded and sharded (the
// stacks' set-up, 20 s), then rising to their working level within 10 s.
double rampUp(double t)
{
    return std::clamp((t - 20.0) / 10.0, 0.0, 1.0);
}

Status writeAll(std::string& buf, std::FILE* out)
{
    if (std::fwrite(buf.data(), 1, buf.size(), out) != buf.size())
        return makeError(ErrorCode::Io, fmt::format("write failed: {}", std::strerror(errno)));
    buf.clear();
    return okStatus();
}

} // namespace

const char* const kDemoScenarios = "default, zero3, zero3-tuned";

Expected<DemoSpec> demoScenario(const std::string& name)
{
    DemoSpec spec;
    spec.scenario = name;
    if (name == "default") return spec;
    if (name != "zero3" && name != "zero3-tuned")
        return makeError(ErrorCode::Usage, fmt::format("unknown scenario \"{}\" (known: {})", name, kDemoScenarios));
    spec.nodes = 4;
    spec.gpusPerNode = 8;
    spec.checkpointEveryS = 7200;
    spec.checkpointStallS = 120;
    spec.stackRateHz = 1;     // 28 h of 32 ranks: py-spy at 1 Hz still gives ~50 samples a step
    spec.sequencesPerGpu = 6; // a global batch of 192 sequences on 32 GPUs
    spec.epochs = 3;
    if (name == "zero3") {
        spec.hours = 28;
        spec.stepS = 50;
        spec.smActive = 0.213;
        spec.ibBytesPerS = 4 * 6.0 * 1073741824.0; // 6.0 GiB/s a port, as the reference case measured it
    } else {
        spec.hours = 22.4; // the same 3 epochs at 40 s a step
        spec.stepS = 40;
        spec.smActive = 0.28;
        spec.ibBytesPerS = 4 * 7.5 * 1073741824.0;
    }
    return spec;
}

const char* const kDemoNvsmiHeader =
    "timestamp, index, name, pci.bus_id, utilization.gpu [%], utilization.memory [%], memory.used [MiB], "
    "memory.total [MiB], power.draw [W], clocks.current.sm [MHz], clocks.current.memory [MHz], temperature.gpu, "
    "pstate";

Expected<int64_t> writeDemoNvsmiCsv(const DemoSpec& spec, int node, std::FILE* out)
{
    DemoRandom rng(spec.seed * 1000003u + static_cast<uint64_t>(node));
    const int64_t samples = static_cast<int64_t>(spec.hours * 3600.0 * 1000.0 / spec.intervalMs);
    const int gpus = spec.gpusPerNode;
    std::vector<double> memMiB(gpus, 1024.0);
    std::vector<double> temp(gpus, 36.0);
    std::string buf;
    buf.reserve(1 << 20);
    buf += kDemoNvsmiHeader;
    buf += '\n';
    int64_t rows = 0;
    auto flush = [&]() -> Status {
        if (std::fwrite(buf.data(), 1, buf.size(), out) != buf.size())
            return makeError(ErrorCode::Io, fmt::format("write failed: {}", std::strerror(errno)));
        buf.clear();
        return okStatus();
    };
    for (int64_t i = 0; i < samples; ++i) {
        const int64_t tMs = i * spec.intervalMs;
        const double t = static_cast<double>(tMs) / 1000.0;
        const auto [warmup, stall, stepEdge] = phaseAt(spec, t, static_cast<double>(spec.intervalMs) / 1000.0);
        for (int g = 0; g < gpus; ++g) {
            double util, memUtil, power;
            if (warmup) {
                util = std::clamp(rampUp(t) * 95.0 + rng.normal(3.0), 0.0, 100.0);
                memUtil = util / 8.0;
                power = 90.0 + util * 2.5;
                memMiB[g] = std::min(72000.0, memMiB[g] + 1200.0);
            } else if (stall) {
                util = std::clamp(rng.uniform() * 3.0, 0.0, 100.0);
                memUtil = 0.0;
                power = 112.0 + rng.normal(4.0);
            } else {
                util = std::clamp(99.3 + rng.normal(0.8) - (stepEdge ? 14.0 : 0.0), 0.0, 100.0);
                memUtil = std::clamp(11.0 + rng.normal(3.0), 0.0, 100.0);
                power = 385.0 + rng.normal(22.0) + (g == 5 && node == 1 ? 25.0 : 0.0);
                memMiB[g] = 72000.0 + std::round(rng.normal(300.0));
            }
            temp[g] += ((32.0 + power / 12.0) - temp[g]) * 0.05;
            const int64_t ms = tMs + int64_t{g} * 3 + static_cast<int64_t>(rng.uniform() * 2.0);
            const int64_t unixS = spec.startUnixS + ms / 1000;
            const importers::CivilDate date =
                importers::civilFromDays(unixS >= 0 ? unixS / 86400 : -((-unixS + 86399) / 86400));
            const int64_t sod = unixS % 86400;
            fmt::format_to(
                std::back_inserter(buf),
                "{:04}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}, {}, NVIDIA H100 80GB HBM3, 00000000:{:02X}:00.0, "
                "{:.0f} %, {:.0f} %, {:.0f} MiB, 81559 MiB, {:.2f} W, 1980 MHz, 2619 MHz, {:.0f}, P0\n",
                date.year, date.month, date.day, sod / 3600, sod / 60 % 60, sod % 60, ms % 1000, g, 0x18 + g * 0x10,
                util, memUtil, memMiB[g], std::max(60.0, power), temp[g]);
            ++rows;
        }
        if (buf.size() > (1u << 20))
            if (Status s = flush(); !s) return s.error();
    }
    RUNLENS_TRY(flush());
    return rows;
}

Expected<int64_t> writeDemoDcgmExporter(const DemoSpec& spec, int node, std::FILE* out)
{
    DemoRandom rng(spec.seed * 7919u + static_cast<uint64_t>(node));
    const int64_t samples = static_cast<int64_t>(spec.hours * 3600.0 * 1000.0 / spec.intervalMs);
    std::string buf;
    buf.reserve(1 << 20);
    struct Family
    {
        const char* name;
        const char* help;
    };
    static constexpr Family kFamilies[] = {
        {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."},
        {"DCGM_FI_PROF_SM_ACTIVE", "The ratio of cycles an SM has at least 1 warp assigned (in %)."},
        {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active (in %)."},
        {"DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active sending or receiving "
                                     "data (in %)."},
        {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."},
    };
    int64_t lines = 0;
    for (int64_t i = 0; i < samples; ++i) {
        const int64_t tMs = i * spec.intervalMs;
        const double t = static_cast<double>(tMs) / 1000.0;
        const auto [warmup, stall, stepEdge] = phaseAt(spec, t, static_cast<double>(spec.intervalMs) / 1000.0);
        const int64_t stampMs = spec.startUnixS * 1000 + tMs + 250;
        for (const Family& f : kFamilies) {
            if (i == 0) fmt::format_to(std::back_inserter(buf), "# HELP {0} {1}\n# TYPE {0} gauge\n", f.name, f.help);
            for (int g = 0; g < spec.gpusPerNode; ++g) {
                double v;
                // Communication-bound: kernels resident (util ~99 %) but the SMs mostly wait (activity ~0.2).
                // At each step boundary the GPUs briefly idle (the optimizer step, the next batch).
                const double sm = warmup ? 0.3 * rampUp(t)
                                  : stall
                                      ? 0.0
                                      : std::clamp(spec.smActive * (stepEdge ? 0.3 : 1.0) + rng.normal(0.02), 0.0, 1.0);
                if (std::strcmp(f.name, "DCGM_FI_DEV_GPU_UTIL") == 0)
                    v = std::round(warmup  ? rampUp(t) * 95.0
                                   : stall ? rng.uniform() * 3.0
                                           : std::clamp(99.3 + rng.normal(0.8) - (stepEdge ? 14.0 : 0.0), 0.0, 100.0));
                else if (std::strcmp(f.name, "DCGM_FI_PROF_SM_ACTIVE") == 0)
                    v = sm;
                else if (std::strcmp(f.name, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE") == 0)
                    v = sm * 0.55;
                else if (std::strcmp(f.name, "DCGM_FI_PROF_DRAM_ACTIVE") == 0)
                    v = stall ? 0.0 : std::clamp(0.12 + rng.normal(0.02), 0.0, 1.0);
                else
                    v = stall ? 112.0 + rng.normal(4.0)
                              : 90.0 + (warmup ? rampUp(t) * 300.0 : 295.0 + rng.normal(22.0));
                fmt::format_to(std::back_inserter(buf),
                               "{}{{gpu=\"{}\",UUID=\"GPU-{:08x}-0000-4000-8000-{:012x}\",device=\"nvidia{}\","
                               "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node{}\"}} {:.4g} {}\n",
                               f.name, g, 0x5eed0000u + static_cast<unsigned>(node), static_cast<uint64_t>(g), g, node,
                               v, stampMs);
                ++lines;
            }
        }
        if (buf.size() > (1u << 20))
            if (Status st = writeAll(buf, out); !st) return st.error();
    }
    RUNLENS_TRY(writeAll(buf, out));
    return lines;
}

Expected<int64_t> writeDemoNodeExporter(const DemoSpec& spec, int node, std::FILE* out)
{
    DemoRandom rng(spec.seed * 104729u + static_cast<uint64_t>(node));
    constexpr int kScrapeS = 5;
    const auto scrapes = static_cast<int64_t>(spec.hours * 3600.0 / kScrapeS);
    constexpr int kCpus = 8;
    constexpr int kPorts = 4; // 4 × 200 Gb/s InfiniBand
    std::string buf;
    buf.reserve(1 << 20);
    double ibTx = 1e12, ibRx = 1e12, diskWritten = 4e11, diskRead = 9e11, ethTx = 5e9, ethRx = 7e9;
    std::vector<double> cpuUser(kCpus, 1000.0), cpuSystem(kCpus, 300.0), cpuIdle(kCpus, 50000.0);
    const std::string instance = fmt::format("node{}:9100", node);
    int64_t lines = 0;
    for (int64_t i = 0; i < scrapes; ++i) {
        const double t = static_cast<double>(i * kScrapeS);
        const auto [warmup, stall, stepEdge] = phaseAt(spec, t, kScrapeS);
        const int64_t stampMs = spec.startUnixS * 1000 + i * kScrapeS * 1000 + 500;
        // ZeRO-3 traffic (spec.ibBytesPerS over 4 × 25 GB/s); checkpoints write ~2 GB/s to local NVMe.
        const double ibRate = warmup || stall ? 0.05e9 : spec.ibBytesPerS * (1 + rng.normal(0.065));
        ibTx += ibRate * kScrapeS;
        ibRx += std::max(0.0, ibRate + rng.normal(0.1e9)) * kScrapeS; // counters never go down
        diskWritten += (stall ? 2.1e9 + rng.normal(0.1e9) : 2e6) * kScrapeS;
        diskRead += (warmup ? 1.5e9 : std::fmod(t, 120.0) < 10 ? 0.4e9 : 1e6) * kScrapeS;
        ethTx += 2e6 * kScrapeS;
        ethRx += 3e6 * kScrapeS;
        auto put = [&](const char* name, const std::string& labels, double v) {
            fmt::format_to(std::back_inserter(buf), "{}{{{}instance=\"{}\",job=\"node\"}} {:.17g} {}\n", name, labels,
                           instance, v, stampMs);
            ++lines;
        };
        if (i == 0)
            buf += "# HELP node_infiniband_port_data_transmitted_bytes_total Number of data octets transmitted on all "
                   "links\n# TYPE node_infiniband_port_data_transmitted_bytes_total counter\n"
                   "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n"
                   "# TYPE node_cpu_seconds_total counter\n";
        for (int p = 0; p < kPorts; ++p) {
            const std::string l = fmt::format("device=\"mlx5_{}\",port=\"1\",", p);
            put("node_infiniband_port_data_transmitted_bytes_total", l, std::round(ibTx / kPorts));
            put("node_infiniband_port_data_received_bytes_total", l, std::round(ibRx / kPorts));
            put("node_infiniband_rate_bytes_per_second", l, 200e9 / 8);
        }
        put("node_network_transmit_bytes_total", "device=\"eth0\",", std::round(ethTx));
        put("node_network_receive_bytes_total", "device=\"eth0\",", std::round(ethRx));
        put("node_disk_written_bytes_total", "device=\"nvme0n1\",", std::round(diskWritten));
        put("node_disk_read_bytes_total", "device=\"nvme0n1\",", std::round(diskRead));
        for (int c = 0; c < kCpus; ++c) {
            const double busy = warmup ? 0.9 : stall ? 0.35 : 0.25 + rng.uniform() * 0.05;
            cpuUser[c] += busy * 0.8 * kScrapeS;
            cpuSystem[c] += busy * 0.2 * kScrapeS;
            cpuIdle[c] += (1.0 - busy) * kScrapeS;
            const std::string cpu = fmt::format("cpu=\"{}\",", c);
            put("node_cpu_seconds_total", cpu + "mode=\"user\",", std::round(cpuUser[c] * 100) / 100);
            put("node_cpu_seconds_total", cpu + "mode=\"system\",", std::round(cpuSystem[c] * 100) / 100);
            put("node_cpu_seconds_total", cpu + "mode=\"idle\",", std::round(cpuIdle[c] * 100) / 100);
        }
        put("node_memory_MemAvailable_bytes", "", std::round(1.6e12 - (warmup ? t / 60 * 3e11 : 3e11)));
        if (buf.size() > (1u << 20))
            if (Status st = writeAll(buf, out); !st) return st.error();
    }
    RUNLENS_TRY(writeAll(buf, out));
    return lines;
}

int64_t demoTokensPerStep(const DemoSpec& spec)
{
    return static_cast<int64_t>(spec.sequencesPerGpu) * spec.nodes * spec.gpusPerNode * spec.seqLen;
}

double demoTrainStartS(const DemoSpec& spec)
{
    return std::ceil(kWarmupS / spec.stepS) * spec.stepS;
}

std::vector<double> demoStepEnds(const DemoSpec& spec)
{
    std::vector<double> ends;
    if (!(spec.stepS > 0)) return ends;
    const double endS = spec.hours * 3600.0;
    const auto first = static_cast<int64_t>(std::llround(demoTrainStartS(spec) / spec.stepS)) + 1;
    for (int64_t k = first; static_cast<double>(k) * spec.stepS < endS; ++k) {
        const double t = static_cast<double>(k) * spec.stepS;
        if (!phaseAt(spec, t, 0).stall) ends.push_back(t);
    }
    return ends;
}

namespace {

// The loss curve: floor + span × (1 + step / scale)^-exponent, about 1.8 after the first steps and 1.1 after 2000,
// as in fine-tuning a pretrained model, with noise of kLossNoise per step (the logged loss averages the steps since
// the previous line, as the trainer does).
constexpr double kLossFloor = 0.95;
constexpr double kLossSpan = 0.9;
constexpr double kLossScaleSteps = 50;
constexpr double kLossExponent = 0.5;
constexpr double kLossNoise = 0.03;
// The learning rate: a linear warm-up over the first 3 % of the steps, then a cosine decay to 0 (LLaMA-Factory's
// lr_scheduler_type cosine with warmup_ratio 0.03), from a peak usual for full fine-tuning.
constexpr double kPeakLr = 1e-5;
constexpr double kWarmupRatio = 0.03;

double learningRate(int64_t step, int64_t total)
{
    const auto warm = static_cast<int64_t>(std::ceil(kWarmupRatio * static_cast<double>(total)));
    if (step < warm) return kPeakLr * static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warm));
    const double progress = static_cast<double>(step - warm) / static_cast<double>(std::max<int64_t>(1, total - warm));
    return kPeakLr * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

// A float as Python's json.dumps writes it: the shortest repr, with ".0" on whole numbers.
std::string pyFloat(double v)
{
    std::string s = fmt::format("{}", v);
    if (s.find_first_of(".eni") == std::string::npos) s += ".0";
    return s;
}

// Python's str(timedelta(seconds=int(s))): "H:MM:SS", "1 day, H:MM:SS", "N days, H:MM:SS".
std::string pyTimedelta(double seconds)
{
    const auto s = static_cast<int64_t>(std::max(0.0, seconds));
    const int64_t days = s / 86400, rest = s % 86400;
    const std::string hms = fmt::format("{}:{:02}:{:02}", rest / 3600, rest / 60 % 60, rest % 60);
    return days == 0 ? hms : fmt::format("{} day{}, {}", days, days == 1 ? "" : "s", hms);
}

double round2(double v)
{
    return std::round(v * 100.0) / 100.0;
}

} // namespace

double demoStepLoss(const DemoSpec& spec, int64_t step)
{
    DemoRandom rng(spec.seed * kSplitMixGamma ^ static_cast<uint64_t>(step) * 0xd1b54a32d192ed03ull);
    const double trend =
        kLossFloor + kLossSpan * std::pow(1.0 + static_cast<double>(step) / kLossScaleSteps, -kLossExponent);
    return trend + rng.normal(kLossNoise);
}

const char* const kDemoTrainerLogName = "trainer_log.jsonl";

std::string demoTrainerLogStart(const DemoSpec& spec)
{
    return fmt::format("{}", static_cast<double>(spec.startUnixS) + demoTrainStartS(spec));
}

std::map<std::string, std::optional<std::string>> demoModelSettings(const DemoSpec& spec)
{
    // The active parameters, not the total: each token passes through the shared weights and one routed expert,
    // so its FLOPs are those of 17e9 parameters; the other experts' weights are held (ZeRO-3 gathers them) but do
    // no work for it.
    return {{analysis::kSettingModelParams, fmt::format("{}", kDemoModelActiveParams)},
            {analysis::kSettingModelLayers, fmt::format("{}", kDemoModelLayers)},
            {analysis::kSettingModelHidden, fmt::format("{}", kDemoModelHidden)},
            {analysis::kSettingSeqLen, fmt::format("{}", spec.seqLen)}};
}

Expected<int64_t> writeDemoTrainerLog(const DemoSpec& spec, std::FILE* out)
{
    const std::vector<double> ends = demoStepEnds(spec);
    const auto total = static_cast<int64_t>(ends.size());
    const int64_t tokensPerStep = demoTokensPerStep(spec);
    const double startS = demoTrainStartS(spec);
    std::string buf;
    int64_t lines = 0;
    // LLaMA-Factory's LogCallback.on_log: keys whose value is None left out, throughput the tokens since the start
    // over the time since the start.
    auto line = [&](int64_t step, std::optional<double> loss) {
        const double elapsed = ends[static_cast<size_t>(step - 1)] - startS;
        const int64_t tokens = step * tokensPerStep;
        const double remaining = static_cast<double>(total - step) * elapsed / static_cast<double>(step);
        fmt::format_to(std::back_inserter(buf), "{{\"current_steps\": {}, \"total_steps\": {}, ", step, total);
        if (loss)
            fmt::format_to(std::back_inserter(buf), "\"loss\": {}, \"lr\": {}, ", pyFloat(*loss),
                           pyFloat(learningRate(step, total)));
        fmt::format_to(std::back_inserter(buf),
                       "\"epoch\": {}, \"percentage\": {}, \"elapsed_time\": \"{}\", \"remaining_time\": \"{}\", "
                       "\"throughput\": {}, \"total_tokens\": {}}}\n",
                       pyFloat(spec.epochs * static_cast<double>(step) / static_cast<double>(total)),
                       pyFloat(round2(100.0 * static_cast<double>(step) / static_cast<double>(total))),
                       pyTimedelta(elapsed), pyTimedelta(remaining),
                       pyFloat(round2(static_cast<double>(tokens) / elapsed)), tokens);
        ++lines;
    };
    double lossSum = 0;
    for (int64_t step = 1; step <= total; ++step) {
        lossSum += demoStepLoss(spec, step);
        if (step % kDemoLoggingSteps != 0) continue;
        line(step, std::round(lossSum / kDemoLoggingSteps * 1e4) / 1e4); // the trainer rounds to 4 places
        lossSum = 0;
    }
    // The closing line (the trainer's summary: train_loss, not loss).
    if (total > 0) line(total, std::nullopt);
    RUNLENS_TRY(writeAll(buf, out));
    return lines;
}

Status writeDemoFile(const std::string& path, const std::function<Expected<int64_t>(std::FILE*)>& write,
                     std::vector<std::string>& files)
{
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (!out) return makeError(ErrorCode::Io, fmt::format("cannot write: {}", std::strerror(errno)), {path});
    auto written = write(out);
    const bool closed = std::fclose(out) == 0;
    if (!written) return written.error();
    if (!closed) return makeError(ErrorCode::Io, "write failed", {path});
    files.push_back(path);
    return okStatus();
}

Expected<std::vector<std::string>> writeDemoRun(const DemoSpec& spec, const std::string& dir)
{
    if (spec.nodes < 1 || spec.gpusPerNode < 1 || spec.hours <= 0 || spec.intervalMs < 1)
        return makeError(ErrorCode::Usage, "demo needs at least one node, one GPU, some hours and a positive interval");
    std::vector<std::string> files;
    for (int n = 0; n < spec.nodes; ++n) {
        const fs::path nodeDir = fs::path(dir) / fmt::format("node{}", n);
        std::error_code ec;
        fs::create_directories(nodeDir, ec);
        if (ec) return makeError(ErrorCode::Io, fmt::format("cannot create {}: {}", nodeDir.string(), ec.message()));
        RUNLENS_TRY(writeDemoFile((nodeDir / "nvidia-smi-query.csv").string(),
                                  [&](std::FILE* out) { return writeDemoNvsmiCsv(spec, n, out); }, files));
        if (spec.exporters) {
            for (const auto& exporter : {std::pair{"dcgm-exporter.prom", &writeDemoDcgmExporter},
                                         std::pair{"node-exporter.prom", &writeDemoNodeExporter}})
                RUNLENS_TRY(writeDemoFile((nodeDir / exporter.first).string(),
                                          [&](std::FILE* out) { return exporter.second(spec, n, out); }, files));
        }
        if (n == 0 && !demoStepEnds(spec).empty()) // LLaMA-Factory writes it on rank 0
            RUNLENS_TRY(writeDemoFile((nodeDir / kDemoTrainerLogName).string(),
                                      [&](std::FILE* out) { return writeDemoTrainerLog(spec, out); }, files));
        if (!spec.stacks) continue;
        for (int g = 0; g < spec.gpusPerNode; ++g) {
            const int rank = n * spec.gpusPerNode + g;
            RUNLENS_TRY(writeDemoFile((nodeDir / fmt::format("stacks-rank{}.speedscope.json", rank)).string(),
                                      [&](std::FILE* out) { return writeDemoSpeedscope(spec, rank, out); }, files));
        }
        RUNLENS_TRY(writeDemoTraces(spec, n, nodeDir.string(), files));
    }
    return files;
}

} // namespace runlens::app
