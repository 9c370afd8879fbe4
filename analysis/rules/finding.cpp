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

} // namespace runlens::analysis
