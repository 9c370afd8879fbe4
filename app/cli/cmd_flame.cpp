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

} // namespace

int cmdFlame(const QStringList& args)
{
    QCommandLineParser parser;
    const QCommandLineOption out(QStringList{QStringLiteral("o"), QStringLiteral("output")},
                                 QStringLiteral("Output file (.folded, .svg, .png) or - for folded text on stdout."),
                                 QStringLiteral("OUT"));
    const QCommandLineOption node(QStringLiteral("node"), QStringLiteral("Only these nodes (repeat or comma list)."),
                                  QStringLiteral("N"));
    const QCommandLineOption thread(QStringLiteral("thread"),
                                    QStringLiteral("Only threads whose name (or process/name) matches REGEX."),
                                    QStringLiteral("REGEX"));
    const QCommandLineOption from(QStringLiteral("from"), QStringLiteral("Window start (see above)."),
                                  QStringLiteral("T"));
    const QCommandLineOption to(QStringLiteral("to"), QStringLiteral("Window end, inclusive."), QStringLiteral("T"));
    const QCommandLineOption focus(
        QStringLiteral("focus"),
        QStringLiteral("Focus on the call path 'a;b;c' from the root (frame labels or names)."),
        QStringLiteral("PATH"));
    const QCommandLineOption phase(QStringLiteral("phase"),
                                   QStringLiteral("Only samples in these phases: comm, input, checkpoint, gpu_wait, "
                                                  "idle, compute, other (repeat or comma list)."),
                                   QStringLiteral("P"));
    const QCommandLineOption perThread(QStringLiteral("per-thread"),
                                       QStringLiteral("One root-side level per process and thread, as py-spy "
                                                      "--threads writes them."));
    const QCommandLineOption value(QStringLiteral("value"),
                                   QStringLiteral("samples (default) or weight (the source's weights: seconds for "
                                                  "timed profilers, counts for folded files)."),
                                   QStringLiteral("V"), QStringLiteral("samples"));
    const QCommandLineOption untimed(
        QStringLiteral("untimed"),
        QStringLiteral("Untimed stacks: auto (only without a window and without timed samples in the "
                       "selection), include, exclude."),
        QStringLiteral("MODE"), QStringLiteral("auto"));
    const QCommandLineOption colors(QStringLiteral("colors"),
                                    QStringLiteral("Block colours of .svg/.png: phase (default) or package."),
                                    QStringLiteral("C"), QStringLiteral("phase"));
    const QCommandLineOption width(QStringLiteral("width"), QStringLiteral("Width of .svg/.png in pixels."),
                                   QStringLiteral("PX"), QStringLiteral("1600"));
    const QCommandLineOption pack(QStringLiteral("phase-pack"),
                                  QStringLiteral("A phase pack file added to the built-in ones."),
                                  QStringLiteral("FILE"));
    const QCommandLineOption diffRun(QStringLiteral("diff-run"),
                                     QStringLiteral("List the functions that grew or shrank from RUN to run B "
                                                    "(see above)."),
                                     QStringLiteral("B"));
    const QCommandLineOption top(QStringLiteral("top"),
                                 QStringLiteral("With --diff-run: at most N functions per list."), QStringLiteral("N"),
                                 QStringLiteral("15"));
    for (const auto* o : {&out, &node, &thread, &from, &to, &focus, &phase, &perThread, &value, &untimed, &colors,
                          &width, &pack, &diffRun, &top})
        parser.addOption(*o);
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    const bool diffing = parser.isSet(diffRun);
    if (parser.positionalArguments().size() != 1 || (!parser.isSet(out) && !diffing)) {
        printError("flame needs one RUN and -o OUT (see runlens flame --help)");
        return kExitUsage;
    }
    const std::string outPath = parser.isSet(out) ? parser.value(out).toStdString() : std::string("-");
    const std::string ext = outPath == "-" ? ".folded" : std::filesystem::path(outPath).extension().string();
    size_t topN = 15;
    if (diffing) {
        if (outPath != "-" && ext != ".txt") {
            printError("--diff-run writes text: -o - (the default) or a .txt file");
            return kExitUsage;
        }
        if (parser.isSet(focus) || parser.isSet(perThread) || parser.value(value) != QLatin1String("samples")) {
            printError("--diff-run compares samples of whole trees: without --focus, --per-thread or --value weight");
            return kExitUsage;
        }
        bool topOk = false;
        const int n = parser.value(top).toInt(&topOk);
        if (!topOk || n < 1) {
            printError("--top: a positive number");
            return kExitUsage;
        }
        topN = static_cast<size_t>(n);
    }
    if (ext != ".folded" && ext != ".svg" && ext != ".png" && ext != ".txt") {
        printError(fmt::format("-o {}: the output must end in .folded, .svg or .png (or be -)", outPath));
        return kExitUsage;
    }
    if ((ext == ".svg" || ext == ".png") && !qobject_cast<QGuiApplication*>(QCoreApplication::instance())) {
        printError("drawing needs the GUI libraries; this build started without them");
        return kExitFailure;
    }

    analysis::FlameQuery query;
    query.nodes = splitList(parser.values(node));
    query.threadPattern = parser.value(thread).toStdString();
    query.perThread = parser.isSet(perThread);
    for (const std::string& p : splitList(parser.values(phase))) {
        auto ph = analysis::phaseFromName(p);
        if (!ph) {
            printError(fmt::format("--phase: unknown phase \"{}\" (comm, input, checkpoint, gpu_wait, idle, compute, "
                                   "other)",
                                   p));
            return kExitUsage;
        }
        query.phases.push_back(*ph);
    }
    const QString untimedMode = parser.value(untimed);
    if (untimedMode == QLatin1String("include"))
        query.untimed = analysis::UntimedStacks::Include;
    else if (untimedMode == QLatin1String("exclude"))
        query.untimed = analysis::UntimedStacks::Exclude;
    else if (untimedMode != QLatin1String("auto")) {
        printError("--untimed: auto, include or exclude");
        return kExitUsage;
    }
    const QString valueMode = parser.value(value);
    if (valueMode != QLatin1String("samples") && valueMode != QLatin1String("weight")) {
        printError("--value: samples or weight");
        return kExitUsage;
    }
    bool widthOk = false;
    const int px = parser.value(width).toInt(&widthOk);
    if (!widthOk || px < 200 || px > 20000) {
        printError("--width: a number of pixels between 200 and 20000");
        return kExitUsage;
    }

    auto classifier = analysis::PhaseClassifier::builtIn();
    if (!classifier) {
        printError(classifier.error().toString());
        return kExitFailure;
    }
    if (parser.isSet(pack)) {
        QFile f(parser.value(pack));
        if (!f.open(QIODevice::ReadOnly)) {
            printError(fmt::format("--phase-pack {}: cannot read it", parser.value(pack).toStdString()));
            return kExitFailure;
        }
        const QByteArray text = f.readAll();
        auto user = analysis::PhaseClassifier::fromText(std::string_view(text.constData(), text.size()),
                                                        parser.value(pack).toStdString());
        if (!user) {
            printError(user.error().toString());
            return kExitFailure;
        }
        if (Status s = classifier->add(*user); !s) {
            printError(s.error().toString());
            return kExitFailure;
        }
    }

    const std::string runPath = parser.positionalArguments().front().toStdString();
    auto db = store::RunDatabase::open(runPath, store::OpenMode::ReadOnly);
    if (!db) {
        printError(db.error().toString());
        return kExitFailure;
    }
    auto window = parseWindow(parser.value(from).toStdString(), parser.value(to).toStdString(), runStartNs(**db));
    if (!window) {
        printError(window.error().message);
        return kExitUsage;
    }
    query.window = *window;

    auto phases = std::make_shared<analysis::PhaseClassifier>(std::move(*classifier));
    if (diffing) {
        const std::string pathB = parser.value(diffRun).toStdString();
        auto dbB = store::RunDatabase::open(pathB, store::OpenMode::ReadOnly);
        if (!dbB) {
            printError(dbB.error().toString());
            return kExitFailure;
        }
        // Offsets count from each run's own start, so "+10m" is the same moment of both runs.
        auto windowB = parseWindow(parser.value(from).toStdString(), parser.value(to).toStdString(), runStartNs(**dbB));
        if (!windowB) {
            printError(windowB.error().message);
            return kExitUsage;
        }
        analysis::FlameQuery queryB = query;
        queryB.window = *windowB;
        analysis::FlameSource a(**db, phases);
        analysis::FlameSource b(**dbB, phases);
        analysis::FlameCompareOptions options;
        options.limit = topN;
        auto cmp = analysis::compareFlames(a, query, b, queryB, options);
        if (!cmp) {
            printError(cmp.error().toString());
            return cmp.error().code == ErrorCode::Usage ? kExitUsage : kExitFailure;
        }
        const std::string text = changesText(*cmp, std::filesystem::path(runPath).filename().string(),
                                             std::filesystem::path(pathB).filename().string(),
                                             describeWindow(query.window), describeWindow(queryB.window));
        std::FILE* f = outPath == "-" ? stdout : std::fopen(outPath.c_str(), "wb");
        if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || (f != stdout && std::fclose(f))) {
            printError(fmt::format("{}: cannot write it", outPath));
            return kExitFailure;
        }
        return kExitOk;
    }

    analysis::FlameSource source(**db, phases);
    auto tree = source.tree(query);
    if (!tree) {
        printError(tree.error().toString());
        return tree.error().code == ErrorCode::Usage ? kExitUsage : kExitFailure;
    }
    const analysis::FlameTree& t = **tree;
    int32_t focusNode = 0;
    if (parser.isSet(focus)) {
        const auto path = analysis::splitFramePath(parser.value(focus).toStdString());
        focusNode = t.find(path);
        if (focusNode < 0) {
            printError(fmt::format("--focus: no call path \"{}\" in this selection (paths start at a root frame; "
                                   "try \"runlens flame ... -o -\" to see them)",
                                   parser.value(focus).toStdString()));
            return kExitFailure;
        }
    }
    if (t.totalSamples() == 0)
        fmt::print(stderr, "runlens: no stack samples in this selection ({} thread{} matched, {})\n", t.threadCount(),
                   t.threadCount() == 1 ? "" : "s", describeWindow(query.window));

    std::string bytes;
    if (ext == ".folded" || ext == ".txt") {
        bytes = analysis::foldedText(
            t, valueMode == QLatin1String("weight") ? analysis::FlameValue::Weight : analysis::FlameValue::Samples,
            focusNode);
    } else {
        widgets::FlamePaintOptions o;
        o.colors = parser.value(colors) == QLatin1String("package") ? widgets::FlameColors::Package
                                                                    : widgets::FlameColors::Phase;
        o.caption << QStringLiteral("%1 — %2 samples, %3 thread%4, %5")
                         .arg(QString::fromStdString(std::filesystem::path(runPath).filename().string()))
                         .arg(t.totalSamples())
                         .arg(t.threadCount())
                         .arg(t.threadCount() == 1 ? QString() : QStringLiteral("s"))
                         .arg(QString::fromStdString(describeWindow(query.window)));
        QStringList filters;
        if (!query.nodes.empty()) filters << QStringLiteral("nodes: ") + parser.values(node).join(QLatin1Char(','));
        if (!query.threadPattern.empty()) filters << QStringLiteral("threads: /%1/").arg(parser.value(thread));
        if (!query.phases.empty()) filters << QStringLiteral("phases: ") + parser.values(phase).join(QLatin1Char(','));
        if (focusNode > 0) filters << QStringLiteral("focus: ") + parser.value(focus);
        if (!filters.isEmpty()) o.caption << filters.join(QStringLiteral("   "));
        if (ext == ".svg") {
            bytes = widgets::renderFlameSvg(t, focusNode, px, o);
        } else {
            const QImage image = widgets::renderFlameImage(t, focusNode, px, o);
            if (!image.save(QString::fromStdString(outPath), "PNG")) {
                printError(fmt::format("{}: cannot write the image", outPath));
                return kExitFailure;
            }
        }
    }
    if (ext != ".png") {
        std::FILE* f = outPath == "-" ? stdout : std::fopen(outPath.c_str(), "wb");
        if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || (f != stdout && std::fclose(f))) {
            printError(fmt::format("{}: cannot write it", outPath));
            return kExitFailure;
        }
    }
    if (outPath != "-")
        fmt::print(stderr, "{} samples from {} thread{}{} → {}\n", t.totalSamples(), t.threadCount(),
                   t.threadCount() == 1 ? "" : "s",
                   t.untimedSamples() ? fmt::format(" ({} untimed)", t.untimedSamples()) : "", outPath);
    return kExitOk;
}

} // namespace runlens::app
