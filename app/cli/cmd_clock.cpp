#include "analysis/clock/clock_estimate.h"
#include "analysis/store/node_clock.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "app/cli/cli.h"
#include "app/jobs/clock_job.h"

#include <QCommandLineParser>
#include <fmt/format.h>

namespace runlens::app {
namespace {

std::string offsetText(const store::NodeInfo& n)
{
    return analysis::formatClockDuration(n.clockOffsetNs);
}

std::string uncertaintyText(std::optional<int64_t> ns)
{
    return ns ? "±" + analysis::formatClockDuration(*ns, false) : "-";
}

} // namespace

std::optional<ClockAssignment> parseClockAssignment(const std::string& text)
{
    const size_t eq = text.find('=');
    if (eq == 0 || eq == std::string::npos) return std::nullopt;
    const auto ns = analysis::parseClockDuration(std::string_view(text).substr(eq + 1));
    if (!ns) return std::nullopt;
    return ClockAssignment{text.substr(0, eq), *ns};
}

void printClocks(const std::vector<store::NodeInfo>& nodes)
{
    fmt::print("Clocks (added to every time of the node as read; the data stay as imported)\n");
    fmt::print("  {:<24} {:>14} {:>14}  {}\n", "NODE", "OFFSET", "±", "SOURCE");
    for (const store::NodeInfo& n : nodes)
        fmt::print("  {:<24} {:>14} {:>14}  {}\n", n.name, offsetText(n), uncertaintyText(n.clockOffsetUncertaintyNs),
                   n.clockOffsetSource.empty() ? "-" : n.clockOffsetSource);
}

int setClockOffsets(store::RunDatabase& db, const std::vector<ClockAssignment>& assignments)
{
    store::RunReader reader(db);
    auto nodes = reader.nodes();
    if (!nodes) {
        printError(nodes.error().toString());
        return kExitFailure;
    }
    for (const ClockAssignment& a : assignments) {
        bool known = false;
        for (const store::NodeInfo& n : *nodes)
            known = known || n.name == a.node;
        if (!known) {
            std::string names;
            for (const store::NodeInfo& n : *nodes)
                names += (names.empty() ? "" : ", ") + n.name;
            printError(fmt::format("the run has no node \"{}\" (nodes: {})", a.node, names.empty() ? "none" : names));
            return kExitUsage;
        }
    }
    auto tx = db.transaction();
    if (!tx) {
        printError(tx.error().toString());
        return kExitFailure;
    }
    for (const ClockAssignment& a : assignments) {
        // A given offset is exact as far as RunLens knows: ± 0.
        if (Status s = store::setNodeClockOffset(db, a.node, a.offsetNs, 0, store::kClockSourceUser); !s) {
            printError(s.error().toString()); // the transaction rolls back
            return kExitFailure;
        }
        fmt::print("clock {}: {} set by the user\n", a.node, analysis::formatClockDuration(a.offsetNs));
    }
    if (Status s = tx->commit(); !s) {
        printError(s.error().toString());
        return kExitFailure;
    }
    return kExitOk;
}

int estimateClocks(store::RunDatabase& db, bool force, analysis::ClockScope scope)
{
    auto lines = estimateAndDescribeClocks(db, force, scope);
    if (!lines) {
        printError(lines.error().toString());
        return kExitFailure;
    }
    for (const std::string& line : *lines)
        fmt::print("{}\n", line);
    return kExitOk;
}

int cmdClock(const QStringList& args)
{
    QCommandLineParser parser;
    const QCommandLineOption estimate(QStringLiteral("estimate"),
                                      QStringLiteral("Estimate the offsets from the traces' collectives, else from the "
                                                     "GPUs' activity; offsets set by the user are kept."));
    const QCommandLineOption force(QStringLiteral("force"),
                                   QStringLiteral("With --estimate: estimate the offsets set by the user too."));
    parser.addOptions({estimate, force});
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
    parser.addPositionalArgument(QStringLiteral("offsets"),
                                 QStringLiteral("Offsets to set, NODE=OFFSET (+1.25s, -300ms, 40us, 0): added to "
                                                "every time of the node."),
                                 QStringLiteral("[NODE=OFFSET...]"));
    if (auto done = parseCommandLine(parser, args,
                                     "Show, set or estimate the clock offsets of a run's nodes. Without offsets or "
                                     "--estimate, prints the Clocks table."))
        return *done;
    QStringList positional = parser.positionalArguments();
    if (positional.isEmpty()) {
        printError("clock needs a RUN (see runlens clock --help)");
        return kExitUsage;
    }
    const std::string path = positional.takeFirst().toStdString();
    std::vector<ClockAssignment> assignments;
    for (const QString& p : positional) {
        auto a = parseClockAssignment(p.toStdString());
        if (!a) {
            printError(fmt::format("expected NODE=OFFSET such as node3=+1.25s, got \"{}\"", p.toStdString()));
            return kExitUsage;
        }
        assignments.push_back(*a);
    }
    if (parser.isSet(force) && !parser.isSet(estimate)) {
        printError("--force goes with --estimate");
        return kExitUsage;
    }
    if (parser.isSet(estimate) && !assignments.empty()) {
        printError("give offsets or --estimate, not both");
        return kExitUsage;
    }
    const bool writes = parser.isSet(estimate) || !assignments.empty();
    auto db = store::RunDatabase::open(path, writes ? store::OpenMode::ReadWrite : store::OpenMode::ReadOnly);
    if (!db) {
        printError(db.error().toString());
        return kExitFailure;
    }
    int rc = kExitOk;
    if (!assignments.empty()) rc = setClockOffsets(**db, assignments);
    if (parser.isSet(estimate)) rc = estimateClocks(**db, parser.isSet(force));
    if (rc != kExitOk) return rc;
    store::RunReader reader(**db);
    auto nodes = reader.nodes();
    if (!nodes) {
        printError(nodes.error().toString());
        return kExitFailure;
    }
    if (writes) fmt::print("\n");
    printClocks(*nodes);
    return kExitOk;
}

} // namespace runlens::app
