#include "analysis/mfu/mfu.h"
#include "analysis/rules/run_analysis.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_settings.h"
#include "app/cli/cli.h"
#include "app/cli/mfu_args.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

namespace runlens::app {

namespace {

constexpr const char* kSummary = R"(Run the diagnosis rules over a run and print what they found.

Each finding has a rule, a severity (info, warn, critical), a confidence, the nodes and GPUs it concerns, its
episodes, its impact (the fraction of the wall time it costs) and the seconds removing it would save, the
evidence behind it and what to change. --json prints one object: {"run", "rules", "params", "findings": [...]},
each finding with rule, severity, confidence, primary, title, nodes, gpus, episodes [{start_ns, end_ns}],
impact, saving_s, evidence and recommendation; "mfu" is the model FLOPs utilization with how it was worked out
(the model and GPU options apply to this analysis; with --store they are kept in the run).
Nothing is written to the run unless --store is given: then the findings replace the run's previous ones (the
window and reports show them), with the parameters used (--param values are reused by the next analyze of the run
until --reset-params) and the model and GPU options. The exit code is 0 whether or not something was found.)";

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
    const QCommandLineOption keepOption(
        QStringLiteral("store"),
        QStringLiteral("Keep the findings in the run (they replace its previous ones, with the "
                       "parameters and model options used). Without it nothing is written."));
    const QCommandLineOption noStore(QStringLiteral("no-store"),
                                     QStringLiteral("Write nothing (the default; kept for scripts)."));
    const QCommandLineOption reset(
        QStringLiteral("reset-params"),
        QStringLiteral("Forget the parameters set for this run by earlier --param (start from "
                       "the defaults)."));
    for (const auto* o : {&json, &param, &list, &keepOption, &noStore, &reset})
        parser.addOption(*o);
    for (const QCommandLineOption& o : mfuOptions(MfuKept::WithStore))
        parser.addOption(o);
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    analysis::RuleParams params = analysis::RuleParams::defaults();
    if (parser.isSet(list)) {
        for (const analysis::RuleParam& p : params.all())
            fmt::print("{:<32} {:>12g} {:<8} {}\n", p.name, p.defaultValue, p.unit, p.doc);
        return kExitOk;
    }
    for (const QString& assignment : parser.values(param)) // checked before the run is opened
        if (Status s = analysis::RuleParams::defaults().set(assignment.toStdString()); !s) {
            printError(s.error().message);
            return kExitUsage;
        }
    auto mfuChanges = mfuSettingChanges(parser);
    if (!mfuChanges) {
        printError(mfuChanges.error().message);
        return kExitUsage;
    }
    if (parser.positionalArguments().size() != 1) {
        printError("analyze needs exactly one RUN (see runlens analyze --help)");
        return kExitUsage;
    }
    const std::string path = parser.positionalArguments().front().toStdString();
    if (parser.isSet(keepOption) && parser.isSet(noStore)) {
        printError("--store and --no-store: one or the other");
        return kExitUsage;
    }
    // Read-write only to keep the findings (--store); a run we may not write is analysed all the same.
    const bool keep = parser.isSet(keepOption);
    auto db = store::RunDatabase::open(path, keep ? store::OpenMode::ReadWrite : store::OpenMode::ReadOnly);
    const bool canStore = keep && static_cast<bool>(db);
    std::string whyNotKept;
    if (!db && keep) {
        whyNotKept = db.error().message;
        fmt::print(stderr, "runlens: cannot write {} ({}); analysing it read-only\n", path, whyNotKept);
        db = store::RunDatabase::open(path, store::OpenMode::ReadOnly);
    }
    if (!db) {
        printError(db.error().toString());
        return kExitFailure;
    }
    // The parameters set for this run earlier, then this command's.
    std::map<std::string, double> overrides;
    if (!parser.isSet(reset)) {
        auto stored = analysis::loadStoredAnalysis(**db);
        if (!stored) {
            printError(stored.error().toString());
            return kExitFailure;
        }
        if (*stored) overrides = (*stored)->overrides;
    }
    for (const QString& assignment : parser.values(param)) {
        const std::string a = assignment.toStdString();
        if (Status s = params.set(a); !s) {
            printError(s.error().message);
            return kExitUsage;
        }
        const std::string name = a.substr(0, a.find('='));
        overrides[name] = params.get(name);
    }
    for (const auto& [name, value] : overrides)
        (void)params.set(fmt::format("{}={}", name, value)); // known names: checked when they were set
    auto analysis = analysis::analyzeRun(**db, params);
    if (!analysis) {
        printError(analysis.error().toString());
        return kExitFailure;
    }
    const std::vector<analysis::Finding>& findings = analysis->findings;
    // The MFU with the run's settings and this command's (kept with the findings).
    auto settings = store::loadRunSettings(**db);
    if (!settings) {
        printError(settings.error().toString());
        return kExitFailure;
    }
    for (const auto& [key, value] : *mfuChanges) {
        if (value)
            (*settings)[key] = *value;
        else
            settings->erase(key);
    }
    auto mfu = analysis::runMfu(**db, analysis::MfuSettings::fromRunSettings(*settings));
    if (!mfu) {
        printError(mfu.error().toString());
        return kExitFailure;
    }
    if (canStore && !parser.isSet(json))
        if (Status st = keepMfuSettings(**db, *mfuChanges); !st) {
            printError(st.error().toString());
            return kExitFailure;
        }
    if (canStore && parser.isSet(json) && !mfuChanges->empty())
        if (Status st = store::storeRunSettings(**db, *mfuChanges); !st) {
            printError(st.error().toString());
            return kExitFailure;
        }
    std::string stored;
    if (canStore) {
        if (Status st = analysis::storeAnalysis(**db, *analysis, overrides); !st) {
            printError(st.error().toString());
            return kExitFailure;
        }
        stored = "kept in the run";
    } else {
        stored = keep ? "not kept (" + whyNotKept + ")" : "not kept (--store keeps them)";
    }
    std::vector<std::string> setHere;
    for (const auto& [name, value] : overrides)
        setHere.push_back(fmt::format("{}={}", name, value));

    if (parser.isSet(json)) {
        QJsonArray items, rules;
        for (const auto& f : findings)
            items.append(analysis::toJson(f));
        for (const auto& r : analysis->rules)
            rules.append(QString::fromStdString(r));
        QJsonObject values;
        for (const analysis::RuleParam& p : params.all())
            values.insert(QString::fromStdString(p.name), p.value);
        QJsonObject set;
        for (const auto& [name, value] : overrides)
            set.insert(QString::fromStdString(name), value);
        QJsonArray budgets;
        for (const analysis::TimeBudget& b : analysis->budgets)
            budgets.append(analysis::toJson(b));
        const QJsonObject out{{QStringLiteral("run"), QString::fromStdString(path)},
                              {QStringLiteral("time_budget"), budgets},
                              {QStringLiteral("overrides"), set},
                              {QStringLiteral("stored"), canStore},
                              {QStringLiteral("rules"), rules},
                              {QStringLiteral("params"), values},
                              {QStringLiteral("mfu"), analysis::toJson(*mfu)},
                              {QStringLiteral("findings"), items}};
        fmt::print("{}", QJsonDocument(out).toJson(QJsonDocument::Indented).toStdString());
        return kExitOk;
    }
    fmt::print("Run {}: {:.0f} s of metrics, {} GPUs on {} nodes; rules run: {}\n", path, analysis->wallS,
               analysis->gpus, analysis->nodes, fmt::format("{}", fmt::join(analysis->rules, ", ")));
    for (const std::string& m : analysis->missing)
        fmt::print("Missing: {}\n", m);
    for (const analysis::StepTimes& st : analysis->steps)
        fmt::print("Steps on {}: {} × {:.3g} s (median), from {}\n", st.node, st.startsNs.size(), st.medianStepS,
                   st.source == "trainer_log"      ? "the trainer log"
                   : st.source == "sm_periodicity" ? "the periodicity of SM activity"
                                                   : "the periodicity of GPU utilization");
    fmt::print("{}\n", analysis::mfuLine(*mfu));
    fmt::print("Findings {}; parameters set for this run: {}\n", stored,
               setHere.empty() ? std::string("none (defaults)") : fmt::format("{}", fmt::join(setHere, ", ")));
    fmt::print("\n");
    if (!analysis->budgets.empty()) {
        // The goodput waterfall: where each node's wall time went.
        fmt::print("Where the time went (% of the wall time; waits are the findings' estimates):\n");
        fmt::print("  {:<12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "NODE", "COMPUTE", "COMM", "INPUT", "CKPT",
                   "HANG", "IDLE", "STARTUP");
        for (const analysis::TimeBudget& b : analysis->budgets) {
            const auto pct = [&](double s) { return b.wallS > 0 ? 100 * s / b.wallS : 0.0; };
            fmt::print("  {:<12} {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}%\n", b.node,
                       pct(b.computeS), pct(b.commWaitS), pct(b.inputS), pct(b.checkpointS), pct(b.hangS), pct(b.idleS),
                       pct(b.startupS));
        }
        fmt::print("\n");
    }
    if (findings.empty()) {
        fmt::print("No findings.\n");
        return kExitOk;
    }
    fmt::print("{:<9} {:<11} {:>7} {:>9} {:>5}  {}\n", "SEVERITY", "RULE", "IMPACT", "SAVING", "CONF", "FINDING");
    for (const auto& f : findings)
        fmt::print("{:<9} {:<11} {:>6.1f}% {:>8.1f}s {:>5.2f}  {}{}\n", f.severity, f.rule, 100 * f.impact, f.savingS,
                   f.confidence, analysis::rolePrefix(f), f.title);
    for (const auto& f : findings) {
        fmt::print("\n{} — {}\n", f.rule, f.title);
        std::string gpus = f.gpus.empty() ? std::string("-") : fmt::format("{}", fmt::join(f.gpus, ", "));
        if (f.gpus.size() > 8) gpus = fmt::format("{} GPUs ({} … {})", f.gpus.size(), f.gpus.front(), f.gpus.back());
        fmt::print("  where: nodes {}; GPUs {}\n", fmt::format("{}", fmt::join(f.nodes, ", ")), gpus);
        std::vector<std::string> when;
        for (const auto& e : f.episodes)
            when.push_back(fmt::format("{}–{} UTC ({:.1f} s)", clock(e.startNs), clock(e.endNs),
                                       static_cast<double>(e.endNs - e.startNs) / 1e9));
        fmt::print("  when: {}\n", fmt::format("{}", fmt::join(when, "; ")));
        // The evidence's numbers (times as clock times); lists are in --json.
        for (auto it = f.evidence.begin(); it != f.evidence.end(); ++it) {
            const std::string key = it.key().toStdString();
            if (it.value().isBool())
                fmt::print("  {}: {}\n", key, it.value().toBool() ? "yes" : "no");
            else if (it.value().isDouble() && key.ends_with("_ns"))
                fmt::print("  {}: {} UTC\n", key.substr(0, key.size() - 3), clock(it.value().toInteger()));
            else if (it.value().isDouble() && std::isfinite(it.value().toDouble()))
                fmt::print("  {}: {:.4g}\n", key, it.value().toDouble());
            else if (it.value().isDouble() || it.value().isNull())
                continue; // not known: said elsewhere
            else if (it.value().isString())
                fmt::print("  {}: {}\n", key, it.value().toString().toStdString());
            else if (it.value().isObject()) { // shares, as percentages
                std::vector<std::string> items;
                const QJsonObject o = it.value().toObject();
                for (auto x = o.begin(); x != o.end(); ++x)
                    if (x.value().isDouble())
                        items.push_back(fmt::format("{} {:.0f} %", x.key().toStdString(), 100 * x.value().toDouble()));
                if (!items.empty()) fmt::print("  {}: {}\n", key, fmt::format("{}", fmt::join(items, ", ")));
            } else if (it.value().isArray() && key != "per_node") {
                // Frames and kernels with their shares or times.
                std::vector<std::string> items;
                for (const QJsonValue& v : it.value().toArray()) {
                    const QJsonObject o = v.toObject();
                    const QString name = o.contains(QStringLiteral("frame"))
                                             ? o.value(QStringLiteral("frame")).toString()
                                             : o.value(QStringLiteral("name")).toString();
                    if (name.isEmpty()) continue;
                    if (o.contains(QStringLiteral("share")))
                        items.push_back(fmt::format("{} {:.0f} %", name.toStdString(),
                                                    100 * o.value(QStringLiteral("share")).toDouble()));
                    else if (o.contains(QStringLiteral("self_share")))
                        items.push_back(fmt::format("{} {:.0f} % self", name.toStdString(),
                                                    100 * o.value(QStringLiteral("self_share")).toDouble()));
                    else if (o.contains(QStringLiteral("total_s")))
                        items.push_back(fmt::format("{} {:.2f} s", name.toStdString(),
                                                    o.value(QStringLiteral("total_s")).toDouble()));
                    else
                        items.push_back(name.toStdString());
                }
                if (!items.empty()) fmt::print("  {}: {}\n", key, fmt::format("{}", fmt::join(items, "; ")));
            }
        }
        fmt::print("  what to change: {}\n", f.recommendation);
    }
    return kExitOk;
}

} // namespace runlens::app
