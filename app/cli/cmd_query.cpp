#include "analysis/store/user_query.h"
#include "app/cli/cli.h"

#include <QCommandLineParser>
#include <csignal>
#include <fmt/format.h>

namespace runlens::app {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void onQueryInterrupt(int)
{
    g_interrupted.store(true);
}

constexpr const char* kViews = R"(
Stable views (documented in README.md):
  series_summary(node, device, metric, unit, points, first_ns, last_ns, missing_points, min_value, max_value,
                 mean_value, raw_name)
  stack_summary(node, process, thread, samples, total_weight, pid, tid, untimed_rows, first_ns, last_ns)
  import_log(path, format, node, rows, diagnostics, status, points, samples, size_bytes, content_hash, ...)
  import_diagnostic(path, kind, file, line, column, message, import_id)
  series_points(node, device, metric, ts_ns, value, missing, token, series_id)   -- decoded points; filter
                 on node/device/metric/ts_ns to read only what you need
  stack_samples(node, process, thread, ts_ns, callsite_id, sample_count, weight, thread_id, import_id)
                 -- every stack sample (ts_ns NULL for untimed stacks); callsite(id, parent_id, frame_id,
                 depth) and frame(id, name, file, line, module) give the call paths
)";

} // namespace

int cmdQuery(const QStringList& args)
{
    QCommandLineParser parser;
    const QCommandLineOption noHeader(QStringLiteral("no-header"), QStringLiteral("Do not print the column names."));
    parser.addOption(noHeader);
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
    parser.addPositionalArgument(QStringLiteral("sql"), QStringLiteral("Read-only SQL; results as CSV on stdout."),
                                 QStringLiteral("SQL"));
    const std::string summary =
        std::string("Run read-only SQL on a run database and print CSV. Ctrl-C interrupts.") + kViews;
    if (auto done = parseCommandLine(parser, args, summary.c_str())) return *done;
    if (parser.positionalArguments().size() != 2) {
        printError("query needs RUN and SQL (see runlens query --help)");
        return kExitUsage;
    }
    const std::string path = parser.positionalArguments().at(0).toStdString();
    const std::string sql = parser.positionalArguments().at(1).toStdString();
    const bool header = !parser.isSet(noHeader);

    auto onHeader = [&](const std::vector<std::string>& names) {
        if (header) fmt::print("{}\n", store::csvLine(names));
    };
    auto onRow = [&](const store::QueryRow& row) { fmt::print("{}\n", store::csvLine(row.values)); };
    g_interrupted = false;
    std::signal(SIGINT, onQueryInterrupt);
    store::QueryOptions options;
    options.cancel = &g_interrupted;
    auto rows = store::runUserQuery(path, sql, onHeader, onRow, options);
    std::signal(SIGINT, SIG_DFL);
    if (!rows) {
        printError(rows.error().toString());
        return kExitFailure;
    }
    return kExitOk;
}

} // namespace runlens::app
