#include "analysis/rules/finding.h"

#include <QJsonArray>

namespace runlens::analysis {

QJsonObject toJson(const Finding& f)
{
    auto strings = [](const std::vector<std::string>& v) {
        QJsonArray a;
        for (const std::string& s : v)
            a.append(QString::fromStdString(s));
        return a;
    };
    QJsonArray episodes;
    for (const FindingEpisode& e : f.episodes)
        episodes.append(QJsonObject{{QStringLiteral("start_ns"), static_cast<qint64>(e.startNs)},
                                    {QStringLiteral("end_ns"), static_cast<qint64>(e.endNs)}});
    return QJsonObject{{QStringLiteral("rule"), QString::fromStdString(f.rule)},
                       {QStringLiteral("severity"), QString::fromStdString(f.severity)},
                       {QStringLiteral("confidence"), f.confidence},
                       {QStringLiteral("primary"), f.primary},
                       {QStringLiteral("title"), QString::fromStdString(f.title)},
                       {QStringLiteral("nodes"), strings(f.nodes)},
                       {QStringLiteral("gpus"), strings(f.gpus)},
                       {QStringLiteral("episodes"), episodes},
                       {QStringLiteral("impact"), f.impact},
                       {QStringLiteral("saving_s"), f.savingS},
                       {QStringLiteral("evidence"), f.evidence},
                       {QStringLiteral("recommendation"), QString::fromStdString(f.recommendation)}};
}

Finding findingFromJson(const QJsonObject& o)
{
    auto strings = [&](const char* key) {
        std::vector<std::string> v;
        for (const QJsonValue& x : o.value(QLatin1String(key)).toArray())
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
    for (const QJsonValue& e : o.value(QStringLiteral("episodes")).toArray())
        f.episodes.push_back({e.toObject().value(QStringLiteral("start_ns")).toInteger(),
                              e.toObject().value(QStringLiteral("end_ns")).toInteger()});
    f.impact = o.value(QStringLiteral("impact")).toDouble();
    f.savingS = o.value(QStringLiteral("saving_s")).toDouble();
    f.evidence = o.value(QStringLiteral("evidence")).toObject();
    f.recommendation = o.value(QStringLiteral("recommendation")).toString().toStdString();
    return f;
}

} // namespace runlens::analysis
