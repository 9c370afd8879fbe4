// Seeds the run database and codec targets (tests/fuzz/run.sh): imports the files given into a new run, as
// `runlens import` does, and writes the run and the BLOBs it holds, each with the mode byte its target reads first:
//   OUT/fuzz_run_database/run.runlens
//   OUT/fuzz_chunk_codec/point-N      0x00 + a point_chunk.data BLOB as stored
//   OUT/fuzz_stack_codec/samples-N    0x00 + a stack_chunk.data BLOB as stored
//   OUT/fuzz_stack_codec/totals-N     0x02 + a stack_chunk.summary BLOB
// Usage: fuzz_make_seeds OUT FILE...

#include "analysis/store/run_database.h"
#include "importers/import_session.h"
#include "tests/fuzz/fuzz_support.h"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <sqlite3.h>
#include <string>
#include <vector>

using namespace runlens;
namespace fs = std::filesystem;

namespace {

constexpr int kBlobsPerTable = 16;

int writeBlobs(sqlite3* db, const char* sql, const fs::path& dir, const std::string& name, char mode)
{
    fs::create_directories(dir);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
        std::fprintf(stderr, "fuzz_make_seeds: %s\n", sqlite3_errmsg(db));
        return -1;
    }
    int n = 0;
    while (n < kBlobsPerTable && sqlite3_step(st) == SQLITE_ROW) {
        const auto* blob = static_cast<const char*>(sqlite3_column_blob(st, 0));
        const int size = sqlite3_column_bytes(st, 0);
        std::string bytes(1, mode);
        bytes.append(blob ? blob : "", static_cast<size_t>(size));
        const fs::path file = dir / (name + "-" + std::to_string(n++));
        std::FILE* f = std::fopen(file.c_str(), "wb");
        if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
            std::fprintf(stderr, "fuzz_make_seeds: cannot write %s\n", file.c_str());
            if (f) std::fclose(f);
            sqlite3_finalize(st);
            return -1;
        }
        std::fclose(f);
    }
    sqlite3_finalize(st);
    return n;
}

int makeSeeds(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: fuzz_make_seeds OUT FILE...\n");
        return 2;
    }
    const fs::path out = argv[1];
    const fs::path runDir = out / "fuzz_run_database";
    fs::create_directories(runDir);
    const std::string runPath = (runDir / "run.runlens").string();
    fs::remove(runPath);

    auto db = store::RunDatabase::open(runPath, store::OpenMode::Create);
    if (!db) {
        std::fprintf(stderr, "fuzz_make_seeds: %s\n", db.error().toString().c_str());
        return 1;
    }
    importers::ImportOptions options;
    options.timeZone = "UTC";
    auto plan = importers::planImport(std::vector<std::string>(argv + 2, argv + argc), options);
    if (!plan) {
        std::fprintf(stderr, "fuzz_make_seeds: %s\n", plan.error().toString().c_str());
        return 1;
    }
    int imported = 0;
    for (const importers::PlannedFile& file : *plan) {
        const importers::FileResult r = importers::importFile(**db, file, options);
        if (r.outcome == importers::FileOutcome::Imported) ++imported;
    }

    sqlite3* h = (*db)->handle();
    const int points = writeBlobs(h, "SELECT data FROM point_chunk ORDER BY length(data) LIMIT 64",
                                  out / "fuzz_chunk_codec", "point", '\x00');
    const int samples = writeBlobs(h, "SELECT data FROM stack_chunk ORDER BY length(data) LIMIT 64",
                                   out / "fuzz_stack_codec", "samples", '\x00');
    const int totals = writeBlobs(h, "SELECT summary FROM stack_chunk ORDER BY length(summary) LIMIT 64",
                                  out / "fuzz_stack_codec", "totals", '\x02');
    if (points < 0 || samples < 0 || totals < 0) return 1;
    std::printf("seeded from %d of %zu files: a run, %d point chunks, %d stack chunks\n", imported, plan->size(),
                points, samples);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        return makeSeeds(argc, argv);
    } catch (const std::exception& e) { // a filesystem error, or out of memory
        std::fprintf(stderr, "fuzz_make_seeds: %s\n", e.what());
        return 1;
    }
}
