#include "tests/bench/flame_widget_bench.h"

#include "analysis/flame/flame_tree.h"
#include "analysis/phase/phase_classifier.h"
#include "analysis/store/run_database.h"
#include "widgets/flame/flame_graph_widget.h"

#include <QCoreApplication>
#include <QTest>
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <random>
#include <vector>

namespace runlens::bench {

namespace {
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Until no layout or search is pending and the queued paint ran.
void settle(widgets::FlameGraphWidget& w)
{
    while (w.busy())
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    for (int i = 0; i < 3; ++i)
        QCoreApplication::processEvents();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// Stacks down a random tree: at each level one of a few children, skewed towards the first, 6 to 40 deep; the
// frames come from a fixed set of functions (as in a real program), so searches match in many places.
std::shared_ptr<const analysis::FlameTree> generatedTree(size_t wantNodes, std::mt19937_64& rng)
{
    std::vector<analysis::FlameTree::Stack> stacks;
    std::geometric_distribution<int> child(0.35);
    std::uniform_int_distribution<int> depth(6, 40);
    std::shared_ptr<const analysis::FlameTree> tree;
    for (size_t batch = 2'000;; batch += 2'000) {
        while (stacks.size() < batch) {
            analysis::FlameTree::Stack st;
            uint64_t path = 1469598103934665603ull;
            const int d = depth(rng);
            for (int k = 0; k < d; ++k) {
                const int c = std::min(child(rng), 11);
                path = (path ^ static_cast<uint64_t>(c + 1)) * 1099511628211ull;
                // One of 6000 functions (name, file and line follow from it), as a real code base repeats.
                const uint64_t fn = (path >> 7) % 6000;
                store::FrameInfo f;
                f.name = fmt::format("fn_{}", fn);
                f.file = fmt::format("pkg{}/module{}.py", fn % 7, fn % 50);
                f.line = static_cast<int64_t>(fn % 400) + 1;
                st.frames.push_back(std::move(f));
            }
            st.samples = 1 + static_cast<int64_t>(rng() % 50);
            st.weight = static_cast<double>(st.samples) * 0.01;
            stacks.push_back(std::move(st));
        }
        tree = analysis::FlameTree::fromStacks(stacks);
        if (tree->nodes().size() >= wantNodes) return tree;
    }
}

} // namespace

bool benchFlameWidget(bool quick)
{
    std::mt19937_64 rng(3);
    const size_t want = quick ? 30'000 : 100'000;
    const auto g0 = Clock::now();
    auto tree = generatedTree(want, rng);
    const double genMs = msSince(g0);

    widgets::FlameGraphWidget w;
    w.resize(1600, 900);
    w.show();
    const auto s0 = Clock::now();
    w.setTree(tree);
    settle(w);
    const double firstMs = msSince(s0);

    // Focus Block on random blocks of at least 0.2 % of the samples (visible ones), then back to the root.
    std::vector<int32_t> candidates;
    for (int32_t i = 1; i < static_cast<int32_t>(tree->nodes().size()); ++i)
        if (tree->node(i).samples * 500 >= tree->totalSamples()) candidates.push_back(i);
    std::vector<double> focusMs, searchMs, hoverMs;
    const int rounds = quick ? 10 : 30;
    for (int k = 0; k < rounds && !candidates.empty(); ++k) {
        const int32_t n = candidates[rng() % candidates.size()];
        auto t0 = Clock::now();
        w.focusNode(n);
        settle(w);
        focusMs.push_back(msSince(t0));
        t0 = Clock::now();
        w.resetFocus();
        settle(w);
        focusMs.push_back(msSince(t0));
    }
    // Searches: substrings and regular expressions of names that occur all over the tree.
    for (int k = 0; k < rounds; ++k) {
        const QString pattern =
            k % 2 ? QStringLiteral("fn_%1").arg(rng() % 300) : QStringLiteral("^fn_%1\\d$").arg(rng() % 30);
        const auto t0 = Clock::now();
        w.setSearch(pattern, k % 2 == 0);
        settle(w);
        searchMs.push_back(msSince(t0));
    }
    w.setSearch(QString(), false);
    settle(w);
    // Hover: the mouse moved onto another block; only the two outlines change.
    const analysis::FlameLayout* layout = w.shownLayout();
    for (int k = 0; k < rounds * 3 && layout && !layout->rects.empty(); ++k) {
        const auto& r = layout->rects[rng() % layout->rects.size()];
        const QRect box = w.blockRect(r.node >= 0 ? r.node : 0);
        if (box.isNull()) continue;
        const auto t0 = Clock::now();
        QTest::mouseMove(&w, box.center());
        settle(w);
        hoverMs.push_back(msSince(t0));
    }

    fmt::print(
        "\nFlame graph widget, offscreen 1600×900, generated tree of {} nodes (depth {}, {:.0f} ms to build){}:\n\n",
        tree->nodes().size(), tree->maxDepth(), genMs, quick ? " — quick mode: a smaller tree" : "");
    fmt::print("| {:<52} | {:>10} | {:<12} |\n", "measure", "RunLens", "target");
    fmt::print("|{:-<54}|{:-<12}|{:-<14}|\n", "", "", "");
    fmt::print("| {:<52} | {:>10.1f} | {:<12} |\n", "first drawing (layout + paint, ms)", firstMs, "");
    fmt::print("| {:<52} | {:>10.1f} | {:<12} |\n",
               fmt::format("Focus Block / reset, median of {} (ms)", focusMs.size()), median(focusMs), "≤ 16 ms");
    fmt::print("| {:<52} | {:>10.1f} | {:<12} |\n", fmt::format("search, median of {} (ms)", searchMs.size()),
               median(searchMs), "≤ 16 ms");
    fmt::print("| {:<52} | {:>10.1f} | {:<12} |\n", fmt::format("hover, median of {} (ms)", hoverMs.size()),
               median(hoverMs), "≤ 16 ms");
    fmt::print("| {:<52} | {:>10} | {:<12} |\n", "blocks drawn at full view", layout ? layout->rects.size() : 0, "");
    return !focusMs.empty() && !searchMs.empty() && !hoverMs.empty();
}

std::optional<FlameWindowFigures> measureFlameWindows(const std::string& dbPath, int64_t firstNs, int64_t lastNs,
                                                      int64_t windowNs, int count)
{
    widgets::FlameGraphWidget w;
    w.resize(1600, 900);
    w.show();
    const int64_t span = std::min(windowNs, lastNs - firstNs);
    std::vector<double> ms;
    FlameWindowFigures fig;
    std::unique_ptr<store::RunDatabase> db;
    std::unique_ptr<analysis::FlameSource> source;
    for (int k = 0; k < count; ++k) {
        const int64_t from = firstNs + (count > 1 ? (lastNs - firstNs - span) / (count - 1) * k : 0);
        const auto t0 = Clock::now();
        if (!source) {
            auto opened = store::RunDatabase::open(dbPath, store::OpenMode::ReadOnly);
            auto classifier = analysis::PhaseClassifier::builtIn();
            if (!opened || !classifier) {
                fmt::print("flame graph: {}\n", (opened ? classifier.error() : opened.error()).toString());
                return std::nullopt;
            }
            db = std::move(*opened);
            source = std::make_unique<analysis::FlameSource>(
                *db, std::make_shared<analysis::PhaseClassifier>(std::move(*classifier)));
        }
        analysis::FlameQuery query;
        query.window = {from, from + span};
        auto tree = source->tree(query);
        if (!tree) {
            fmt::print("flame graph: {}\n", tree.error().toString());
            return std::nullopt;
        }
        w.setTree(*tree);
        settle(w);
        ms.push_back(msSince(t0));
        if (k == 0) {
            fig.nodes = (*tree)->nodes().size();
            fig.samples = (*tree)->totalSamples();
        }
    }
    fig.windows = ms.size();
    fig.firstMs = ms.empty() ? 0 : ms.front();
    fig.worstMs = ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end());
    fig.medianMs = median(ms);
    return fig;
}

} // namespace runlens::bench
