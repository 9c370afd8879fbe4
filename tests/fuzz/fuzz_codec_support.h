#pragma once

// The codec targets' framing: the first byte chooses a mode, the rest are the BLOB's bytes, given either as they
// are (zstd frame headers and corrupt frames) or compressed with zstd first, so the fuzzer reaches the varint
// decoding behind a valid frame as the database's BLOBs hold it.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <zstd.h>

namespace runlens::fuzz {

inline std::string zstdFrame(std::string_view bytes)
{
    std::string out(ZSTD_compressBound(bytes.size()), '\0');
    const size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 1);
    if (ZSTD_isError(n)) {
        std::fprintf(stderr, "zstd compression failed: %s\n", ZSTD_getErrorName(n));
        std::abort();
    }
    out.resize(n);
    return out;
}

[[noreturn]] inline void roundTripBroken(const char* target, const char* what)
{
    std::fprintf(stderr, "%s: round trip: %s\n", target, what);
    std::abort();
}

} // namespace runlens::fuzz
