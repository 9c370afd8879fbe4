#include "analysis/compare/findings_compare.h"

#include <QJsonValue>
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

namespace runlens::analysis {

std::string findingCharacter(const Finding& f)
{
    std::string out = f.rule;
    for (const char* key : {"sub_type", "sub_cause", "frame"}) {
        const QJsonValue v = f.evidence.value(QString::fromLatin1(key));
        if (v.isString() && !v.toString().isEmpty()) out += std::string("/") + key + "=" + v.toString().toStdString();
    }
    // A symptom (the waiting ranks' time behind a straggler) is another finding than the standing one of the same
    // rule: matched by the rule it is a symptom of (the rest of causedBy names nodes and numbers).
    if (!f.causedBy.empty()) out += "/symptom of " + f.causedBy.substr(0, f.causedBy.find(' '));
    return out;
}

const char* statusName(FindingChange::Status s)
{
    switch (s) {
    case FindingChange::Status::Gone:
        return "gone";
    case FindingChange::Status::Still:
        return "still";
    case FindingChange::Status::New:
        return "new";
    }
    return "";
}

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

bool unbounded(store::TimeWindow w)
{
    return w.fromNs == kMin && w.toNs == kMax;
}

// The finding's saving within the window (inclusive bounds; the whole saving for an unbounded window).
double savingIn(const Finding& f, store::TimeWindow w)
{
    if (unbounded(w)) return f.savingS;
    return savingWithin(f, w.fromNs, w.toNs == kMax ? kMax : w.toNs + 1);
}

double shareOf(double savingS, store::TimeWindow w)
{
    if (w.fromNs == kMin || w.toNs == kMax || w.toNs <= w.fromNs) return 0;
    return savingS / (static_cast<double>(w.toNs - w.fromNs) / 1e9);
}

std::set<std::string> nodeSet(const Finding& f)
{
    return {f.nodes.begin(), f.nodes.end()};
}

// How well two findings of the same character match by their nodes: 3 the same nodes, 2 some in common, 1 one
// of them run-wide (no nodes), 0 disjoint (a match only when the runs share no node names: other machines), -1 not
// a match.
int nodeScore(const Finding& a, const Finding& b, bool namesComparable)
{
    const auto na = nodeSet(a), nb = nodeSet(b);
    if (na == nb) return 3;
    if (na.empty() || nb.empty()) return 1;
    for (const std::string& n : na)
        if (nb.count(n)) return 2;
    return namesComparable ? -1 : 0;
}

} // namespace

FindingsComparison compareFindings(const std::vector<Finding>& a, store::TimeWindow windowA,
                                   const std::vector<Finding>& b, store::TimeWindow windowB)
{
    std::vector<std::string> charA, charB;
    std::set<std::string> namesA, namesB;
    for (const Finding& f : a) {
        charA.push_back(findingCharacter(f));
        namesA.insert(f.nodes.begin(), f.nodes.end());
    }
    for (const Finding& f : b) {
        charB.push_back(findingCharacter(f));
        namesB.insert(f.nodes.begin(), f.nodes.end());
    }
    bool namesComparable = false;
    for (const std::string& n : namesA)
        if (namesB.count(n)) namesComparable = true;

    // Candidate pairs, the best first (node score, then the larger impact), matched greedily one to one.
    struct Pair
    {
        int score;
        double impact;
        size_t i, j;
    };
    std::vector<Pair> pairs;
    for (size_t i = 0; i < a.size(); ++i)
        for (size_t j = 0; j < b.size(); ++j) {
            if (charA[i] != charB[j]) continue;
            const int score = nodeScore(a[i], b[j], namesComparable);
            if (score >= 0) pairs.push_back({score, a[i].impact + b[j].impact, i, j});
        }
    std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) {
        return std::tie(x.score, x.impact) > std::tie(y.score, y.impact);
    });
    std::vector<bool> usedA(a.size(), false), usedB(b.size(), false);
    FindingsComparison out;
    auto sideA = [&](FindingChange& c, size_t i) {
        c.a = a[i];
        c.impactA = a[i].impact;
        c.savingA = savingIn(a[i], windowA);
        c.savingShareA = shareOf(c.savingA, windowA);
    };
    auto sideB = [&](FindingChange& c, size_t j) {
        c.b = b[j];
        c.impactB = b[j].impact;
        c.savingB = savingIn(b[j], windowB);
        c.savingShareB = shareOf(c.savingB, windowB);
    };
    for (const Pair& p : pairs) {
        if (usedA[p.i] || usedB[p.j]) continue;
        usedA[p.i] = usedB[p.j] = true;
        FindingChange c;
        c.status = FindingChange::Status::Still;
        sideA(c, p.i);
        sideB(c, p.j);
        c.sameNodes = p.score == 3;
        out.still.push_back(std::move(c));
    }
    for (size_t i = 0; i < a.size(); ++i)
        if (!usedA[i]) {
            FindingChange c;
            c.status = FindingChange::Status::Gone;
            sideA(c, i);
            out.gone.push_back(std::move(c));
        }
    for (size_t j = 0; j < b.size(); ++j)
        if (!usedB[j]) {
            FindingChange c;
            c.status = FindingChange::Status::New;
            sideB(c, j);
            out.added.push_back(std::move(c));
        }
    auto bySaving = [](auto key) {
        return [key](const FindingChange& x, const FindingChange& y) { return key(x) > key(y); };
    };
    std::stable_sort(out.gone.begin(), out.gone.end(), bySaving([](const FindingChange& c) { return c.savingA; }));
    std::stable_sort(out.still.begin(), out.still.end(),
                     bySaving([](const FindingChange& c) { return std::max(c.savingA, c.savingB); }));
    std::stable_sort(out.added.begin(), out.added.end(), bySaving([](const FindingChange& c) { return c.savingB; }));
    return out;
}

} // namespace runlens::analysis
