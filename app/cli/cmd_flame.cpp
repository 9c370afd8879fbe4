#include "analysis/compare/flame_compare.h"
#include "analysis/flame/flame_export.h"
#include "analysis/flame/flame_tree.h"
#include "analysis/store/run_database.h"
#include "app/cli/cli.h"
#include "app/cli/window_args.h"
#include "widgets/flame/flame_painter.h"

#include <QCommandLineParser>
#include <QFile>
#include <QGuiApplication>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <optional>

namespace runlens::app {
namespace {

constexpr const char* kSummary = R"(Write the flame graph of a run's stack samples for a window, nodes and threads.

OUT ends in .folded (folded text: "frame;frame;leaf COUNT"), .svg (with tooltips) or .png; "-o -" writes
folded text to stdout. Times (--from/--to): ISO 8601 (UTC unless it has Z or an offset), epoch seconds
with a fraction, or an offset from the run start such as +90s, +1h30m. Stacks without times (folded files)
count only when no window is given and nothing selected has times (see --untimed).

With --diff-run B, the functions whose share of the samples grew or shrank from RUN to B are listed instead
(text on stdout, or -o FILE.txt), each run normalised by its own total; the same filters apply to both runs, and
offsets such as --from +10m count from each run's own start.)";

std::string describeWindow(const store::TimeWindow& w)
{
    const auto text = [](int64_t ns) {
        const int64_t s = ns / 1'000'000'000;
        return fmt::format("{}.{:03}", s, (ns - s * 1'000'000'000) / 1'000'000);
    };
    const bool from = w.fromNs != std::numeric_limits<int64_t>::min();
    const bool to = w.toNs != std::numeric_limits<int64_t>::max();
    if (!from && !to) return "whole run";
    return fmt::format("{} .. {} (epoch s)", from ? text(w.fromNs) : "start", to ? text(w.toNs) : "end");
}

std::string percent(double share)
{
    return fmt::format("{:.1f} %", share * 100);
}

// The grown and shrunk functions of a comparison as text.
std::string changesText(const analysis::FlameComparison& c, const std::string& nameA, const std::string& nameB,
                        const std::string& windowA, const std::string& windowB)
{
    std::string out = fmt::format("A: {} — {} samples, {}\nB: {} — {} samples, {}\n", nameA, c.totalA, windowA, nameB,
                                  c.totalB, windowB);
    if (c.totalA == 0 || c.totalB == 0) {
        out += fmt::format("nothing to compare: run {} has no stack samples in this selection\n",
                           c.totalA == 0 ? "A" : "B");
        return out;
    }
    const auto list = [&](const char* title, const std::vector<analysis::FrameChange>& changes) {
        out += fmt::format("\n{} (points of each run's samples; total and self share A → B, samples A → B):\n", title);
        if (changes.empty()) out += "  (none)\n";
        for (const analysis::FrameChange& f : changes) {
            const char* tag = f.onlyInB() ? "  [only in B]" : f.onlyInA() ? "  [only in A]" : "";
            out += fmt::format("  {:+6.1f}  {}{}\n          total {} → {}, self {} → {}, samples {} → {}\n",
                               f.change() * 100, f.label(), tag, percent(f.shareA), percent(f.shareB),
                               percent(f.selfShareA), percent(f.selfShareB), f.samplesA, f.samplesB);
        }
    };
    list("Shrank", c.shrank);
    list("Grew", c.grew);
    return out;
}

void addFlameOptions(QCommandLineParser& parser)
{
    parser.addOption({QStringList{QStringLiteral("o"), QStringLiteral("output")},
                      QStringLiteral("Output file (.folded, .svg, .png) or - for folded text on stdout."),
                      QStringLiteral("OUT")});
    parser.addOption(
        {QStringLiteral("node"), QStringLiteral("Only these nodes (repeat or comma list)."), QStringLiteral("N")});
    parser.addOption({QStringLiteral("thread"),
                      QStringLiteral("Only threads whose name (or process/name) matches REGEX."),
                      QStringLiteral("REGEX")});
    parser.addOption({QStringLiteral("from"), QStringLiteral("Window start (see above)."), QStringLiteral("T")});
    parser.addOption({QStringLiteral("to"), QStringLiteral("Window end, inclusive."), QStringLiteral("T")});
    parser.addOption({QStringLiteral("focus"),
                      QStringLiteral("Focus on the call path 'a;b;c' from the root (frame labels or names)."),
                      QStringLiteral("PATH")});
    parser.addOption({QStringLiteral("phase"),
                      QStringLiteral("Only samples in these phases: comm, input, checkpoint, gpu_wait, "
                                     "idle, compute, other (repeat or comma list)."),
                      QStringLiteral("P")});
    parser.addOption(
        {QStringLiteral("per-thread"), QStringLiteral("One root-side level per process and thread, as py-spy "
                                                      "--threads writes them.")});
    parser.addOption({QStringLiteral("value"),
                      QStringLiteral("samples (default) or weight (the source's weights: seconds for "
                                     "timed profilers, counts for folded files)."),
                      QStringLiteral("V"), QStringLiteral("samples")});
    parser.addOption({QStringLiteral("untimed"),
                      QStringLiteral("Untimed stacks: auto (only without a window and without timed samples in the "
                                     "selection), include, exclude."),
                      QStringLiteral("MODE"), QStringLiteral("auto")});
    parser.addOption({QStringLiteral("colors"),
                      QStringLiteral("Block colours of .svg/.png: phase (default) or package."), QStringLiteral("C"),
                      QStringLiteral("phase")});
    parser.addOption({QStringLiteral("width"), QStringLiteral("Width of .svg/.png in pixels."), QStringLiteral("PX"),
                      QStringLiteral("1600")});
    parser.addOption({QStringLiteral("phase-pack"), QStringLiteral("A phase pack file added to the built-in ones."),
                      QStringLiteral("FILE")});
    parser.addOption({QStringLiteral("diff-run"),
                      QStringLiteral("List the functions that grew or shrank from RUN to run B "
                                     "(see above)."),
                      QStringLiteral("B")});
    parser.addOption({QStringLiteral("top"), QStringLiteral("With --diff-run: at most N functions per list."),
                      QStringLiteral("N"), QStringLiteral("15")});
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
}

QString option(const QCommandLineParser& parser, const char* name)
{
    return parser.value(QString::fromLatin1(name));
}

// What the command line asks for, checked before the run is opened.
struct FlameRequest
{
    std::string runPath, outPath, ext;
    std::string diffRun; // --diff-run B, or empty
    size_t topN = 15;
    analysis::FlameQuery query; // without its window: that needs the run's start
    std::string from, to, packPath;
    std::optional<std::string> focus; // --focus PATH
    bool weight = false;              // --value weight
    bool package = false;             // --colors package
    int px = 1600;
};

Status readOutput(const QCommandLineParser& parser, FlameRequest& r)
{
    const bool diffing = parser.isSet(QStringLiteral("diff-run"));
    const bool hasOut = parser.isSet(QStringLiteral("output"));
    if (parser.positionalArguments().size() != 1 || (!hasOut && !diffing))
        return makeError(ErrorCode::Usage, "flame needs one RUN and -o OUT (see runlens flame --help)");
    r.runPath = parser.positionalArguments().front().toStdString();
    r.outPath = hasOut ? option(parser, "output").toStdString() : std::string("-");
    r.ext = r.outPath == "-" ? ".folded" : std::filesystem::path(r.outPath).extension().string();
    if (diffing) {
        r.diffRun = option(parser, "diff-run").toStdString();
        if (r.outPath != "-" && r.ext != ".txt")
            return makeError(ErrorCode::Usage, "--diff-run writes text: -o - (the default) or a .txt file");
        if (parser.isSet(QStringLiteral("focus")) || parser.isSet(QStringLiteral("per-thread")) ||
            option(parser, "value") != QLatin1String("samples"))
            return makeError(ErrorCode::Usage,
                             "--diff-run compares samples of whole trees: without --focus, --per-thread or --value "
                             "weight");
        bool topOk = false;
        const int n = option(parser, "top").toInt(&topOk);
        if (!topOk || n < 1) return makeError(ErrorCode::Usage, "--top: a positive number");
        r.topN = static_cast<size_t>(n);
    }
    if (r.ext != ".folded" && r.ext != ".svg" && r.ext != ".png" && r.ext != ".txt")
        return makeError(ErrorCode::Usage,
                         fmt::format("-o {}: the output must end in .folded, .svg or .png (or be -)", r.outPath));
    if ((r.ext == ".svg" || r.ext == ".png") && !qobject_cast<QGuiApplication*>(QCoreApplication::instance()))
        return makeError(ErrorCode::Unsupported, "drawing needs the GUI libraries; this build started without them");
    return okStatus();
}

Status readSelection(const QCommandLineParser& parser, FlameRequest& r)
{
    analysis::FlameQuery& query = r.query;
    query.nodes = splitList(parser.values(QStringLiteral("node")));
    query.threadPattern = option(parser, "thread").toStdString();
    query.perThread = parser.isSet(QStringLiteral("per-thread"));
    for (const std::string& p : splitList(parser.values(QStringLiteral("phase")))) {
        auto ph = analysis::phaseFromName(p);
        if (!ph)
            return makeError(ErrorCode::Usage,
                             fmt::format("--phase: unknown phase \"{}\" (comm, input, checkpoint, gpu_wait, idle, "
                                         "compute, other)",
                                         p));
        query.phases.push_back(*ph);
    }
    const QString untimedMode = option(parser, "untimed");
    if (untimedMode == QLatin1String("include"))
        query.untimed = analysis::UntimedStacks::Include;
    else if (untimedMode == QLatin1String("exclude"))
        query.untimed = analysis::UntimedStacks::Exclude;
    else if (untimedMode != QLatin1String("auto"))
        return makeError(ErrorCode::Usage, "--untimed: auto, include or exclude");
    const QString valueMode = option(parser, "value");
    if (valueMode != QLatin1String("samples") && valueMode != QLatin1String("weight"))
        return makeError(ErrorCode::Usage, "--value: samples or weight");
    r.weight = valueMode == QLatin1String("weight");
    bool widthOk = false;
    r.px = option(parser, "width").toInt(&widthOk);
    if (!widthOk || r.px < 200 || r.px > 20000)
        return makeError(ErrorCode::Usage, "--width: a number of pixels between 200 and 20000");
    r.package = option(parser, "colors") == QLatin1String("package");
    r.from = option(parser, "from").toStdString();
    r.to = option(parser, "to").toStdString();
    if (parser.isSet(QStringLiteral("focus"))) r.focus = option(parser, "focus").toStdString();
    if (parser.isSet(QStringLiteral("phase-pack"))) r.packPath = option(parser, "phase-pack").toStdString();
    return okStatus();
}

// The built-in phase packs and the user's, if any.
Expected<std::shared_ptr<analysis::PhaseClassifier>> loadPhases(const std::string& packPath)
{
    RUNLENS_ASSIGN_OR_RETURN(auto classifier, analysis::PhaseClassifier::builtIn());
    if (!packPath.empty()) {
        QFile f(QString::fromStdString(packPath));
        if (!f.open(QIODevice::ReadOnly))
            return makeError(ErrorCode::Io, fmt::format("--phase-pack {}: cannot read it", packPath));
        const QByteArray text = f.readAll();
        RUNLENS_ASSIGN_OR_RETURN(
            auto user, analysis::PhaseClassifier::fromText(std::string_view(text.constData(), text.size()), packPath));
        RUNLENS_TRY(classifier.add(user));
    }
    return std::make_shared<analysis::PhaseClassifier>(std::move(classifier));
}

// bytes to the file at path, or to stdout for "-".
Status writeOut(const std::string& path, const std::string& bytes)
{
    std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || (f != stdout && std::fclose(f)))
        return makeError(ErrorCode::Io, fmt::format("{}: cannot write it", path));
    return okStatus();
}

using PhasesPtr = std::shared_ptr<analysis::PhaseClassifier>;

// --diff-run: the functions that grew or shrank from the run to run B, as text.
Status writeDiff(store::RunDatabase& db, const FlameRequest& r, const PhasesPtr& phases)
{
    RUNLENS_ASSIGN_OR_RETURN(auto dbB, store::RunDatabase::open(r.diffRun, store::OpenMode::ReadOnly));
    // Offsets count from each run's own start, so "+10m" is the same moment of both runs.
    analysis::FlameQuery queryB = r.query;
    RUNLENS_ASSIGN_OR_RETURN(queryB.window, parseWindow(r.from, r.to, runStartNs(*dbB)));
    analysis::FlameSource a(db, phases);
    analysis::FlameSource b(*dbB, phases);
    analysis::FlameCompareOptions options;
    options.limit = r.topN;
    RUNLENS_ASSIGN_OR_RETURN(auto cmp, analysis::compareFlames(a, r.query, b, queryB, options));
    return writeOut(r.outPath, changesText(cmp, std::filesystem::path(r.runPath).filename().string(),
                                           std::filesystem::path(r.diffRun).filename().string(),
                                           describeWindow(r.query.window), describeWindow(queryB.window)));
}

// The caption of a drawn flame graph: the run, its totals and window, and the filters applied.
QStringList caption(const FlameRequest& r, const analysis::FlameTree& t, bool focused, const QCommandLineParser& parser)
{
    QStringList lines;
    lines << QStringLiteral("%1 — %2 samples, %3 thread%4, %5")
                 .arg(QString::fromStdString(std::filesystem::path(r.runPath).filename().string()))
                 .arg(t.totalSamples())
                 .arg(t.threadCount())
                 .arg(t.threadCount() == 1 ? QString() : QStringLiteral("s"))
                 .arg(QString::fromStdString(describeWindow(r.query.window)));
    QStringList filters;
    if (!r.query.nodes.empty())
        filters << QStringLiteral("nodes: ") + parser.values(QStringLiteral("node")).join(QLatin1Char(','));
    if (!r.query.threadPattern.empty()) filters << QStringLiteral("threads: /%1/").arg(option(parser, "thread"));
    if (!r.query.phases.empty())
        filters << QStringLiteral("phases: ") + parser.values(QStringLiteral("phase")).join(QLatin1Char(','));
    if (focused) filters << QStringLiteral("focus: ") + QString::fromStdString(*r.focus);
    if (!filters.isEmpty()) lines << filters.join(QStringLiteral("   "));
    return lines;
}

// The flame graph of the selection, written as folded text, SVG or PNG.
Status writeFlame(store::RunDatabase& db, const FlameRequest& r, const PhasesPtr& phases,
                  const QCommandLineParser& parser)
{
    analysis::FlameSource source(db, phases);
    RUNLENS_ASSIGN_OR_RETURN(auto tree, source.tree(r.query));
    const analysis::FlameTree& t = *tree;
    int32_t focusNode = 0;
    if (r.focus) {
        focusNode = t.find(analysis::splitFramePath(*r.focus));
        if (focusNode < 0)
            return makeError(ErrorCode::Format,
                             fmt::format("--focus: no call path \"{}\" in this selection (paths start at a root "
                                         "frame; try \"runlens flame ... -o -\" to see them)",
                                         *r.focus));
    }
    if (t.totalSamples() == 0)
        fmt::print(stderr, "runlens: no stack samples in this selection ({} thread{} matched, {})\n", t.threadCount(),
                   t.threadCount() == 1 ? "" : "s", describeWindow(r.query.window));
    if (r.ext == ".folded" || r.ext == ".txt") {
        RUNLENS_TRY(writeOut(
            r.outPath, analysis::foldedText(t, r.weight ? analysis::FlameValue::Weight : analysis::FlameValue::Samples,
                                            focusNode)));
    } else {
        widgets::FlamePaintOptions o;
        o.colors = r.package ? widgets::FlameColors::Package : widgets::FlameColors::Phase;
        o.caption = caption(r, t, focusNode > 0, parser);
        if (r.ext == ".svg") {
            RUNLENS_TRY(writeOut(r.outPath, widgets::renderFlameSvg(t, focusNode, r.px, o)));
        } else if (!widgets::renderFlameImage(t, focusNode, r.px, o).save(QString::fromStdString(r.outPath), "PNG")) {
            return makeError(ErrorCode::Io, fmt::format("{}: cannot write the image", r.outPath));
        }
    }
    if (r.outPath != "-")
        fmt::print(stderr, "{} samples from {} thread{}{} → {}\n", t.totalSamples(), t.threadCount(),
                   t.threadCount() == 1 ? "" : "s",
                   t.untimedSamples() ? fmt::format(" ({} untimed)", t.untimedSamples()) : "", r.outPath);
    return okStatus();
}

} // namespace

int cmdFlame(const QStringList& args)
{
    QCommandLineParser parser;
    addFlameOptions(parser);
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    FlameRequest r;
    if (Status s = readOutput(parser, r); !s) return exitFor(s.error());
    if (Status s = readSelection(parser, r); !s) return exitFor(s.error());
    auto phases = loadPhases(r.packPath);
    if (!phases) return exitFor(phases.error());
    auto db = store::RunDatabase::open(r.runPath, store::OpenMode::ReadOnly);
    if (!db) return exitFor(db.error());
    auto window = parseWindow(r.from, r.to, runStartNs(**db));
    if (!window) return exitFor(window.error());
    r.query.window = *window;
    const Status done = r.diffRun.empty() ? writeFlame(**db, r, *phases, parser) : writeDiff(**db, r, *phases);
    return done ? kExitOk : exitFor(done.error());
}

} // namespace runlens::app
