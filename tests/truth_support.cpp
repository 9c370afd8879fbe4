#include "tests/truth_support.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTimeZone>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>

namespace runlens::test {

namespace {

// "[2026-11-29 09:34:49] ..." lines of a job's error output, in the recording machine's local time, UTC.
std::optional<int64_t> bracketTime(const QString& line)
{
    static const QRegularExpression re(QStringLiteral("^\\[(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d)\\]"));
    const QRegularExpressionMatch m = re.match(line);
    if (!m.hasMatch()) return std::nullopt;
    QDateTime t = QDateTime::fromString(m.captured(1), QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    if (!t.isValid()) return std::nullopt;
    t.setTimeZone(QTimeZone::utc());
    return t.toMSecsSinceEpoch() * 1'000'000;
}

} // namespace

double median(std::vector<double> v)
{
    if (v.empty()) return std::nan("");
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

// What the events-rank*.jsonl files hold, before phases are built from it: checkpoints, host pauses and async
// checkpoints per step (the union over the ranks), phase ends of the lowest rank.
struct TruthEvents
{
    std::map<int, TruthEvent> checkpoints, pauses;
    std::map<int, TruthAsync> asyncs;
    std::map<std::string, int64_t> phaseEnds; // of the lowest rank
    int lowestRank = -1;
};

// One line of an events file, an object with its "event".
void addEvent(const QJsonObject& o, int fileRank, Truth& truth, TruthEvents& events)
{
    const std::string event = o.value(QStringLiteral("event")).toString().toStdString();
    const int64_t ts = o.value(QStringLiteral("ts_ns")).toInteger();
    const int64_t end = o.value(QStringLiteral("end_ns")).toInteger();
    const int step = o.value(QStringLiteral("step")).toInt();
    const int rank = o.value(QStringLiteral("rank")).toInt(fileRank);
    if (event == "step") {
        truth.steps.push_back({rank, ts, o.value(QStringLiteral("seconds")).toDouble(),
                               o.value(QStringLiteral("phase")).toString().toStdString(),
                               o.value(QStringLiteral("micro_steps")).toInt(),
                               o.value(QStringLiteral("slow_work_s")).toDouble()});
    } else if (event == "phase_end") {
        if (rank == events.lowestRank)
            events.phaseEnds.emplace(o.value(QStringLiteral("phase")).toString().toStdString(), ts);
    } else if (event == "checkpoint" || event == "host_pause") {
        auto& into = event == "checkpoint" ? events.checkpoints : events.pauses;
        const auto it = into.try_emplace(step, TruthEvent{step, ts, end, {}}).first;
        it->second.startNs = std::min(it->second.startNs, ts);
        it->second.endNs = std::max(it->second.endNs, end);
        if (o.contains(QStringLiteral("frame")))
            it->second.frame = o.value(QStringLiteral("frame")).toString().toStdString();
    } else if (event == "async_checkpoint") {
        TruthAsync a{step, ts, o.value(QStringLiteral("copied_ns")).toInteger(),
                     o.value(QStringLiteral("write_start_ns")).toInteger(), end};
        const auto it = events.asyncs.try_emplace(step, a).first;
        it->second.startNs = std::min(it->second.startNs, a.startNs);
        it->second.endNs = std::max(it->second.endNs, a.endNs);
    }
}

// Every truth/events-rank*.jsonl, in the order of their ranks: steps into truth, the rest into the events.
TruthEvents readEvents(const QDir& dir, Truth& truth)
{
    TruthEvents events;
    static const QRegularExpression rankRe(QStringLiteral("rank(\\d+)"));
    QStringList files = dir.entryList({QStringLiteral("events-rank*.jsonl")}, QDir::Files);
    std::sort(files.begin(), files.end(), [&](const QString& a, const QString& b) {
        return rankRe.match(a).captured(1).toInt() < rankRe.match(b).captured(1).toInt();
    });
    if (files.isEmpty()) truth.problems.push_back("no truth/events-rank*.jsonl");
    for (const QString& name : files) {
        const int fileRank = rankRe.match(name).captured(1).toInt();
        if (events.lowestRank < 0) events.lowestRank = fileRank;
        QFile f(dir.filePath(name));
        if (!f.open(QIODevice::ReadOnly)) {
            truth.problems.push_back("cannot read truth/" + name.toStdString());
            continue;
        }
        int lineNo = 0;
        while (!f.atEnd()) {
            const QByteArray line = f.readLine().trimmed();
            ++lineNo;
            if (line.isEmpty()) continue;
            QJsonParseError error;
            const QJsonObject o = QJsonDocument::fromJson(line, &error).object();
            if (error.error != QJsonParseError::NoError) {
                truth.problems.push_back(
                    fmt::format("truth/{}:{}: {}", name.toStdString(), lineNo, error.errorString().toStdString()));
                continue;
            }
            addEvent(o, fileRank, truth, events);
        }
    }
    return events;
}

// Phases, in the order of rank 0's steps: from the previous phase's end (the first: from its first step's start,
// ts_ns − seconds) to its phase_end, or to its last step's end when truth has no phase_end for it.
void buildPhases(const TruthEvents& events, Truth& truth)
{
    int64_t previousEnd = 0;
    for (const TruthStep& s : truth.steps) {
        if (s.rank != events.lowestRank) continue;
        if (truth.phases.empty() || truth.phases.back().name != s.phase) {
            if (truth.phase(s.phase)) {
                truth.problems.push_back("phase " + s.phase + " comes back after another phase");
                continue;
            }
            TruthPhase p;
            p.name = s.phase;
            p.startNs =
                truth.phases.empty() ? s.endNs - static_cast<int64_t>(std::llround(s.seconds * 1e9)) : previousEnd;
            p.microSteps = s.microSteps;
            truth.phases.push_back(p);
        }
        TruthPhase& p = truth.phases.back();
        p.stepSeconds.push_back(s.seconds);
        if (s.microSteps != p.microSteps) truth.problems.push_back("phase " + p.name + ": micro_steps vary");
        if (auto it = events.phaseEnds.find(p.name); it != events.phaseEnds.end()) {
            p.endNs = it->second;
        } else {
            p.endNs = s.endNs;
            p.note = "ends at its last step (no phase_end in truth)";
        }
        previousEnd = p.endNs;
    }
}

// A job's own error output: the hang from the first NCCL error to the abort (the last line with a time).
void addHangPhase(const QDir& dir, Truth& truth)
{
    QFile stderrFile(dir.filePath(QStringLiteral("train-stderr.txt")));
    if (!stderrFile.open(QIODevice::ReadOnly | QIODevice::Text)) return;
    std::optional<int64_t> firstError, last;
    std::string who;
    static const QRegularExpression ncclError(QStringLiteral("^\\[[^]]+\\] \\S+ (\\[\\d+\\]) .*NCCL WARN"));
    while (!stderrFile.atEnd()) {
        const QString line = QString::fromUtf8(stderrFile.readLine());
        const std::optional<int64_t> t = bracketTime(line);
        if (!t) continue;
        if (const QRegularExpressionMatch m = ncclError.match(line); m.hasMatch() && !firstError) {
            firstError = t;
            who = m.captured(1).toStdString();
        }
        last = t;
    }
    if (!firstError || !last || *last <= *firstError) {
        truth.problems.push_back("truth/train-stderr.txt: no NCCL error followed by an abort");
        return;
    }
    TruthPhase hang;
    hang.name = kHangPhase;
    hang.startNs = *firstError;
    hang.endNs = *last;
    hang.note = fmt::format("truth/train-stderr.txt: from the first NCCL error (device {}) to the abort (its last "
                            "timed line)",
                            who);
    if (!truth.phases.empty() && hang.startNs < truth.phases.back().endNs)
        truth.problems.push_back("truth/train-stderr.txt: the NCCL error comes before the last step");
    truth.phases.push_back(hang);
}

} // namespace

Truth readTruth(const QString& runDir)
{
    Truth truth;
    const QDir dir(runDir + QStringLiteral("/truth"));
    const TruthEvents events = readEvents(dir, truth);
    for (const auto& [step, e] : events.checkpoints)
        truth.checkpoints.push_back(e);
    for (const auto& [step, e] : events.pauses)
        truth.hostPauses.push_back(e);
    for (const auto& [step, a] : events.asyncs)
        truth.asyncCheckpoints.push_back(a);
    buildPhases(events, truth);
    addHangPhase(dir, truth);
    if (truth.phases.empty()) truth.problems.push_back("no steps in truth");
    return truth;
}

bool copyWithoutTruth(const QString& from, const QString& to, bool top)
{
    if (!QDir().mkpath(to)) return false;
    const QDir src(from);
    for (const QFileInfo& e : src.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden)) {
        const QString target = to + QLatin1Char('/') + e.fileName();
        if (e.isDir()) {
            if (top && e.fileName() == QLatin1String("truth")) continue;
            if (!copyWithoutTruth(e.filePath(), target, false)) return false;
        } else if (!QFile::copy(e.filePath(), target)) {
            return false;
        }
    }
    return true;
}

} // namespace runlens::test
