#include "analysis/compare/run_comparison.h"

#include "analysis/phase/phase_classifier.h"
#include "analysis/store/run_database.h"

#include <QJsonArray>
#include <fmt/format.h>
#include <memory>

namespace runlens::analysis {

namespace {

Error named(const std::string& path, const Error& e)
{
    if (e.code == ErrorCode::Usage || e.code == ErrorCode::Cancelled)
        return e; // already says which run / nothing to name
    Error out = e;
    out.message = fmt::format("cannot read {}: {}", path, e.toString());
    out.where = {};
    return out;
}

bool cancelled(const CompareOptions& o)
{
    return o.cancel && o.cancel->load();
}

QJsonObject candidateJson(const CandidateComparison& v)
{
    QJsonArray findings;
    for (const auto* list : {&v.findings.gone, &v.findings.still, &v.findings.added})
        for (const FindingChange& c : *list)
            findings.append(
                QJsonObject{{QStringLiteral("status"), QString::fromLatin1(statusName(c.status))},
                            {QStringLiteral("rule"), QString::fromStdString(c.finding().rule)},
                            {QStringLiteral("character"), QString::fromStdString(findingCharacter(c.finding()))},
                            {QStringLiteral("title"), QString::fromStdString(c.finding().title)},
                            {QStringLiteral("impact_a"), c.impactA},
                            {QStringLiteral("impact_b"), c.impactB},
                            {QStringLiteral("saving_a_s"), c.savingA},
                            {QStringLiteral("saving_b_s"), c.savingB}});
    QJsonObject out{{QStringLiteral("findings"), findings}};
    if (v.flame) {
        const auto frames = [](const std::vector<FrameChange>& list) {
            QJsonArray a;
            for (const FrameChange& c : list)
                a.append(QJsonObject{{QStringLiteral("frame"), QString::fromStdString(c.label())},
                                     {QStringLiteral("share_a"), c.shareA},
                                     {QStringLiteral("share_b"), c.shareB},
                                     {QStringLiteral("self_share_a"), c.selfShareA},
                                     {QStringLiteral("self_share_b"), c.selfShareB}});
            return a;
        };
        out.insert(QStringLiteral("flame"),
                   QJsonObject{{QStringLiteral("samples_a"), static_cast<qint64>(v.flame->totalA)},
                               {QStringLiteral("samples_b"), static_cast<qint64>(v.flame->totalB)},
                               {QStringLiteral("grew"), frames(v.flame->grew)},
                               {QStringLiteral("shrank"), frames(v.flame->shrank)}});
    }
    out.insert(QStringLiteral("loss"), toJson(v.loss));
    return out;
}

} // namespace

Expected<RunComparison> compareRunFiles(const std::vector<CompareInput>& inputs, const CompareOptions& options)
{
    RunComparison out;
    for (const CompareInput& in : inputs) {
        if (cancelled(options)) return makeError(ErrorCode::Cancelled, "cancelled");
        auto db = store::RunDatabase::open(in.path, store::OpenMode::ReadOnly);
        if (!db) return named(in.path, db.error());
        auto summary = summarizeRun(**db, in.path, in.window);
        if (!summary) return named(in.path, summary.error());
        // The loss curve: over the window given, else the whole run (the start-up is where the loss falls most).
        auto curve = readLossCurve(**db, in.window.window ? store::TimeWindow{summary->fromNs, summary->toNs - 1}
                                                          : store::TimeWindow{});
        if (!curve) return named(in.path, curve.error());
        out.curves.push_back(std::move(*curve));
        out.runs.push_back(std::move(*summary));
    }
    out.rows = compareRuns(out.runs);
    if (out.runs.empty()) return out;
    RUNLENS_ASSIGN_OR_RETURN(auto classifier, PhaseClassifier::builtIn());
    const auto phases = std::make_shared<const PhaseClassifier>(std::move(classifier));
    const RunSummary& base = out.runs.front();
    const store::TimeWindow wa{base.fromNs, base.toNs - 1};
    for (size_t c = 1; c < out.runs.size(); ++c) {
        const RunSummary& cand = out.runs[c];
        const store::TimeWindow wb{cand.fromNs, cand.toNs - 1};
        CandidateComparison v;
        v.findings = compareFindings(base.findings, wa, cand.findings, wb);
        FlameQuery qa, qb;
        qa.window = wa;
        qb.window = wb;
        qa.untimed = qb.untimed = UntimedStacks::Exclude;
        FlameCompareOptions flameOptions;
        flameOptions.limit = options.flameRows;
        auto flame = compareRunFlames(base.label, qa, cand.label, qb, phases, flameOptions, options.cancel);
        if (!flame)
            return flame.error().code == ErrorCode::Cancelled ? flame.error() : named(cand.label, flame.error());
        if (flame->totalA > 0 && flame->totalB > 0) v.flame = std::move(*flame);
        v.loss = compareLoss(out.curves[0], out.curves[c]);
        out.candidates.push_back(std::move(v));
    }
    return out;
}

QJsonObject toJson(const RunComparison& comparison)
{
    QJsonArray runs, rows, candidates;
    for (size_t i = 0; i < comparison.runs.size(); ++i) {
        QJsonObject r = toJson(comparison.runs[i]);
        r.insert(QStringLiteral("mfu"), QString::fromStdString(comparison.runs[i].mfuText));
        runs.append(r);
    }
    for (const CompareRow& r : comparison.rows)
        rows.append(toJson(r));
    for (const CandidateComparison& v : comparison.candidates)
        candidates.append(candidateJson(v));
    return QJsonObject{{QStringLiteral("runs"), runs},
                       {QStringLiteral("test"), QStringLiteral("mann_whitney_u")},
                       {QStringLiteral("alpha"), kCompareAlpha},
                       {QStringLiteral("rows"), rows},
                       {QStringLiteral("candidates"), candidates}};
}

} // namespace runlens::analysis
