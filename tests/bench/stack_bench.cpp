#include "tests/bench/stack_bench.h"

#include "analysis/flame/flame_tree.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "analysis/store/stack_reader.h"
#include "widgets/flame/flame_graph_widget.h"

#include <QCoreApplication>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <random>
#include <string_view>
#include <unistd.h>
#include <unordered_map>

namespace runlens::bench {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Distinct stacks as frame-index paths: a prefix tree grown at random, 8-40 frames deep.
std::vector<std::vector<int>> makeStacks(int count, int vocabulary, std::mt19937_64& rng)
{
    std::vector<std::vector<int>> stacks;
    stacks.reserve(static_cast<size_t>(count));
    std::vector<int> base;
    for (int d = 0; d < 6; ++d)
        base.push_back(d);
    while (static_cast<int>(stacks.size()) < count) {
        std::vector<int> s = stacks.empty() ? base : stacks[rng() % stacks.size()];
        const size_t keep = std::min(s.size(), static_cast<size_t>(6 + rng() % 20));
        s.resize(keep);
        const size_t depth = 8 + rng() % 33;
        while (s.size() < depth)
            s.push_back(static_cast<int>(rng() % static_cast<uint64_t>(vocabulary)));
        stacks.push_back(std::move(s));
    }
    return stacks;
}

std::string frameLabel(int f)
{
    return fmt::format("function_{} (package{}/module_{}.py:{})", f, f % 17, f % 211, 10 + f % 900);
}

// Zipf-like choice: a few stacks are hot, most are rare.
size_t pick(std::mt19937_64& rng, size_t n)
{
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::min(n - 1, static_cast<size_t>(static_cast<double>(n) * u * u * u));
}

// The limit: read the file and hash each whole line into a map, single-threaded (no frame splitting).
double lineHashSeconds(const std::string& path, size_t& distinct)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return -1;
    const auto t0 = Clock::now();
    std::unordered_map<std::string, int64_t> counts;
    std::string carry;
    std::vector<char> buf(16 << 20);
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
        std::string_view chunk(buf.data(), n);
        size_t pos = 0;
        for (size_t nl; (nl = chunk.find('\n', pos)) != std::string_view::npos; pos = nl + 1) {
            std::string_view line = chunk.substr(pos, nl - pos);
            if (!carry.empty()) {
                carry.append(line);
                line = carry;
            }
            const size_t sp = line.rfind(' ');
            const std::string_view stack = line.substr(0, sp);
            auto it = counts.find(std::string(stack));
            if (it == counts.end())
                counts.emplace(std::string(stack), 1);
            else
                ++it->second;
            carry.clear();
        }
        carry.append(chunk.substr(pos));
    }
    std::fclose(f);
    distinct = counts.size();
    return since(t0);
}

constexpr int64_t kStart = 1'790'000'000'000'000'000;
constexpr int64_t kPeriodNs = 10'000'000; // 100 Hz

// Folded file: every distinct stack once, then repeats (folded files written by hand or concatenated).
bool writeFolded(const std::string& path, const std::vector<std::vector<int>>& stacks,
                 const std::vector<std::string>& labels, int64_t lines, std::mt19937_64& rng)
{
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (!out) return false;
    const auto distinct = static_cast<int64_t>(stacks.size());
    std::string line;
    for (int64_t i = 0; i < lines; ++i) {
        const auto& s = stacks[i < distinct ? static_cast<size_t>(i) : pick(rng, stacks.size())];
        line.clear();
        for (size_t k = 0; k < s.size(); ++k) {
            if (k) line += ';';
            line += labels[static_cast<size_t>(s[k])];
        }
        line += fmt::format(" {}\n", 1 + rng() % 9);
        std::fwrite(line.data(), 1, line.size(), out);
    }
    std::fclose(out);
    return true;
}

// Timed samples written through the store directly: `threads` threads at 100 Hz, Zipf-chosen stacks; the seconds it
// took, < 0 on a failure.
double writeTimedSamples(const std::string& dbPath, const std::vector<std::vector<int>>& stacks,
                         const std::vector<std::string>& labels, int64_t samples, int threads, std::mt19937_64& rng)
{
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::Create);
    if (!db) return -1;
    const auto t0 = Clock::now();
    store::RunWriter w(**db);
    auto tx = (*db)->transaction();
    if (!tx) return -1;
    store::ImportRecord rec;
    rec.path = "bench";
    rec.contentHash = "bench-timed";
    rec.format = "bench";
    auto imp = w.beginImport(rec);
    auto node = w.node("node0", "option", "UTC");
    if (!imp || !node) return -1;
    std::vector<int64_t> frameIds(labels.size());
    for (size_t f = 0; f < labels.size(); ++f) {
        auto id = w.frame(labels[f], {}, 0, {});
        if (!id) return -1;
        frameIds[f] = *id;
    }
    std::vector<int64_t> leaf(stacks.size());
    for (size_t i = 0; i < stacks.size(); ++i) {
        int64_t c = 0;
        for (int f : stacks[i]) {
            auto next = w.callsite(c, frameIds[static_cast<size_t>(f)]);
            if (!next) return -1;
            c = *next;
        }
        leaf[i] = c;
    }
    for (int t = 0; t < threads; ++t) {
        auto tid = w.thread(*node, "python train.py", 1, fmt::format("pt_autograd_{}", t), 100 + t);
        if (!tid) return -1;
        for (int64_t i = 0; i < samples / threads; ++i)
            if (!w.stackSample(*tid, leaf[pick(rng, leaf.size())], kStart + i * kPeriodNs, 1, 0.01)) return -1;
    }
    store::ImportTotals totals;
    totals.contentHash = rec.contentHash;
    if (!w.finishImport(totals, store::Diagnostics()) || !tx->commit()) return -1;
    return since(t0);
}

// Flame trees of the whole run, then of random windows: each built, shown in a flame graph widget, and the window's
// totals read from the store again.
struct WindowTimes
{
    std::vector<double> treeMs, totalsMs, shownMs;
    int64_t checked = 0;   // the whole run's samples in its tree
    size_t callsites = 0;  // in the catalogue
    size_t firstNodes = 0; // of the first tree (built before the timing)
};

std::optional<WindowTimes> timeWindows(const std::string& dbPath, bool quick, int64_t span, std::mt19937_64& rng)
{
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadOnly);
    if (!db) return std::nullopt;
    analysis::FlameSource source(**db, nullptr);
    analysis::FlameQuery all;
    auto first = source.tree(all); // loads the catalogue once, as an open view would
    if (!first) return std::nullopt;
    WindowTimes times;
    times.firstNodes = (*first)->nodes().size();
    if (auto cat = source.catalog()) times.callsites = (*cat)->callsiteCount();
    store::StackReader reader(**db);
    widgets::FlameGraphWidget graph;
    graph.resize(1600, 800);
    graph.show();
    for (int k = 0; k < (quick ? 9 : 25); ++k) {
        analysis::FlameQuery q;
        if (k > 0) { // k == 0: the whole run
            const int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
            const int64_t b = a + static_cast<int64_t>(rng() % static_cast<uint64_t>(span - a));
            q.window = {kStart + a, kStart + b};
        }
        const auto t0 = Clock::now();
        auto tree = source.tree(q);
        times.treeMs.push_back(since(t0) * 1000);
        if (std::getenv("RUNLENS_BENCH_VERBOSE")) fmt::print(stderr, "  tree {:.1f} ms\n", times.treeMs.back());
        if (!tree) return std::nullopt;
        // The new window's flame graph on screen: the tree, then its layout and drawing in the widget.
        graph.setTree(*tree);
        while (graph.busy())
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
        QCoreApplication::processEvents();
        times.shownMs.push_back(since(t0) * 1000);
        const auto t1 = Clock::now();
        auto totals = reader.totals({}, q.window, false);
        times.totalsMs.push_back(since(t1) * 1000);
        if (!totals) return std::nullopt;
        if (std::getenv("RUNLENS_BENCH_VERBOSE"))
            fmt::print(stderr, "window {:.0f} s: totals {:.1f} ms, {} buckets, {} chunks decoded\n",
                       (static_cast<double>(q.window.toNs) - static_cast<double>(q.window.fromNs)) / 1e9,
                       times.totalsMs.back(), totals->bucketsRead, totals->chunksDecoded);
        if (k == 0) times.checked = (*tree)->totalSamples();
    }
    return times;
}

// What the folded import measured against its limit.
struct FoldedTimes
{
    int64_t lines = 0;
    size_t stacks = 0; // distinct, as the limit counted them
    double mb = 0, oursS = 0, limitS = 0;
};

void printStackTable(bool quick, const FoldedTimes& folded, int64_t samples, int threads, double writeS,
                     WindowTimes times)
{
    const double fullMs = times.treeMs.front();
    std::vector<double>& ms = times.treeMs;
    std::sort(ms.begin(), ms.end());
    const double medianMs = ms[ms.size() / 2], maxMs = ms.back();
    std::sort(times.totalsMs.begin(), times.totalsMs.end());
    std::sort(times.shownMs.begin(), times.shownMs.end());
    const double totalsMedianMs = times.totalsMs[times.totalsMs.size() / 2];
    const double mb = folded.mb, oursS = folded.oursS, limitS = folded.limitS;

    fmt::print("\nStacks{}:\n\n",
               quick ? " (quick mode: a tenth of the scale; the targets apply to the full run)" : "");
    fmt::print("| {:<52} | {:>12} | {:>22} | {:>8} | {:<14} |\n", "measure", "RunLens", "limit", "ratio", "target");
    fmt::print("|{:-<54}|{:-<14}|{:-<24}|{:-<10}|{:-<16}|\n", "", "", "", "", "");
    fmt::print("| {:<52} | {:>12.0f} | {:>22.0f} | {:>7.2f}× | {:<14} |\n",
               fmt::format("folded import MB/s ({} lines, {} stacks, {:.0f} MB)", folded.lines, folded.stacks, mb),
               oursS > 0 ? mb / oursS : 0.0, mb / limitS, oursS > 0 ? (mb / oursS) / (mb / limitS) : 0.0, "≥ 500 MB/s");
    fmt::print("| {:<52} | {:>12.1f} | {:>22} | {:>8} | {:<14} |\n",
               fmt::format("write {} timed samples, {} threads (s)", samples, threads), writeS, "", "", "");
    fmt::print("| {:<52} | {:>12.1f} | {:>22} | {:>8} | {:<14} |\n", "flame tree, whole run (ms)", fullMs, "", "",
               "≤ 200 ms");
    fmt::print("| {:<52} | {:>12.1f} | {:>22} | {:>8} | {:<14} |\n", "flame tree, random windows, median (ms)",
               medianMs, "", "", "≤ 200 ms");
    fmt::print("| {:<52} | {:>12.1f} | {:>22} | {:>8} | {:<14} |\n", "flame tree, random windows, worst (ms)", maxMs,
               "", "", "");
    fmt::print("| {:<52} | {:>12.1f} | {:>22} | {:>8} | {:<14} |\n",
               "flame graph of a new window shown (tree + layout + paint), median (ms)",
               times.shownMs[times.shownMs.size() / 2], "", "", "≤ 250 ms");
    fmt::print("| {:<52} | {:>12.1f} | {:>22} | {:>8} | {:<14} |\n", "window totals from the store again, median (ms)",
               totalsMedianMs, "", "", "");
    fmt::print("| {:<52} | {:>12} | {:>22} | {:>8} | {:<14} |\n", "call paths in the catalogue",
               times.firstNodes > 0 ? times.callsites : 0, "", "", "");
    fmt::print("\nlimit: one thread reading the file and hashing every whole line into a map (no frame splitting)\n");
}

} // namespace

bool benchStacks(const std::string& dir, bool quick,
                 const std::function<double(const std::vector<std::string>&)>& runSeconds)
{
    std::mt19937_64 rng(42);
    const int distinct = quick ? 5'000 : 50'000;
    const auto stacks = makeStacks(distinct, 4000, rng);
    std::vector<std::string> labels(4000);
    for (int f = 0; f < 4000; ++f)
        labels[static_cast<size_t>(f)] = frameLabel(f);

    FoldedTimes folded;
    folded.lines = quick ? 200'000 : 2'000'000;
    const std::string foldedPath = dir + "/stacks.folded";
    if (!writeFolded(foldedPath, stacks, labels, folded.lines, rng)) return false;
    ::sync();
    folded.mb = static_cast<double>(std::filesystem::file_size(foldedPath)) / 1e6;
    lineHashSeconds(foldedPath, folded.stacks); // warm the page cache
    folded.limitS = lineHashSeconds(foldedPath, folded.stacks);
    folded.oursS = runSeconds({"import", "-o", dir + "/folded.runlens", "--format", "folded", foldedPath});

    const int64_t samples = quick ? 1'000'000 : 10'000'000;
    const int threads = 32;
    const std::string dbPath = dir + "/timed.runlens";
    const double writeS = writeTimedSamples(dbPath, stacks, labels, samples, threads, rng);
    if (writeS < 0) return false;
    const std::optional<WindowTimes> times = timeWindows(dbPath, quick, samples / threads * kPeriodNs, rng);
    if (!times) return false;
    printStackTable(quick, folded, samples, threads, writeS, *times);
    return folded.oursS > 0 && times->checked == samples / threads * threads;
}

} // namespace runlens::bench
