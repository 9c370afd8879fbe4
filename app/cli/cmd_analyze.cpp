#include "analysis/rules/run_analysis.h"
#include "analysis/store/run_database.h"
#include "app/cli/cli.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <fmt/format.h>

namespace runlens::app {

namespace {

constexpr const char* kSummary = R"(Run the diagnosis rules over a run and print what they found.

Each finding has a rule, a severity (info, warn, critical), a confidence, the nodes and GPUs it concerns, its
episodes, its impact (the fraction of the wall time it costs) and the seconds removing it would save, the
evidence behind it and what to change. --json prints one object: {"run", "rules", "params", "findings": [...]},
each finding with rule, severity, confidence, primary, title, nodes, gpus, episodes [{start_ns, end_ns}],
impact, saving_s, evidence and recommendation. The exit code is 0 whether or not something was found.)";

std::string clock(int64_t ns)
{
    const int64_t s = ns / 1'000'000'000;
    return fmt::format("{:02}:{:02}:{:02}", s / 3600 % 24, s / 60 % 60, s % 60);
}

} // namespace

int cmdAnalyze(const QStringList& args)
{
    QCommandLineParser parser;
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print the findings as one JSON object."));
    const QCommandLineOption param(QStringLiteral("param"),
                                   QStringLiteral("Override a rule parameter, e.g. ckpt_gap.overlap=0.6 (repeat)."),
                                   QStringLiteral("NAME=VALUE"));
    const QCommandLineOption list(QStringLiteral("list-params"), QStringLiteral("List the rule parameters and exit."));
    for (const auto* o : {&json, &param, &list})
        parser.addOption(*o);
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."), QStringLiteral("RUN"));
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    analysis::RuleParams params = analysis::RuleParams::defaults();
    if (parser.isSet(list)) {
        for (const analysis::RuleParam& p : params.all())
            fmt::print("{:<32} {:>12g} {:<8} {}\n", p.name, p.defaultValue, p.unit, p.doc);
        return kExitOk;
    }
    for (const QString& assignment : parser.values(param))
        if (Status s = params.set(assignment.toStdString()); !s) {
            printError(s.error().message);
            return kExitUsage;
        }
    if (parser.positionalArguments().size() != 1) {
        printError("analyze needs exactly one RUN (see runlens analyze --help)");
        return kExitUsage;
    }
    const std::string path = parser.positionalArguments().front().toStdString();
    auto db = store::RunDatabase::open(path, store::OpenMode::ReadOnly);
    if (!db) {
        printError(db.error().toString());
        return kExitFailure;
    }
    auto analysis = analysis::analyzeRun(**db, params);
    if (!analysis) {
        printError(analysis.error().toString());
        return kExitFailure;
    }
    const std::vector<analysis::Finding>& findings = analysis->findings;

    if (parser.isSet(json)) {
        QJsonArray items, rules;
        for (const auto& f : findings)
            items.append(analysis::toJson(f));
        for (const auto& r : analysis->rules)
            rules.append(QString::fromStdString(r));
        QJsonObject values;
        for (const analysis::RuleParam& p : params.all())
            values.insert(QString::fromStdString(p.name), p.value);
        const QJsonObject out{{QStringLiteral("run"), QString::fromStdString(path)},
                              {QStringLiteral("rules"), rules},
                              {QStringLiteral("params"), values},
                              {QStringLiteral("findings"), items}};
        fmt::print("{}", QJsonDocument(out).toJson(QJsonDocument::Indented).toStdString());
        return kExitOk;
    }
    fmt::print("Run {}: {:.0f} s of metrics, {} GPUs on {} nodes; rules run: {}\n", path, analysis->wallS, analysis->gpus,
               analysis->nodes, fmt::format("{}", fmt::join(analysis->rules, ", ")));
    for (const std::string& m : analysis->missing)
        fmt::print("Missing: {}\n", m);
    fmt::print("\n");
    if (findings.empty()) {
        fmt::print("No findings.\n");
        return kExitOk;
    }
    fmt::print("{:<9} {:<11} {:>7} {:>9} {:>5}  {}\n", "SEVERITY", "RULE", "IMPACT", "SAVING", "CONF", "FINDING");
    for (const auto& f : findings)
        fmt::print("{:<9} {:<11} {:>6.1f}% {:>8.1f}s {:>5.2f}  {}{}\n", f.severity, f.rule, 100 * f.impact, f.savingS,
                   f.confidence, f.primary ? "" : "(contributing) ", f.title);
    for (const auto& f : findings) {
        fmt::print("\n{} — {}\n", f.rule, f.title);
        fmt::print("  where: nodes {}; GPUs {}\n", fmt::format("{}", fmt::join(f.nodes, ", ")),
                   f.gpus.empty() ? std::string("-") : fmt::format("{}", fmt::join(f.gpus, ", ")));
        std::vector<std::string> when;
        for (const auto& e : f.episodes)
            when.push_back(fmt::format("{}–{} UTC ({:.1f} s)", clock(e.startNs), clock(e.endNs),
                                       static_cast<double>(e.endNs - e.startNs) / 1e9));
        fmt::print("  when: {}\n", fmt::format("{}", fmt::join(when, "; ")));
        // The evidence's numbers (times as clock times); lists are in --json.
        for (auto it = f.evidence.begin(); it != f.evidence.end(); ++it) {
            const std::string key = it.key().toStdString();
            if (it.value().isBool()) fmt::print("  {}: {}\n", key, it.value().toBool() ? "yes" : "no");
            else if (it.value().isDouble() && key.ends_with("_ns"))
                fmt::print("  {}: {} UTC\n", key.substr(0, key.size() - 3), clock(it.value().toInteger()));
            else if (it.value().isDouble()) fmt::print("  {}: {:.4g}\n", key, it.value().toDouble());
        }
        fmt::print("  what to change: {}\n", f.recommendation);
    }
    return kExitOk;
}

} // namespace runlens::app
