// The demo's stack samples: py-spy-shaped speedscope (one timed profile per thread, weights 1/rate), the folded
// form of the same samples, and the story they tell when classified with the built-in phase packs
// (communication-bound autograd thread, rank 0 writing checkpoints while the others wait, DataLoader fetches), and
// rank 0's trainer log.

#include "analysis/phase/phase_classifier.h"
#include "app/demo/demo_run.h"
#include "app/demo/demo_stacks.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

using namespace runlens;
using namespace runlens::analysis;

namespace {

app::DemoSpec smallSpec()
{
    app::DemoSpec spec;
    spec.nodes = 1;
    spec.gpusPerNode = 2;
    spec.hours = 0.2; // 720 s: two checkpoint stalls (335-360 s, 695-720 s)
    spec.stackRateHz = 10;
    return spec;
}

// What a writer puts into a FILE*, as bytes.
QByteArray capture(const std::function<Expected<int64_t>(std::FILE*)>& write, int64_t* count = nullptr)
{
    std::FILE* f = std::tmpfile();
    if (!f) qFatal("tmpfile failed");
    auto n = write(f);
    if (!n) qFatal("writer failed: %s", n.error().toString().c_str());
    if (count) *count = *n;
    std::fflush(f);
    if (std::fseek(f, 0, SEEK_SET) != 0) qFatal("fseek failed");
    QByteArray bytes;
    char buf[65536];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0)
        bytes.append(buf, static_cast<qsizetype>(got));
    std::fclose(f);
    return bytes;
}

struct Profile
{
    QString name;
    int64_t startUnixNs = 0;
    std::vector<std::vector<int>> samples;
    std::vector<double> weights;
};

struct Speedscope
{
    QJsonObject top;
    std::vector<std::string> names, files;
    std::vector<int> lines;
    std::vector<Profile> profiles;

    std::vector<FrameText> frames(const std::vector<int>& stack) const
    {
        std::vector<FrameText> out;
        for (const int i : stack)
            out.push_back({names[static_cast<size_t>(i)], files[static_cast<size_t>(i)], {}});
        return out;
    }
    // py-spy's raw spelling of a stack, for comparing with the folded form.
    std::string text(const std::vector<int>& stack) const
    {
        std::string out;
        for (const int i : stack) {
            const size_t k = static_cast<size_t>(i);
            if (!out.empty()) out += ';';
            out += names[k] + " (" + files[k] + (lines[k] > 0 ? ":" + std::to_string(lines[k]) : "") + ")";
        }
        return out;
    }
};

Speedscope parse(const QByteArray& json)
{
    Speedscope s;
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
    if (err.error != QJsonParseError::NoError) qFatal("invalid JSON: %s", qPrintable(err.errorString()));
    s.top = doc.object();
    for (const QJsonValue f : s.top[QLatin1String("shared")][QLatin1String("frames")].toArray()) {
        s.names.push_back(f[QLatin1String("name")].toString().toStdString());
        s.files.push_back(f[QLatin1String("file")].toString().toStdString());
        s.lines.push_back(f[QLatin1String("line")].toInt());
    }
    for (const QJsonValue p : s.top[QLatin1String("profiles")].toArray()) {
        Profile prof;
        prof.name = p[QLatin1String("name")].toString();
        prof.startUnixNs = p[QLatin1String("startUnixNs")].toInteger();
        for (const QJsonValue sample : p[QLatin1String("samples")].toArray()) {
            std::vector<int> stack;
            for (const QJsonValue i : sample.toArray())
                stack.push_back(i.toInt(-1));
            prof.samples.push_back(std::move(stack));
        }
        for (const QJsonValue w : p[QLatin1String("weights")].toArray())
            prof.weights.push_back(w.toDouble(-1));
        s.profiles.push_back(std::move(prof));
    }
    return s;
}

const PhaseClassifier& classifier()
{
    static const PhaseClassifier c = [] {
        auto b = PhaseClassifier::builtIn();
        if (!b) qFatal("%s", b.error().toString().c_str());
        return *b;
    }();
    return c;
}

// Phase shares of one profile's samples whose time (seconds from the run start) is in [from, to).
std::map<Phase, double> shares(const Speedscope& s, const Profile& p, double from, double to, double rate)
{
    std::map<Phase, double> out;
    double n = 0;
    for (size_t i = 0; i < p.samples.size(); ++i) {
        const double t = static_cast<double>(i) / rate;
        if (t < from || t >= to) continue;
        const std::vector<FrameText> frames = s.frames(p.samples[i]);
        out[classifier().classifyStack(frames)] += 1;
        n += 1;
    }
    for (auto& [phase, v] : out)
        v /= n;
    return out;
}

} // namespace

class TstDemo : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void speedscopeShape()
    {
        const app::DemoSpec spec = smallSpec();
        int64_t written = 0;
        const QByteArray bytes = capture([&](std::FILE* f) { return app::writeDemoSpeedscope(spec, 1, f); }, &written);
        const Speedscope s = parse(bytes);
        QCOMPARE(s.top[QLatin1String("$schema")].toString(),
                 QStringLiteral("https://www.speedscope.app/file-format-schema.json"));
        QVERIFY(s.top[QLatin1String("exporter")].toString().startsWith(QLatin1String("py-spy@")));
        QCOMPARE(s.profiles.size(), size_t(2));
        QCOMPARE(s.profiles[0].name, QStringLiteral("Thread 4132 \"MainThread\""));
        QCOMPARE(s.profiles[1].name, QStringLiteral("Thread 4139 \"pt_autograd_0\""));
        const size_t expected = size_t{720} * 10;
        QCOMPARE(written, int64_t(2 * expected));
        const QJsonArray profiles = s.top[QLatin1String("profiles")].toArray();
        for (size_t k = 0; k < s.profiles.size(); ++k) {
            const Profile& p = s.profiles[k];
            const QJsonObject o = profiles[static_cast<qsizetype>(k)].toObject();
            QCOMPARE(o[QLatin1String("type")].toString(), QStringLiteral("sampled"));
            QCOMPARE(o[QLatin1String("unit")].toString(), QStringLiteral("seconds"));
            QCOMPARE(o[QLatin1String("startValue")].toDouble(), 0.0);
            QCOMPARE(o[QLatin1String("endValue")].toDouble(), 720.0);
            // The wall-clock time of the first sample: just after the run's start, the same for both threads.
            QCOMPARE(p.startUnixNs, spec.startUnixS * 1'000'000'000 + 43'000'000);
            QCOMPARE(p.samples.size(), expected);
            QCOMPARE(p.weights.size(), expected);
            QVERIFY(std::all_of(p.weights.begin(), p.weights.end(), [](double w) { return w == 0.1; }));
            for (const std::vector<int>& stack : p.samples) {
                QVERIFY(!stack.empty());
                QVERIFY(std::all_of(stack.begin(), stack.end(),
                                    [&](int i) { return i >= 0 && static_cast<size_t>(i) < s.names.size(); }));
            }
        }
        // Frames carry name, file and line like py-spy's (native frames have no line).
        QVERIFY(std::find(s.names.begin(), s.names.end(), "fetch_sub_module") != s.names.end());
        QVERIFY(std::find(s.names.begin(), s.names.end(), "__reduce_and_partition_ipg_grads") != s.names.end());
        for (size_t i = 0; i < s.names.size(); ++i)
            QVERIFY2(!s.files[i].empty() && (s.lines[i] > 0 || s.files[i].find(".so") != std::string::npos),
                     s.names[i].c_str());

        // Deterministic for a seed; another seed, other samples.
        QVERIFY(capture([&](std::FILE* f) { return app::writeDemoSpeedscope(spec, 1, f); }) == bytes);
        app::DemoSpec other = spec;
        other.seed = 7;
        QVERIFY(capture([&](std::FILE* f) { return app::writeDemoSpeedscope(other, 1, f); }) != bytes);
    }

    void story()
    {
        const app::DemoSpec spec = smallSpec();
        const Speedscope rank0 = parse(capture([&](std::FILE* f) { return app::writeDemoSpeedscope(spec, 0, f); }));
        const Speedscope rank1 = parse(capture([&](std::FILE* f) { return app::writeDemoSpeedscope(spec, 1, f); }));
        const double rate = spec.stackRateHz;
        // Steady state (after warm-up, before the first checkpoint): the autograd thread is communication-bound
        // while it works, idle otherwise; the training thread waits on the backward and on parameter fetches.
        for (const Speedscope* s : {&rank0, &rank1}) {
            auto main = shares(*s, s->profiles[0], 60, 335, rate);
            auto autograd = shares(*s, s->profiles[1], 60, 335, rate);
            qInfo("main: comm %.2f gpu_wait %.2f compute %.2f input %.2f; autograd: comm %.2f compute %.2f idle %.2f",
                  main[Phase::Comm], main[Phase::GpuWait], main[Phase::Compute], main[Phase::Input],
                  autograd[Phase::Comm], autograd[Phase::Compute], autograd[Phase::Idle]);
            QVERIFY(autograd[Phase::Comm] / (1.0 - autograd[Phase::Idle]) > 0.6);
            QVERIFY(autograd[Phase::Idle] > 0.2 && autograd[Phase::Idle] < 0.6);
            QVERIFY(main[Phase::GpuWait] > 0.4);
            QVERIFY(main[Phase::Comm] > 0.15);
            QVERIFY(main[Phase::Compute] > 0.05);
            QVERIFY(main[Phase::Input] > 0.005);
            QCOMPARE(main[Phase::Checkpoint], 0.0);
            QCOMPARE(main[Phase::Other], 0.0);
            QCOMPARE(autograd[Phase::Other], 0.0);
        }
        // In each checkpoint stall rank 0 writes and the other rank writes its shard, then waits at a barrier:
        // every training-thread sample is a checkpoint sample; rank 0 is in torch.save's _save.
        for (const double stall : {335.0, 695.0}) {
            QCOMPARE(shares(rank0, rank0.profiles[0], stall, stall + 25, rate)[Phase::Checkpoint], 1.0);
            QCOMPARE(shares(rank1, rank1.profiles[0], stall, stall + 25, rate)[Phase::Checkpoint], 1.0);
            QCOMPARE(shares(rank0, rank0.profiles[1], stall, stall + 25, rate)[Phase::Idle], 1.0);
        }
        const auto leafShare = [&](const Speedscope& s, const char* leaf, double from, double to) {
            int n = 0, hit = 0;
            const Profile& p = s.profiles[0];
            for (size_t i = 0; i < p.samples.size(); ++i) {
                const double t = static_cast<double>(i) / rate;
                if (t < from || t >= to) continue;
                ++n;
                hit += s.names[static_cast<size_t>(p.samples[i].back())] == leaf ? 1 : 0;
            }
            return n ? static_cast<double>(hit) / n : 0.0;
        };
        QVERIFY(leafShare(rank0, "_save", 335, 360) > 0.5);
        QVERIFY(leafShare(rank1, "barrier", 335, 360) > 0.5);
        QCOMPARE(leafShare(rank1, "_save", 340, 360), 0.0); // after its shard, rank 1 only waits
    }

    void foldedMatchesSpeedscope()
    {
        const app::DemoSpec spec = smallSpec();
        const Speedscope s = parse(capture([&](std::FILE* f) { return app::writeDemoSpeedscope(spec, 0, f); }));
        int64_t counted = 0;
        const QByteArray folded = capture([&](std::FILE* f) { return app::writeDemoFolded(spec, 0, f); }, &counted);
        QCOMPARE(counted, int64_t(2 * 7200));
        std::map<std::string, int64_t> fromFolded, fromSpeedscope;
        for (const QByteArray& line : folded.split('\n')) {
            if (line.isEmpty()) continue;
            const qsizetype sp = line.lastIndexOf(' ');
            fromFolded[line.left(sp).toStdString()] += line.mid(sp + 1).toLongLong();
        }
        const char* const threads[] = {"thread (4100): MainThread", "thread (4107): pt_autograd_0"};
        for (size_t k = 0; k < 2; ++k)
            for (const std::vector<int>& stack : s.profiles[k].samples)
                ++fromSpeedscope["process 4100:\"python train.py --deepspeed ds_z3_config.json\";" +
                                 std::string(threads[k]) + ";" + s.text(stack)];
        QCOMPARE(fromFolded.size(), fromSpeedscope.size());
        QVERIFY(fromFolded == fromSpeedscope);
    }

    // Rank 0's trainer log: a line per step at the step ends (none inside the checkpoint stalls), the throughput
    // LLaMA-Factory's (tokens since the start over the time since the start), a closing line without a loss, and a
    // loss that depends on the step only, so zero3 and zero3-tuned share it.
    void trainerLog()
    {
        app::DemoSpec spec = smallSpec(); // 10.6 s steps from 63.6 s, stalls at 335-360 s and 695-720 s
        const std::vector<double> ends = app::demoStepEnds(spec);
        QVERIFY(ends.size() > 50);
        QCOMPARE(app::demoTrainStartS(spec), 63.6);
        for (double t : ends)
            QVERIFY2(std::fmod(t, 360.0) < 335 && t > 63.6 && t < 720, qPrintable(QString::number(t)));
        const QByteArray log = capture([&](std::FILE* f) { return app::writeDemoTrainerLog(spec, f); });
        const QList<QByteArray> lines = log.trimmed().split('\n');
        QCOMPARE(lines.size(), qsizetype(ends.size()) + 1);
        const int64_t tokensPerStep = app::demoTokensPerStep(spec);
        QCOMPARE(tokensPerStep, int64_t(2) * 2 * 8192);
        for (qsizetype i = 0; i < lines.size(); ++i) {
            const QJsonObject o = QJsonDocument::fromJson(lines[i]).object();
            const int64_t step = std::min<int64_t>(i + 1, static_cast<int64_t>(ends.size()));
            QCOMPARE(o.value(QStringLiteral("current_steps")).toInteger(), step);
            QCOMPARE(o.value(QStringLiteral("total_steps")).toInteger(), static_cast<int64_t>(ends.size()));
            QCOMPARE(o.value(QStringLiteral("total_tokens")).toInteger(), step * tokensPerStep);
            const double elapsed = ends[static_cast<size_t>(step - 1)] - 63.6;
            QVERIFY(
                std::fabs(static_cast<double>(step * tokensPerStep) / o.value(QStringLiteral("throughput")).toDouble() -
                          elapsed) < 1e-3);
            QVERIFY(o.value(QStringLiteral("elapsed_time")).toString().startsWith(QStringLiteral("0:")));
            QCOMPARE(o.contains(QStringLiteral("loss")), i + 1 < lines.size());
            if (o.contains(QStringLiteral("loss")))
                QVERIFY(std::fabs(o.value(QStringLiteral("loss")).toDouble() - app::demoStepLoss(spec, step)) < 1e-4);
        }
        QCOMPARE(QJsonDocument::fromJson(lines.front()).object().value(QStringLiteral("elapsed_time")).toString(),
                 QStringLiteral("0:00:10"));
        // The same loss at each step whatever the speed; another seed, another curve.
        auto z3 = app::demoScenario("zero3"), tuned = app::demoScenario("zero3-tuned");
        QVERIFY(z3 && tuned);
        QCOMPARE(app::demoTokensPerStep(*z3), app::demoTokensPerStep(*tuned));
        app::DemoSpec other = *z3;
        other.seed = 7;
        for (int64_t step : {1, 100, 1000}) {
            QCOMPARE(app::demoStepLoss(*z3, step), app::demoStepLoss(*tuned, step));
            QVERIFY(app::demoStepLoss(other, step) != app::demoStepLoss(*z3, step));
        }
        QVERIFY(app::demoStepLoss(*z3, 1000) < app::demoStepLoss(*z3, 1) - 0.4);
        // The model for the MFU: the active parameters.
        QCOMPARE(app::demoModelSettings(spec).at("model.params").value_or(""), std::string("17000000000"));
    }

    void badSpec()
    {
        app::DemoSpec spec = smallSpec();
        spec.stackRateHz = 0;
        std::FILE* f = std::tmpfile();
        QVERIFY(f);
        auto r = app::writeDemoSpeedscope(spec, 0, f);
        std::fclose(f);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::Usage);
    }
};

QTEST_GUILESS_MAIN(TstDemo)
#include "tst_demo.moc"
