// Opening a run file: the bytes are written to a file and opened read-only through RunDatabase::open (the
// application id, schema version and upgrade checks), then read as the workbench reads a run it opens: the
// catalogue (nodes, devices, series, stack threads, imports and their problems, as timeline::loadRunCatalog does),
// the first series' points and envelope, and the stack catalogue with its window totals. A file that is not a
// run, or a corrupt one, must give an Error; a crash or a sanitizer report is a bug.

#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "analysis/store/stack_reader.h"
#include "tests/fuzz/fuzz_support.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

using namespace runlens;

namespace {

constexpr size_t kSeriesRead = 4;     // points and envelopes of this many series per execution
constexpr int kDiagnosticsRead = 100; // the catalogue's first problems per import

void readCatalogue(store::RunDatabase& db)
{
    store::RunReader reader(db);
    if (!reader.nodes() || !reader.devices()) return;
    auto series = reader.series();
    if (!series) return;
    if (!reader.stackThreads()) return;
    auto imports = reader.imports();
    if (!imports) return;
    for (const store::ImportInfo& info : *imports) {
        if (info.diagnostics <= 0) continue;
        if (!reader.diagnosticCounts(info.id) || !reader.diagnostics(info.id, kDiagnosticsRead)) return;
    }
    for (size_t i = 0; i < std::min(series->size(), kSeriesRead); ++i) {
        const store::SeriesInfo& s = (*series)[i];
        (void)reader.readPoints(s.id, {});
        (void)reader.readEnvelope(s.id, {}, 64);
    }

    store::StackReader stacks(db);
    if (!stacks.catalog() || !stacks.threads()) return;
    (void)stacks.totals({}, {}, true);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string path = fuzz::writeScratchFile("input.runlens", fuzz::bytesOf(data, size));
    std::error_code ec;
    for (const char* suffix : {"-journal", "-wal", "-shm"})
        std::filesystem::remove(path + suffix, ec);
    auto db = store::RunDatabase::open(path, store::OpenMode::ReadOnly);
    if (!db) return 0;
    readCatalogue(**db);
    return 0;
}
