#include "analysis/rules/finding.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace runlens::analysis {

namespace {

// A mixed finding's prefix names its largest causes, at most this many, each with at least this share of the busy
// samples (smaller ones are noise to the reader).
constexpr size_t kMixedCausesShown = 3;
constexpr double kMixedCauseMinShare = 0.05;

// A finding's own cause among its evidence's cause_shares (the stack samples in its episodes), or "".
std::string ownCause(const Finding& f)
{
    if (f.rule == "COMM_BOUND") return "communication";
    if (f.rule == "INPUT_STALL") {
        const QString sub = f.evidence.value(QStringLiteral("sub_cause")).toString();
        return sub == QLatin1String("host_compute") || sub == QLatin1String("cpu_bound") ? "host_compute" : "input";
    }
    return {};
}

} // namespace

bool stacksShowOtherCause(const Finding& f)
{
    const std::string own = ownCause(f);
    const QJsonObject c = f.evidence.value(QStringLiteral("cause_shares")).toObject();
    if (own.empty() || c.isEmpty()) return false;
    const double mine = c.value(QString::fromStdString(own)).toDouble();
    double other = 0;
    for (auto it = c.begin(); it != c.end(); ++it)
        if (it.key().toStdString() != own) other = std::max(other, it.value().toDouble());
    return mine < kOwnCauseMinShare && other > mine;
}

std::string roleOf(const Finding& f)
{
    if (!f.causedBy.empty()) return "symptom";
    if (f.primary && !stacksShowOtherCause(f)) return "primary";
    return f.rule == "LOW_SM_EFF" ? "contributing" : "mixed";
}

std::string rolePrefix(const Finding& f)
{
    const std::string role = roleOf(f);
    if (role == "primary") return {};
    if (role == "contributing") return "(contributing) ";
    if (role == "symptom") return "(symptom of " + f.causedBy + ") ";
    std::vector<std::pair<double, std::string>> shares;
    const QJsonObject c = f.evidence.value(QStringLiteral("cause_shares")).toObject();
    for (auto it = c.begin(); it != c.end(); ++it)
        if (it.value().toDouble() >= kMixedCauseMinShare)
            shares.emplace_back(it.value().toDouble(), it.key().toStdString());
    std::sort(shares.rbegin(), shares.rend());
    std::string out = "(mixed";
    for (size_t i = 0; i < shares.size() && i < kMixedCausesShown; ++i)
        out += fmt::format("{}{} {:.0f} %", i == 0 ? ": " : ", ", shares[i].second, 100 * shares[i].first);
    return out + ") ";
}

QJsonArray topAmounts(const std::map<std::string, int64_t>& amounts, size_t count, const QString& nameKey,
                      const QString& valueKey, double per)
{
    std::vector<std::pair<int64_t, std::string>> ranked;
    ranked.reserve(amounts.size());
    for (const auto& [name, amount] : amounts)
        ranked.emplace_back(amount, name);
    std::sort(ranked.rbegin(), ranked.rend());
    QJsonArray out;
    for (size_t k = 0; k < ranked.size() && k < count; ++k)
        out.append(QJsonObject{{nameKey, QString::fromStdString(ranked[k].second)},
                               {valueKey, static_cast<double>(ranked[k].first) / per}});
    return out;
}

QJsonObject toJson(const Finding& f)
{
    auto strings = [](const std::vector<std::string>& v) {
        QJsonArray a;
        for (const std::string& s : v)
            a.append(QString::fromStdString(s));
        return a;
    };
    QJsonArray episodes;
    for (const FindingEpisode& e : f.episodes) {
        QJsonObject o{{QStringLiteral("start_ns"), static_cast<qint64>(e.startNs)},
                      {QStringLiteral("end_ns"), static_cast<qint64>(e.endNs)}};
        if (e.savingS >= 0) o.insert(QStringLiteral("saving_s"), e.savingS);
        episodes.append(o);
    }
    QJsonObject out{{QStringLiteral("rule"), QString::fromStdString(f.rule)},
                    {QStringLiteral("severity"), QString::fromStdString(f.severity)},
                    {QStringLiteral("confidence"), f.confidence},
                    {QStringLiteral("primary"), f.primary},
                    {QStringLiteral("role"), QString::fromStdString(roleOf(f))},
                    {QStringLiteral("title"), QString::fromStdString(f.title)},
                    {QStringLiteral("nodes"), strings(f.nodes)},
                    {QStringLiteral("gpus"), strings(f.gpus)},
                    {QStringLiteral("episodes"), episodes},
                    {QStringLiteral("impact"), f.impact},
                    {QStringLiteral("saving_s"), f.savingS},
                    {QStringLiteral("evidence"), f.evidence},
                    {QStringLiteral("recommendation"), QString::fromStdString(f.recommendation)}};
    if (!f.causedBy.empty()) out.insert(QStringLiteral("caused_by"), QString::fromStdString(f.causedBy));
    return out;
}

Finding findingFromJson(const QJsonObject& o)
{
    auto strings = [&](const char* key) {
        std::vector<std::string> v;
        for (const auto& x : o.value(QLatin1String(key)).toArray())
            v.push_back(x.toString().toStdString());
        return v;
    };
    Finding f;
    f.rule = o.value(QStringLiteral("rule")).toString().toStdString();
    f.severity = o.value(QStringLiteral("severity")).toString().toStdString();
    f.confidence = o.value(QStringLiteral("confidence")).toDouble();
    f.primary = o.value(QStringLiteral("primary")).toBool(true);
    f.title = o.value(QStringLiteral("title")).toString().toStdString();
    f.nodes = strings("nodes");
    f.gpus = strings("gpus");
    for (const auto& e : o.value(QStringLiteral("episodes")).toArray())
        f.episodes.push_back({e.toObject().value(QStringLiteral("start_ns")).toInteger(),
                              e.toObject().value(QStringLiteral("end_ns")).toInteger(),
                              e.toObject().value(QStringLiteral("saving_s")).toDouble(-1)});
    f.causedBy = o.value(QStringLiteral("caused_by")).toString().toStdString();
    f.impact = o.value(QStringLiteral("impact")).toDouble();
    f.savingS = o.value(QStringLiteral("saving_s")).toDouble();
    f.evidence = o.value(QStringLiteral("evidence")).toObject();
    f.recommendation = o.value(QStringLiteral("recommendation")).toString().toStdString();
    return f;
}

EpisodePeriod periodOf(const std::vector<FindingEpisode>& episodes)
{
    EpisodePeriod out;
    if (episodes.size() < 2) return out;
    std::vector<double> intervals;
    for (size_t k = 1; k < episodes.size(); ++k)
        intervals.push_back(static_cast<double>(episodes[k].startNs - episodes[k - 1].startNs) / 1e9);
    double sum = 0;
    for (double x : intervals)
        sum += x;
    out.periodS = sum / static_cast<double>(intervals.size());
    double var = 0;
    for (double x : intervals)
        var += (x - out.periodS) * (x - out.periodS);
    out.cv = out.periodS > 0 ? std::sqrt(var / static_cast<double>(intervals.size())) / out.periodS : 0;
    return out;
}

double savingWithin(const Finding& f, int64_t fromNs, int64_t toNs)
{
    double total = 0, known = 0, unknownS = 0, unknownInS = 0;
    for (const FindingEpisode& e : f.episodes) {
        const double overlapS =
            static_cast<double>(std::max<int64_t>(0, std::min(e.endNs, toNs) - std::max(e.startNs, fromNs))) / 1e9;
        const double lengthS = static_cast<double>(e.endNs - e.startNs) / 1e9;
        if (e.savingS >= 0) {
            known += e.savingS;
            if (lengthS > 0) total += e.savingS * overlapS / lengthS;
        } else {
            unknownS += lengthS;
            unknownInS += overlapS;
        }
    }
    if (unknownS > 0) total += std::max(0.0, f.savingS - known) * unknownInS / unknownS;
    return total;
}

} // namespace runlens::analysis
