#include "importers/import_session.h"

#include "analysis/store/import_queries.h"
#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "importers/common/text_fields.h"
#include "importers/diagnostic_kinds.h"
#include "importers/input/input_stream.h"
#include "importers/node_assignment.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <set>

namespace fs = std::filesystem;

namespace runlens::importers {
namespace {

constexpr size_t kSniffBytes = size_t{64} * 1024;

int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// "rank2" before "rank10": runs of digits compare by value.
bool naturalLess(const std::string& a, const std::string& b)
{
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
            size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])))
                ++ie;
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])))
                ++je;
            const std::string_view da = std::string_view(a).substr(i, ie - i);
            const std::string_view db = std::string_view(b).substr(j, je - j);
            const auto ta = da.substr(std::min(da.find_first_not_of('0'), da.size()));
            const auto tb = db.substr(std::min(db.find_first_not_of('0'), db.size()));
            if (ta.size() != tb.size()) return ta.size() < tb.size();
            if (ta != tb) return ta < tb;
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j]) return a[i] < b[j];
        ++i;
        ++j;
    }
    return a.size() - i < b.size() - j;
}

// A folder as an absolute, normal path without a trailing separator (its name is a node's name).
fs::path absoluteFolder(const fs::path& p)
{
    std::error_code ec;
    fs::path folder = fs::weakly_canonical(p, ec);
    if (ec) folder = fs::absolute(p, ec);
    folder = folder.lexically_normal();
    if (!folder.has_filename() && folder.has_relative_path()) folder = folder.parent_path();
    return folder;
}

bool isRunDatabase(const fs::path& p)
{
    return p.extension() == ".runlens" || p.extension() == ".runlens-journal";
}

// Reads the first kSniffBytes of decoded text.
Expected<std::string> readHead(const std::string& path, const std::string& display)
{
    RUNLENS_ASSIGN_OR_RETURN(auto in, InputStream::open(path, display));
    std::string head;
    while (head.size() < kSniffBytes) {
        auto block = in->nextBlock();
        if (!block) {
            // A corrupt stream still has a recognisable head; the import reports the error with its place.
            if (!head.empty()) break;
            Error e = block.error();
            e.where.line = 1;
            return e;
        }
        if (block->empty()) break;
        // (an error after a good start is left to the import, which reports it with its line)
        head.append(block->substr(0, kSniffBytes - head.size()));
    }
    return head;
}

// When the points of an import lie more than kFarFromRunNs outside the range of the run's other points: a line
// saying how far (empty otherwise).
constexpr int64_t kFarFromRunNs = 3600LL * 1'000'000'000; // an hour: farther than any wait between collectors
Expected<std::string> farFromRun(store::RunDatabase& db, int64_t importId)
{
    RUNLENS_ASSIGN_OR_RETURN(const std::optional<store::ImportSpan> span, store::importSpan(db, importId));
    if (!span) return std::string();
    const int64_t first = span->firstNs, last = span->lastNs, runFirst = span->othersFirstNs,
                  runLast = span->othersLastNs;
    const int64_t gap = first > runLast ? first - runLast : runFirst > last ? runFirst - last : 0;
    if (gap <= kFarFromRunNs) return std::string();
    return fmt::format("the times estimated from the file's modification time lie {:.1f} h {} the run's other data: "
                       "the file was probably copied (cp, scp, a download); give start=",
                       static_cast<double>(gap) / 3.6e12, first > runLast ? "after" : "before");
}

// "4x200Gb/s", "4 × 200 Gb/s", "25GB/s", "100 Gbit/s", "800Gbps", or bytes/s as a plain number.
Expected<double> parseLinkCapacity(std::string_view text)
{
    std::string s;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text.substr(i, 2) == "\xc3\x97") { // ×
            s += 'x';
            ++i;
        } else if (text[i] != ' ') {
            s += text[i];
        }
    }
    double links = 1;
    if (const size_t x = s.find_first_of("xX*"); x != std::string::npos && x > 0) {
        auto n = parseNumber(std::string_view(s).substr(0, x));
        if (!n || *n <= 0)
            return makeError(ErrorCode::Usage, fmt::format("link_capacity: bad link count in \"{}\"", text));
        links = *n;
        s.erase(0, x + 1);
    }
    size_t unitStart = 0;
    while (unitStart < s.size() && (std::isdigit(static_cast<unsigned char>(s[unitStart])) || s[unitStart] == '.'))
        ++unitStart;
    auto value = parseNumber(std::string_view(s).substr(0, unitStart));
    const std::string unit = s.substr(unitStart);
    static const std::pair<const char*, double> kUnits[] = {
        {"", 1},         {"B/s", 1},       {"bytes/s", 1},   {"KB/s", 1e3},      {"MB/s", 1e6},      {"GB/s", 1e9},
        {"Kb/s", 125},   {"Mb/s", 1.25e5}, {"Gb/s", 1.25e8}, {"Gbit/s", 1.25e8}, {"Mbit/s", 1.25e5}, {"Gbps", 1.25e8},
        {"Mbps", 1.25e5}};
    for (const auto& [name, factor] : kUnits)
        if (unit == name && value && *value > 0) return links * *value * factor;
    return makeError(ErrorCode::Usage,
                     fmt::format("link_capacity: cannot read \"{}\" (e.g. 4x200Gb/s, 25GB/s, or bytes/s)", text));
}

} // namespace

const char* outcomeName(FileOutcome outcome)
{
    switch (outcome) {
    case FileOutcome::Imported:
        return "imported";
    case FileOutcome::AlreadyImported:
        return "already imported";
    case FileOutcome::Failed:
        return "failed";
    case FileOutcome::NotRecognised:
        return "not recognised";
    case FileOutcome::Cancelled:
        return "cancelled";
    }
    return "?";
}

std::pair<const Importer*, int> detectFormat(const SniffInput& input)
{
    const Importer* best = nullptr;
    int bestScore = 0;
    for (const Importer* i : allImporters()) {
        const int score = i->sniff(input);
        if (score > bestScore) {
            best = i;
            bestScore = score;
        }
    }
    return {best, bestScore};
}

Expected<std::vector<PlannedFile>> planImport(const std::vector<std::string>& paths, const ImportOptions& options)
{
    if (auto it = options.extra.find("link_capacity"); it != options.extra.end())
        if (auto c = parseLinkCapacity(it->second); !c) return c.error();
    RankMap rankMap;
    if (auto it = options.extra.find("rank_map"); it != options.extra.end()) {
        RUNLENS_ASSIGN_OR_RETURN(auto parsed, parseRankMap(it->second));
        rankMap = std::move(parsed);
    }
    const Importer* forced = nullptr;
    if (!options.format.empty()) {
        forced = importerByFormat(options.format);
        if (!forced) {
            std::string known;
            for (const Importer* i : allImporters())
                known += fmt::format(" {}", i->format());
            return makeError(ErrorCode::Usage,
                             fmt::format("unknown format \"{}\"; known formats:{}", options.format, known));
        }
    }

    // Each file with the folder group it belongs to (node_assignment.h).
    std::vector<std::pair<fs::path, FileOrigin>> files;
    for (const std::string& arg : paths) {
        std::error_code ec;
        const fs::path p(arg);
        if (fs::is_directory(p, ec)) {
            std::vector<fs::path> found;
            for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
                 it != end && !ec; it.increment(ec)) {
                const std::string name = it->path().filename().string();
                if (!name.empty() && name[0] == '.') {
                    if (it->is_directory()) it.disable_recursion_pending();
                    continue;
                }
                if (it->is_regular_file() && !isRunDatabase(it->path())) found.push_back(it->path());
            }
            if (ec) return makeError(ErrorCode::Io, fmt::format("{}: cannot list folder: {}", arg, ec.message()));
            std::sort(found.begin(), found.end(),
                      [](const fs::path& x, const fs::path& y) { return naturalLess(x.string(), y.string()); });
            const fs::path root = absoluteFolder(p);
            for (const fs::path& f : found) {
                const fs::path rel = f.lexically_relative(p);
                FileOrigin origin{root.string(), root.filename().string(), true};
                if (std::distance(rel.begin(), rel.end()) > 1) {
                    origin.folder = (root / *rel.begin()).string();
                    origin.folderName = rel.begin()->string();
                    origin.direct = std::distance(rel.begin(), rel.end()) == 2;
                }
                files.emplace_back(f, std::move(origin));
            }
        } else if (fs::exists(p, ec)) {
            const fs::path parent = absoluteFolder(fs::weakly_canonical(p, ec).parent_path());
            files.emplace_back(p, FileOrigin{parent.string(), parent.filename().string(), true});
        } else {
            return makeError(ErrorCode::Io, fmt::format("{}: no such file or folder", arg));
        }
    }

    std::vector<PlannedFile> plan;
    std::vector<FileOrigin> origins;
    for (auto& [path, origin] : files) {
        PlannedFile f;
        f.path = path.string();
        f.displayPath = path.string();
        auto head = readHead(f.path, f.displayPath);
        if (!head) {
            f.readError = head.error();
            f.problem = head.error().message;
        } else {
            const SniffInput sniff{*head, path.filename().string()};
            if (forced) {
                f.importer = forced;
                f.confidence = 100;
            } else {
                auto [importer, score] = detectFormat(sniff);
                f.importer = importer;
                f.confidence = score;
                if (!importer) f.problem = "format not recognised (use --format to name it)";
            }
            if (f.importer) f.hostLabel = f.importer->hostLabel(sniff);
            f.rank = fileRank(sniff.fileName, *head, f.importer && f.importer->format() == "chrome-trace");
        }
        plan.push_back(std::move(f));
        origins.push_back(std::move(origin));
    }
    assignNodes(plan, origins, options, rankMap);
    // Sources that may need the node's timed data to be placed in time come after it.
    std::stable_partition(plan.begin(), plan.end(),
                          [](const PlannedFile& f) { return !f.importer || !f.importer->placedByOthers(); });
    return plan;
}

std::vector<std::pair<PlannedFile, FileResult>> placeUnanchored(store::RunDatabase& db, int64_t beforeImportId,
                                                                const Progress* progress)
{
    std::vector<std::pair<PlannedFile, FileResult>> out;
    std::vector<PlannedFile> pending;
    auto waiting = store::unanchoredImports(db, beforeImportId);
    if (!waiting) return out; // nothing placed: the run stays as it was
    for (store::UnanchoredImport& u : *waiting) {
        PlannedFile f;
        f.path = f.displayPath = std::move(u.path);
        f.importer = importerByFormat(u.format);
        f.confidence = 100;
        f.node = std::move(u.node);
        f.nodeSource = std::move(u.nodeSource);
        std::error_code ec;
        if (f.importer && fs::is_regular_file(f.path, ec)) pending.push_back(std::move(f));
    }
    for (const PlannedFile& f : pending) {
        FileResult r = importFile(db, f, ImportOptions{}, progress);
        if (r.outcome == FileOutcome::Imported) out.emplace_back(f, std::move(r));
    }
    return out;
}

namespace {

// What the run already holds of a file's content, found before reading it: only a file of the same size can have
// the same content, so it is hashed up front only then.
struct EarlierImport
{
    std::optional<int64_t> same;     // imported and placed: nothing to do
    std::optional<int64_t> replaces; // imported but unanchored: this import replaces it when it can be placed
    std::string contentHash;         // set with same
};

Expected<EarlierImport> findEarlierImport(store::RunDatabase& db, store::RunWriter& writer, const PlannedFile& file,
                                          int64_t size)
{
    EarlierImport out;
    RUNLENS_ASSIGN_OR_RETURN(const bool sameSize, writer.hasImportOfSize(size));
    if (!sameSize) return out;
    RUNLENS_ASSIGN_OR_RETURN(std::string hash, contentHashOfFile(file.path));
    RUNLENS_ASSIGN_OR_RETURN(const std::optional<int64_t> earlier, writer.findImportByHash(hash));
    if (!earlier) return out;
    // An earlier import of the same content that could not be placed in time (unanchored) is replaced when this one
    // can be: start= is given now, or the run now holds timed data its steps match.
    RUNLENS_ASSIGN_OR_RETURN(const std::string anchor, store::importAnchor(db, *earlier));
    if (anchor == "unanchored") {
        out.replaces = earlier;
    } else {
        out.same = earlier;
        out.contentHash = std::move(hash);
    }
    return out;
}

// The node and the import row of a file, in the open transaction.
struct BegunImport
{
    int64_t nodeId = 0;
    int64_t importId = 0;
};

Expected<BegunImport> beginFileImport(store::RunWriter& writer, const PlannedFile& file, const ImportOptions& options,
                                      int64_t size)
{
    BegunImport out;
    // The zone is stored on the node as given; importers resolve it.
    RUNLENS_ASSIGN_OR_RETURN(out.nodeId, writer.node(file.node, file.nodeSource, options.timeZone));
    std::error_code ec;
    store::ImportRecord record;
    record.path = fs::absolute(file.path, ec).lexically_normal().string();
    record.sizeBytes = size;
    record.contentHash = fmt::format("pending:{}", nowNs());
    record.format = std::string(file.importer->format());
    record.importerVersion = file.importer->version();
    record.optionsJson = options.toJson();
    record.nodeId = out.nodeId;
    record.startedNs = nowNs();
    RUNLENS_ASSIGN_OR_RETURN(out.importId, writer.beginImport(record));
    return out;
}

// What is said about a file once its importer has read it: points the run already had, a cut last line, and
// estimated times far from the rest of the run.
void noteAfterReading(store::RunDatabase& db, store::RunWriter& writer, const LineReader& lines, ImportContext& ctx,
                      store::Diagnostics& diagnostics, int64_t importId)
{
    if (writer.duplicatesDropped() > 0) // not a problem: the same samples reached the run twice
        ctx.notes.push_back(fmt::format("{} points already stored by an earlier import (same series and time) "
                                        "were kept once",
                                        writer.duplicatesDropped()));
    if (lines.lastLineUnterminated())
        diagnostics.report(diag::kTruncatedLine, lines.location(), "the last line has no line ending");
    // Times estimated from the file's modification time that land far from everything else of the run: a copy
    // (cp, scp, a download) gave the file a new time. Said loudly, never taken silently.
    if (diagnostics.counts().count(std::string(diag::kEstimatedTime.name)) > 0 && ctx.anchor.state.empty())
        if (auto far = farFromRun(db, importId); far && !far->empty())
            diagnostics.report(diag::kFarFromRun, lines.location(), *far);
}

// The interconnect capacity of the node, when the data does not carry it (node_network_speed_bytes, the
// InfiniBand rate): a device attribute of the host, for link-load rules.
Status storeLinkCapacity(store::RunWriter& writer, const ImportOptions& options, int64_t nodeId,
                         std::vector<std::string>& notes)
{
    const auto it = options.extra.find("link_capacity");
    if (it == options.extra.end()) return okStatus();
    RUNLENS_ASSIGN_OR_RETURN(const double capacity, parseLinkCapacity(it->second));
    RUNLENS_ASSIGN_OR_RETURN(const int64_t host, writer.device(nodeId, "host", ""));
    RUNLENS_TRY(writer.setDeviceAttribute(host, "link_capacity_bytes_per_s", fmt::format("{:.0f}", capacity)));
    notes.push_back(fmt::format("interconnect capacity given as {} = {:.3g} GB/s", it->second, capacity / 1e9));
    return okStatus();
}

store::ImportTotals importTotals(const ImportContext& ctx, const store::RunWriter& writer, std::string contentHash)
{
    store::ImportTotals totals;
    totals.contentHash = std::move(contentHash);
    totals.rowsRead = ctx.rowsRead;
    totals.points = writer.pointsWritten();
    totals.samples = writer.samplesWritten();
    for (const std::string& n : ctx.notes)
        totals.summary += (totals.summary.empty() ? "" : "; ") + n;
    totals.anchor = ctx.anchor.state;
    totals.anchorStartNs = ctx.anchor.startNs;
    totals.anchorUncertaintyNs = ctx.anchor.uncertaintyNs;
    totals.anchorMethod = ctx.anchor.method;
    return totals;
}

} // namespace

FileResult importFile(store::RunDatabase& db, const PlannedFile& file, const ImportOptions& options,
                      const Progress* progress)
{
    FileResult result;
    const auto started = std::chrono::steady_clock::now();
    auto elapsedMs = [&] {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    };
    if (file.readError) {
        result.outcome = FileOutcome::Failed;
        result.error = *file.readError;
        return result;
    }
    if (!file.importer) {
        result.outcome = FileOutcome::NotRecognised;
        result.error = makeError(ErrorCode::Format, file.problem, {file.displayPath});
        return result;
    }
    // Returning through fail() or already() ends the file's transaction, if begun, by rolling it back
    // (store::Transaction).
    auto fail = [&](Error e) {
        result.outcome = e.code == ErrorCode::Cancelled ? FileOutcome::Cancelled : FileOutcome::Failed;
        if (e.where.file.empty()) e.where.file = file.displayPath;
        result.error = std::move(e);
        result.durationMs = elapsedMs();
        return std::move(result);
    };
    auto already = [&](int64_t importId) {
        result.outcome = FileOutcome::AlreadyImported;
        result.importId = importId;
        result.durationMs = elapsedMs();
        return std::move(result);
    };

    std::error_code ec;
    const auto size = static_cast<int64_t>(fs::file_size(file.path, ec));
    if (ec) return fail(makeError(ErrorCode::Io, "cannot read: " + ec.message()));
    store::RunWriter writer(db);
    auto earlier = findEarlierImport(db, writer, file, size);
    if (!earlier) return fail(earlier.error());
    if (earlier->same) {
        result.contentHash = earlier->contentHash;
        return already(*earlier->same);
    }

    auto input = InputStream::open(file.path, file.displayPath);
    if (!input) return fail(input.error());
    LineReader lines(**input);
    auto tx = db.transaction();
    if (!tx) return fail(tx.error());
    if (earlier->replaces)
        if (Status s = writer.removeUnplacedImport(*earlier->replaces); !s) return fail(s.error());
    auto begun = beginFileImport(writer, file, options, size);
    if (!begun) return fail(begun.error());

    // A file whose label names another folder's node stays on its folder's node, the samples of that label too.
    ImportContext ctx{lines, writer, result.diagnostics, options, begun->nodeId, file.node, progress, 0, {}, file.path,
                      {},    {}};
    if (!file.nodeProblem.empty()) {
        ctx.keptHostLabel = file.hostLabel.value_or("");
        result.diagnostics.report(diag::kNodeConflict, {file.displayPath}, file.nodeProblem);
    }
    if (Status s = file.importer->run(ctx); !s) return fail(s.error());
    if (earlier->replaces && ctx.anchor.state == "unanchored") // still placed nowhere: the earlier import stays
        return already(*earlier->replaces);
    if (Status s = writer.flushAll(); !s) return fail(s.error());
    noteAfterReading(db, writer, lines, ctx, result.diagnostics, begun->importId);

    result.contentHash = (*input)->contentHash();
    auto same = writer.findImportByHash(result.contentHash);
    if (!same) return fail(same.error());
    if (*same) return already(**same);
    if (Status s = storeLinkCapacity(writer, options, begun->nodeId, ctx.notes); !s) return fail(s.error());
    ctx.notes.insert(ctx.notes.begin(), fmt::format("node {} ({})", file.node, file.nodeSource));
    store::ImportTotals totals = importTotals(ctx, writer, result.contentHash);
    totals.durationMs = elapsedMs();
    if (Status s = writer.finishImport(totals, result.diagnostics); !s) return fail(s.error());
    if (Status s = tx->commit(); !s) return fail(s.error());

    result.outcome = FileOutcome::Imported;
    result.importId = begun->importId;
    result.rowsRead = totals.rowsRead;
    result.points = totals.points;
    result.samples = totals.samples;
    result.notes = std::move(ctx.notes);
    result.durationMs = elapsedMs();
    return result;
}

} // namespace runlens::importers
