// Phase packs and the frame classifier: frames of real frameworks (DeepSpeed, FSDP, Megatron, DataLoader,
// checkpointing, native waits) map to their phase, user code with the same names does not, pack errors point
// at line and column, and the real fixture's frames classify as expected.

#include "analysis/phase/phase_classifier.h"
#include "tests/test_support.h"

#include <QFile>
#include <QTest>
#include <atomic>
#include <deque>
#include <map>
#include <set>
#include <thread>

using namespace runlens;
using namespace runlens::analysis;

namespace {

const PhaseClassifier& builtIn()
{
    static const PhaseClassifier c = [] {
        auto b = PhaseClassifier::builtIn();
        if (!b) qFatal("built-in phase packs: %s", b.error().toString().c_str());
        return *b;
    }();
    return c;
}

QString phaseString(Phase p)
{
    return QString::fromLatin1(phaseName(p).data(), static_cast<qsizetype>(phaseName(p).size()));
}

// "name@file" or "name@file@module" (for the data rows of stacks).
struct OwnedFrame
{
    std::string name, file, module;
    FrameText text() const { return {name, file, module}; }
};

OwnedFrame parseAt(const QString& spec)
{
    const QStringList parts = spec.split(QLatin1Char('@'));
    return {parts.value(0).toStdString(), parts.value(1).toStdString(), parts.value(2).toStdString()};
}

// py-spy's "name (file:line)" (or "name (file)"), split the way the importers split it.
OwnedFrame splitPySpy(const QString& frame)
{
    static const QRegularExpression re(QStringLiteral("^(.*) \\((.*?)(?::(\\d+))?\\)$"));
    const QRegularExpressionMatch m = re.match(frame);
    if (!m.hasMatch()) return {frame.toStdString(), {}, {}};
    return {m.captured(1).toStdString(), m.captured(2).toStdString(), {}};
}

// One data row of classify: a frame and the phase it classifies as.
void row(const char* tag, const char* name, const char* file, const char* module, const char* phase)
{
    QTest::newRow(tag) << QString::fromUtf8(name) << QString::fromUtf8(file) << QString::fromUtf8(module)
                       << QString::fromUtf8(phase);
}

// A file under an installed Python's site-packages, kept for the rows' lifetime.
const char* sitePackages(const char* path)
{
    static std::deque<std::string> keep;
    keep.push_back(std::string("lib/python3.11/site-packages/") + path);
    return keep.back().c_str();
}

// Rows of DeepSpeed and torch.distributed.
void deepSpeedAndDistributedRows()
{
    // DeepSpeed ZeRO-3.
    row("ZeRO-3 fetch_sub_module", "fetch_sub_module", "deepspeed/runtime/zero/partitioned_param_coordinator.py", "",
        "comm");
    row("ZeRO-3 __all_gather_params_", "__all_gather_params_",
        sitePackages("deepspeed/runtime/zero/partitioned_param_coordinator.py"), "", "comm");
    row("ZeRO-3 all-gather handle wait", "wait", sitePackages("deepspeed/runtime/zero/partition_parameters.py"), "",
        "comm");
    row("ZeRO-3 all_gather_coalesced", "all_gather_coalesced", "deepspeed/runtime/zero/partition_parameters.py", "",
        "comm");
    row("ZeRO-3 __reduce_and_partition_ipg_grads", "__reduce_and_partition_ipg_grads",
        "deepspeed/runtime/zero/stage3.py", "", "comm");
    row("one-underscore spelling", "_reduce_and_partition_ipg_grads", "deepspeed/runtime/zero/stage3.py", "", "comm");
    row("ZeRO-3 epilogue", "independent_gradient_partition_epilogue", "deepspeed/runtime/zero/stage3.py", "", "comm");
    row("ZeRO-2 average_tensor", "average_tensor", "deepspeed/runtime/zero/stage_1_and_2.py", "", "comm");
    row("reduce_scatter_coalesced", "reduce_scatter_coalesced", "deepspeed/runtime/comm/coalesced_collectives.py", "",
        "comm");
    row("deepspeed.comm log_wrapper", "log_wrapper", sitePackages("deepspeed/comm/comm.py"), "", "comm");
    row("DeepSpeed save_checkpoint", "save_checkpoint", "deepspeed/runtime/engine.py", "", "checkpoint");
    row("DeepSpeed checkpoint engine save", "save", "deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py",
        "", "checkpoint");
    row("ZeRO-3 optimizer step", "step", "deepspeed/runtime/zero/stage3.py", "", "compute");
    row("ZeRO-3 release_sub_module is not comm", "release_sub_module",
        "deepspeed/runtime/zero/partitioned_param_coordinator.py", "", "other");
    // torch.distributed.
    row("c10d all_reduce", "all_reduce", sitePackages("torch/distributed/distributed_c10d.py"), "", "comm");
    row("c10d reduce_scatter_tensor", "reduce_scatter_tensor", "torch/distributed/distributed_c10d.py", "", "comm");
    row("c10d barrier", "barrier", "torch/distributed/distributed_c10d.py", "", "comm");
    row("c10d logger wrapper", "wrapper", "torch/distributed/c10d_logger.py", "", "comm");
    row("functional collectives wait_tensor", "wait_tensor", "torch/distributed/_functional_collectives.py", "",
        "comm");
    row("c10d get_rank is not comm", "get_rank", "torch/distributed/distributed_c10d.py", "", "other");
    row("native WorkNCCL::wait",
        "c10d::ProcessGroupNCCL::WorkNCCL::wait(std::chrono::duration<long, std::ratio<1l, 1000l> >)", "",
        "libtorch_cuda.so", "comm");
    row("native ncclAllReduce", "ncclAllReduce", "", "libnccl.so.2", "comm");
    row("anything in libnccl", "[unknown]", "", "/usr/lib/x86_64-linux-gnu/libnccl.so.2", "comm");
}

// Rows of FSDP, Megatron-LM, the DataLoader and checkpoint writers.
void fsdpMegatronInputAndCheckpointRows()
{
    // FSDP.
    row("FSDP2 unshard", "unshard", sitePackages("torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py"), "",
        "comm");
    row("FSDP2 wait_for_unshard (torch 2.4)", "wait_for_unshard",
        "torch/distributed/_composable/fsdp/_fsdp_param_group.py", "", "comm");
    row("FSDP2 foreach_all_gather", "foreach_all_gather", "torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py",
        "", "comm");
    row("FSDP2 foreach_reduce", "foreach_reduce", "torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py", "",
        "comm");
    row("FSDP1 _pre_forward_unshard", "_pre_forward_unshard", "torch/distributed/fsdp/_runtime_utils.py", "", "comm");
    row("FSDP1 _reduce_grad", "_reduce_grad", "torch/distributed/fsdp/_runtime_utils.py", "", "comm");
    row("FSDP1 flat param unshard", "unshard", "torch/distributed/fsdp/_flat_param.py", "", "comm");
    // Megatron-LM.
    row("Megatron _allreduce_word_embedding_grads", "_allreduce_word_embedding_grads",
        "megatron/core/distributed/finalize_model_grads.py", "", "comm");
    row("Megatron finalize_model_grads", "finalize_model_grads", "megatron/core/distributed/finalize_model_grads.py",
        "", "comm");
    row("Megatron send_forward", "send_forward", "megatron/core/pipeline_parallel/p2p_communication.py", "", "comm");
    row("Megatron recv_backward", "recv_backward", "megatron/core/pipeline_parallel/p2p_communication.py", "", "comm");
    row("Megatron get_batch", "get_batch", "Megatron-LM/pretrain_gpt.py", "", "input");
    row("Megatron save_checkpoint", "save_checkpoint", "megatron/training/checkpointing.py", "", "checkpoint");
    row("Megatron dist_checkpointing", "save", "megatron/core/dist_checkpointing/serialization.py", "", "checkpoint");
    // DataLoader.
    row("DataLoader __next__", "__next__", sitePackages("torch/utils/data/dataloader.py"), "", "input");
    row("DataLoader _next_data", "_next_data", "torch/utils/data/dataloader.py", "", "input");
    row("DataLoader _get_data", "_get_data", "torch/utils/data/dataloader.py", "", "input");
    row("DataLoader _try_get_data", "_try_get_data", "torch/utils/data/dataloader.py", "", "input");
    row("DataLoader fetch", "fetch", "torch/utils/data/_utils/fetch.py", "", "input");
    row("DataLoader worker loop", "_worker_loop", "torch/utils/data/_utils/worker.py", "", "input");
    // Checkpoints.
    row("torch.save", "save", sitePackages("torch/serialization.py"), "", "checkpoint");
    row("torch _save", "_save", "torch/serialization.py", "", "checkpoint");
    row("safetensors save_file", "save_file", sitePackages("safetensors/torch.py"), "", "checkpoint");
    row("torch.distributed.checkpoint save", "save", "torch/distributed/checkpoint/state_dict_saver.py", "",
        "checkpoint");
    row("HF Trainer _save_checkpoint", "_save_checkpoint", "transformers/trainer.py", "", "checkpoint");
    row("torch.load is not a checkpoint write", "load", "torch/serialization.py", "", "other");
}

// Rows of GPU waits, idle waits and compute, names as other tools spell them, and user code that is none of these.
void waitComputeAndUserRows()
{
    // GPU waits.
    row("torch.cuda.synchronize", "synchronize", sitePackages("torch/cuda/__init__.py"), "", "gpu_wait");
    row("_engine_run_backward", "_engine_run_backward", "torch/autograd/graph.py", "", "gpu_wait");
    row("native cudaStreamSynchronize", "cudaStreamSynchronize", "", "libcudart.so.12", "gpu_wait");
    row("native tensor.item()", "THPVariable_item", "", "libtorch_python.so", "gpu_wait");
    row("native _local_scalar_dense", "at::native::_local_scalar_dense_cuda(at::Tensor const&)", "", "libtorch_cuda.so",
        "gpu_wait");
    // Idle.
    row("threading wait", "wait", "lib/python3.12/threading.py", "", "idle");
    row("threading wait, short path", "wait", "threading.py", "", "idle");
    row("queue get", "get", "/usr/lib/python3.11/queue.py", "", "idle");
    row("selectors select", "select", "selectors.py", "", "idle");
    row("kernel futex", "futex_wait_queue", "", "[kernel.kallsyms]", "idle");
    row("folded kernel suffix", "futex_wait_queue_me_[k]", "", "", "idle");
    row("versioned libc symbol", "pthread_cond_wait@@GLIBC_2.3.2", "", "libc.so.6", "idle");
    row("libc poll", "poll", "", "/usr/lib/x86_64-linux-gnu/libc.so.6", "idle");
    row("condition_variable wait", "std::condition_variable::wait(std::unique_lock<std::mutex>&)", "", "libstdc++.so.6",
        "idle");
    // Compute.
    row("Linear forward", "forward", sitePackages("torch/nn/modules/linear.py"), "", "compute");
    row("module _call_impl", "_call_impl", "torch/nn/modules/module.py", "", "compute");
    row("functional linear", "linear", "torch/nn/functional.py", "", "compute");
    row("Adam step", "step", "torch/optim/adam.py", "", "compute");
    row("autograd Function apply", "apply", "torch/autograd/function.py", "", "compute");
    row("activation checkpoint is compute", "checkpoint", "torch/utils/checkpoint.py", "", "compute");
    row("HF model forward", "forward", "transformers/models/llama/modeling_llama.py", "", "compute");
    // Names as other tools spell them.
    row("qualified Python name", "PartitionedParameterCoordinator.fetch_sub_module",
        "deepspeed/runtime/zero/partitioned_param_coordinator.py", "", "comm");
    row("Windows path", "fetch_sub_module",
        "C:\\Python311\\Lib\\site-packages\\deepspeed\\runtime\\zero\\partitioned_param_coordinator.py", "", "comm");
    // User code with the frameworks' generic names is not classified by accident.
    row("user save", "save", "train.py", "", "other");
    row("user _save", "_save", "train.py", "", "other");
    row("user save_checkpoint", "save_checkpoint", "train.py", "", "other");
    row("user wait", "wait", "train.py", "", "other");
    row("user step", "step", "train.py", "", "other");
    row("user fetch", "fetch", "train.py", "", "other");
    row("user get", "get", "mylib/cache.py", "", "other");
    row("user forward", "forward", "train.py", "", "other");
    row("user poll (Python)", "poll", "train.py", "", "other");
    row("user schedule (Python)", "schedule", "mylib/lr.py", "", "other");
    row("user all_reduce", "all_reduce", "mylib/dist.py", "", "other");
    row("look-alike path", "save", "mytorch/serialization.py", "", "other");
    row("name is anchored", "fetch_sub_module_stats", "deepspeed/runtime/zero/partitioned_param_coordinator.py", "",
        "other");
    row("file rule needs a file", "save", "", "", "other");
    row("empty frame", "", "", "", "other");
}

} // namespace

class TstPhase : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void phaseNames()
    {
        const Phase all[] = {Phase::Other, Phase::Compute, Phase::Idle,      Phase::GpuWait,
                             Phase::Comm,  Phase::Input,   Phase::Checkpoint};
        QCOMPARE(std::size(all), size_t(kPhaseCount));
        for (const Phase p : all)
            QCOMPARE(phaseFromName(phaseName(p)), std::optional<Phase>(p));
        QCOMPARE(phaseName(Phase::GpuWait), std::string_view("gpu_wait"));
        QVERIFY(!phaseFromName("comms"));
        QVERIFY(!phaseFromName("Comm"));
        // Priority: checkpoint > input > comm > gpu_wait > idle > compute > other.
        for (size_t i = 0; i + 1 < std::size(all); ++i) {
            QCOMPARE(strongerPhase(all[i], all[i + 1]), all[i + 1]);
            QCOMPARE(strongerPhase(all[i + 1], all[i]), all[i + 1]);
        }
        static_assert(strongerPhase(Phase::Checkpoint, Phase::Comm) == Phase::Checkpoint);
    }

    void builtInPacks()
    {
        const std::vector<std::string> names = builtIn().packNames();
        for (const char* expected : {"checkpoint", "compute", "dataloader", "deepspeed", "distributed", "fsdp",
                                     "gpu_wait", "idle", "megatron"})
            QVERIFY2(std::find(names.begin(), names.end(), expected) != names.end(), expected);
        QCOMPARE(names.size(), size_t(9));
        QVERIFY(builtIn().ruleCount() > 80);
        // Parsed once: a second call gives the same packs.
        auto again = PhaseClassifier::builtIn();
        QVERIFY(again.ok());
        QCOMPARE(again->ruleCount(), builtIn().ruleCount());
    }

    void classify_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("module");
        QTest::addColumn<QString>("phase");
        deepSpeedAndDistributedRows();
        fsdpMegatronInputAndCheckpointRows();
        waitComputeAndUserRows();
    }

    void classify()
    {
        QFETCH(QString, name);
        QFETCH(QString, file);
        QFETCH(QString, module);
        QFETCH(QString, phase);
        const OwnedFrame f{name.toStdString(), file.toStdString(), module.toStdString()};
        QCOMPARE(phaseString(builtIn().classify(f.text())), phase);
        const auto why = builtIn().explain(f.text());
        QCOMPARE(why.has_value(), phase != QLatin1String("other"));
        if (why) {
            QCOMPARE(why->phase, builtIn().classify(f.text()));
            QVERIFY(why->line > 0);
            QVERIFY2(why->pattern.starts_with(phaseName(why->phase)), why->pattern.c_str());
        }
    }

    void explainNamesTheRule()
    {
        const OwnedFrame f{"save", "torch/serialization.py", ""};
        const auto why = builtIn().explain(f.text());
        QVERIFY(why);
        QCOMPARE(why->pack, std::string("checkpoint"));
        QVERIFY2(why->pattern.find("file=torch/serialization\\.py") != std::string::npos, why->pattern.c_str());
        QVERIFY(why->pattern.find('#') == std::string::npos); // no comment in the pattern
        // The pack line really is that rule.
        const OwnedFrame none{"heavy_input_prep", "train.py", ""};
        QVERIFY(!builtIn().explain(none.text()));
    }

    void stackPriority_data()
    {
        QTest::addColumn<QStringList>("stack"); // root first, "name@file[@module]"
        QTest::addColumn<QString>("phase");
        QTest::newRow("checkpoint barrier on another rank")
            << test::strs({"_save_checkpoint@transformers/trainer.py", "save_checkpoint@deepspeed/runtime/engine.py",
                           "barrier@torch/distributed/distributed_c10d.py"})
            << QStringLiteral("checkpoint");
        QTest::newRow("parameter fetch inside forward")
            << test::strs({"train@transformers/trainer.py", "_call_impl@torch/nn/modules/module.py",
                           "forward@deepspeed/runtime/engine.py",
                           "fetch_sub_module@deepspeed/runtime/zero/partitioned_param_coordinator.py",
                           "wait@deepspeed/runtime/zero/partition_parameters.py"})
            << QStringLiteral("comm");
        QTest::newRow("DataLoader waiting on its queue")
            << test::strs({"train@train.py", "__next__@torch/utils/data/dataloader.py",
                           "_next_data@torch/utils/data/dataloader.py", "_get_data@torch/utils/data/dataloader.py",
                           "get@lib/python3.12/multiprocessing/queues.py", "select@lib/python3.12/selectors.py"})
            << QStringLiteral("input");
        QTest::newRow("backward with native futex")
            << test::strs({"train@train.py", "backward@torch/_tensor.py",
                           "_engine_run_backward@torch/autograd/graph.py", "futex_wait@@[kernel.kallsyms]"})
            << QStringLiteral("gpu_wait");
        QTest::newRow("idle thread") << test::strs({"_bootstrap@threading.py", "run@threading.py", "wait@threading.py"})
                                     << QStringLiteral("idle");
        QTest::newRow("user forward in a module")
            << test::strs({"worker@train.py", "_call_impl@torch/nn/modules/module.py", "forward@train.py"})
            << QStringLiteral("compute");
        QTest::newRow("user code only") << test::strs({"worker@train.py", "heavy_input_prep@train.py"})
                                        << QStringLiteral("other");
        QTest::newRow("empty stack") << QStringList() << QStringLiteral("other");
    }

    void stackPriority()
    {
        QFETCH(QStringList, stack);
        QFETCH(QString, phase);
        std::vector<OwnedFrame> owned;
        for (const QString& s : stack)
            owned.push_back(parseAt(s));
        std::vector<FrameText> frames;
        for (const OwnedFrame& o : owned)
            frames.push_back(o.text());
        QCOMPARE(phaseString(builtIn().classifyStack(frames)), phase);
        // The same as combining the frames' phases by hand, in either order.
        Phase combined = Phase::Other, reversed = Phase::Other;
        for (const FrameText& f : frames)
            combined = strongerPhase(combined, builtIn().classify(f));
        for (auto it = frames.rbegin(); it != frames.rend(); ++it)
            reversed = strongerPhase(builtIn().classify(*it), reversed);
        QCOMPARE(phaseString(combined), phase);
        QCOMPARE(phaseString(reversed), phase);
    }

    void packErrors_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error"); // a prefix of the error
        QTest::newRow("unknown phase") << QStringLiteral("comms foo\n")
                                       << QStringLiteral("site:1:1: unknown phase \"comms\" (expected checkpoint, "
                                                         "input, comm, gpu_wait, idle or compute)");
        QTest::newRow("other cannot be assigned") << QStringLiteral("other foo")
                                                  << QStringLiteral("site:1:1: unknown "
                                                                    "phase \"other\"");
        QTest::newRow("phase after indentation")
            << QStringLiteral("# ok\n\n   Comm foo") << QStringLiteral("site:3:4: unknown phase \"Comm\"");
        QTest::newRow("bad name regex") << QStringLiteral("# a comment\ncomm foo(bar\n")
                                        << QStringLiteral(
                                               "site:2:13: invalid regular expression: missing closing parenthesis");
        QTest::newRow("bad file regex") << QStringLiteral("comm foo file=a[b")
                                        << QStringLiteral(
                                               "site:1:18: invalid regular expression: missing terminating ] "
                                               "for character class");
        QTest::newRow("pattern escaping its group")
            << QStringLiteral("comm a)|(b") << QStringLiteral("site:1:7: invalid regular expression");
        QTest::newRow("unknown qualifier")
            << QStringLiteral("comm foo thread=x") << QStringLiteral("site:1:10: unexpected \"thread=x\"");
        QTest::newRow("a space inside a pattern")
            << QStringLiteral("comm foo bar") << QStringLiteral("site:1:10: unexpected \"bar\"");
        QTest::newRow("missing name pattern")
            << QStringLiteral("idle   # nothing") << QStringLiteral("site:1:6: expected a function name pattern");
        QTest::newRow("file given twice")
            << QStringLiteral("comm a file=x file=y") << QStringLiteral("site:1:15: file= given twice");
        QTest::newRow("empty file pattern")
            << QStringLiteral("comm a file=") << QStringLiteral("site:1:8: file= needs a pattern");
        QTest::newRow("CRLF lines counted")
            << QStringLiteral("# x\r\n\r\ncomm a # ok\r\ncomm b(\r\n")
            << QStringLiteral("site:4:8: invalid regular expression: missing closing parenthesis");
    }

    void packErrors()
    {
        QFETCH(QString, text);
        QFETCH(QString, error);
        const QByteArray utf8 = text.toUtf8();
        auto c = PhaseClassifier::fromText(std::string_view(utf8.data(), static_cast<size_t>(utf8.size())), "site");
        QVERIFY(!c.ok());
        const QString got = QString::fromStdString(c.error().toString());
        QVERIFY2(got.startsWith(error), qPrintable(got));
        QCOMPARE(c.error().code, ErrorCode::Format);
    }

    void commentsAndBlankLines()
    {
        auto c = PhaseClassifier::fromText("# header\n\n  \t\ncomm   a_b   file=x/y\\.py   # trailing\r\n"
                                           "idle c#d module=libc\n",
                                           "site");
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        QCOMPARE(c->ruleCount(), size_t(2));
        const OwnedFrame ab{"a_b", "pkg/x/y.py", ""};
        QCOMPARE(c->classify(ab.text()), Phase::Comm);
        QCOMPARE(c->explain(ab.text())->pattern, std::string("comm   a_b   file=x/y\\.py"));
        QCOMPARE(c->explain(ab.text())->line, 4);
        const OwnedFrame cd{"c#d", "", "/lib/libc.so.6"}; // '#' inside a word is part of the pattern
        QCOMPARE(c->classify(cd.text()), Phase::Idle);
        auto empty = PhaseClassifier::fromText("", "empty");
        QVERIFY(empty.ok());
        QCOMPARE(empty->ruleCount(), size_t(0));
        QCOMPARE(empty->classify(ab.text()), Phase::Other);
    }

    void userPackOnTop()
    {
        PhaseClassifier c = builtIn();
        auto site = PhaseClassifier::fromText("comm my_allreduce file=mylib/comm\\.py\n"
                                              "checkpoint save file=mylib/store\\.py\n",
                                              "site");
        QVERIFY(site.ok());
        QVERIFY(c.add(*site).ok());
        QCOMPARE(c.packNames().back(), std::string("site"));
        const OwnedFrame mine{"my_allreduce", "src/mylib/comm.py", ""};
        QCOMPARE(c.classify(mine.text()), Phase::Comm);
        QCOMPARE(c.explain(mine.text())->pack, std::string("site"));
        QCOMPARE(c.explain(mine.text())->line, 1);
        // Built-in rules still apply, and the built-in classifier is not changed by the copy.
        const OwnedFrame save{"save", "torch/serialization.py", ""};
        QCOMPARE(c.classify(save.text()), Phase::Checkpoint);
        QCOMPARE(c.explain(save.text())->pack, std::string("checkpoint"));
        QCOMPARE(builtIn().classify(mine.text()), Phase::Other);
        // The same pack twice is refused and changes nothing.
        const size_t rules = c.ruleCount();
        const Status again = c.add(*site);
        QVERIFY(!again.ok());
        QCOMPARE(again.error().message, std::string("phase pack \"site\" is already loaded"));
        QCOMPARE(c.ruleCount(), rules);
    }

    // The literal prefilter must never hide a match the regular expression would find.
    void patternForms_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("matches");
        const auto row = [](const char* p, const char* n, bool m) {
            QTest::addRow("%s ~ %s", p, n) << QString::fromUtf8(p) << QString::fromUtf8(n) << m;
        };
        row("foo_?bar", "foobar", true);
        row("foo_?bar", "foo_bar", true);
        row("foo_?bar", "fooba", false);
        row("ab+c", "abbbc", true);
        row("ab+c", "ac", false);
        row("x{2,3}yz", "xxyz", true);
        row("x{2,3}yz", "xyz", false);
        row("_{0,2}reduce", "__reduce", true);
        row("_{0,2}reduce", "reduce", true);
        row("(?:get|put)_item", "put_item", true);
        row("a|b\\.c", "a", true);
        row("a|b\\.c", "b.c", true);
        row("a|b\\.c", "bxc", false);
        row("[ab]c\\d", "bc7", true);
        row("é?x", "x", true);
        row("éa?", "é", true);
        row("(?i)save", "SAVE", true);
        row("\\x41bc", "Abc", true);
        row("foo\\d+", "foo12", true);
        row("a{b}", "a{b}", true);
        row("\\[unknown\\]", "[unknown]", true);
        row("wait", "Engine.wait", true);           // qualified Python name
        row("wait", "c10d::Work::wait(int)", true); // C++ namespace and parameters
        row("wait", "waiting", false);
        row("wait", "await", false);
    }

    void patternForms()
    {
        QFETCH(QString, pattern);
        QFETCH(QString, name);
        QFETCH(bool, matches);
        const QByteArray text = (QStringLiteral("comm ") + pattern).toUtf8();
        auto c = PhaseClassifier::fromText(std::string_view(text.data(), static_cast<size_t>(text.size())), "p");
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        const std::string n = name.toStdString();
        QCOMPARE(c->classify(FrameText{n, {}, {}}) == Phase::Comm, matches);
    }

    void concurrentUse()
    {
        std::vector<OwnedFrame> frames;
        for (const char* spec :
             {"fetch_sub_module@deepspeed/runtime/zero/partitioned_param_coordinator.py", "save@torch/serialization.py",
              "wait@threading.py", "forward@torch/nn/modules/linear.py", "worker@train.py",
              "futex_wait@@[kernel.kallsyms]", "__next__@torch/utils/data/dataloader.py"})
            frames.push_back(parseAt(QString::fromUtf8(spec)));
        std::vector<Phase> expected;
        for (const OwnedFrame& f : frames)
            expected.push_back(builtIn().classify(f.text()));
        const PhaseClassifier& shared = builtIn();
        std::atomic<int> mismatches{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                for (int i = 0; i < 3000; ++i) {
                    const size_t k = static_cast<size_t>(i) % frames.size();
                    if (shared.classify(frames[k].text()) != expected[k]) ++mismatches;
                }
            });
        for (std::thread& t : threads)
            t.join();
        QCOMPARE(mismatches.load(), 0);
    }

    // The fixture's frames as py-spy names them: each classifies, and the known ones land where they belong.
    void fixtureFrames()
    {
        const QString fx = test::fixturesDir();
        if (fx.isEmpty()) QSKIP("../shared/fixtures is absent: real-capture test skipped");
        std::set<QString> distinct;
        std::vector<QStringList> stacks;
        for (const char* rank : {"stacks-rank0.folded", "stacks-rank1.folded"}) {
            QFile f(fx + QStringLiteral("/h200-gloo-small/") + QLatin1String(rank));
            QVERIFY2(f.open(QIODevice::ReadOnly), rank);
            for (const QString& line : QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'))) {
                const QString t = line.trimmed();
                if (t.isEmpty()) continue;
                QStringList frames = t.left(t.lastIndexOf(QLatin1Char(' '))).split(QLatin1Char(';'));
                // py-spy's root frames name the process and the thread, not code.
                while (!frames.isEmpty() && (frames.front().startsWith(QLatin1String("process ")) ||
                                             frames.front().startsWith(QLatin1String("thread ("))))
                    frames.pop_front();
                stacks.push_back(frames);
                for (const QString& fr : frames)
                    distinct.insert(fr);
            }
        }
        QVERIFY(distinct.size() > 50);
        std::map<std::string, int> checked; // what was asserted, and how often
        for (const QString& text : distinct) {
            const OwnedFrame f = splitPySpy(text);
            const QString file = QString::fromStdString(f.file);
            const Phase p = builtIn().classify(f.text());
            const auto why = builtIn().explain(f.text());
            QCOMPARE(why ? why->phase : Phase::Other, p);
            if (file == QLatin1String("torch/serialization.py") && (f.name == "save" || f.name == "_save")) {
                QVERIFY2(p == Phase::Checkpoint, qPrintable(text));
                ++checked["torch.save"];
            }
            if (file.startsWith(QLatin1String("torch/distributed/distributed_c10d.py"))) {
                QVERIFY2(p == Phase::Comm, qPrintable(text));
                ++checked["c10d collective"];
            }
            if (f.name == "forward" && file.startsWith(QLatin1String("torch/nn/modules/"))) {
                QVERIFY2(p == Phase::Compute, qPrintable(text));
                ++checked["nn forward"];
            }
            if (f.name == "synchronize" && file == QLatin1String("torch/cuda/__init__.py")) {
                QVERIFY2(p == Phase::GpuWait, qPrintable(text));
                ++checked["cuda synchronize"];
            }
            if (f.name == "wait" && file.endsWith(QLatin1String("/threading.py"))) {
                QVERIFY2(p == Phase::Idle, qPrintable(text));
                ++checked["threading wait"];
            }
            // The script's own functions (save_checkpoint, heavy_input_prep, forward, batch, ...) match no rule.
            if (file == QLatin1String("train.py")) {
                QVERIFY2(p == Phase::Other, qPrintable(text));
                ++checked["train.py"];
            }
        }
        for (const char* what :
             {"torch.save", "c10d collective", "nn forward", "cuda synchronize", "threading wait", "train.py"})
            QVERIFY2(checked[what] > 0, what);
        // The checkpoint stacks (the script's save_checkpoint calling torch.save) are checkpoint samples.
        int checkpointStacks = 0;
        for (const QStringList& stack : stacks) {
            std::vector<OwnedFrame> owned;
            for (const QString& fr : stack)
                owned.push_back(splitPySpy(fr));
            std::vector<FrameText> frames;
            for (const OwnedFrame& o : owned)
                frames.push_back(o.text());
            const bool writes = stack.join(QLatin1Char(';')).contains(QLatin1String("(torch/serialization.py:"));
            QCOMPARE(builtIn().classifyStack(frames) == Phase::Checkpoint, writes);
            checkpointStacks += writes ? 1 : 0;
        }
        QVERIFY(checkpointStacks > 0);
    }

    void manyUserFramesStayOther()
    {
        // Frames of user code and of generic library paths that no rule names: none is claimed by a pack.
        // (Classification speed is a benchmark matter, not a unit test.)
        std::vector<OwnedFrame> frames;
        for (int i = 0; i < 2000; ++i) {
            frames.push_back(
                {"user_function_" + std::to_string(i), "mylib/module" + std::to_string(i % 50) + ".py", ""});
            frames.push_back({"forward", "torch/nn/modules/m" + std::to_string(i % 40) + ".py", ""});
            frames.push_back({"c10d::Something" + std::to_string(i) + "::run(int)", "", "libtorch_cpu.so"});
        }
        int other = 0;
        for (const OwnedFrame& f : frames)
            other += builtIn().classify(f.text()) == Phase::Other ? 1 : 0;
        QCOMPARE(other, 2000);
    }
};

QTEST_GUILESS_MAIN(TstPhase)
#include "tst_phase.moc"
