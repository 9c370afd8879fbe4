#include "tests/fuzz/fuzz_support.h"

#include "analysis/store/run_database.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;

namespace runlens::fuzz {

namespace {

[[noreturn]] void fatal(const std::string& what)
{
    std::fprintf(stderr, "fuzz support: %s\n", what.c_str());
    std::abort();
}

void removeScratch()
{
    std::error_code ec;
    fs::remove_all(scratchDir(), ec);
}

} // namespace

const std::string& scratchDir()
{
    // Never destroyed: removeScratch runs at exit, after the destructors of statics made later than this one.
    static const std::string& dir = *new std::string([] {
        std::error_code ec;
        const fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
        std::string tmpl = (base / "runlens-fuzz-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) fatal("cannot create a scratch folder in " + base.string());
        std::atexit(removeScratch);
        return tmpl;
    }());
    return dir;
}

std::string writeScratchFile(const std::string& name, std::string_view bytes)
{
    const std::string path = (fs::path(scratchDir()) / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) fatal("cannot write " + path);
    return path;
}

std::string freshRunDatabase()
{
    static const std::string empty = [] {
        const std::string path = (fs::path(scratchDir()) / "empty.runlens").string();
        auto db = store::RunDatabase::open(path, store::OpenMode::Create);
        if (!db) fatal("cannot create a run: " + db.error().toString());
        return path;
    }();
    const std::string path = (fs::path(scratchDir()) / "run.runlens").string();
    std::error_code ec;
    for (const char* suffix : {"-journal", "-wal", "-shm"})
        fs::remove(path + suffix, ec);
    // libFuzzer's timer signals interrupt the copy now and then: try again.
    for (int attempt = 0; attempt < 100; ++attempt) {
        ec.clear();
        fs::copy_file(empty, path, fs::copy_options::overwrite_existing, ec);
        if (ec != std::errc::interrupted) break;
    }
    if (ec) fatal("cannot copy the empty run: " + ec.message());
    return path;
}

} // namespace runlens::fuzz
