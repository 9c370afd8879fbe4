#pragma once

// Which node each planned file belongs to. Files are grouped by the folder they come from: each subfolder of a
// folder named on the command line (with everything below it), the files directly in a named folder, and the
// folder of each file named on the command line. A group is one node:
//   - the --node option, for every file;
//   - --rank-map (the rank_map option: "0-7=node01,8-15=node02"), for a file of a mapped rank (PlannedFile::rank);
//   - else a host label inside a file names the node of that file and, when it is the only label of its group,
//     of the group's unlabelled files too ("host label of the folder"); a label never reaches another group;
//   - else the group's folder name ("directory name"), or, in a flat folder whose files are named per node
//     (node01-gpu.csv, node01-stacks.folded, node02-gpu.csv, node02-stacks.folded), the name prefix;
//   - a group without a label whose subfolders hold only labelled files naming one host (a capture folder with a
//     prometheus/ dump) joins that host ("host label of a subfolder"), as a one-node capture;
//   - else the file name.
// A group holding unlabelled files whose label is another group's node (its folder name or the label of that
// folder's files), or that shares its label with another such group, is a conflict: its files keep their folder's
// node and each labelled file carries the problem (nodeProblem), naming both.

#include "importers/import_session.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::importers {

// Where a planned file was found.
struct FileOrigin
{
    std::string folder;     // the group's folder, absolute and normal
    std::string folderName; // its name: the group's node unless a label names another
    bool direct = false;    // the file is directly in `folder`, not further down
};

// rank → node, read from "0-7=node01,8-15=node02,16=node03" (the rank_map option); a usage error names the bad part.
using RankMap = std::map<int64_t, std::string>;
Expected<RankMap> parseRankMap(std::string_view text);

// The rank a file is of: a Chrome/Kineto trace's distributedInfo rank in its head, else "rank<N>" in its name
// (stacks-rank3.folded, kineto-rank0-step.json) not preceded by a letter.
std::optional<int64_t> fileRank(std::string_view fileName, std::string_view head, bool isTrace);

// Sets node, nodeSource and nodeProblem of every file of plan (origins[i] is where plan[i] was found).
void assignNodes(std::vector<PlannedFile>& plan, const std::vector<FileOrigin>& origins, const ImportOptions& options,
                 const RankMap& rankMap = {});

// A host-like name prefix of a file name ("node03" of "node03-nvidia-smi.csv"): letters then digits, before the first
// '-', '_' or '.'; empty when the name does not start so or the letters name a rank, GPU, step... rather than a host.
// stem receives the letters.
std::string nodeNamePrefix(std::string_view fileName, std::string* stem = nullptr);

} // namespace runlens::importers
