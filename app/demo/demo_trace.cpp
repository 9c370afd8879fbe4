#include "app/demo/demo_trace.h"

#include "app/demo/demo_random.h"
#include "app/demo/demo_stacks.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

namespace fs = std::filesystem;

namespace runlens::app {
namespace {

constexpr int64_t kUs = 1'000;
constexpr int64_t kMs = 1'000'000;
constexpr int kBlocks = 12;       // transformer blocks, each sharded: all-gathered before use
constexpr int kComputeStream = 7; // PyTorch's default stream as CUPTI numbers it
constexpr int kNcclStream = 22;   // the NCCL communicator's stream
constexpr int64_t kQuarterNs = 91LL * 86400 * 1'000'000'000; // Kineto's baseTimeNanoseconds granularity

constexpr const char* kComputeKernels[] = {
    "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NNT",
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, "
    "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
    "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)",
    "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
    "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
    "false>(pytorch_flash::Flash_fwd_params)",
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
     "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"),
};
constexpr const char* kComputeOps[] = {"aten::mm", "aten::mul", "aten::_flash_attention_forward",
                                       "aten::native_layer_norm"};

class TraceOut
{
public:
    TraceOut(std::FILE* out, int64_t baseNs, int gpu) : m_out(out), m_base(baseNs), m_gpu(gpu) {}

    // A complete event; args is the inside of the args object (may be empty).
    void complete(const char* cat, std::string_view name, int pid, int tid, int64_t tsNs, int64_t durNs,
                  std::string_view args)
    {
        begin();
        fmt::format_to(std::back_inserter(m_buf),
                       "  {{\n    \"ph\": \"X\", \"cat\": \"{}\", \"name\": \"{}\", \"pid\": {}, \"tid\": {},\n    "
                       "\"ts\": {}, \"dur\": {}",
                       cat, name, pid, tid, us(tsNs - m_base), us(durNs));
        if (!args.empty()) fmt::format_to(std::back_inserter(m_buf), ",\n    \"args\": {{\n      {}\n    }}", args);
        m_buf += "\n  }";
    }
    // A CPU launch (cudaLaunchKernel inside its aten op) and the kernel it starts on the GPU, linked by a flow.
    void launch(const char* op, const char* runtime, int pid, int tid, int64_t cpuNs, const char* cat,
                std::string_view kernel, int stream, int64_t gpuNs, int64_t durNs, std::string_view extraArgs)
    {
        const int64_t corr = ++m_correlation, ext = ++m_external;
        complete("cpu_op", op, pid, tid, cpuNs, 38 * kUs, fmt::format("\"External id\": {}, \"Ev Idx\": {}", ext, ext));
        complete("cuda_runtime", runtime, pid, tid, cpuNs + 8 * kUs, 12 * kUs,
                 fmt::format("\"External id\": {}, \"cbid\": 211, \"correlation\": {}", ext, corr));
        flow('s', corr, pid, tid, cpuNs + 8 * kUs, "");
        complete(cat, kernel, m_gpu, stream, gpuNs, durNs,
                 fmt::format("\"External id\": {}, \"queued\": 0, \"device\": {}, \"context\": 1, \"stream\": {}, "
                             "\"correlation\": {}, \"registers per thread\": 128, \"shared memory\": 0, \"grid\": "
                             "[132, 1, 1], \"block\": [256, 1, 1]{}",
                             ext, m_gpu, stream, corr, extraArgs));
        flow('f', corr, m_gpu, stream, gpuNs, ", \"bp\": \"e\"");
    }
    void instant(std::string_view name, std::string_view pid, std::string_view tid, int64_t tsNs)
    {
        begin();
        fmt::format_to(
            std::back_inserter(m_buf),
            "  {{\n    \"name\": \"{}\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"{}\", \"tid\": \"{}\", "
            "\"ts\": {}\n  }}",
            name, pid, tid, us(tsNs - m_base));
    }
    void metadata(const char* what, int pid, int tid, std::string_view name, int64_t tsNs)
    {
        begin();
        fmt::format_to(
            std::back_inserter(m_buf),
            "  {{\n    \"name\": \"{}\", \"ph\": \"M\", \"ts\": {}, \"pid\": {}, \"tid\": {},\n    \"args\": "
            "{{\n      \"name\": \"{}\"\n    }}\n  }}",
            what, us(tsNs - m_base), pid, tid, name);
    }
    void raw(std::string_view text) { m_buf += text; }
    int64_t events() const { return m_events; }
    Status flush()
    {
        if (std::fwrite(m_buf.data(), 1, m_buf.size(), m_out) != m_buf.size())
            return makeError(ErrorCode::Io, fmt::format("write failed: {}", std::strerror(errno)));
        m_buf.clear();
        return okStatus();
    }
    Status maybeFlush() { return m_buf.size() > (1u << 20) ? flush() : okStatus(); }

private:
    static std::string us(int64_t ns) { return fmt::format("{}.{:03}", ns / kUs, ns % kUs); }
    void begin()
    {
        if (m_events++ > 0) m_buf += ",\n";
    }
    void flow(char ph, int64_t id, int pid, int tid, int64_t tsNs, std::string_view extra)
    {
        begin();
        fmt::format_to(std::back_inserter(m_buf),
                       "  {{\n    \"ph\": \"{}\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": {},\n    \"cat\": "
                       "\"ac2g\", \"name\": \"ac2g\"{}\n  }}",
                       ph, id, pid, tid, us(tsNs - m_base), extra);
    }

    std::FILE* m_out;
    int64_t m_base;
    int m_gpu;
    std::string m_buf;
    int64_t m_events = 0, m_correlation = 0, m_external = 0;
};

// The trace's opening: the devices, the process group and the time base, up to the first event.
std::string kinetoHead(const DemoSpec& spec, int globalRank, int world, const std::string& ranks, int64_t base)
{
    std::string head = "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n";
    for (int g = 0; g < spec.gpusPerNode; ++g)
        head +=
            fmt::format("    {{\n      \"id\": {}, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": "
                        "85520809984,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": "
                        "1024, \"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, \"warpSize\": "
                        "32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n    }}{}\n",
                        g, g + 1 < spec.gpusPerNode ? "," : "");
    head += fmt::format("  ],\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {0}, \"world_size\": {1}, "
                        "\"pg_count\": 1, \"pg_config\": [{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
                        "\"backend_config\": \"cuda:nccl\", \"pg_size\": {1}, \"ranks\": [{2}]}}], \"nccl_version\": "
                        "\"2.21.5\"}},\n  \"record_shapes\": 0,\n  \"displayTimeUnit\": \"ms\",\n  "
                        "\"baseTimeNanoseconds\": {3},\n  \"traceEvents\": [\n",
                        globalRank, world, ranks, base);
    return head;
}

// One rank's profiled steps: the main thread (forward, optimizer) and the autograd thread (backward) launch kernels
// on the compute and NCCL streams; each of the three is busy until the time it holds.
class RankSteps
{
public:
    RankSteps(TraceOut& t, DemoRandom& rng, int pid, double waitScale, int world, const std::string& ranks,
              int64_t startNs)
        : m_t(t), m_rng(rng), m_pid(pid), m_autograd(pid + 7), m_waitScale(waitScale), m_cpu(startNs),
          m_computeFree(startNs), m_commFree(startNs)
    {
        m_allGatherArgs = fmt::format(
            ", \"Collective name\": \"_allgather_base\", \"In msg nelems\": 54525952, \"Out msg nelems\": {}, \"Group "
            "size\": {}, \"dtype\": \"BFloat16\", \"Process Group Name\": \"0\", \"Process Group Description\": "
            "\"default_pg\", \"Process Group Ranks\": \"[{}]\"",
            54525952LL * world, world, ranks);
        m_reduceScatterArgs = fmt::format(
            ", \"Collective name\": \"_reduce_scatter_base\", \"In msg nelems\": {}, \"Out msg nelems\": 54525952, "
            "\"Group size\": {}, \"dtype\": \"BFloat16\", \"Process Group Name\": \"0\", \"Process Group "
            "Description\": "
            "\"default_pg\", \"Process Group Ranks\": \"[{}]\"",
            54525952LL * world, world, ranks);
    }
    int64_t cpu() const { return m_cpu; }

    // One ProfilerStep: the input batch, forward, backward with its reduce-scatters, the optimizer.
    void step(int number)
    {
        const int64_t stepStart = m_cpu;
        const int64_t copyStart = std::max(m_computeFree, m_cpu + 20 * kUs);
        m_computeFree = copyStart + m_rng.around(1200 * kUs, 0.1);
        m_t.launch("aten::to", "cudaMemcpyAsync", m_pid, m_pid, m_cpu, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)",
                   kComputeStream, copyStart, m_computeFree - copyStart, "");
        m_cpu += 60 * kUs;
        for (int b = 0; b < kBlocks; ++b)
            compute(m_pid, 4, allGather(m_pid));
        const int64_t backwardStart = m_cpu;
        for (int b = kBlocks - 1; b >= 0; --b) {
            compute(m_autograd, 8, allGather(m_autograd));
            reduceScatter();
        }
        m_cpu = std::max(m_cpu, m_commFree);
        m_t.complete("cpu_op", "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", m_pid,
                     m_autograd, backwardStart, m_cpu - backwardStart, "");
        optimizer();
        m_t.complete("user_annotation", fmt::format("ProfilerStep#{}", number), m_pid, m_pid, stepStart,
                     m_cpu - stepStart, "");
        m_computeFree = m_commFree = m_cpu;
    }

private:
    // Gathers one block's parameters: a CPU-side collective span launching an NCCL kernel; returns its end.
    int64_t allGather(int tid)
    {
        m_t.complete("user_annotation", "nccl:_all_gather_base", m_pid, tid, m_cpu, 62 * kUs, "");
        const int64_t start = std::max(m_commFree, m_cpu + 30 * kUs);
        m_commFree = start + m_rng.around(static_cast<int64_t>(270 * kMs * m_waitScale), 0.06);
        m_t.launch("record_param_comms", "cudaLaunchKernelExC", m_pid, tid, m_cpu + 6 * kUs, "kernel",
                   "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", kNcclStream, start,
                   m_commFree - start, m_allGatherArgs);
        m_cpu += 70 * kUs;
        return m_commFree;
    }
    // Compute kernels of one block, after its parameters arrived (the CPU waits for them in fetch_sub_module).
    void compute(int tid, int kernels, int64_t ready)
    {
        m_cpu = std::max(m_cpu, ready - 40 * kUs);
        for (int k = 0; k < kernels; ++k) {
            const int which = k % 4;
            const int64_t start = std::max({m_computeFree, ready, m_cpu + 20 * kUs});
            m_computeFree = start + m_rng.around(26 * kMs, 0.15);
            m_t.launch(kComputeOps[which], "cudaLaunchKernel", m_pid, tid, m_cpu, "kernel", kComputeKernels[which],
                       kComputeStream, start, m_computeFree - start, "");
            m_cpu += 45 * kUs;
        }
    }
    // A block's gradients reduce-scattered, from the autograd thread, once its compute is done.
    void reduceScatter()
    {
        m_t.complete("user_annotation", "nccl:_reduce_scatter_base", m_pid, m_autograd, m_cpu, 58 * kUs, "");
        const int64_t start = std::max({m_commFree, m_computeFree, m_cpu + 30 * kUs});
        m_commFree = start + m_rng.around(static_cast<int64_t>(330 * kMs * m_waitScale), 0.06);
        m_t.launch("record_param_comms", "cudaLaunchKernelExC", m_pid, m_autograd, m_cpu + 6 * kUs, "kernel",
                   "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", kNcclStream, start,
                   m_commFree - start, m_reduceScatterArgs);
        m_cpu += 70 * kUs;
    }
    // The optimizer's foreach kernels on the compute stream.
    void optimizer()
    {
        const int64_t optimizerStart = m_cpu;
        for (int k = 0; k < 16; ++k) {
            const int64_t start = std::max(m_computeFree, m_cpu + 20 * kUs);
            m_computeFree = start + m_rng.around(2 * kMs, 0.1);
            m_t.launch("aten::_foreach_add_", "cudaLaunchKernel", m_pid, m_pid, m_cpu, "kernel",
                       "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
                       "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor"
                       "<c10::BFloat16, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous "
                       "namespace)::TensorListMetadata<2>, at::native::(anonymous "
                       "namespace)::BinaryOpListAlphaFunctor<c10::BFloat16, 2, 2, 0>, std::plus<float>, float)",
                       kComputeStream, start, m_computeFree - start, "");
            m_cpu += 40 * kUs;
        }
        m_cpu = std::max(m_cpu, m_computeFree) + 300 * kUs;
        m_t.complete("user_annotation", "Optimizer.step#AdamW.step", m_pid, m_pid, optimizerStart,
                     m_cpu - optimizerStart, "");
    }

    TraceOut& m_t;
    DemoRandom& m_rng;
    const int m_pid, m_autograd;
    const double m_waitScale;
    int64_t m_cpu, m_computeFree, m_commFree;
    std::string m_allGatherArgs, m_reduceScatterArgs;
};

} // namespace

Expected<int64_t> writeDemoKinetoTrace(const DemoSpec& spec, int globalRank, int firstStep, int steps, int64_t startNs,
                                       std::FILE* out)
{
    const int world = spec.nodes * spec.gpusPerNode;
    const int gpu = globalRank % spec.gpusPerNode;
    const int pid = static_cast<int>(demoPidOf(globalRank)), autograd = pid + 7; // as in the stacks of the same rank
    // The collectives take the step's waiting share of it: with a block's 12 compute kernels of 26 ms and its
    // all-gathers and reduce-scatter of 870 ms, the reference run (SM activity 0.21) waits 73 % of a step, as its
    // SM activity says; a tuned run's collectives are shorter by demoCommScale.
    const double waitScale = demoCommScale(spec);
    const int64_t base = startNs / kQuarterNs * kQuarterNs;
    // One sequence for every rank: the ranks of a synchronous job run the same kernels in step, and a collective ends
    // at the same instant on all of them (what lines their clocks up); they differ only by their start offsets.
    DemoRandom rng(spec.seed * 2654435761u);
    TraceOut t(out, base, gpu);

    std::string ranks;
    for (int r = 0; r < world; ++r)
        ranks += fmt::format("{}{}", r ? ", " : "", r);
    t.raw(kinetoHead(spec, globalRank, world, ranks, base));
    t.metadata("process_name", pid, 0, "python train.py --deepspeed ds_z3_config.json", startNs);
    t.metadata("thread_name", pid, pid, fmt::format("thread {} (python)", pid), startNs);
    t.metadata("thread_name", pid, autograd, fmt::format("thread {} (pt_autograd_0)", autograd), startNs);
    t.metadata("process_name", gpu, 0, "python train.py --deepspeed ds_z3_config.json", startNs);
    for (int stream : {kComputeStream, kNcclStream})
        t.metadata("thread_name", gpu, stream, fmt::format("stream {} ", stream), startNs);

    RankSteps rank(t, rng, pid, waitScale, world, ranks, startNs);
    for (int s = 0; s < steps; ++s) {
        rank.step(firstStep + s);
        RUNLENS_TRY(t.maybeFlush());
    }
    const int64_t windowStart = startNs, end = rank.cpu();
    t.complete("Trace", "PyTorch Profiler (0)", 0, 0, windowStart, end - windowStart, "\"Op count\": 0");
    t.instant("Iteration Start: PyTorch Profiler", "Traces", "Trace PyTorch Profiler", windowStart);
    t.instant("Record Window End", "", "", end + 2 * kMs);
    t.raw(fmt::format("\n  ],\n  \"traceName\": \"kineto-rank{}.json\"\n}}\n", globalRank));
    RUNLENS_TRY(t.flush());
    return t.events();
}

Status writeDemoTraces(const DemoSpec& spec, int node, const std::string& nodeDir, std::vector<std::string>& files)
{
    // Two steps a fifth of the way into the run, after warm-up (60 s), moved past a checkpoint stall they meet.
    const double runS = spec.hours * 3600.0, windowS = 2.2 * spec.stepS;
    double t0 = std::max(0.0, std::min(60.0 + 0.2 * std::max(0.0, runS - 60.0), runS - windowS));
    const double period = spec.checkpointEveryS;
    const double stallStart = std::floor((t0 + windowS) / period) * period - spec.checkpointStallS;
    if (t0 + windowS > stallStart && t0 < stallStart + spec.checkpointStallS) t0 = stallStart + spec.checkpointStallS;
    const int firstStep = static_cast<int>(t0 / spec.stepS) + 1;
    for (int g = 0; g < spec.gpusPerNode; ++g) {
        const int rank = node * spec.gpusPerNode + g;
        const int64_t startNs = spec.startUnixS * 1'000'000'000 + std::llround(t0 * 1e9) + int64_t{rank} * 37 * kUs;
        RUNLENS_TRY(writeDemoFile(
            (fs::path(nodeDir) / fmt::format("kineto-rank{}.json", rank)).string(),
            [&](std::FILE* out) { return writeDemoKinetoTrace(spec, rank, firstStep, 2, startNs, out); }, files));
    }
    return okStatus();
}

} // namespace runlens::app
