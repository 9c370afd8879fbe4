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

void addAnalyzeOptions(QCommandLineParser& parser)
{
    parser.addOption({QStringLiteral("json"), QStringLiteral("Print the findings as one JSON object.")});
    parser.addOption({QStringLiteral("param"),
                      QStringLiteral("Override a rule parameter, e.g. ckpt_gap.overlap=0.6 (repeat)."),
                      QStringLiteral("NAME=VALUE")});
    parser.addOption({QStringLiteral("list-params"), QStringLiteral("List the rule parameters and exit.")});
    parser.addOption({QStringLiteral("store"),
                      QStringLiteral("Keep the findings in the run (they replace its previous ones, with the "
                                     "parameters and model options used). Without it nothing is written.")});
    parser.addOption({QStringLiteral("no-store"), QStringLiteral("Write nothing (the default; kept for scripts).")});
    parser.addOption({QStringLiteral("reset-params"),
                      QStringLiteral("Forget the parameters set for this run by earlier --param (start from "
                                     "the defaults).")});
    addMfuOptions(parser, MfuKept::WithStore);
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
}

using SettingChanges = std::map<std::string, std::optional<std::string>>;

// What the command line asks for, checked before the run is opened.
struct AnalyzeRequest
{
    std::string path;
    std::vector<std::string> assignments; // --param NAME=VALUE, each known and a number
    SettingChanges mfuChanges;
    bool keep = false;  // --store
    bool json = false;  // --json
    bool reset = false; // --reset-params
};

Expected<AnalyzeRequest> readAnalyzeRequest(const QCommandLineParser& parser)
{
    AnalyzeRequest r;
    for (const QString& assignment : parser.values(QStringLiteral("param"))) {
        r.assignments.push_back(assignment.toStdString());
        RUNLENS_TRY(analysis::RuleParams::defaults().set(r.assignments.back()));
    }
    RUNLENS_ASSIGN_OR_RETURN(r.mfuChanges, mfuSettingChanges(parser));
    if (parser.positionalArguments().size() != 1)
        return makeError(ErrorCode::Usage, "analyze needs exactly one RUN (see runlens analyze --help)");
    r.path = parser.positionalArguments().front().toStdString();
    r.keep = parser.isSet(QStringLiteral("store"));
    if (r.keep && parser.isSet(QStringLiteral("no-store")))
        return makeError(ErrorCode::Usage, "--store and --no-store: one or the other");
    r.json = parser.isSet(QStringLiteral("json"));
    r.reset = parser.isSet(QStringLiteral("reset-params"));
    return r;
}

// What the analysis gave, with where it was kept.
struct AnalyzeResult
{
    analysis::RunAnalysis analysis;
    analysis::RuleParams params = analysis::RuleParams::defaults();
    std::map<std::string, double> overrides; // the parameters set for this run: earlier ones, then this command's
    analysis::Mfu mfu;
    bool stored = false;
    std::string storedText; // "kept in the run", or why not
};

// Opens the run read-write only to keep the findings (--store); a run we may not write is analysed all the same.
Expected<std::unique_ptr<store::RunDatabase>> openForAnalysis(const AnalyzeRequest& r, AnalyzeResult& result)
{
    auto db = store::RunDatabase::open(r.path, r.keep ? store::OpenMode::ReadWrite : store::OpenMode::ReadOnly);
    result.stored = r.keep && static_cast<bool>(db);
    if (result.stored) {
        result.storedText = "kept in the run";
    } else if (r.keep) {
        const std::string whyNotKept = db.error().message;
        fmt::print(stderr, "runlens: cannot write {} ({}); analysing it read-only\n", r.path, whyNotKept);
        result.storedText = "not kept (" + whyNotKept + ")";
        db = store::RunDatabase::open(r.path, store::OpenMode::ReadOnly);
    } else {
        result.storedText = "not kept (--store keeps them)";
    }
    return db;
}

Status applyOverrides(store::RunDatabase& db, const AnalyzeRequest& r, AnalyzeResult& result)
{
    if (!r.reset) {
        RUNLENS_ASSIGN_OR_RETURN(auto stored, analysis::loadStoredAnalysis(db));
        if (stored) result.overrides = stored->overrides;
    }
    for (const std::string& a : r.assignments) {
        RUNLENS_TRY(result.params.set(a));
        const std::string name = a.substr(0, a.find('='));
        result.overrides[name] = result.params.get(name);
    }
    for (const auto& [name, value] : result.overrides)
        (void)result.params.set(fmt::format("{}={}", name, value)); // known names: checked when they were set
    return okStatus();
}

// The MFU with the run's settings and this command's (kept with the findings).
Expected<analysis::Mfu> mfuWithChanges(store::RunDatabase& db, const SettingChanges& changes)
{
    RUNLENS_ASSIGN_OR_RETURN(auto settings, store::loadRunSettings(db));
    for (const auto& [key, value] : changes) {
        if (value)
            settings[key] = *value;
        else
            settings.erase(key);
    }
    return analysis::runMfu(db, analysis::MfuSettings::fromRunSettings(settings));
}

Expected<AnalyzeResult> runAnalyze(const AnalyzeRequest& r)
{
    AnalyzeResult result;
    RUNLENS_ASSIGN_OR_RETURN(auto db, openForAnalysis(r, result));
    RUNLENS_TRY(applyOverrides(*db, r, result));
    RUNLENS_ASSIGN_OR_RETURN(result.analysis, analysis::analyzeRun(*db, result.params));
    RUNLENS_ASSIGN_OR_RETURN(result.mfu, mfuWithChanges(*db, r.mfuChanges));
    if (result.stored && !r.json) RUNLENS_TRY(keepMfuSettings(*db, r.mfuChanges));
    if (result.stored && r.json && !r.mfuChanges.empty()) RUNLENS_TRY(store::storeRunSettings(*db, r.mfuChanges));
    if (result.stored) RUNLENS_TRY(analysis::storeAnalysis(*db, result.analysis, result.overrides));
    return result;
}

void printJson(const std::string& path, const AnalyzeResult& r)
{
    QJsonArray items, rules;
    for (const auto& f : r.analysis.findings)
        items.append(analysis::toJson(f));
    for (const auto& rule : r.analysis.rules)
        rules.append(QString::fromStdString(rule));
    QJsonObject values;
    for (const analysis::RuleParam& p : r.params.all())
        values.insert(QString::fromStdString(p.name), p.value);
    QJsonObject set;
    for (const auto& [name, value] : r.overrides)
        set.insert(QString::fromStdString(name), value);
    QJsonArray budgets;
    for (const analysis::TimeBudget& b : r.analysis.budgets)
        budgets.append(analysis::toJson(b));
    const QJsonObject out{{QStringLiteral("run"), QString::fromStdString(path)},
                          {QStringLiteral("time_budget"), budgets},
                          {QStringLiteral("overrides"), set},
                          {QStringLiteral("stored"), r.stored},
                          {QStringLiteral("rules"), rules},
                          {QStringLiteral("params"), values},
                          {QStringLiteral("mfu"), analysis::toJson(r.mfu)},
                          {QStringLiteral("findings"), items}};
    fmt::print("{}", QJsonDocument(out).toJson(QJsonDocument::Indented).toStdString());
}

void printSummary(const std::string& path, const AnalyzeResult& r)
{
    const analysis::RunAnalysis& a = r.analysis;
    fmt::print("Run {}: {:.0f} s of metrics, {} GPUs on {} nodes; rules run: {}\n", path, a.wallS, a.gpus, a.nodes,
               fmt::format("{}", fmt::join(a.rules, ", ")));
    for (const std::string& m : a.missing)
        fmt::print("Missing: {}\n", m);
    for (const analysis::StepTimes& st : a.steps)
        fmt::print("Steps on {}: {} × {:.3g} s (median), from {}\n", st.node, st.startsNs.size(), st.medianStepS,
                   st.source == "trainer_log"      ? "the trainer log"
                   : st.source == "sm_periodicity" ? "the periodicity of SM activity"
                                                   : "the periodicity of GPU utilization");
    fmt::print("{}\n", analysis::mfuLine(r.mfu));
    std::vector<std::string> setHere;
    setHere.reserve(r.overrides.size());
    for (const auto& [name, value] : r.overrides)
        setHere.push_back(fmt::format("{}={}", name, value));
    fmt::print("Findings {}; parameters set for this run: {}\n", r.storedText,
               setHere.empty() ? std::string("none (defaults)") : fmt::format("{}", fmt::join(setHere, ", ")));
    fmt::print("\n");
}

// The goodput waterfall: where each node's wall time went.
void printBudgets(const std::vector<analysis::TimeBudget>& budgets)
{
    if (budgets.empty()) return;
    fmt::print("Where the time went (% of the wall time; waits are the findings' estimates):\n");
    fmt::print("  {:<12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "NODE", "COMPUTE", "COMM", "INPUT", "CKPT",
               "HANG", "IDLE", "STARTUP");
    for (const analysis::TimeBudget& b : budgets) {
        const auto pct = [&](double s) { return b.wallS > 0 ? 100 * s / b.wallS : 0.0; };
        fmt::print("  {:<12} {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}%\n", b.node,
                   pct(b.computeS), pct(b.commWaitS), pct(b.inputS), pct(b.checkpointS), pct(b.hangS), pct(b.idleS),
                   pct(b.startupS));
    }
    fmt::print("\n");
}

// Frames and kernels of an evidence list with their shares or times.
std::vector<std::string> listItems(const QJsonArray& list)
{
    std::vector<std::string> items;
    for (const auto& v : list) {
        const QJsonObject o = v.toObject();
        const QString name = o.contains(QStringLiteral("frame")) ? o.value(QStringLiteral("frame")).toString()
                                                                 : o.value(QStringLiteral("name")).toString();
        if (name.isEmpty()) continue;
        if (o.contains(QStringLiteral("share")))
            items.push_back(
                fmt::format("{} {:.0f} %", name.toStdString(), 100 * o.value(QStringLiteral("share")).toDouble()));
        else if (o.contains(QStringLiteral("self_share")))
            items.push_back(fmt::format("{} {:.0f} % self", name.toStdString(),
                                        100 * o.value(QStringLiteral("self_share")).toDouble()));
        else if (o.contains(QStringLiteral("total_s")))
            items.push_back(
                fmt::format("{} {:.2f} s", name.toStdString(), o.value(QStringLiteral("total_s")).toDouble()));
        else
            items.push_back(name.toStdString());
    }
    return items;
}

// One evidence entry as a line (times as clock times, shares as percentages); nothing for what is not known here
// (said elsewhere) or only in --json (per-node lists).
void printEvidence(const std::string& key, const QJsonValue& value)
{
    if (value.isBool()) {
        fmt::print("  {}: {}\n", key, value.toBool() ? "yes" : "no");
    } else if (value.isDouble() && key.ends_with("_ns")) {
        fmt::print("  {}: {} UTC\n", key.substr(0, key.size() - 3), clock(value.toInteger()));
    } else if (value.isDouble() && std::isfinite(value.toDouble())) {
        fmt::print("  {}: {:.4g}\n", key, value.toDouble());
    } else if (value.isString()) {
        fmt::print("  {}: {}\n", key, value.toString().toStdString());
    } else if (value.isObject()) {
        std::vector<std::string> items;
        const QJsonObject o = value.toObject();
        for (auto x = o.begin(); x != o.end(); ++x)
            if (x.value().isDouble())
                items.push_back(fmt::format("{} {:.0f} %", x.key().toStdString(), 100 * x.value().toDouble()));
        if (!items.empty()) fmt::print("  {}: {}\n", key, fmt::format("{}", fmt::join(items, ", ")));
    } else if (value.isArray() && key != "per_node") {
        const std::vector<std::string> items = listItems(value.toArray());
        if (!items.empty()) fmt::print("  {}: {}\n", key, fmt::format("{}", fmt::join(items, "; ")));
    }
}

void printFindings(const std::vector<analysis::Finding>& findings)
{
    if (findings.empty()) {
        fmt::print("No findings.\n");
        return;
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
        when.reserve(f.episodes.size());
        for (const auto& e : f.episodes)
            when.push_back(fmt::format("{}–{} UTC ({:.1f} s)", clock(e.startNs), clock(e.endNs),
                                       static_cast<double>(e.endNs - e.startNs) / 1e9));
        fmt::print("  when: {}\n", fmt::format("{}", fmt::join(when, "; ")));
        for (auto it = f.evidence.begin(); it != f.evidence.end(); ++it)
            printEvidence(it.key().toStdString(), it.value());
        fmt::print("  what to change: {}\n", f.recommendation);
    }
}

} // namespace

int cmdAnalyze(const QStringList& args)
{
    QCommandLineParser parser;
    addAnalyzeOptions(parser);
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    if (parser.isSet(QStringLiteral("list-params"))) {
        const analysis::RuleParams defaults = analysis::RuleParams::defaults();
        for (const analysis::RuleParam& p : defaults.all())
            fmt::print("{:<32} {:>12g} {:<8} {}\n", p.name, p.defaultValue, p.unit, p.doc);
        return kExitOk;
    }
    auto request = readAnalyzeRequest(parser);
    if (!request) return exitFor(request.error());
    auto result = runAnalyze(*request);
    if (!result) return exitFor(result.error());
    if (request->json) {
        printJson(request->path, *result);
        return kExitOk;
    }
    printSummary(request->path, *result);
    printBudgets(result->analysis.budgets);
    printFindings(result->analysis.findings);
    return kExitOk;
}

} // namespace runlens::app
