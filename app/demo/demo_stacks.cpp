#include "app/demo/demo_stacks.h"

#include "app/demo/demo_random.h"
#include "app/demo/demo_run.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::app {
namespace {

// One splitmix64 output per counter value (a stream per seed, unlike DemoRandom's).
class Random
{
public:
    explicit Random(uint64_t seed) : m_state(seed) {}
    double uniform() { return unitInterval(splitMix(m_state++)); }
    double exponential(double mean) { return -std::log(1.0 - uniform()) * mean; }

private:
    uint64_t m_state;
};

// --- The stacks, root first, in py-spy's `name (file:line)` spelling. -------------------------------------------

constexpr const char* kLoop = "<module> (train.py:12);run_exp (llamafactory/train/tuner.py:92);_training_function "
                              "(llamafactory/train/tuner.py:67);run_pt (llamafactory/train/pt/workflow.py:64);train "
                              "(transformers/trainer.py:2245);_inner_training_loop (transformers/trainer.py:2560)";
constexpr const char* kModuleCall = "_wrapped_call_impl (torch/nn/modules/module.py:1736);_call_impl "
                                    "(torch/nn/modules/module.py:1747)";
constexpr const char* kHookedCall = "_wrapped_call_impl (torch/nn/modules/module.py:1736);_call_impl "
                                    "(torch/nn/modules/module.py:1790)";
constexpr const char* kFetch = "wrapped_fn (deepspeed/utils/nvtx.py:18);decorate_context "
                               "(torch/utils/_contextlib.py:116);fetch_sub_module "
                               "(deepspeed/runtime/zero/partitioned_param_coordinator.py:324)";
constexpr const char* kFetchWait = "wrapped_fn (deepspeed/utils/nvtx.py:18);wait "
                                   "(deepspeed/runtime/zero/partition_parameters.py:1029)";
constexpr const char* kSaveCheckpoint = "_maybe_log_save_evaluate (transformers/trainer.py:3011);_save_checkpoint "
                                        "(transformers/trainer.py:3180);save_model (transformers/trainer.py:3912);"
                                        "save_checkpoint (deepspeed/runtime/engine.py:3125)";
constexpr const char* kTorchSave = "save (deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py:22);save "
                                   "(torch/serialization.py:943);_save (torch/serialization.py:1192)";
constexpr const char* kStage3 = "deepspeed/runtime/zero/stage3.py";

enum class Thread
{
    Main,
    Autograd
};

// What a thread does in one stretch of the timeline; each has the stacks it may show, with their shares.
enum class Activity
{
    Setup,
    Input,
    Forward,
    Backward,
    OptimizerStep,
    CheckpointWrite, // rank 0
    CheckpointShard, // the other ranks: their ZeRO shard first
    CheckpointWait,  // then the barrier
};

struct Choice
{
    Thread thread;
    Activity activity;
    double share;
    std::string stack; // root first, ';'-separated
};

// waitScale: the run's share of a step spent waiting for communication against the reference run's (1: the
// reference). The waits in forward and backward take that much of their stretch; compute takes the rest.
std::vector<Choice> makeChoices(double waitScale)
{
    const double fetchFwd = 0.68 * waitScale, fetchBwd = 0.40 * waitScale, scatterBwd = 0.26 * waitScale;
    const std::string loop = kLoop;
    const std::string module = kModuleCall;
    const std::string hooked = kHookedCall;
    const std::string fwd = loop +
                            ";training_step (transformers/trainer.py:3740);compute_loss "
                            "(transformers/trainer.py:3801);" +
                            module +
                            ";wrapped_fn (deepspeed/utils/nvtx.py:18);forward (deepspeed/runtime/engine.py:1899);" +
                            module + ";forward (transformers/models/llama4/modeling_llama4.py:1108);" + hooked;
    const std::string ckpt = loop + ";" + kSaveCheckpoint;
    const std::string step = loop +
                             ";step (accelerate/optimizer.py:165);step (accelerate/utils/deepspeed.py:266);step "
                             "(deepspeed/runtime/engine.py:2213);_take_model_step (deepspeed/runtime/engine.py:2119);"
                             "wrapped_fn (deepspeed/utils/nvtx.py:18);step (" +
                             std::string(kStage3) + ":2090)";
    const std::string engineThread =
        "start_thread (libc.so.6);torch::autograd::Engine::thread_init (libtorch_cpu.so);torch::autograd::Engine::"
        "thread_main (libtorch_cpu.so)";
    const std::string reduce = "wrapped_fn (deepspeed/utils/nvtx.py:18);reduce_partition_and_remove_grads (" +
                               std::string(kStage3) + ":1155);reduce_ready_partitions_and_remove_grads (" + kStage3 +
                               ":1510);reduce_independent_p_g_buckets_and_remove_grads (" + kStage3 +
                               ":1189);wrapped_fn (deepspeed/utils/nvtx.py:18);decorate_context "
                               "(torch/utils/_contextlib.py:116);__reduce_and_partition_ipg_grads (" +
                               kStage3 + ":1241)";
    return {
        {Thread::Main, Activity::Setup, 0.7,
         loop +
             ";prepare (accelerate/accelerator.py:1339);_prepare_deepspeed (accelerate/accelerator.py:1922);"
             "initialize (deepspeed/__init__.py:193);__init__ (deepspeed/runtime/engine.py:309);_configure_optimizer "
             "(deepspeed/runtime/engine.py:1273);_configure_zero_optimizer (deepspeed/runtime/engine.py:1636);__init__ "
             "(deepspeed/runtime/zero/stage3.py:371);_create_fp16_partitions_with_defragmentation "
             "(deepspeed/runtime/zero/stage3.py:823)"},
        {Thread::Main, Activity::Setup, 0.3,
         loop + ";prepare (accelerate/accelerator.py:1339);_prepare_deepspeed (accelerate/accelerator.py:1922);"
                "initialize (deepspeed/__init__.py:193);__init__ (deepspeed/runtime/engine.py:309);_broadcast_model "
                "(deepspeed/runtime/engine.py:1165);log_wrapper (deepspeed/comm/comm.py:117);broadcast "
                "(deepspeed/comm/comm.py:224);broadcast (deepspeed/comm/torch.py:206);wrapper "
                "(torch/distributed/c10d_logger.py:81);broadcast (torch/distributed/distributed_c10d.py:2717)"},
        {Thread::Main, Activity::Input, 1.0,
         loop +
             ";get_batch_samples (transformers/trainer.py:5232);__iter__ (accelerate/data_loader.py:577);__next__ "
             "(torch/utils/data/dataloader.py:708);_next_data (torch/utils/data/dataloader.py:1458);_get_data "
             "(torch/utils/data/dataloader.py:1410);_try_get_data (torch/utils/data/dataloader.py:1251);get "
             "(multiprocessing/queues.py:113);poll (multiprocessing/connection.py:257);_poll "
             "(multiprocessing/connection.py:440);wait (multiprocessing/connection.py:1136);select (selectors.py:415)"},
        // Forward: ZeRO-3 gathers each submodule's parameters in its pre-forward hook and waits for them.
        {Thread::Main, Activity::Forward, fetchFwd,
         fwd +
             ";_pre_forward_module_hook (deepspeed/runtime/zero/parameter_offload.py:277);decorate_context "
             "(torch/utils/_contextlib.py:116);pre_sub_module_forward_function "
             "(deepspeed/runtime/zero/parameter_offload.py:463);_fn (torch/_dynamo/eval_frame.py:838);" +
             kFetch + ";" + kFetchWait},
        {Thread::Main, Activity::Forward, 1 - fetchFwd,
         fwd + ";forward (transformers/models/llama4/modeling_llama4.py:652);" + module +
             ";forward (torch/nn/modules/linear.py:125)"},
        // Backward: the training thread waits while the autograd engine runs it.
        {Thread::Main, Activity::Backward, 1.0,
         loop + ";training_step (transformers/trainer.py:3761);backward (accelerate/accelerator.py:2246);wrapped_fn "
                "(deepspeed/utils/nvtx.py:18);backward (deepspeed/runtime/engine.py:2048);backward "
                "(torch/_tensor.py:626);backward (torch/autograd/__init__.py:347);_engine_run_backward "
                "(torch/autograd/graph.py:823)"},
        {Thread::Main, Activity::OptimizerStep, 0.8,
         step + ";wrapped_fn (deepspeed/utils/nvtx.py:18);_optimizer_step (" + kStage3 +
             ":1000);step (torch/optim/optimizer.py:487);step (deepspeed/ops/adam/fused_adam.py:191)"},
        {Thread::Main, Activity::OptimizerStep, 0.2,
         step + ";_overflow_check_and_loss_scale_update (" + kStage3 + ":2010);has_overflow (" + kStage3 +
             ":2300);log_wrapper (deepspeed/comm/comm.py:117);all_reduce (deepspeed/comm/comm.py:491);all_reduce "
             "(deepspeed/comm/torch.py:162);wrapper (torch/distributed/c10d_logger.py:81);all_reduce "
             "(torch/distributed/distributed_c10d.py:2808)"},
        // Checkpoints: rank 0 writes the model states, every rank its ZeRO optimizer shard, then all meet at a
        // barrier.
        {Thread::Main, Activity::CheckpointWrite, 0.65,
         ckpt + ";_save_checkpoint (deepspeed/runtime/engine.py:3421);" + kTorchSave},
        {Thread::Main, Activity::CheckpointWrite, 0.2,
         ckpt + ";_save_checkpoint (deepspeed/runtime/engine.py:3421);" + kTorchSave +
             ";persistent_id (torch/serialization.py:1160)"},
        {Thread::Main, Activity::CheckpointWrite, 0.15,
         ckpt + ";_save_zero_checkpoint (deepspeed/runtime/engine.py:3491);" + kTorchSave},
        {Thread::Main, Activity::CheckpointShard, 1.0,
         ckpt + ";_save_zero_checkpoint (deepspeed/runtime/engine.py:3491);" + kTorchSave},
        {Thread::Main, Activity::CheckpointWait, 1.0,
         ckpt + ";log_wrapper (deepspeed/comm/comm.py:117);barrier (deepspeed/comm/comm.py:414);barrier "
                "(deepspeed/comm/torch.py:334);wrapper (torch/distributed/c10d_logger.py:81);barrier "
                "(torch/distributed/distributed_c10d.py:4159)"},
        // The autograd device thread during backward: ZeRO-3's pre-backward hook gathers parameters again, the
        // gradient hooks reduce-scatter full buckets (and wait for earlier reductions), the rest is compute.
        {Thread::Autograd, Activity::Backward, fetchBwd,
         engineThread +
             ";apply (torch/autograd/function.py:307);backward "
             "(deepspeed/runtime/zero/parameter_offload.py:381);_run_before_backward_function "
             "(deepspeed/runtime/zero/parameter_offload.py:361);decorate_context "
             "(torch/utils/_contextlib.py:116);pre_sub_module_backward_function "
             "(deepspeed/runtime/zero/parameter_offload.py:510);" +
             kFetch + ";" + kFetchWait},
        {Thread::Autograd, Activity::Backward, scatterBwd,
         engineThread + ";" + reduce + ";__avg_scatter_grads (" + kStage3 +
             ":1463);reduce_scatter_coalesced (deepspeed/runtime/comm/coalesced_collectives.py:128);"
             "_torch_reduce_scatter_fn (deepspeed/runtime/comm/coalesced_collectives.py:25);reduce_scatter_fn "
             "(deepspeed/comm/comm.py:260);log_wrapper (deepspeed/comm/comm.py:117);reduce_scatter_tensor "
             "(deepspeed/comm/comm.py:300);reduce_scatter_tensor (deepspeed/comm/torch.py:231);wrapper "
             "(torch/distributed/c10d_logger.py:81);reduce_scatter_tensor "
             "(torch/distributed/distributed_c10d.py:3961)"},
        {Thread::Autograd, Activity::Backward, 0.14, engineThread + ";" + reduce},
        {Thread::Autograd, Activity::Backward, 1 - fetchBwd - scatterBwd - 0.14,
         engineThread + ";apply (torch/autograd/function.py:307);backward (deepspeed/runtime/zero/linear.py:97)"},
    };
}

// An autograd thread with no work: no Python frames, the engine waits on its ready queue.
constexpr const char* kAutogradIdle =
    "start_thread (libc.so.6);torch::autograd::Engine::thread_init (libtorch_cpu.so);torch::autograd::Engine::"
    "thread_main (libtorch_cpu.so);torch::autograd::ReadyQueue::pop (libtorch_cpu.so);std::condition_variable::wait "
    "(libstdc++.so.6);__futex_abstimed_wait_common (libc.so.6)";

struct Frame
{
    std::string name, file;
    int line = 0;
};

// All stacks as frame indices into one table (the speedscope "shared.frames").
class StackTable
{
public:
    int add(std::string_view stack)
    {
        for (size_t i = 0; i < m_texts.size(); ++i)
            if (m_texts[i] == stack) return static_cast<int>(i);
        std::vector<int> ids;
        size_t pos = 0;
        while (pos <= stack.size()) {
            size_t end = stack.find(';', pos);
            if (end == std::string_view::npos) end = stack.size();
            ids.push_back(frameId(stack.substr(pos, end - pos)));
            pos = end + 1;
        }
        m_stacks.push_back(std::move(ids));
        m_texts.emplace_back(stack);
        return static_cast<int>(m_stacks.size()) - 1;
    }
    const std::vector<Frame>& frames() const { return m_frames; }
    size_t stackCount() const { return m_stacks.size(); }
    const std::vector<int>& stack(int i) const { return m_stacks[static_cast<size_t>(i)]; }
    const std::string& text(int i) const { return m_texts[static_cast<size_t>(i)]; }

private:
    int frameId(std::string_view text)
    {
        if (auto it = m_index.find(std::string(text)); it != m_index.end()) return it->second;
        Frame f{std::string(text), {}, 0};
        if (const size_t open = text.rfind(" ("); open != std::string_view::npos && text.back() == ')') {
            f.name = std::string(text.substr(0, open));
            std::string_view inner = text.substr(open + 2, text.size() - open - 3);
            if (const size_t colon = inner.rfind(':'); colon != std::string_view::npos) {
                const std::string_view digits = inner.substr(colon + 1);
                std::from_chars(digits.data(), digits.data() + digits.size(), f.line);
                inner = inner.substr(0, colon);
            }
            f.file = std::string(inner);
        }
        m_frames.push_back(std::move(f));
        const int id = static_cast<int>(m_frames.size()) - 1;
        m_index.emplace(std::string(text), id);
        return id;
    }

    std::vector<Frame> m_frames;
    std::map<std::string, int> m_index;
    std::vector<std::vector<int>> m_stacks;
    std::vector<std::string> m_texts;
};

// Where one rank is at time t (seconds from the start of the run); the same for all its threads.
class Timeline
{
public:
    Timeline(const DemoSpec& spec, int rank) : m_spec(spec), m_rank(rank) {}

    static constexpr double kSetupS = 20.0;
    // Forward and backward as shares of a step (3.4 s and 6.2 s of 10.6 s); the step is the metrics' (spec.stepS).
    static constexpr double kForward = 3.4 / 10.6;
    static constexpr double kBackward = 6.2 / 10.6;

    Activity at(double t) const
    {
        const double inPeriod = std::fmod(t, m_spec.checkpointEveryS);
        const double stallStart = m_spec.checkpointEveryS - m_spec.checkpointStallS;
        if (t >= 60.0 && inPeriod >= stallStart) { // the metrics' stall window (after warm-up)
            if (m_rank == 0) return Activity::CheckpointWrite;
            return inPeriod - stallStart < 0.2 * m_spec.checkpointStallS ? Activity::CheckpointShard
                                                                         : Activity::CheckpointWait;
        }
        if (t < kSetupS) return Activity::Setup;
        const double stepS = m_spec.stepS;
        const auto step = static_cast<uint64_t>(t / stepS);
        const double u = t - static_cast<double>(step) * stepS;
        // Each rank waits briefly for its next batch; about one step in ten the workers fall behind.
        const uint64_t h = splitMix(m_spec.seed ^ splitMix(static_cast<uint64_t>(m_rank) * 7919u + step));
        const double input = (h % 10 == 0 ? 0.9 : 0.12) + static_cast<double>(h >> 40 & 0xff) / 255.0 * 0.08;
        if (u < input) return Activity::Input;
        if (u < input + kForward * stepS) return Activity::Forward;
        if (u < input + (kForward + kBackward) * stepS) return Activity::Backward;
        return Activity::OptimizerStep;
    }

private:
    const DemoSpec& m_spec;
    int m_rank;
};

struct ThreadPlan
{
    std::string name;
    Thread kind;
    bool busy; // pt_autograd_0 runs the backward; further device threads stay idle
    int64_t tid;
};

// Runs one thread over the run and calls sink(stackIndex) once per sample, in time order.
class Sampler
{
public:
    Sampler(const DemoSpec& spec, int rank, StackTable& table) : m_spec(spec), m_timeline(spec, rank)
    {
        // A run whose GPUs compute more of each step (a higher SM activity) waits less: its wait stacks shrink
        // in proportion (the share of a step not computing, against the reference run's).
        for (const Choice& c : makeChoices(demoWaitScale(spec)))
            m_choices.push_back({c.thread, c.activity, c.share, table.add(c.stack)});
        m_idle = table.add(kAutogradIdle);
    }

    int64_t samples() const { return static_cast<int64_t>(std::llround(m_spec.hours * 3600.0 * m_spec.stackRateHz)); }

    template <typename Sink> void run(const ThreadPlan& thread, Random& rng, Sink&& sink) const
    {
        const int64_t n = samples();
        const double dt = 1.0 / m_spec.stackRateHz;
        Activity current = Activity::Setup;
        int stack = -1;
        double segmentEnd = -1;
        for (int64_t i = 0; i < n; ++i) {
            const double t = static_cast<double>(i) * dt;
            const Activity a = m_timeline.at(t);
            if (stack < 0 || a != current || t >= segmentEnd) {
                current = a;
                stack = pick(thread, a, rng);
                segmentEnd = t + std::max(dt, rng.exponential(0.08)); // a stack holds for ~80 ms
            }
            sink(stack);
        }
    }

private:
    struct Option
    {
        Thread thread;
        Activity activity;
        double share;
        int stack;
    };

    int pick(const ThreadPlan& thread, Activity a, Random& rng) const
    {
        double total = 0;
        for (const Option& o : m_choices)
            if (thread.busy && o.thread == thread.kind && o.activity == a) total += o.share;
        if (total <= 0) return m_idle; // an autograd thread outside the backward
        double r = rng.uniform() * total;
        int last = m_idle;
        for (const Option& o : m_choices) {
            if (!thread.busy || o.thread != thread.kind || o.activity != a) continue;
            last = o.stack;
            r -= o.share;
            if (r < 0) return o.stack;
        }
        return last;
    }

    const DemoSpec& m_spec;
    Timeline m_timeline;
    std::vector<Option> m_choices;
    int m_idle = -1;
};

std::vector<ThreadPlan> threadsOf(const DemoSpec& spec, int rank)
{
    const int64_t pid = demoPidOf(rank);
    std::vector<ThreadPlan> out{{"MainThread", Thread::Main, true, pid}};
    for (int k = 0; k < spec.autogradThreads; ++k)
        out.push_back({fmt::format("pt_autograd_{}", k), Thread::Autograd, k == 0, pid + 7 + k});
    return out;
}

std::string jsonString(std::string_view s)
{
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + '"';
}

Status writeAll(std::string& buf, std::FILE* out)
{
    if (std::fwrite(buf.data(), 1, buf.size(), out) != buf.size())
        return makeError(ErrorCode::Io, fmt::format("write failed: {}", std::strerror(errno)));
    buf.clear();
    return okStatus();
}

Status checkSpec(const DemoSpec& spec)
{
    if (spec.stackRateHz < 1 || spec.stackRateHz > 1000 || spec.autogradThreads < 0 || spec.autogradThreads > 16 ||
        spec.hours <= 0)
        return makeError(ErrorCode::Usage,
                         "stack samples need a rate of 1-1000 Hz, at most 16 autograd threads and a positive length");
    return okStatus();
}

} // namespace

Expected<int64_t> writeDemoSpeedscope(const DemoSpec& spec, int globalRank, std::FILE* out)
{
    RUNLENS_TRY(checkSpec(spec));
    StackTable table;
    const Sampler sampler(spec, globalRank, table);
    std::vector<std::string> stackJson; // "[0,1,2]" per stack, written once per sample
    for (size_t i = 0; i < table.stackCount(); ++i) {
        std::string j = "[";
        for (const int f : table.stack(static_cast<int>(i)))
            j += (j.size() > 1 ? "," : "") + std::to_string(f);
        stackJson.push_back(j + "]");
    }
    std::string buf;
    buf.reserve(1 << 20);
    buf += "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{\"frames\":[";
    for (size_t i = 0; i < table.frames().size(); ++i) {
        const Frame& f = table.frames()[i];
        fmt::format_to(std::back_inserter(buf), "{}{{\"name\":{},\"file\":{},\"line\":{},\"col\":null}}", i ? "," : "",
                       jsonString(f.name), jsonString(f.file),
                       f.line > 0 ? std::to_string(f.line) : std::string("null"));
    }
    buf += "]},\"profiles\":[";
    const std::string weight = fmt::format("{}", 1.0 / spec.stackRateHz);
    const int64_t n = sampler.samples();
    // py-spy attaches a moment after the run starts; each rank's sampler starts a few milliseconds apart.
    const int64_t startNs = spec.startUnixS * 1'000'000'000 + 40'000'000 + int64_t{globalRank} * 3'000'000;
    int64_t written = 0;
    const std::vector<ThreadPlan> threads = threadsOf(spec, globalRank);
    for (size_t ti = 0; ti < threads.size(); ++ti) {
        const ThreadPlan& thread = threads[ti];
        fmt::format_to(std::back_inserter(buf),
                       "{}{{\"type\":\"sampled\",\"name\":{},\"unit\":\"seconds\",\"startValue\":0,\"endValue\":{},"
                       "\"startUnixNs\":{},\"samples\":[",
                       ti ? "," : "", jsonString(fmt::format("Thread {} \"{}\"", thread.tid, thread.name)),
                       static_cast<double>(n) / spec.stackRateHz, startNs);
        Random rng(splitMix(spec.seed * 1000003u + static_cast<uint64_t>(globalRank) * 131u + ti));
        bool first = true;
        Status failed = okStatus();
        sampler.run(thread, rng, [&](int stack) {
            if (!first) buf += ',';
            first = false;
            buf += stackJson[static_cast<size_t>(stack)];
            if (buf.size() > (1u << 20) && failed.ok()) failed = writeAll(buf, out);
        });
        if (!failed) return failed.error();
        buf += "],\"weights\":[";
        for (int64_t i = 0; i < n; ++i) {
            if (i) buf += ',';
            buf += weight;
            if (buf.size() > (1u << 20))
                if (Status s = writeAll(buf, out); !s) return s.error();
        }
        buf += "]}";
        written += n;
    }
    buf += "],\"name\":\"py-spy profile\",\"exporter\":\"py-spy@0.4.0\",\"activeProfileIndex\":null}\n";
    RUNLENS_TRY(writeAll(buf, out));
    return written;
}

Expected<int64_t> writeDemoFolded(const DemoSpec& spec, int globalRank, std::FILE* out)
{
    RUNLENS_TRY(checkSpec(spec));
    StackTable table;
    const Sampler sampler(spec, globalRank, table);
    const int64_t pid = demoPidOf(globalRank);
    const std::string process = fmt::format("process {}:\"python train.py --deepspeed ds_z3_config.json\"", pid);
    const std::vector<ThreadPlan> threads = threadsOf(spec, globalRank);
    std::string buf;
    int64_t counted = 0;
    for (size_t ti = 0; ti < threads.size(); ++ti) {
        const ThreadPlan& thread = threads[ti];
        std::map<int, int64_t> counts;
        Random rng(splitMix(spec.seed * 1000003u + static_cast<uint64_t>(globalRank) * 131u + ti));
        sampler.run(thread, rng, [&](int stack) { ++counts[stack]; });
        for (const auto& [stack, count] : counts) {
            fmt::format_to(std::back_inserter(buf), "{};thread ({}): {};{} {}\n", process, thread.tid, thread.name,
                           table.text(stack), count);
            counted += count;
        }
    }
    RUNLENS_TRY(writeAll(buf, out));
    return counted;
}

double demoWaitScale(const DemoSpec& spec)
{
    constexpr double kReferenceSm = 0.213; // the zero3 case's SM activity: the wait shares and durations are its
    constexpr double kComputingSm = 0.8;   // the SM activity of a GPU computing the whole time
    return std::clamp((1 - spec.smActive / kComputingSm) / (1 - kReferenceSm / kComputingSm), 0.0, 1.3);
}

double demoCommScale(const DemoSpec& spec)
{
    constexpr double kReferenceSm = 0.213, kComputingSm = 0.8;
    const auto odds = [](double sm) {
        const double wait = std::clamp(1 - sm / kComputingSm, 0.05, 0.95);
        return wait / (1 - wait);
    };
    return odds(spec.smActive) / odds(kReferenceSm);
}

int64_t demoPidOf(int globalRank)
{
    return 4100 + 32 * static_cast<int64_t>(globalRank);
}

} // namespace runlens::app
