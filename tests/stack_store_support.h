#pragma once

// The generated stack run of tst_stack_store and tst_stack_upgrade: sample generators, a brute-force model of
// window totals to check the store against, and small database helpers.

#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/store/stack_reader.h"
#include "analysis/store/user_query.h"
#include "tests/test_support.h"

#include <QString>
#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sqlite3.h>
#include <string>
#include <tuple>
#include <vector>

namespace runlens::test::stack_store {

using namespace runlens::store;
using runlens::test::execRaw;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kMinNs = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();

constexpr int64_t floorTo(int64_t v, int log2)
{
    return (v >> log2) << log2;
}
constexpr int64_t ceilTo(int64_t v, int log2)
{
    return floorTo(v, log2) == v ? v : floorTo(v, log2) + (int64_t{1} << log2);
}
constexpr int64_t width(int log2)
{
    return int64_t{1} << log2;
}

// An hour before a 2^44 ns boundary (~4.9 h), not aligned: ~12 h of data hold whole buckets of every width.
constexpr int64_t kBase = ceilTo(1'700'000'000 * kSecond, 44) - kHour + 12'345;
// The clock offset given to node-b: negative and not aligned to any bucket.
constexpr int64_t kOffset = -3 * kHour - 123'456'789;

struct GenSample
{
    int64_t threadId = 0;
    std::optional<int64_t> tsNs; // as stored (without clock offset)
    int64_t callsiteId = 0;
    int64_t count = 1;
    double weight = 0;
    int64_t importId = 0;
};

using Offsets = std::map<int64_t, int64_t>; // clock offset by thread id

inline int64_t shownTs(const GenSample& s, const Offsets& offsets)
{
    const auto it = offsets.find(s.threadId);
    return *s.tsNs + (it == offsets.end() ? 0 : it->second);
}

struct Sum
{
    int64_t samples = 0;
    double weight = 0;
};

struct BruteTotals
{
    std::map<int64_t, Sum> self;
    int64_t samples = 0;
    double weight = 0;
    int64_t untimedSamples = 0;
};

inline bool selected(const std::vector<int64_t>& threads, int64_t id)
{
    return threads.empty() || std::find(threads.begin(), threads.end(), id) != threads.end();
}

inline BruteTotals bruteTotals(const std::vector<GenSample>& all, const std::vector<int64_t>& threads, TimeWindow w,
                               bool untimed, const Offsets& offsets = {})
{
    BruteTotals out;
    for (const GenSample& s : all) {
        if (!selected(threads, s.threadId)) continue;
        if (s.tsNs) {
            const int64_t ts = shownTs(s, offsets);
            if (ts < w.fromNs || ts > w.toNs) continue;
        } else if (!untimed) {
            continue;
        }
        Sum& t = out.self[s.callsiteId];
        t.samples += s.count;
        t.weight += s.weight;
        out.samples += s.count;
        out.weight += s.weight;
        if (!s.tsNs) out.untimedSamples += s.count;
    }
    return out;
}

inline bool close(double got, double want)
{
    return std::fabs(got - want) <= 1e-9 * std::max(std::fabs(got), std::fabs(want));
}

// Empty when the totals agree (samples exactly, weights to 1e-9 relative), else the first difference.
inline std::string diffTotals(const StackWindowTotals& got, const BruteTotals& want)
{
    auto pair = [](int64_t n, double w) { return std::to_string(n) + " samples / " + std::to_string(w); };
    if (got.samples != want.samples || !close(got.weight, want.weight))
        return "total: got " + pair(got.samples, got.weight) + ", want " + pair(want.samples, want.weight);
    if (got.untimedSamples != want.untimedSamples)
        return "untimed: got " + std::to_string(got.untimedSamples) + ", want " + std::to_string(want.untimedSamples);
    const size_t n = got.self.samples.size();
    if (got.self.weight.size() != n) return "self samples and weights differ in size";
    if (!want.self.empty() && static_cast<size_t>(want.self.rbegin()->first) >= n)
        return "callsite " + std::to_string(want.self.rbegin()->first) + " missing";
    for (size_t id = 0; id < n; ++id) {
        const auto it = want.self.find(static_cast<int64_t>(id));
        const Sum w = it == want.self.end() ? Sum{} : it->second;
        if (got.self.samples[id] != w.samples || !close(got.self.weight[id], w.weight))
            return "callsite " + std::to_string(id) + ": got " + pair(got.self.samples[id], got.self.weight[id]) +
                   ", want " + pair(w.samples, w.weight);
    }
    return {};
}

inline std::string windowText(TimeWindow w)
{
    return "[" + std::to_string(w.fromNs) + ", " + std::to_string(w.toNs) + "]";
}

using SampleKey = std::tuple<int64_t, int64_t, int64_t, uint64_t>; // ts, callsite, count, weight bits

inline SampleKey key(int64_t ts, int64_t callsite, int64_t count, double weight)
{
    return {ts, callsite, count, std::bit_cast<uint64_t>(weight)};
}

// One import through RunWriter, in its own transaction.
inline Status writeImport(RunDatabase& db, const std::string& hash, const std::function<Status(RunWriter&)>& body)
{
    RUNLENS_ASSIGN_OR_RETURN(Transaction tx, db.transaction());
    RunWriter w(db);
    ImportRecord rec;
    rec.path = hash + ".perf";
    rec.contentHash = hash;
    rec.format = "test";
    Status s = w.beginImport(rec) ? body(w) : makeError(ErrorCode::Database, "beginImport failed");
    if (s) {
        ImportTotals totals;
        totals.contentHash = hash;
        totals.samples = w.samplesWritten();
        s = w.finishImport(totals, Diagnostics());
    }
    if (!s) return s.error();
    return tx.commit();
}

inline bool hasRow(Statement& st)
{
    auto row = st.step();
    return row && *row;
}

inline int64_t queryInt(RunDatabase& db, const std::string& sql)
{
    auto st = Statement::prepare(db.handle(), sql);
    return st && hasRow(*st) ? st->int64(0) : -1;
}

struct ThreadSpec
{
    int node;
    const char* process;
    int64_t pid;
    const char* name;
    int64_t tid;
    int weights;       // 0: count 1, weight 1; 1: count 1..3, weight 0.25 per count; 2: count 1, varying weight
    int64_t maxStepNs; // between samples, outside idle gaps: 4096 samples are ~30 min or ~15 s
    int gapOdds;       // one idle gap in this many samples
};

constexpr const char* kNodes[] = {"node-a", "node-b"};
constexpr ThreadSpec kThreads[] = {
    {0, "python3 train.py", 4100, "MainThread", 4100, 0, 800 * kMs, 1600},
    {0, "python3 train.py", 4100, "pt_autograd_0", 4107, 1, 800 * kMs, 1600},
    {0, "python3 train.py", 4100, "dataloader_0", 4121, 2, 8 * kMs, 8000},
    {1, "python3 train.py", 5200, "MainThread", 5200, 0, 800 * kMs, 1600},
    {1, "python3 train.py", 5200, "pt_autograd_0", 5209, 1, 800 * kMs, 1600},
    {1, "python3 train.py", 5200, "dataloader_0", 5230, 2, 8 * kMs, 8000},
    {0, "", 0, "folded", 0, 0, 0, 1}, // untimed stacks only
};
constexpr size_t kTimedThreads = 6;

inline GenSample sampleAt(std::mt19937_64& rng, int64_t threadId, int64_t ts, int weights,
                          const std::vector<int64_t>& sites)
{
    GenSample s;
    s.threadId = threadId;
    s.tsNs = ts;
    const size_t hot = rng() % 3 == 0 ? sites.size() : std::min<size_t>(24, sites.size()); // hot ones, long tail
    s.callsiteId = sites[rng() % hot];
    if (weights == 0) {
        s.weight = 1.0;
    } else if (weights == 1) {
        s.count = 1 + static_cast<int64_t>(rng() % 3);
        s.weight = 0.25 * static_cast<double>(s.count);
    } else {
        s.weight = static_cast<double>(1 + rng() % 999'999) / 1000.0;
    }
    return s;
}

// n samples of a thread like spec, up to maxStepNs apart with idle gaps of 1..41 min, plus samples on 2^36 ns
// boundaries and 1 ns before (their times added to boundaries).
inline std::vector<GenSample> timeline(std::mt19937_64& rng, int64_t threadId, const ThreadSpec& spec, int64_t start,
                                       int n, const std::vector<int64_t>& sites, std::vector<int64_t>& boundaries)
{
    std::vector<GenSample> out;
    int64_t t = start;
    for (int i = 0; i < n; ++i) {
        if (rng() % static_cast<uint64_t>(spec.gapOdds) == 0)
            t += kMinute + static_cast<int64_t>(rng() % (40 * kMinute));
        else
            t += static_cast<int64_t>(rng() % static_cast<uint64_t>(spec.maxStepNs));
        out.push_back(sampleAt(rng, threadId, t, spec.weights, sites));
    }
    for (int k = 0; k < 16; ++k) {
        const int64_t b = ceilTo(start + static_cast<int64_t>(rng() % static_cast<uint64_t>(t - start)), 36);
        if (b > t) continue;
        out.push_back(sampleAt(rng, threadId, b, spec.weights, sites));
        out.push_back(sampleAt(rng, threadId, b - 1, spec.weights, sites));
        boundaries.push_back(b);
    }
    return out;
}

// Writes samples in time order across threads, as a profiler's output would be, with a few neighbours swapped.
inline Status writeSamples(RunWriter& w, std::mt19937_64& rng, std::vector<GenSample> samples,
                           std::vector<GenSample>& all)
{
    std::stable_sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return *a.tsNs < *b.tsNs; });
    for (size_t i = 0; i + 1 < samples.size(); ++i)
        if (rng() % 50 == 0) std::swap(samples[i], samples[i + 1]);
    for (GenSample& s : samples) {
        RUNLENS_TRY(w.stackSample(s.threadId, s.callsiteId, s.tsNs, s.count, s.weight));
        s.importId = w.importId();
        all.push_back(s);
    }
    return okStatus();
}

inline Status writeUntimed(RunWriter& w, std::mt19937_64& rng, int64_t threadId, int rows,
                           const std::vector<int64_t>& sites, std::vector<GenSample>& all)
{
    for (int i = 0; i < rows; ++i) {
        GenSample s;
        s.threadId = threadId;
        s.callsiteId = sites[rng() % sites.size()];
        s.count = 10 + static_cast<int64_t>(rng() % 90);
        s.weight = 0.5 * static_cast<double>(s.count);
        s.importId = w.importId();
        RUNLENS_TRY(w.stackSample(s.threadId, s.callsiteId, std::nullopt, s.count, s.weight));
        all.push_back(s);
    }
    return okStatus();
}

// A schema version 1 file's stack tables (as release 1 created them); the upgrade adds what is missing.

inline size_t threadSamplesIn(const std::vector<GenSample>& all, int64_t thread, TimeWindow w)
{
    return static_cast<size_t>(std::count_if(all.begin(), all.end(), [&](const GenSample& s) {
        return s.threadId == thread && s.tsNs && *s.tsNs >= w.fromNs && *s.tsNs <= w.toNs;
    }));
}

// What the generated samples of one thread add up to.
struct ThreadTotals
{
    int64_t rows = 0, samples = 0, untimedRows = 0, timedSamples = 0;
    double weight = 0;
    std::optional<int64_t> firstNs, lastNs; // of the timed samples, as stored
    std::set<int64_t> imports;
};

inline ThreadTotals threadTotals(const std::vector<GenSample>& all, int64_t thread)
{
    ThreadTotals t;
    for (const GenSample& s : all) {
        if (s.threadId != thread) continue;
        ++t.rows;
        t.samples += s.count;
        t.weight += s.weight;
        t.imports.insert(s.importId);
        if (!s.tsNs) {
            ++t.untimedRows;
            continue;
        }
        t.timedSamples += s.count;
        t.firstNs = std::min(t.firstNs.value_or(kMaxNs), *s.tsNs);
        t.lastNs = std::max(t.lastNs.value_or(kMinNs), *s.tsNs);
    }
    return t;
}

inline QString nullable(std::optional<int64_t> v) // as a query prints it: NULL is empty
{
    return v ? QString::number(*v) : QString();
}

struct WindowCase
{
    std::string name;
    TimeWindow window;
    std::vector<int64_t> threads; // empty: all
    bool untimed = false;
};

} // namespace runlens::test::stack_store
