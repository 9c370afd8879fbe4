// Trainer log import (docs/formats.md §15-18): LLaMA-Factory trainer_log.jsonl, HF trainer_state.json, Megatron-LM
// iteration lines and DeepSpeed step / timer / throughput lines. Generated inputs of each format are read back
// from the store; the recorded LLaMA-Factory logs of ../shared/fixtures are checked when present.

#include "analysis/store/run_reader.h"
#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>
#include <cmath>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

// options: "key=value" items; "format=..." forces the format.
Imported importPath(const std::string& dbPath, const std::string& path, const QStringList& options = {})
{
    return test::importWith(dbPath, path, test::keyedOptions(options, test::importOptions()));
}

// The points of one host series as "time=value" (6 significant digits), a missing one as "time=?".
QString seriesText(const std::string& dbPath, const QString& metric)
{
    const auto time = [](int64_t ns) { return utc(ns, Fraction::MillisAndNs); };
    const auto value = [](double v) { return QString::number(v, 'g', 6); };
    return pointsText(readSeries(dbPath, str("n1"), str("host"), metric), time, value);
}

// One LLaMA-Factory line as LogCallback writes it (json.dumps key order; None values left out).
QByteArray lfLine(int step, const char* elapsed, const char* loss, const char* extra = "")
{
    QByteArray l = "{\"current_steps\": " + QByteArray::number(step) + ", \"total_steps\": 100";
    if (loss) l += ", \"loss\": " + QByteArray(loss);
    l += ", \"lr\": 0.0003, \"epoch\": 0.01, \"percentage\": 1.0, \"elapsed_time\": \"" + QByteArray(elapsed) +
         "\", \"remaining_time\": \"0:10:00\"" + extra + "}";
    return l;
}

QByteArray join(const QList<QByteArray>& ls)
{
    QByteArray out;
    for (const QByteArray& l : ls)
        out += l + '\n';
    return out;
}

const QString kStart = str("start=2026-01-15T10:00:00Z");

QByteArray hfState(const QByteArray& history)
{
    return "{\n  \"best_global_step\": null,\n  \"best_metric\": null,\n  \"best_model_checkpoint\": null,\n"
           "  \"epoch\": 1.0,\n  \"eval_steps\": 500,\n  \"global_step\": 20,\n"
           "  \"is_hyper_param_search\": false,\n  \"is_local_process_zero\": true,\n"
           "  \"is_world_process_zero\": true,\n  \"log_history\": [\n" +
           history +
           "  ],\n  \"logging_steps\": 10,\n  \"max_steps\": 20,\n  \"num_input_tokens_seen\": 0,\n"
           "  \"num_train_epochs\": 1,\n  \"save_steps\": 500,\n  \"total_flos\": 1.0,\n"
           "  \"train_batch_size\": 8,\n  \"trial_name\": null,\n  \"trial_params\": null\n}\n";
}

const QByteArray kHfHistory =
    "    {\n      \"epoch\": 0.5,\n      \"grad_norm\": 5.5,\n"
    "      \"learning_rate\": 1e-05,\n      \"loss\": 1.5,\n      \"step\": 10\n    },\n"
    "    {\n      \"epoch\": 1.0,\n      \"grad_norm\": 4.25,\n"
    "      \"learning_rate\": 5e-06,\n      \"loss\": 1.25,\n      \"step\": 20\n    },\n"
    "    {\n      \"epoch\": 1.0,\n      \"eval_loss\": 1.375,\n      \"eval_runtime\": 3.0,\n"
    "      \"step\": 20\n    },\n"
    "    {\n      \"epoch\": 1.0,\n      \"step\": 20,\n      \"total_flos\": 1.0,\n"
    "      \"train_loss\": 1.4,\n      \"train_runtime\": 40.0,\n"
    "      \"train_samples_per_second\": 4.0,\n      \"train_steps_per_second\": 0.5\n"
    "    }\n";

const char* const kMegatron1 =
    "[2026-01-15 10:00:10.000000] iteration       10/     100 | consumed samples:          320 | elapsed time per "
    "iteration (ms): 1000.0 | throughput per GPU (TFLOP/s/GPU): 400.5 | learning rate: 3.000000E-04 | global batch "
    "size:    32 | lm loss: 1.050000E+01 | loss scale: 1.0 | grad norm: 2.500 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |";
const char* const kMegatron2 =
    "[2026-01-15 10:00:22.500000] iteration       20/     100 | consumed samples:          640 | elapsed time per "
    "iteration (ms): 1250.0 | throughput per GPU (TFLOP/s/GPU): 390.0 | learning rate: 2.900000E-04 | global batch "
    "size:    32 | lm loss: 9.750000E+00 | loss scale: 1.0 | grad norm: 2.000 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |";
const char* const kMegatronDs1 =
    " iteration        1/  317892 | consumed samples:           96 | consumed tokens:       393216 | elapsed time per "
    "iteration (ms): 25600.0 | learning rate: 3.000E-04 | global batch size:    96 | lm loss: 1.117136E+01 | loss "
    "scale: 1.0 | actual seqlen:  4096 | number of skipped iterations:   0 | number of nan iterations:   0 | samples "
    "per second: 3.750 | tokens per gpu per second(tgs): 633.832 | TFLOPs: 38.61 |";
const char* const kMegatronDs2 =
    " iteration        2/  317892 | consumed samples:          192 | consumed tokens:       786432 | elapsed time per "
    "iteration (ms): 19200.0 | learning rate: 3.000E-04 | global batch size:    96 | lm loss: 1.000000E+01 | loss "
    "scale: 1.0 | actual seqlen:  4096 | number of skipped iterations:   0 | number of nan iterations:   0 | samples "
    "per second: 5.000 | tokens per gpu per second(tgs): 633.832 | TFLOPs: 38.61 |";

const char* const kDsStep1 = "[2026-01-15 10:00:10,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, "
                             "lr=[0.0003, 0.0003], mom=[(0.9, 0.999), (0.9, 0.999)]";
const char* const kDsTimer1 = "[2026-01-15 10:00:10,001] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd: "
                              "250.00 | bwd: 500.50 | step: 100.00";
const char* const kDsThroughput1 =
    "[2026-01-15 10:00:10,002] [INFO] [timer.py:198:stop] epoch=0/micro_step=40/global_step=10, "
    "RunningAvgSamplesPerSec=30.5, CurrSamplesPerSec=32.0, MemAllocated=0.36GB, MaxMemAllocated=15.06GB";
const char* const kDsStep2 = "\x1b"
                             "c[2026-01-15 10:00:25,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, "
                             "skipped=0, lr=[0.00025, 0.00025], mom=[(0.9, 0.999), (0.9, 0.999)]";
const char* const kDsThroughput2 =
    "[2026-01-15 10:00:25,002] [INFO] [timer.py:198:stop] epoch=0/micro_step=80/global_step=20, "
    "RunningAvgSamplesPerSec=28.0, CurrSamplesPerSec=26.5, MemAllocated=0.36GB, MaxMemAllocated=15.06GB";

} // namespace

class TestTrainerImporters : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void importCases_data();
    void importCases();
    void modificationTimeIsNoAnchor();
    void sniffing_data();
    void sniffing();
    void realLlamaFactoryFixtures_data();
    void realLlamaFactoryFixtures();
};

void TestTrainerImporters::importCases_data()
{
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("format");          // the importer that must take the file
    QTest::addColumn<QString>("outcome");         // imported, failed
    QTest::addColumn<QStringList>("points");      // metric|time=value, ... ("metric|<no series>" when absent)
    QTest::addColumn<QStringList>("diagnostics"); // kind|line in report order
    const QString lf = str("llamafactory-trainer-log"), hf = str("hf-trainer-state"),
                  md = str("megatron-deepspeed-log");
    const QString imported = str("imported");

    // Exact elapsed = total_tokens / throughput: 2.5, 4, 5, 6.25, 8 s.
    QTest::newRow("LLaMA-Factory: throughput as tokens per second since the start")
        << str("trainer_log.jsonl")
        << join({lfLine(1, "0:00:02", "2.5", ", \"throughput\": 400.0, \"total_tokens\": 1000"),
                 lfLine(2, "0:00:04", "2.25", ", \"throughput\": 500.0, \"total_tokens\": 2000"),
                 lfLine(3, "0:00:05", "2.0", ", \"throughput\": 600.0, \"total_tokens\": 3000"),
                 lfLine(4, "0:00:06", "1.75", ", \"throughput\": 640.0, \"total_tokens\": 4000"),
                 lfLine(5, "0:00:08", "1.5", ", \"throughput\": 625.0, \"total_tokens\": 5000")})
        << QStringList{kStart} << lf << imported
        << strs({"train.step_time|10:00:02.500=2.5, 10:00:04=1.5, 10:00:05=1, 10:00:06.250=1.25, 10:00:08=1.75",
                 "train.loss|10:00:02.500=2.5, 10:00:04=2.25, 10:00:05=2, 10:00:06.250=1.75, 10:00:08=1.5",
                 "train.tokens_per_s|10:00:02.500=400, 10:00:04=666.667, 10:00:05=1000, 10:00:06.250=800, "
                 "10:00:08=571.429",
                 "train.lr|10:00:02.500=0.0003, 10:00:04=0.0003, 10:00:05=0.0003, 10:00:06.250=0.0003, 10:00:08=0.0003",
                 "train.step|10:00:02.500=1, 10:00:04=2, 10:00:05=3, 10:00:06.250=4, 10:00:08=5"})
        << QStringList{};
    // Interval durations 2.5, 2, 1.25, 0.5, 1.6 s of 1000 tokens each; elapsed 2.5, 4.5, 5.75, 6.25, 7.85 s.
    QTest::newRow("LLaMA-Factory: throughput as the rate of the last interval")
        << str("trainer_log.jsonl")
        << join({lfLine(1, "0:00:02", "2.5", ", \"throughput\": 400.0, \"total_tokens\": 1000"),
                 lfLine(2, "0:00:04", "2.25", ", \"throughput\": 500.0, \"total_tokens\": 2000"),
                 lfLine(3, "0:00:05", "2.0", ", \"throughput\": 800.0, \"total_tokens\": 3000"),
                 lfLine(4, "0:00:06", "1.75", ", \"throughput\": 2000.0, \"total_tokens\": 4000"),
                 lfLine(5, "0:00:07", "1.5", ", \"throughput\": 625.0, \"total_tokens\": 5000")})
        << QStringList{kStart} << lf << imported
        << strs({"train.step_time|10:00:02.500=2.5, 10:00:04.500=2, 10:00:05.750=1.25, 10:00:06.250=0.5, "
                 "10:00:07.850=1.6",
                 "train.tokens_per_s|10:00:02.500=400, 10:00:04.500=500, 10:00:05.750=800, 10:00:06.250=2000, "
                 "10:00:07.850=625"})
        << QStringList{};
    // total_tokens not counted (always 0): the throughput relates nothing, the steps are timed by elapsed_time,
    // and no line is reported as inconsistent for it. A line that breaks a relation the others follow is.
    QTest::newRow("LLaMA-Factory: throughput without total_tokens")
        << str("trainer_log.jsonl")
        << join({lfLine(1, "0:00:01", "2.5", ", \"throughput\": 45.6, \"total_tokens\": 0"),
                 lfLine(2, "0:00:02", "2.25", ", \"throughput\": 3210.5, \"total_tokens\": 0"),
                 lfLine(3, "0:00:03", "2.0", ", \"throughput\": 3877.7, \"total_tokens\": 0")})
        << QStringList{kStart} << lf << imported << strs({"train.step_time|10:00:01=1, 10:00:02=1, 10:00:03=1"})
        << QStringList{};
    QTest::newRow("LLaMA-Factory: one line off the throughput the others follow")
        << str("trainer_log.jsonl")
        << join({lfLine(1, "0:00:02", "2.5", ", \"throughput\": 400.0, \"total_tokens\": 1000"),
                 lfLine(2, "0:00:04", "2.25", ", \"throughput\": 500.0, \"total_tokens\": 2000"),
                 lfLine(3, "0:00:05", "2.0", ", \"throughput\": 60.0, \"total_tokens\": 3000"),
                 lfLine(4, "0:00:06", "1.75", ", \"throughput\": 640.0, \"total_tokens\": 4000")})
        << QStringList{kStart} << lf << imported
        << strs({"train.step|10:00:02.500=1, 10:00:04=2, 10:00:05=3, 10:00:06.250=4"})
        << strs({"inconsistent_throughput|3"});
    QTest::newRow("LLaMA-Factory: elapsed_time only, logging every 5 steps, days")
        << str("trainer_log.jsonl")
        << join({lfLine(5, "0:00:10", "3.0"), lfLine(10, "0:00:10", "2.5"), lfLine(15, "0:00:25", "2.0"),
                 lfLine(20, "1 day, 0:00:05", "1.0")})
        << QStringList{kStart} << lf << imported
        << strs({"train.step_time|10:00:10=2, 10:00:25=1.5, 2026-01-16T10:00:05=17276",
                 "train.loss|10:00:10=3, 10:00:10.500=2.5, 10:00:25=2, 2026-01-16T10:00:05=1"})
        << QStringList{};
    QTest::newRow("LLaMA-Factory: evaluation and closing lines at the same step")
        << str("trainer_log.jsonl")
        << join({lfLine(10, "0:00:20", "2.0"),
                 "{\"current_steps\": 10, \"total_steps\": 10, \"eval_loss\": 2.125, \"epoch\": 1.0, \"percentage\": "
                 "100.0, \"elapsed_time\": \"0:00:23\", \"remaining_time\": \"0:00:00\"}",
                 "{\"current_steps\": 10, \"total_steps\": 10, \"epoch\": 1.0, \"percentage\": 100.0, "
                 "\"elapsed_time\": \"0:00:24\", \"remaining_time\": \"0:00:00\"}"})
        << QStringList{kStart} << lf << imported
        << strs({"train.step_time|10:00:20=2", "train.loss|10:00:20=2", "train.eval_loss|10:00:23=2.125",
                 "train.step|10:00:20=10, 10:00:23=10, 10:00:24=10"})
        << QStringList{};
    QTest::newRow("LLaMA-Factory: malformed lines are reported with their line")
        << str("trainer_log.jsonl")
        << join({lfLine(1, "0:00:01", "2.5"), "{\"current_steps\": 2, \"loss\": ", "{\"total_steps\": 100}",
                 lfLine(3, "yesterday", "2.0"), lfLine(4, "0:00:04", "\"x\""), lfLine(5, "0:00:05", "NaN"),
                 lfLine(2, "0:00:06", "1.0"), "[1, 2]", lfLine(6, "0:00:06", "1.25")})
        << QStringList{kStart} << lf << imported
        << strs({"train.loss|10:00:01=2.5, 10:00:05=?, 10:00:06=1.25",
                 "train.step_time|10:00:01=1, 10:00:04=1, 10:00:05=1, 10:00:06=1"})
        << strs({"invalid_line|2", "invalid_line|3", "bad_timestamp|4", "bad_number|5", "nan_value|6",
                 "repeated_step|7", "invalid_line|8"});
    QTest::newRow("LLaMA-Factory: no line can be read")
        << str("trainer_log.jsonl") << lines({"{\"current_steps\": 1, \"total_steps\": 9, x"}) << QStringList{kStart}
        << lf << str("failed") << QStringList{} << QStringList{};

    QTest::newRow("HF trainer_state.json: steps spread by train_runtime")
        << str("trainer_state.json") << hfState(kHfHistory) << QStringList{kStart} << hf << imported
        << strs({"train.loss|10:00:20=1.5, 10:00:40=1.25", "train.lr|10:00:20=1e-05, 10:00:40=5e-06",
                 "train.grad_norm|10:00:20=5.5, 10:00:40=4.25", "train.eval_loss|10:00:40=1.375",
                 "train.step|10:00:20=10, 10:00:40=20", "train.step_time|<no series>"})
        << strs({"estimated_time|32"});
    QTest::newRow("HF trainer_state.json: interval= and malformed entries")
        << str("trainer_state.json")
        << hfState("    {\n      \"loss\": 2.0,\n      \"step\": 5\n    },\n    [\n      1\n    ],\n"
                   "    {\n      \"loss\": 1.9\n    },\n    {\n      \"loss\": \"high\",\n      \"step\": 6\n    },\n"
                   "    {\n      \"loss\": NaN,\n      \"step\": 7\n    },\n    {\n      \"loss\": 1.5,\n"
                   "      \"step\": 3\n    }\n")
        << QStringList{kStart, str("interval=2")} << hf << imported
        << strs({"train.loss|10:00:10=2, 10:00:14=?", "train.step|10:00:10=5, 10:00:12=6, 10:00:14=7"})
        << strs({"invalid_line|16", "invalid_line|19", "bad_number|22", "nan_value|26", "repeated_step|30",
                 "estimated_time|26"});
    QTest::newRow("HF trainer_state.json: no train_runtime and no interval=")
        << str("trainer_state.json") << hfState("    {\n      \"loss\": 2.0,\n      \"step\": 5\n    }\n")
        << QStringList{kStart} << hf << str("failed") << QStringList{} << QStringList{};

    QTest::newRow("Megatron-LM: timed iteration lines among other output")
        << str("train.log")
        << lines({"using world size: 8", kMegatron1, "[Rank 0] (after 10 iterations) memory (MB) | allocated: 1.0",
                  kMegatron2})
        << QStringList{} << md << imported
        << strs({"train.step_time|10:00:10=1, 10:00:22.500=1.25", "train.loss|10:00:10=10.5, 10:00:22.500=9.75",
                 "train.lr|10:00:10=0.0003, 10:00:22.500=0.00029", "train.grad_norm|10:00:10=2.5, 10:00:22.500=2",
                 "train.tflops_per_gpu|10:00:10=400.5, 10:00:22.500=390", "train.step|10:00:10=10, 10:00:22.500=20",
                 "train.tokens_per_s|<no series>"})
        << QStringList{};
    QTest::newRow("Megatron-DeepSpeed: untimed iteration lines placed from start= by their step times")
        << str("train.log") << lines({kMegatronDs1, kMegatronDs2}) << QStringList{kStart} << md << imported
        << strs({"train.step_time|10:00:25.600=25.6, 10:00:44.800=19.2",
                 "train.tokens_per_s|10:00:25.600=15360, 10:00:44.800=20480",
                 "train.samples_per_s|10:00:25.600=3.75, 10:00:44.800=5",
                 "train.loss|10:00:25.600=11.1714, "
                 "10:00:44.800=10"})
        << QStringList{};
    QTest::newRow("Megatron-DeepSpeed: untimed iteration joins the DeepSpeed step line's time")
        << str("train.log")
        << lines({"[2026-01-15 10:00:25,600] [INFO] [logging.py:96:log_dist] [Rank 0] step=1, skipped=0, "
                  "lr=[0.0003, 0.0003], mom=[(0.9, 0.999), (0.9, 0.999)]",
                  kMegatronDs1,
                  "[2026-01-15 10:00:44,800] [INFO] [logging.py:96:log_dist] [Rank 0] step=2, skipped=0, "
                  "lr=[0.0003, 0.0003], mom=[(0.9, 0.999), (0.9, 0.999)]",
                  kMegatronDs2})
        << QStringList{} << md << imported
        << strs({"train.step_time|10:00:25.600=25.6, 10:00:44.800=19.2", "train.step|10:00:25.600=1, 10:00:44.800=2"})
        << QStringList{};
    QTest::newRow("Megatron-LM: malformed iteration lines")
        << str("train.log")
        << lines({kMegatron1, "[2026-01-15 10:00:15.000000] iteration  x/ 100 | consumed samples: 1 |",
                  "[2026-01-15 10:00:22.500000] iteration 20/ 100 | consumed samples: 640 | elapsed time per "
                  "iteration (ms): 1250.0 | lm loss: abc | grad norm: nan | oops |"})
        << QStringList{} << md << imported
        << strs({"train.loss|10:00:10=10.5", "train.grad_norm|10:00:10=2.5, 10:00:22.500=?",
                 "train.step_time|10:00:10=1, 10:00:22.500=1.25"})
        << strs({"invalid_line|2", "bad_number|3", "nan_value|3", "invalid_line|3"});
    QTest::newRow("DeepSpeed: step, timer and throughput lines")
        << str("deepspeed.log")
        << lines({"[2026-01-15 10:00:00,000] [INFO] [engine.py:100:__init__] DeepSpeed info", kDsStep1, kDsTimer1,
                  kDsThroughput1, kDsStep2, kDsThroughput2,
                  "[2026-01-15 10:00:25,003] [INFO] [timer.py:198:stop] 0/20, RunningAvgSamplesPerSec=x, "
                  "CurrSamplesPerSec=oops, MemAllocated=0.36GB"})
        << QStringList{} << md << imported
        << strs({"train.step|10:00:10=10, 10:00:25=20", "train.step_time|10:00:25=1.5",
                 "train.lr|10:00:10=0.0003, 10:00:25=0.00025", "train.samples_per_s|10:00:10=32, 10:00:25=26.5",
                 "timer.fwd|10:00:10=0.25", "timer.bwd|10:00:10=0.5005", "timer.step|10:00:10=0.1"})
        << strs({"bad_number|7", "unmapped_metric|2", "unmapped_metric|2", "unmapped_metric|2"});
    QTest::newRow("DeepSpeed pipeline lines without a time, placed from start=")
        << str("deepspeed.log")
        << lines({"steps: 10 loss: 2.5000 iter time (s): 0.500 samples/sec: 64.000",
                  "steps: 20 loss: 2.2500 iter time (s): 0.750 samples/sec: 42.667"})
        << QStringList{kStart} << md << imported
        << strs({"train.step_time|10:00:05=0.5, 10:00:12.500=0.75", "train.loss|10:00:05=2.5, 10:00:12.500=2.25",
                 "train.samples_per_s|10:00:05=64, 10:00:12.500=42.667"})
        << QStringList{};
}

void TestTrainerImporters::importCases()
{
    QFETCH(QString, fileName);
    QFETCH(QByteArray, input);
    QFETCH(QStringList, options);
    QFETCH(QString, format);
    QFETCH(QString, outcome);
    QFETCH(QStringList, points);
    QFETCH(QStringList, diagnostics);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(dir, fileName, input.toStdString());
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, options);
    QCOMPARE(QString::fromStdString(r.importer), format);
    const QString got = QString::fromLatin1(outcomeName(r.outcome));
    QVERIFY2(got == outcome, qPrintable(got + QStringLiteral(": ") + QString::fromStdString(r.error)));
    if (r.outcome != FileOutcome::Imported) {
        QCOMPARE(test::queryOne(r.db, "SELECT count(*) FROM import"), str("0"));
        return;
    }
    for (const QString& p : points) {
        const qsizetype bar = p.indexOf(QLatin1Char('|'));
        QCOMPARE(seriesText(r.db, p.left(bar)), p.mid(bar + 1));
    }
    const QStringList found = test::queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id");
    if (found != diagnostics)
        qInfo() << test::queryRows(r.db, "SELECT kind, line, message FROM diagnostic ORDER BY id");
    QCOMPARE(found, diagnostics);
}

void TestTrainerImporters::modificationTimeIsNoAnchor()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = test::writeFile(
        dir, str("trainer_log.jsonl"),
        join({lfLine(1, "0:00:03", "2.5"), lfLine(2, "0:00:04", "2.0"), lfLine(3, "0:01:03", "1.5")}).toStdString());
    {
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(QDateTime(QDate(2026, 1, 15), QTime(12, 0, 0), QTimeZone::utc()),
                              QFileDevice::FileModificationTime));
    }
    // A run with no GPU data to match it against: the log is kept, off the timeline, at its times since the start.
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path);
    QCOMPARE(QString::fromLatin1(outcomeName(r.outcome)), str("imported"));
    QCOMPARE(test::queryOne(r.db, "SELECT count(*) FROM series"), str("0"));
    QCOMPARE(test::queryOne(r.db, "SELECT anchor FROM import"), str("unanchored"));
    QCOMPARE(test::queryOne(r.db,
                            "SELECT group_concat((rel_ns / 1000000000) || '=' || value, ', ') FROM (SELECT rel_ns, "
                            "value FROM unanchored_point WHERE metric = 'train.loss' ORDER BY rel_ns)"),
             str("3=2.5, 4=2.0, 63=1.5"));
    QCOMPARE(test::queryRows(r.db, "SELECT kind, line FROM diagnostic"), strs({"unanchored|3"}));
    QCOMPARE(test::queryOne(r.db, "SELECT instr(summary, 'kept unanchored') > 0 FROM import"), str("1"));
}

void TestTrainerImporters::sniffing_data()
{
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<QString>("format"); // empty: not recognised
    QTest::newRow("LLaMA-Factory line") << str("trainer_log.jsonl") << join({lfLine(1, "0:00:01", "2.0")})
                                        << str("llamafactory-trainer-log");
    QTest::newRow("trainer_state.json") << str("trainer_state.json") << hfState(kHfHistory) << str("hf-trainer-state");
    QTest::newRow("Megatron log") << str("log.txt") << lines({"building GPT model ...", kMegatron1})
                                  << str("megatron-deepspeed-log");
    QTest::newRow("DeepSpeed log") << str("log.txt") << lines({kDsStep1, kDsTimer1}) << str("megatron-deepspeed-log");
    QTest::newRow("speedscope JSON")
        << str("p.speedscope.json")
        << QByteArray("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\", \"shared\": {\"frames\": "
                      "[]}, \"profiles\": [], \"name\": \"step\"}\n")
        << str("speedscope");
    QTest::newRow("Chrome trace JSON")
        << str("trace.json")
        << QByteArray("{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\", \"name\": \"step\", \"ts\": 1, "
                      "\"dur\": 2, \"pid\": 1, \"tid\": 1, \"args\": {\"log_history\": 1, \"global_step\": 3}}]}\n")
        << str("chrome-trace");
    QTest::newRow("Prometheus query_range JSON")
        << str("q.json")
        << QByteArray("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
                      "{\"__name__\":\"up\"},\"values\":[[1768471200,\"1\"]]}]}}\n")
        << str("prometheus-json");
    QTest::newRow("generic JSON lines metrics")
        << str("m.jsonl") << lines({"{\"ts\": 1768471200, \"metric\": \"train.loss\", \"value\": 2.0}"})
        << str("metrics-csv");
    QTest::newRow("other JSON lines with steps")
        << str("x.jsonl") << lines({"{\"step\": 1, \"loss\": 2.0}"}) << QString();
}

void TestTrainerImporters::sniffing()
{
    QFETCH(QString, fileName);
    QFETCH(QByteArray, head);
    QFETCH(QString, format);
    const std::string text = head.toStdString();
    const auto [importer, score] = detectFormat({text, fileName.toStdString()});
    const QString got =
        importer ? QString::fromLatin1(importer->format().data(), static_cast<qsizetype>(importer->format().size()))
                 : QString();
    QVERIFY2(got == format || (format.isEmpty() && !got.contains(QLatin1String("trainer")) &&
                               !got.contains(QLatin1String("megatron"))),
             qPrintable(got + QStringLiteral(" (%1)").arg(score)));
}

void TestTrainerImporters::realLlamaFactoryFixtures_data()
{
    QTest::addColumn<QString>("relative");
    QTest::newRow("h200-gloo-small") << str("h200-gloo-small/trainer_log-rank0.jsonl");
    QTest::newRow("h200x2-fsdp-hang") << str("h200x2-fsdp-hang/trainer_log-rank0.jsonl");
}

void TestTrainerImporters::realLlamaFactoryFixtures()
{
    QFETCH(QString, relative);
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures not found: real trainer logs not tested");
    QFile file(fixtures + QLatin1Char('/') + relative);
    if (!file.open(QIODevice::ReadOnly)) QSKIP(qPrintable(relative + str(" not in the fixtures")));
    // An independent reading: one step per line, and the last elapsed_time.
    int lineCount = 0;
    double lastElapsed = 0;
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (line.trimmed().isEmpty()) continue;
        ++lineCount;
        const QString e = QJsonDocument::fromJson(line).object().value(str("elapsed_time")).toString();
        const QStringList hms = e.split(QLatin1Char(':'));
        QCOMPARE(hms.size(), 3);
        lastElapsed = hms[0].toDouble() * 3600 + hms[1].toDouble() * 60 + hms[2].toDouble();
    }
    QVERIFY(lineCount > 10);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Imported r =
        importPath(dir.filePath(str("t.runlens")).toStdString(), file.fileName().toStdString(), QStringList{kStart});
    QCOMPARE(QString::fromStdString(r.importer), str("llamafactory-trainer-log"));
    QVERIFY2(r.outcome == FileOutcome::Imported, r.error.c_str());
    const SeriesPoints steps = readSeries(r.db, str("n1"), str("host"), str("train.step"));
    const SeriesPoints loss = readSeries(r.db, str("n1"), str("host"), str("train.loss"));
    const SeriesPoints stepTime = readSeries(r.db, str("n1"), str("host"), str("train.step_time"));
    QVERIFY2(steps.error.isEmpty() && loss.error.isEmpty() && stepTime.error.isEmpty(), qPrintable(steps.error));
    QCOMPARE(static_cast<int>(steps.points.size()), lineCount);
    QCOMPARE(static_cast<int>(loss.points.size()), lineCount);
    QVERIFY2(stepTime.points.size() * 10 >= steps.points.size() * 9,
             qPrintable(QStringLiteral("%1 step times for %2 steps").arg(stepTime.points.size()).arg(lineCount)));
    // Step times are positive, and over the steps they cover they add up to the whole run's elapsed time.
    double covered = 0, prevStep = 0;
    size_t k = 0;
    for (const store::Point& p : stepTime.points) {
        QVERIFY2(!p.missing && p.value > 0, qPrintable(utc(p.tsNs, Fraction::MillisAndNs)));
        while (k < steps.points.size() && steps.points[k].tsNs < p.tsNs)
            ++k;
        QVERIFY(k < steps.points.size() && steps.points[k].tsNs == p.tsNs);
        covered += p.value * (steps.points[k].value - prevStep);
        prevStep = steps.points[k].value;
    }
    QVERIFY2(covered >= lastElapsed - 1 && covered <= lastElapsed + 1,
             qPrintable(QStringLiteral("step times cover %1 s of %2 s").arg(covered).arg(lastElapsed)));
    // Every point lies in the run: start= plus at most the last elapsed time (and the second it was cut to).
    const int64_t startNs = QDateTime(QDate(2026, 1, 15), QTime(10, 0), QTimeZone::utc()).toMSecsSinceEpoch() * 1000000;
    QVERIFY(steps.points.front().tsNs > startNs);
    QVERIFY(steps.points.back().tsNs <= startNs + static_cast<int64_t>((lastElapsed + 1) * 1e9));
}

QTEST_GUILESS_MAIN(TestTrainerImporters)
#include "tst_importers_trainer.moc"
