// One importer family (RUNLENS_FUZZ_FORMATS, e.g. "prometheus-text,prometheus-json"): the bytes are the content of
// a file imported into a fresh run as `runlens import` does it: planImport (format detection, host label, node),
// then importFile (one transaction). A file detected as one of the family's formats is imported as detected;
// any other is imported with the format forced (`--format`), the family's formats taken in turn by its size.
// Every outcome (imported, failed with an Error, not recognised) is fine; a crash or a sanitizer report is not.

#include "analysis/store/run_database.h"
#include "importers/import_session.h"
#include "importers/importer.h"
#include "tests/fuzz/fuzz_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace runlens;

namespace {

std::vector<std::string> familyFormats()
{
    std::vector<std::string> out;
    std::string all = RUNLENS_FUZZ_FORMATS;
    for (size_t at = 0; at <= all.size();) {
        const size_t comma = std::min(all.find(',', at), all.size());
        out.push_back(all.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

const std::vector<std::string>& formats()
{
    static const std::vector<std::string> f = familyFormats();
    return f;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    for (const std::string& f : formats())
        if (!importers::importerByFormat(f)) {
            std::fprintf(stderr, "fuzz_import: unknown format %s\n", f.c_str());
            std::abort();
        }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string file = fuzz::writeScratchFile("rank0-input.log", fuzz::bytesOf(data, size));
    importers::ImportOptions options;
    options.timeZone = "UTC"; // naive local times read the same on every machine
    auto plan = importers::planImport({file}, options);
    if (!plan || plan->size() != 1) return 0;
    const importers::Importer* detected = plan->front().importer;
    if (!detected || std::find(formats().begin(), formats().end(), detected->format()) == formats().end()) {
        options.format = formats()[size % formats().size()];
        plan = importers::planImport({file}, options);
        if (!plan || plan->size() != 1) return 0;
    }

    auto db = store::RunDatabase::open(fuzz::freshRunDatabase(), store::OpenMode::ReadWrite);
    if (!db) {
        std::fprintf(stderr, "fuzz_import: %s\n", db.error().toString().c_str());
        std::abort();
    }
    importers::importFile(**db, plan->front(), options);
    return 0;
}
