// Trainer log import (docs/formats.md §15-18): LLaMA-Factory trainer_log.jsonl, HF trainer_state.json, Megatron-LM
// iteration lines and DeepSpeed step / timer / throughput lines. Here: the modification time is no anchor, detection,
// and the recorded LLaMA-Factory logs of ../shared/fixtures when present; the cases of each format are folders under
// tests/golden/trainer.

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

const char* const kDsStep1 = "[2026-01-15 10:00:10,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, "
                             "lr=[0.0003, 0.0003], mom=[(0.9, 0.999), (0.9, 0.999)]";
const char* const kDsTimer1 = "[2026-01-15 10:00:10,001] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd: "
                              "250.00 | bwd: 500.50 | step: 100.00";

} // namespace

class TestTrainerImporters : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modificationTimeIsNoAnchor();
    void sniffing_data();
    void sniffing();
    void realLlamaFactoryFixtures_data();
    void realLlamaFactoryFixtures();
};

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
