#include "analysis/rules/straggler_rule.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace runlens::analysis {

namespace {

// The parts of `episodes` inside / outside the union of `by`, each part's saving the episode's in proportion to
// its length.
void cutEpisodes(const std::vector<FindingEpisode>& episodes, const std::vector<FindingEpisode>& by,
                 std::vector<FindingEpisode>& inside, std::vector<FindingEpisode>& outside)
{
    std::vector<FindingEpisode> cover = by;
    std::sort(cover.begin(), cover.end(),
              [](const FindingEpisode& a, const FindingEpisode& b) { return a.startNs < b.startNs; });
    for (const FindingEpisode& e : episodes) {
        const double length = static_cast<double>(e.endNs - e.startNs);
        const auto part = [&](int64_t from, int64_t to, std::vector<FindingEpisode>& into) {
            if (to <= from) return;
            const double saving =
                e.savingS >= 0 && length > 0 ? e.savingS * static_cast<double>(to - from) / length : -1;
            into.push_back({from, to, saving});
        };
        int64_t at = e.startNs;
        for (const FindingEpisode& c : cover) {
            if (c.endNs <= at || c.startNs >= e.endNs) continue;
            part(at, std::max(at, c.startNs), outside);
            part(std::max(at, c.startNs), std::min(e.endNs, c.endNs), inside);
            at = std::min(e.endNs, c.endNs);
        }
        part(at, e.endNs, outside);
    }
}

double secondsOf(const std::vector<FindingEpisode>& episodes)
{
    double s = 0;
    for (const FindingEpisode& e : episodes)
        s += static_cast<double>(e.endNs - e.startNs) / 1e9;
    return s;
}

} // namespace

void linkStragglerSymptoms(std::vector<Finding>& findings, const RuleParams& params)
{
    const StragglerParams q = StragglerParams::from(params);
    std::vector<Finding> split;
    for (const Finding& s : findings) {
        if (!isRankStraggler(s)) continue;
        const std::string who = s.evidence.value(QStringLiteral("unit")).toString().toStdString();
        std::set<std::string> nodes(s.nodes.begin(), s.nodes.end());
        for (Finding& f : findings) {
            if (f.rule != "COMM_BOUND" || !f.causedBy.empty()) continue;
            if (std::none_of(f.nodes.begin(), f.nodes.end(), [&](const std::string& n) { return nodes.count(n) > 0; }))
                continue;
            std::vector<FindingEpisode> in, out;
            cutEpisodes(f.episodes, s.episodes, in, out);
            const double total = secondsOf(f.episodes), inS = secondsOf(in);
            if (total <= 0 || inS <= 0) continue;

            // Communication-bound partly while the rank straggles: of the waits then, the straggler's lateness is
            // its symptom (at most what the straggler saves there); the rest, and the waits outside, are the
            // collectives' own and stay here. Split when the straggling part is long enough to be read on its own.
            if (inS < q.symptomMinS && inS / total < q.symptomOverlap) continue;
            Finding symptom = f;
            symptom.episodes.clear();
            std::vector<FindingEpisode> own = out;
            const double totalSaving = f.savingS;
            for (const FindingEpisode& e : in) {
                const double saving =
                    e.savingS >= 0 ? e.savingS : totalSaving * static_cast<double>(e.endNs - e.startNs) / 1e9 / total;
                const double late = std::min(saving, savingWithin(s, e.startNs, e.endNs));
                symptom.episodes.push_back({e.startNs, e.endNs, late});
                if (saving - late > 0) own.push_back({e.startNs, e.endNs, saving - late});
            }
            std::sort(own.begin(), own.end(),
                      [](const FindingEpisode& a, const FindingEpisode& b) { return a.startNs < b.startNs; });
            f.episodes = own;
            symptom.causedBy = "STRAGGLER " + who;
            for (Finding* g : {&symptom, &f}) {
                double saving = 0;
                for (const FindingEpisode& e : g->episodes)
                    saving += std::max(0.0, e.savingS);
                const double seconds = secondsOf(g->episodes);
                g->impact *= seconds / total;
                g->savingS = saving;
                // The title's duration is the part's.
                const std::string was = fmt::format(" for {:.0f} s", total);
                if (const size_t at = g->title.find(was); at != std::string::npos)
                    g->title.replace(at, was.size(), fmt::format(" for {:.0f} s", seconds));
            }
            symptom.evidence.insert(QStringLiteral("split_from_straggler"), true);
            if (f.episodes.empty()) { // all of it the straggler's
                symptom.evidence.remove(QStringLiteral("split_from_straggler"));
                f = std::move(symptom);
                continue;
            }
            split.push_back(std::move(symptom));
        }
    }
    for (Finding& f : split)
        findings.push_back(std::move(f));
}

} // namespace runlens::analysis
