// The MFU (analysis/mfu): the GPU peak table and its lookup from stored GPU names, the FLOPs per token (6N and the
// attention term), the user's peak, the trainer log's own TFLOP/s, the settings kept in the run, the schema upgrade
// that adds them, `runlens info` / `runlens analyze` showing it, and the timeline's MFU lane.

#include "analysis/mfu/gpu_peaks.h"
#include "analysis/mfu/mfu.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_settings.h"
#include "analysis/store/run_writer.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"
#include "tests/cli_support.h"
#include "tests/timeline_support.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <optional>

using namespace runlens;
using namespace runlens::analysis;
using runlens::test::binary::cli;
using runlens::test::binary::Run;

namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'790'000'000'000'000'000;

// A run of one node with `gpus` GPUs named `gpuName` ("" : no name) and a trainer log's series on the host.
std::string writeRun(const QTemporaryDir& dir, int gpus, const std::string& gpuName,
                     const std::vector<std::pair<std::string, double>>& trainer)
{
    return test::writeRun(dir, "r.runlens", [&](store::RunWriter& w) {
        auto node = w.node("node0", "option", "UTC");
        if (!node) return false;
        for (int g = 0; g < gpus; ++g) {
            auto gpu = w.device(*node, "gpu", std::to_string(g));
            if (!gpu || (!gpuName.empty() && !w.setDeviceAttribute(*gpu, "name", gpuName))) return false;
            auto sink = w.series(*gpu, "gpu.util", "%", "util");
            if (!sink) return false;
            for (int s = 0; s < 60; ++s)
                (*sink)->append(kStart + s * kSecond, 90);
        }
        auto host = w.device(*node, "host", "");
        if (!host) return false;
        for (const auto& [metric, value] : trainer) {
            auto sink = w.series(*host, metric, "", metric);
            if (!sink) return false;
            for (int s = 0; s < 60; s += 10) // one value a little off, which the median ignores
                (*sink)->append(kStart + s * kSecond, s == 0 ? value / 3 : value);
        }
        return true;
    });
}

MfuInputs inputs(int gpus, const std::string& name)
{
    MfuInputs in;
    in.gpuNames.assign(static_cast<size_t>(gpus), name);
    return in;
}

} // namespace

class TestMfu : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tableIsComplete()
    {
        const std::vector<GpuPeak>& t = gpuPeaks();
        QStringList models;
        for (const GpuPeak& p : t) {
            models << QString::fromStdString(p.model);
            QVERIFY(p.bf16 && p.fp16);
            QVERIFY(!p.source.empty());
        }
        QCOMPARE(models, test::strs({"A100 PCIe", "A100 SXM", "H100 NVL", "H100 PCIe", "H100 SXM", "H200 NVL", "H200",
                                     "B200", "L40S", "MI300X"}));
        QVERIFY(!findGpuPeak("NVIDIA A100-SXM4-80GB")->fp8); // Ampere has no fp8 tensor cores
    }

    void lookup_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("model");
        QTest::addColumn<double>("bf16");
        QTest::newRow("A100 SXM4") << QStringLiteral("NVIDIA A100-SXM4-80GB") << QStringLiteral("A100 SXM") << 312.0;
        QTest::newRow("A100 PCIe 40GB") << QStringLiteral("NVIDIA A100-PCIE-40GB") << QStringLiteral("A100 PCIe")
                                        << 312.0;
        QTest::newRow("A100 80GB PCIe") << QStringLiteral("NVIDIA A100 80GB PCIe") << QStringLiteral("A100 PCIe")
                                        << 312.0;
        QTest::newRow("H100 SXM") << QStringLiteral("NVIDIA H100 80GB HBM3") << QStringLiteral("H100 SXM") << 989.4;
        QTest::newRow("H100 PCIe") << QStringLiteral("NVIDIA H100 PCIe") << QStringLiteral("H100 PCIe") << 756.5;
        QTest::newRow("H100 NVL") << QStringLiteral("NVIDIA H100 NVL") << QStringLiteral("H100 NVL") << 835.5;
        QTest::newRow("H200") << QStringLiteral("NVIDIA H200") << QStringLiteral("H200") << 989.4;
        QTest::newRow("H200 NVL") << QStringLiteral("NVIDIA H200 NVL") << QStringLiteral("H200 NVL") << 835.5;
        QTest::newRow("B200") << QStringLiteral("NVIDIA B200") << QStringLiteral("B200") << 2250.0;
        QTest::newRow("L40S") << QStringLiteral("NVIDIA L40S") << QStringLiteral("L40S") << 362.05;
        QTest::newRow("MI300X") << QStringLiteral("AMD Instinct MI300X") << QStringLiteral("MI300X") << 1307.4;
        QTest::newRow("lower case") << QStringLiteral("nvidia h100 80gb hbm3") << QStringLiteral("H100 SXM") << 989.4;
        QTest::newRow("L40 is not L40S") << QStringLiteral("NVIDIA L40") << QStringLiteral("") << 0.0;
        QTest::newRow("A1000 is not A100") << QStringLiteral("NVIDIA RTX A1000") << QStringLiteral("") << 0.0;
        QTest::newRow("V100") << QStringLiteral("Tesla V100-SXM2-32GB") << QStringLiteral("") << 0.0;
    }
    void lookup()
    {
        QFETCH(QString, name);
        QFETCH(QString, model);
        QFETCH(double, bf16);
        const GpuPeak* p = findGpuPeak(name.toStdString());
        if (model.isEmpty()) {
            QVERIFY(!p);
            return;
        }
        QVERIFY(p);
        QCOMPARE(QString::fromStdString(p->model), model);
        QCOMPARE(*p->tflops("bf16"), bf16);
    }

    void handComputation()
    {
        // 7e9 parameters, 4 H100 SXM at bf16, 10 000 tokens/s: 6 · 7e9 · 1e4 / (4 · 989.4e12) = 10.6 %.
        MfuInputs in = inputs(4, "NVIDIA H100 80GB HBM3");
        in.settings.params = 7e9;
        in.tokensPerS = 10'000;
        const Mfu m = computeMfu(in);
        QVERIFY(m.mfu);
        QVERIFY(std::fabs(*m.mfu - 6 * 7e9 * 1e4 / (4 * 989.4e12)) < 1e-12);
        QVERIFY(std::fabs(*m.mfu - 0.1061) < 1e-3);
        QCOMPARE(m.formula, std::string("6N"));
        QCOMPARE(m.peakSource, std::string("table"));
        QCOMPARE(QString::fromStdString(mfuLine(m)),
                 QStringLiteral("MFU 11 % (H100 SXM bf16 dense 989.4 TFLOP/s × 4 GPUs; 6N, N = 7e9; 10000 tokens/s "
                                "from the trainer log)"));
        // fp8 halves it.
        in.settings.precision = "fp8";
        QVERIFY(std::fabs(*computeMfu(in).mfu - 6 * 7e9 * 1e4 / (4 * 1978.9e12)) < 1e-12);
    }

    void attentionTerm()
    {
        MfuInputs in = inputs(8, "NVIDIA H200");
        in.settings.params = 7e9;
        in.settings.layers = 32;
        in.settings.hidden = 4096;
        in.settings.seqLen = 4096;
        in.tokensPerS = 80'000;
        const Mfu m = computeMfu(in);
        const double perToken = 6 * 7e9 + 12.0 * 32 * 4096 * 4096;
        QCOMPARE(*m.flopsPerToken, perToken);
        QVERIFY(std::fabs(*m.mfu - perToken * 8e4 / (8 * 989.4e12)) < 1e-12);
        QCOMPARE(m.formula, std::string("6N + attention"));
        QVERIFY(mfuLine(m).starts_with("MFU 49 % (H200 bf16 dense 989.4 TFLOP/s × 8 GPUs; 6N + attention, N = 7e9, "
                                       "L = 32, H = 4096, S = 4096;"));
        // Part of the shape only: 6N, saying what the attention term needs.
        in.settings.layers.reset();
        const Mfu part = computeMfu(in);
        QCOMPARE(part.formula, std::string("6N"));
        QVERIFY(mfuLine(part).find("--model-layers") != std::string::npos);
    }

    void samplesTimesSequence()
    {
        MfuInputs in = inputs(4, "NVIDIA H100 80GB HBM3");
        in.settings.params = 7e9;
        in.samplesPerS = 5;
        const Mfu without = computeMfu(in);
        QVERIFY(!without.mfu);
        QVERIFY(mfuLine(without).find("--seq-len") != std::string::npos);
        in.settings.seqLen = 2000;
        const Mfu m = computeMfu(in);
        QCOMPARE(*m.tokensPerS, 10'000.0);
        QCOMPARE(m.tokensSource, std::string("samples_per_s"));
    }

    void unknownGpuAndOverride()
    {
        MfuInputs in = inputs(2, "Tesla V100-SXM2-32GB");
        in.settings.params = 1e9;
        in.tokensPerS = 10'000;
        const Mfu unknown = computeMfu(in);
        QVERIFY(!unknown.mfu);
        const std::string line = mfuLine(unknown);
        QVERIFY2(line.find("\"Tesla V100-SXM2-32GB\" not in the peak table") != std::string::npos, line.c_str());
        QVERIFY(line.find("--gpu-peak-tflops") != std::string::npos);
        // The user's peak wins, over an unknown GPU and over the table.
        in.settings.peakTflops = 125;
        const Mfu user = computeMfu(in);
        QVERIFY(std::fabs(*user.mfu - 6e9 * 1e4 / (2 * 125e12)) < 1e-12);
        QCOMPARE(user.peakSource, std::string("user"));
        QVERIFY(mfuLine(user).find("125 TFLOP/s per GPU from --gpu-peak-tflops × 2 GPUs") != std::string::npos);
        MfuInputs h100 = inputs(4, "NVIDIA H100 80GB HBM3");
        h100.settings.params = 7e9;
        h100.tokensPerS = 10'000;
        h100.settings.peakTflops = 1000;
        QVERIFY(std::fabs(*computeMfu(h100).mfu - 6 * 7e9 * 1e4 / (4 * 1000e12)) < 1e-12);
        // Unnamed GPUs, and no GPUs at all.
        MfuInputs unnamed = inputs(2, "");
        unnamed.settings.params = 1e9;
        unnamed.tokensPerS = 1;
        QVERIFY(mfuLine(computeMfu(unnamed)).find("does not name its GPUs") != std::string::npos);
        // The A100 has no fp8 peak.
        MfuInputs a100 = inputs(2, "NVIDIA A100-SXM4-80GB");
        a100.settings.params = 1e9;
        a100.tokensPerS = 1;
        a100.settings.precision = "fp8";
        QVERIFY(mfuLine(computeMfu(a100)).find("no dense fp8") != std::string::npos);
    }

    void trainerLogTflops()
    {
        MfuInputs in = inputs(8, "NVIDIA H100 80GB HBM3");
        in.logTflopsPerGpu = 400;
        const Mfu m = computeMfu(in);
        QCOMPARE(m.flopsSource, std::string("trainer_log"));
        QVERIFY(std::fabs(*m.mfu - 400 / 989.4) < 1e-12);
        QVERIFY(mfuLine(m).find("400 TFLOP/s per GPU from the trainer log") != std::string::npos);
        // Nothing at all: asks for the model size.
        QVERIFY(mfuLine(computeMfu(inputs(8, "NVIDIA H100 80GB HBM3"))).find("--model-params") != std::string::npos);
    }

    void numbers()
    {
        QCOMPARE(*parseMfuNumber("70e9"), 70e9);
        QCOMPARE(*parseMfuNumber("7B"), 7e9);
        QCOMPARE(*parseMfuNumber(" 1.5T "), 1.5e12);
        QCOMPARE(*parseMfuNumber("4096"), 4096.0);
        QVERIFY(!parseMfuNumber("seven"));
        QVERIFY(!parseMfuNumber("-1"));
        QVERIFY(!parseMfuNumber("0"));
        QCOMPARE(shortNumber(7e9), std::string("7e9"));
        QCOMPARE(shortNumber(1.3e10), std::string("1.3e10"));
        QCOMPARE(shortNumber(4096), std::string("4096"));
    }

    void settingsInTheRun()
    {
        QTemporaryDir dir;
        const std::string path = writeRun(dir, 8, "NVIDIA H200", {{"train.tokens_per_s", 80'000}});
        QVERIFY(!path.empty());
        auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
        QVERIFY(db);
        auto before = runMfu(**db);
        QVERIFY(before && !before->mfu);
        QVERIFY(store::storeRunSettings(**db, {{kSettingModelParams, "7e9"}, {kSettingGpuCount, std::nullopt}}));
        auto m = runMfu(**db);
        QVERIFY(m && m->mfu);
        QCOMPARE(m->gpus, 8);
        QCOMPARE(*m->tokensPerS, 80'000.0); // the median, not the first (off) value
        QVERIFY(std::fabs(*m->mfu - 6 * 7e9 * 8e4 / (8 * 989.4e12)) < 1e-12);
        QVERIFY(store::storeRunSettings(**db, {{kSettingModelParams, std::nullopt}}));
        auto settings = store::loadRunSettings(**db);
        QVERIFY(settings && settings->empty());
    }

    // The timeline's MFU lane: the trainer's tokens/s scaled by the MFU per token/s, or its TFLOP/s per GPU over the
    // peak; no lane while the MFU is not known.
    void timelineLane()
    {
        auto lane = [](const std::string& path) -> std::optional<timeline::LaneSpec> {
            auto catalog = timeline::loadRunCatalog(path);
            if (!catalog) qFatal("%s", catalog.error().toString().c_str());
            for (const timeline::LaneSpec& l : timeline::laneSpecs(**catalog))
                if (l.id == "mfu") return l;
            return std::nullopt;
        };
        QTemporaryDir dir;
        const std::string path = writeRun(dir, 8, "NVIDIA H200", {{"train.tokens_per_s", 80'000}});
        QVERIFY(!path.empty());
        QVERIFY(!lane(path)); // the model is not described
        {
            auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
            QVERIFY(db && store::storeRunSettings(**db, {{kSettingModelParams, "7e9"}}));
        }
        auto mfu = lane(path);
        QVERIFY(mfu);
        QCOMPARE(mfu->title, std::string("MFU"));
        QCOMPARE(mfu->unit, std::string("%"));
        QCOMPARE(mfu->metrics.size(), size_t(1));
        QCOMPARE(mfu->metrics[0].metric, std::string("train.tokens_per_s"));
        // 6 · 7e9 FLOPs per token over 8 H200 at 989.4 TFLOP/s: 5.31e-4 % per token/s, 42 % at 80 000 tokens/s.
        const double perTokenPerS = 100 * 6 * 7e9 / (8 * 989.4e12);
        QVERIFY(std::fabs(mfu->metrics[0].scale - perTokenPerS) < 1e-15);
        QVERIFY(std::fabs(mfu->metrics[0].scale * 80'000 - 42.45) < 0.01);
        auto catalog = timeline::loadRunCatalog(path);
        QVERIFY(catalog);
        QCOMPARE(timeline::laneSeries(**catalog, *mfu).size(), size_t(1)); // the trainer log's series
        const auto specs = timeline::laneSpecs(**catalog);
        const auto tokens = std::find_if(specs.begin(), specs.end(), [](const auto& l) { return l.id == "tokens"; });
        QVERIFY(tokens != specs.end() && tokens + 1 != specs.end() && (tokens + 1)->id == "mfu");

        // The trainer log's own TFLOP/s per GPU, the model not described: that over the peak.
        QTemporaryDir logDir;
        const std::string logRun = writeRun(logDir, 8, "NVIDIA H100 80GB HBM3", {{"train.tflops_per_gpu", 400}});
        QVERIFY(!logRun.empty());
        auto fromLog = lane(logRun);
        QVERIFY(fromLog);
        QCOMPARE(fromLog->metrics[0].metric, std::string("train.tflops_per_gpu"));
        QVERIFY(std::fabs(fromLog->metrics[0].scale - 100 / 989.4) < 1e-12);

        // The model described but the GPUs unnamed: the MFU is not known, and there is no lane.
        QTemporaryDir unnamedDir;
        const std::string unnamed = writeRun(unnamedDir, 8, "", {{"train.tokens_per_s", 80'000}});
        QVERIFY(!unnamed.empty());
        {
            auto db = store::RunDatabase::open(unnamed, store::OpenMode::ReadWrite);
            QVERIFY(db && store::storeRunSettings(**db, {{kSettingModelParams, "7e9"}}));
        }
        QVERIFY(!lane(unnamed));
    }

    void upgradeFromVersion5()
    {
        QTemporaryDir dir;
        const std::string path = writeRun(dir, 1, "NVIDIA H200", {});
        QVERIFY(!path.empty());
        {
            auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
            QVERIFY(db);
            QVERIFY(store::execSql((*db)->handle(), "DROP TABLE run_setting; PRAGMA user_version = 5;"));
        }
        QVERIFY(!store::RunDatabase::open(path, store::OpenMode::ReadOnly)); // says to open it for writing
        auto db = store::RunDatabase::open(path, store::OpenMode::ReadWrite);
        QVERIFY(db);
        QVERIFY(store::storeRunSettings(**db, {{kSettingModelParams, "7e9"}}));
        auto settings = store::loadRunSettings(**db);
        QVERIFY(settings && settings->at(kSettingModelParams) == "7e9");
    }

    void infoAndAnalyze()
    {
        QTemporaryDir dir;
        const std::string path = writeRun(dir, 8, "NVIDIA H200", {{"train.tokens_per_s", 80'000}});
        QVERIFY(!path.empty());
        const QString run = QString::fromStdString(path);
        const Run notYet = cli({QStringLiteral("info"), run});
        EXPECT_EXIT(notYet, 0);
        EXPECT_MATCH(notYet.out, QStringLiteral("MFU not known: .*--model-params"));
        const Run bad = cli({QStringLiteral("info"), run, QStringLiteral("--model-params"), QStringLiteral("lots")});
        EXPECT_EXIT(bad, 2);
        EXPECT_MATCH(bad.err, QStringLiteral("--model-params needs a positive number"));
        const Run set = cli({QStringLiteral("info"), run, QStringLiteral("--model-params"), QStringLiteral("7e9")});
        EXPECT_EXIT(set, 0);
        EXPECT_MATCH(set.out, QStringLiteral("Kept in the run for the MFU: model.params=7000000000"));
        const QString line = QStringLiteral("MFU 42 % \\(H200 bf16 dense 989.4 TFLOP/s × 8 GPUs; 6N, N = 7e9; 80000 "
                                            "tokens/s from the trainer log\\)");
        EXPECT_MATCH(set.out, line);
        const Run analyze = cli({QStringLiteral("analyze"), run});
        EXPECT_EXIT(analyze, 0);
        EXPECT_MATCH(analyze.out, line);
        const Run json = cli({QStringLiteral("analyze"), run, QStringLiteral("--json"), QStringLiteral("--store"),
                              QStringLiteral("--gpu-peak-tflops"), QStringLiteral("1000")});
        EXPECT_EXIT(json, 0);
        const QJsonObject mfu =
            QJsonDocument::fromJson(json.out.toUtf8()).object().value(QStringLiteral("mfu")).toObject();
        QVERIFY(std::fabs(mfu.value(QStringLiteral("mfu")).toDouble() - 6 * 7e9 * 8e4 / (8 * 1000e12)) < 1e-12);
        QCOMPARE(mfu.value(QStringLiteral("peak_source")).toString(), QStringLiteral("user"));
        QCOMPARE(mfu.value(QStringLiteral("gpus")).toInt(), 8);
        // The peak given to analyze was kept.
        EXPECT_MATCH(cli({QStringLiteral("info"), run}).out,
                     QStringLiteral("1000 TFLOP/s per GPU from --gpu-peak-tflops"));
        const Run peaks = cli({QStringLiteral("info"), QStringLiteral("--list-gpu-peaks")});
        EXPECT_EXIT(peaks, 0);
        EXPECT_MATCH(peaks.out, QStringLiteral("H200 +989.4 +989.4 +1978.9"));
    }
};

QTEST_GUILESS_MAIN(TestMfu)
#include "tst_mfu.moc"
