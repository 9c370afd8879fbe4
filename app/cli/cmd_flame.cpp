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
count only when no window is given and nothing selected has times (see --untimed).)";

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
    for (const auto* o :
         {&out, &node, &thread, &from, &to, &focus, &phase, &perThread, &value, &untimed, &colors, &width, &pack})
        parser.addOption(*o);
    parser.addPositionalArgument(QStringLiteral("run"), QStringLiteral("Run database (.runlens)."),
                                 QStringLiteral("RUN"));
    if (auto done = parseCommandLine(parser, args, kSummary)) return *done;
    if (parser.positionalArguments().size() != 1 || !parser.isSet(out)) {
        printError("flame needs one RUN and -o OUT (see runlens flame --help)");
        return kExitUsage;
    }
    const std::string outPath = parser.value(out).toStdString();
    const std::string ext = outPath == "-" ? ".folded" : std::filesystem::path(outPath).extension().string();
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

    analysis::FlameSource source(**db, std::make_shared<analysis::PhaseClassifier>(std::move(*classifier)));
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
