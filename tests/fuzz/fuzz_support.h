#pragma once

// Shared by the fuzz targets: a private scratch folder per process (in memory when /dev/shm exists), files
// written from the fuzzer's bytes, and a fresh run database per execution copied from one created at start,
// so every execution sees the same empty run and none depends on the ones before it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace runlens::fuzz {

// The process's scratch folder, created on first use and removed at exit.
const std::string& scratchDir();

// Writes bytes to scratchDir()/name (replacing it) and returns the path. Aborts when it cannot.
std::string writeScratchFile(const std::string& name, std::string_view bytes);

// A path to an empty run database (the schema and nothing else), fresh for each call: any earlier file at that
// path, and its journal, are replaced.
std::string freshRunDatabase();

inline std::string_view bytesOf(const uint8_t* data, size_t size)
{
    return {reinterpret_cast<const char*>(data), size};
}

} // namespace runlens::fuzz
