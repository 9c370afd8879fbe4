#include "tests/bench/format_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>

namespace fs = std::filesystem;

namespace runlens::bench {
namespace {

constexpr int64_t kStartS = 1793606400; // 2026-11-02 08:00:00 UTC

// Buffered writing of one generated file.
class Out
{
public:
    explicit Out(const std::string& path) : m_file(std::fopen(path.c_str(), "wb")) {}
    ~Out()
    {
        flush();
        if (m_file) std::fclose(m_file);
    }
    std::string buf;
    void maybeFlush()
    {
        if (buf.size() > (1u << 20)) flush();
    }

private:
    void flush()
    {
        if (m_file) std::fwrite(buf.data(), 1, buf.size(), m_file);
        buf.clear();
    }
    std::FILE* m_file;
};

// Deterministic values with a little structure (integers, two decimals, ratios).
double util(int64_t t, int g)
{
    return static_cast<double>((t * 7 + static_cast<int64_t>(g) * 13) % 101);
}
double ratio(int64_t t, int g)
{
    return static_cast<double>((t * 31 + static_cast<int64_t>(g) * 17) % 1000) / 1000.0;
}
double watts(int64_t t, int g)
{
    return 100.0 + static_cast<double>((t * 53 + static_cast<int64_t>(g) * 7) % 50000) / 100.0;
}

// The time that node n's values at second t are made from: each node's values differ (else its file would be the same
// content, imported once).
int64_t nodeTime(int64_t t, int n)
{
    return t + static_cast<int64_t>(n) * 1009;
}

void civil(int64_t unixS, int& y, int& mo, int& d, int& h, int& mi, int& s)
{
    int64_t z = unixS / 86400 + 719468;
    const int64_t era = z / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
    mo = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    y = static_cast<int>(static_cast<int64_t>(yoe) + era * 400 + (mo <= 2));
    const int64_t sod = unixS % 86400;
    h = static_cast<int>(sod / 3600);
    mi = static_cast<int>(sod / 60 % 60);
    s = static_cast<int>(sod % 60);
}

// Node n's `nvidia-smi dmon` capture with GPM columns, and the same values as rows of `csv` (no header). Returns the
// rows written.
int64_t dmonNode(const std::string& path, Out& csv, int n, int gpus, int64_t seconds)
{
    Out out(path);
    out.buf += "#Date       Time        gpu    pwr  gtemp     sm    mem   mclk   pclk     smutil     mmaact       "
               "dram \n#YYYYMMDD   HH:MM:SS    Idx      W      C      %      %    MHz    MHz      GPM:%      "
               "GPM:%      GPM:% \n";
    int64_t rows = 0;
    for (int64_t t = 0; t < seconds; ++t) {
        int y, mo, d, h, mi, s;
        civil(kStartS + t, y, mo, d, h, mi, s);
        for (int gpu = 0; gpu < gpus; ++gpu) {
            const int64_t v = nodeTime(t, n);
            const int pwr = static_cast<int>(watts(v, gpu)), sm = static_cast<int>(util(v, gpu));
            const int smutil = static_cast<int>(ratio(v, gpu) * 100), mma = smutil / 2, dram = smutil / 3;
            fmt::format_to(std::back_inserter(out.buf),
                           " {:04}{:02}{:02}   {:02}:{:02}:{:02}  {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>10} "
                           "{:>10} {:>10} \n",
                           y, mo, d, h, mi, s, gpu, pwr, 40 + gpu, sm, sm / 4, 2619, 1980, smutil, mma, dram);
            fmt::format_to(std::back_inserter(csv.buf),
                           "{:04}{:02}{:02},{:02}:{:02}:{:02},{},{},{},{},{},{},{},{},{},{}\n", y, mo, d, h, mi, s, gpu,
                           pwr, 40 + gpu, sm, sm / 4, 2619, 1980, smutil, mma, dram);
            ++rows;
        }
        out.maybeFlush();
        csv.maybeFlush();
    }
    return rows;
}

constexpr const char* kDmonBaselineHeader = "date,time,gpu,pwr,gtemp,sm,mem,mclk,pclk,smutil,mmaact,dram\n";

GeneratedFormat dmon(const fs::path& dir, int nodes, int gpus, int64_t seconds)
{
    GeneratedFormat g{"nvidia-smi-dmon", {}, {"--tz", "UTC"}, {(dir / "dmon-baseline.csv").string()}, 0, 0, {}};
    Out csv(g.baseline.front());
    csv.buf += kDmonBaselineHeader;
    for (int n = 0; n < nodes; ++n) {
        const fs::path file = dir / fmt::format("dmon-node{}", n) / "nvidia-smi-dmon.txt";
        fs::create_directories(file.parent_path());
        g.files.push_back(file.string());
        const int64_t rows = dmonNode(file.string(), csv, n, gpus, seconds);
        g.rows += rows;
        g.samples += rows * kDmonSamplesPerRow;
    }
    return g;
}

// dcgm-exporter scrapes (5 families per GPU each second) as Prometheus text, and the same scrapes as
// Prometheus query_range JSON (one response per family and node): the same values for both and the baseline.
struct Family
{
    const char* name;
    double (*value)(int64_t, int);
};
constexpr Family kFamilies[] = {{"DCGM_FI_DEV_GPU_UTIL", util},
                                {"DCGM_FI_PROF_SM_ACTIVE", ratio},
                                {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", ratio},
                                {"DCGM_FI_PROF_DRAM_ACTIVE", ratio},
                                {"DCGM_FI_DEV_POWER_USAGE", watts}};

std::pair<GeneratedFormat, GeneratedFormat> prometheus(const fs::path& dir, int nodes, int gpus, int64_t seconds)
{
    GeneratedFormat text{"prometheus-text", {}, {}, {(dir / "prom-baseline.csv").string()}, 0, 0, {}};
    GeneratedFormat json{"prometheus-json", {}, {}, text.baseline, 0, 0, {}};
    Out csv(text.baseline.front());
    csv.buf += "ts_ms,name,gpu,hostname,value\n";
    for (int n = 0; n < nodes; ++n) {
        const fs::path file = dir / fmt::format("prom-node{}", n) / "dcgm-exporter.prom";
        fs::create_directories(file.parent_path());
        text.files.push_back(file.string());
        Out out(file.string());
        for (const Family& f : kFamilies)
            fmt::format_to(std::back_inserter(out.buf), "# TYPE {} gauge\n", f.name);
        for (int64_t t = 0; t < seconds; ++t) {
            const int64_t ms = (kStartS + t) * 1000 + 250;
            for (const Family& f : kFamilies) {
                for (int gpu = 0; gpu < gpus; ++gpu) {
                    const double v = f.value(t, gpu);
                    fmt::format_to(
                        std::back_inserter(out.buf),
                        "{}{{gpu=\"{}\",UUID=\"GPU-{:08x}\",device=\"nvidia{}\",modelName=\"NVIDIA H100 80GB "
                        "HBM3\",Hostname=\"node{}\"}} {} {}\n",
                        f.name, gpu, n * 100 + gpu, gpu, n, v, ms);
                    fmt::format_to(std::back_inserter(csv.buf), "{},{},{},node{},{}\n", ms, f.name, gpu, n, v);
                    ++text.rows;
                }
            }
            out.maybeFlush();
            csv.maybeFlush();
        }
        for (const Family& f : kFamilies) {
            const fs::path jfile = dir / fmt::format("json-node{}", n) / fmt::format("{}.json", f.name);
            fs::create_directories(jfile.parent_path());
            json.files.push_back(jfile.string());
            Out j(jfile.string());
            j.buf += R"({"status":"success","data":{"resultType":"matrix","result":[)";
            for (int gpu = 0; gpu < gpus; ++gpu) {
                fmt::format_to(
                    std::back_inserter(j.buf),
                    R"({}{{"metric":{{"__name__":"{}","gpu":"{}","Hostname":"node{}","instance":"node{}:9400"}},"values":[)",
                    gpu ? "," : "", f.name, gpu, n, n);
                for (int64_t t = 0; t < seconds; ++t) {
                    fmt::format_to(std::back_inserter(j.buf), R"({}[{}.25,"{}"])", t ? "," : "", kStartS + t,
                                   f.value(t, gpu));
                    ++json.rows;
                    j.maybeFlush();
                }
                j.buf += "]}";
            }
            j.buf += "]}}\n";
        }
    }
    text.samples = text.rows;
    json.samples = json.rows;
    return {std::move(text), std::move(json)};
}

GeneratedFormat generic(const fs::path& dir, int nodes, int gpus, int64_t seconds)
{
    GeneratedFormat g{"metrics-csv", {}, {}, {}, 0, 0, {}};
    for (int n = 0; n < nodes; ++n) {
        const fs::path file = dir / fmt::format("generic-node{}", n) / "metrics.csv";
        fs::create_directories(file.parent_path());
        g.files.push_back(file.string());
        Out out(file.string());
        out.buf += "ts,node,device,metric,value,unit\n";
        for (int64_t t = 0; t < seconds; ++t) {
            for (int gpu = 0; gpu < gpus; ++gpu) {
                fmt::format_to(std::back_inserter(out.buf), "{},node{},gpu:{},gpu.util,{},%\n", kStartS + t, n, gpu,
                               util(t, gpu));
                fmt::format_to(std::back_inserter(out.buf), "{},node{},gpu:{},gpu.power,{},W\n", kStartS + t, n, gpu,
                               watts(t, gpu));
                g.rows += 2;
            }
            out.maybeFlush();
        }
    }
    g.samples = g.rows;
    g.baseline = g.files; // the same files are the baseline
    return g;
}

// A metric of the realistic long file: its name, unit, typical value, spread and decimals written.
struct LongMetric
{
    const char* name;
    const char* unit;
    double base, spread;
    int decimals;
};
constexpr LongMetric kGpuMetrics[] = {
    {"gpu.util", "%", 70, 30, 3},
    {"gpu.mem_util", "%", 40, 20, 3},
    {"gpu.mem_used", "MiB", 60000, 20000, 4},
    {"gpu.mem_free", "MiB", 20000, 15000, 4},
    {"gpu.power", "W", 550, 150, 4},
    {"gpu.power_instant", "W", 560, 170, 5},
    {"gpu.temp", "C", 62, 12, 3},
    {"gpu.mem_temp", "C", 70, 10, 3},
    {"gpu.sm_clock", "MHz", 1800, 180, 3},
    {"gpu.mem_clock", "MHz", 2619, 0.5, 3},
    {"DCGM_FI_PROF_SM_ACTIVE", "ratio", 0.7, 0.25, 6},
    {"DCGM_FI_PROF_SM_OCCUPANCY", "ratio", 0.4, 0.2, 6},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "ratio", 0.45, 0.3, 6},
    {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", "ratio", 0.1, 0.08, 6},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "ratio", 0.35, 0.2, 6},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "B/s", 2.5e8, 2e8, 3},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "B/s", 3.1e8, 2e8, 3},
    {"DCGM_FI_DEV_XID_ERRORS", "", 0.001, 0.001, 3},
    {"torch.cuda.max_memory_allocated", "GiB", 61, 9, 5},
    {"torch.cuda.memory_reserved", "GiB", 70, 6, 5},
};
constexpr LongMetric kNvlinkMetric{"nvlink.bandwidth", "GB/s", 120, 60, 4};
constexpr int kNvlinks = 18; // an H100 SXM: a tx and an rx series per link
constexpr LongMetric kIbMetrics[] = {
    {"net.rx", "MB/s", 9000, 6000, 3},           {"net.tx", "MB/s", 9000, 6000, 3},
    {"ib.port_rcv_packets", "1/s", 4e6, 3e6, 3}, {"ib.port_xmit_packets", "1/s", 4e6, 3e6, 3},
    {"ib.port_xmit_wait", "1/s", 1200, 1100, 3}, {"ib.symbol_error", "", 0.001, 0.001, 3},
    {"ib.link_downed", "", 0.001, 0.001, 3},     {"ib.port_rcv_errors", "", 0.001, 0.001, 3},
    {"ib.rdma_read_bytes", "GiB/s", 4, 3, 5},    {"ib.rdma_write_bytes", "GiB/s", 4, 3, 5},
};
constexpr LongMetric kDiskMetrics[] = {
    {"disk.read", "kB/s", 25000, 24000, 3}, {"disk.write", "kB/s", 90000, 80000, 3},
    {"disk.util", "%", 20, 19, 3},          {"disk.await", "ms", 1.2, 1, 4},
    {"disk.iops_read", "1/s", 300, 290, 3}, {"disk.iops_write", "1/s", 800, 700, 3},
};
constexpr LongMetric kHostMetrics[] = {
    {"cpu.util", "%", 35, 30, 3},
    {"cpu.iowait", "%", 1.5, 1.4, 3},
    {"cpu.load1", "", 24, 20, 3},
    {"host.mem_available", "MiB", 9e5, 2e5, 3},
    {"host.mem_cached", "MiB", 4e5, 1e5, 3},
    {"host.swap_used", "MiB", 0, 0.5, 3},
    {"net.rx", "MB/s", 40, 35, 4},
    {"net.tx", "MB/s", 30, 25, 4},
    {"proc.python.rss", "GiB", 48, 8, 5},
    {"proc.python.threads", "", 180, 20, 3},
    {"dataloader.queue_depth", "", 6, 6, 3},
    {"node.fs.free", "GiB", 2500, 10, 6},
};

// A value near base: deterministic, different per series and time, with the metric's decimals.
void longValue(std::string& out, const LongMetric& m, uint64_t series, int64_t step)
{
    const uint64_t h = (series * 0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(step) * 0xC2B2AE3D27D4EB4Full);
    const double unit = static_cast<double>((h >> 11) % 1000003) / 1000003.0; // 0 … 1
    const double v = std::max(0.0, m.base + m.spread * (2 * unit - 1));
    fmt::format_to(std::back_inserter(out), "{:.{}f}", v, m.decimals);
}

// The long format as a collector that logs time.time_ns() writes it: nanosecond times, about 25,000 series (45 nodes
// × 8 GPUs × 56 metrics, 8 InfiniBand ports, 2 disks, a NIC and the host), one scrape every 10 s with the nodes one
// after another, rows in time order and the series interleaved. `steps` scrapes in one file (the baseline too).
GeneratedFormat genericRealistic(const fs::path& dir, int64_t steps)
{
    constexpr int kNodes = 45, kGpus = 8, kIbPorts = 8;
    GeneratedFormat g{"metrics-csv", {}, {}, {}, 0, 0, "metrics-csv ns 25k"};
    const fs::path file = dir / "generic-realistic" / "metrics.csv";
    fs::create_directories(file.parent_path());
    g.files.push_back(file.string());
    Out out(file.string());
    out.buf += "ts,node,device,metric,value,unit\n";
    constexpr int64_t kStartNs = kStartS * 1'000'000'000 + 123'456'789;
    for (int64_t step = 0; step < steps; ++step) {
        for (int n = 0; n < kNodes; ++n) {
            int64_t ns = kStartNs + step * 10'000'000'000 + static_cast<int64_t>(n) * 137'000'411;
            uint64_t series = static_cast<uint64_t>(n) * 1000;
            auto row = [&](std::string_view device, std::string_view metric, const LongMetric& m) {
                ns += 1123 + static_cast<int64_t>(series % 7) * 101; // the exporter's own pace between rows
                fmt::format_to(std::back_inserter(out.buf), "{},gpu-node-{:03},{},{},", ns, n, device, metric);
                longValue(out.buf, m, series++, step);
                out.buf += ',';
                out.buf += m.unit;
                out.buf += '\n';
                ++g.rows;
            };
            for (int gpu = 0; gpu < kGpus; ++gpu) {
                const std::string device = fmt::format("gpu:{}", gpu);
                for (const LongMetric& m : kGpuMetrics)
                    row(device, m.name, m);
                for (int link = 0; link < kNvlinks; ++link)
                    for (const char* way : {"tx", "rx"})
                        row(device, fmt::format("{}.l{}.{}", kNvlinkMetric.name, link, way), kNvlinkMetric);
            }
            for (int port = 0; port < kIbPorts; ++port) {
                const std::string device = fmt::format("ib:mlx5_{}:1", port);
                for (const LongMetric& m : kIbMetrics)
                    row(device, m.name, m);
            }
            for (const char* disk : {"disk:nvme0n1", "disk:nvme1n1"})
                for (const LongMetric& m : kDiskMetrics)
                    row(disk, m.name, m);
            for (const LongMetric& m : kHostMetrics)
                row(m.name[0] == 'n' && m.name[1] == 'e' ? "nic:eth0" : "host", m.name, m);
            out.maybeFlush();
        }
    }
    g.samples = g.rows;
    g.baseline = g.files; // the same file is the baseline
    return g;
}

GeneratedFormat dcgmi(const fs::path& dir, int nodes, int gpus, int64_t seconds)
{
    GeneratedFormat g{"dcgmi-dmon",
                      {},
                      {"--option", fmt::format("start={}", kStartS), "--option", "interval=1000ms"},
                      {(dir / "dcgmi-baseline.csv").string()},
                      0,
                      0,
                      {}};
    Out csv(g.baseline.front());
    csv.buf += "node,t,gpu,gputl,smact,smocc,tenso,drama,power\n";
    const std::string header = "#Entity   GPUTL       SMACT       SMOCC       TENSO       DRAMA       POWER\n"
                               "ID                                                                     W\n";
    for (int n = 0; n < nodes; ++n) {
        const fs::path file = dir / fmt::format("dcgmi-node{}", n) / "dcgmi-dmon.txt";
        fs::create_directories(file.parent_path());
        g.files.push_back(file.string());
        Out out(file.string());
        int64_t rows = 0;
        for (int64_t t = 0; t < seconds; ++t) {
            const int64_t v = nodeTime(t, n);
            for (int gpu = gpus - 1; gpu >= 0; --gpu) { // dcgmi lists GPUs in descending order
                if (rows++ % 14 == 0) out.buf += header;
                const double sm = ratio(v, gpu);
                fmt::format_to(std::back_inserter(out.buf),
                               "GPU {:<6}{:<12}{:<12.3f}{:<12.3f}{:<12.3f}{:<12.3f}{:.3f}\n", gpu, util(v, gpu), sm,
                               sm / 2, sm / 3, sm / 4, watts(v, gpu));
                fmt::format_to(std::back_inserter(csv.buf), "{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f}\n", n, t,
                               gpu, util(v, gpu), sm, sm / 2, sm / 3, sm / 4, watts(v, gpu));
                ++g.rows;
                g.samples += 6;
            }
            out.maybeFlush();
            csv.maybeFlush();
        }
    }
    return g;
}

// sadf -d of each node: CPU (all) every second, then 2 disks and 2 interfaces (sections one after another, as
// sadf prints them).
GeneratedFormat sadf(const fs::path& dir, int nodes, int64_t seconds)
{
    GeneratedFormat g{"sadf-csv", {}, {}, {(dir / "sadf-baseline.csv").string()}, 0, 0, {}};
    Out csv(g.baseline.front());
    csv.buf += "host,interval,ts,key,a,b,c,d,e,f,g,h,i,j\n"; // the same values as the sadf rows
    for (int n = 0; n < nodes; ++n) {
        const fs::path file = dir / fmt::format("sadf-node{}", n) / "sadf.csv";
        fs::create_directories(file.parent_path());
        g.files.push_back(file.string());
        Out out(file.string());
        auto stamp = [](int64_t t) {
            int y, mo, d, h, mi, s;
            civil(kStartS + t, y, mo, d, h, mi, s);
            return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", y, mo, d, h, mi, s);
        };
        out.buf += "# hostname;interval;timestamp;CPU;%usr;%nice;%sys;%iowait;%steal;%irq;%soft;%guest;%gnice;%idle\n";
        for (int64_t t = 0; t < seconds; ++t) {
            const double idle = 100.0 - util(t + n, 0) * 0.5;
            fmt::format_to(std::back_inserter(out.buf),
                           "node{};1;{};-1;{:.2f};0.00;5.00;0.10;0.00;0.00;0.20;0.00;0.00;{:.2f}\n", n, stamp(t),
                           94.7 - idle, idle);
            fmt::format_to(std::back_inserter(csv.buf), "node{},1,{},-1,{:.2f},5.00,0.10,{:.2f}\n", n, t, 94.7 - idle,
                           idle);
            ++g.rows;
            g.samples += 10;
            out.maybeFlush();
            csv.maybeFlush();
        }
        out.buf += "# hostname;interval;timestamp;DEV;tps;rkB/s;wkB/s;dkB/s;areq-sz;aqu-sz;await;%util\n";
        for (int64_t t = 0; t < seconds; ++t) {
            for (const char* dev : {"nvme0n1", "nvme1n1"}) {
                const double w = watts(t + n, 1) * 10;
                fmt::format_to(std::back_inserter(out.buf),
                               "node{};1;{};{};{:.2f};{:.2f};{:.2f};0.00;32.00;0.50;1.20;{:.2f}\n", n, stamp(t), dev,
                               w / 32, w / 3, w, ratio(t, 2) * 100);
                fmt::format_to(std::back_inserter(csv.buf),
                               "node{},1,{},{},{:.2f},{:.2f},{:.2f},0.00,32.00,0.50,1.20,{:.2f}\n", n, t, dev, w / 32,
                               w / 3, w, ratio(t, 2) * 100);
                ++g.rows;
                g.samples += 8;
            }
            out.maybeFlush();
            csv.maybeFlush();
        }
        out.buf +=
            "# hostname;interval;timestamp;IFACE;rxpck/s;txpck/s;rxkB/s;txkB/s;rxcmp/s;txcmp/s;rxmcst/s;%ifutil\n";
        for (int64_t t = 0; t < seconds; ++t) {
            for (const char* nic : {"eth0", "ib0"}) {
                const double kb = watts(t + n, 3) * 1000;
                fmt::format_to(std::back_inserter(out.buf),
                               "node{};1;{};{};{:.2f};{:.2f};{:.2f};{:.2f};0.00;0.00;0.00;{:.2f}\n", n, stamp(t), nic,
                               kb / 8, kb / 9, kb, kb * 0.9, ratio(t, 3) * 10);
                fmt::format_to(std::back_inserter(csv.buf),
                               "node{},1,{},{},{:.2f},{:.2f},{:.2f},{:.2f},0.00,0.00,0.00,{:.2f}\n", n, t, nic, kb / 8,
                               kb / 9, kb, kb * 0.9, ratio(t, 3) * 10);
                ++g.rows;
                g.samples += 8;
            }
            out.maybeFlush();
            csv.maybeFlush();
        }
    }
    return g;
}

// A hand-made wide CSV per node: epoch seconds and one column per GPU.
GeneratedFormat wide(const fs::path& dir, int nodes, int gpus, int64_t seconds)
{
    GeneratedFormat g{"wide-csv", {}, {}, {}, 0, 0, {}};
    for (int n = 0; n < nodes; ++n) {
        const fs::path file = dir / fmt::format("wide-node{}", n) / "gpu_log.csv";
        fs::create_directories(file.parent_path());
        g.files.push_back(file.string());
        Out out(file.string());
        out.buf += "timestamp";
        for (int gpu = 0; gpu < gpus; ++gpu)
            fmt::format_to(std::back_inserter(out.buf), ",gpu{}_util,gpu{}_power", gpu, gpu);
        out.buf += '\n';
        for (int64_t t = 0; t < seconds; ++t) {
            fmt::format_to(std::back_inserter(out.buf), "{}", kStartS + t);
            const int64_t v = nodeTime(t, n);
            for (int gpu = 0; gpu < gpus; ++gpu)
                fmt::format_to(std::back_inserter(out.buf), ",{},{}", util(v, gpu), watts(v, gpu));
            out.buf += '\n';
            ++g.rows;
            g.samples += 2 * static_cast<int64_t>(gpus);
            out.maybeFlush();
        }
    }
    g.baseline = g.files;
    return g;
}

} // namespace

int64_t writeDmonNode(const std::string& path, const std::string& baseline, int node, int gpus, int64_t seconds)
{
    Out csv(baseline);
    csv.buf += kDmonBaselineHeader;
    return dmonNode(path, csv, node, gpus, seconds);
}

std::vector<GeneratedFormat> generateFormats(const std::string& dirName, int nodes, int gpus, double hours)
{
    const fs::path dir(dirName);
    fs::create_directories(dir);
    const auto seconds = static_cast<int64_t>(hours * 3600);
    std::vector<GeneratedFormat> out;
    out.push_back(dmon(dir, nodes, gpus, seconds));
    auto [text, json] = prometheus(dir, nodes, gpus, seconds);
    out.push_back(std::move(text));
    out.push_back(std::move(json));
    out.push_back(generic(dir, nodes, gpus, seconds));
    out.push_back(genericRealistic(dir, std::max<int64_t>(3, static_cast<int64_t>(hours * 6))));
    out.push_back(dcgmi(dir, nodes, gpus, seconds));
    out.push_back(sadf(dir, nodes, seconds));
    out.push_back(wide(dir, nodes, gpus, seconds));
    return out;
}

} // namespace runlens::bench
