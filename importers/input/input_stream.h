#pragma once

// The input pipeline shared by every importer: a file read as a stream of blocks, decompressed when it
// is zstd or gzip (detected by magic bytes, not the extension), transcoded to UTF-8 when it starts with a
// UTF-16 byte-order mark, and hashed (XXH3-128 of the bytes on disk) as it is read.
// Every zstd/zlib return code is checked: a corrupt or truncated stream is an Error, never a short file.

#include "analysis/store/error.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace runlens::importers {

enum class Compression
{
    Auto,
    None,
    Zstd,
    Gzip
};
const char* compressionName(Compression c);

class InputStream
{
public:
    // displayName is how errors name the file (usually the path as the user gave it).
    static Expected<std::unique_ptr<InputStream>> open(const std::string& path, std::string displayName,
                                                       Compression compression = Compression::Auto);
    // An in-memory input (tests, stdin captures); data is copied.
    static std::unique_ptr<InputStream> fromMemory(std::string data, std::string displayName);
    virtual ~InputStream();

    // The next block of decompressed UTF-8 text; an empty view at the end. The view stays valid until
    // the next call.
    Expected<std::string_view> nextBlock();

    Compression compression() const { return m_compression; }
    const std::string& displayName() const { return m_displayName; }
    uint64_t rawBytesRead() const { return m_rawRead.load(std::memory_order_relaxed); }
    uint64_t rawSize() const { return m_rawSize; }
    uint64_t decodedBytes() const { return m_decoded; }
    // Content hash of all raw bytes ("xxh3-128:" + hex); complete once nextBlock() has returned the end.
    std::string contentHash() const;
    bool transcodedFromUtf16() const { return m_utf16 != 0; }

private:
    struct Impl;
    struct Block;
    InputStream();
    // Reading, hashing and decompression run on a read-ahead thread; nextBlock() takes their blocks.
    void startReader();
    Expected<std::string_view> decompressBlock();
    Expected<std::string_view> transcode(std::string_view block, bool last);

    std::unique_ptr<Impl> d;
    std::string m_displayName;
    Compression m_compression = Compression::None;
    std::atomic<uint64_t> m_rawRead{0};
    uint64_t m_rawSize = 0;
    uint64_t m_decoded = 0;
    int m_utf16 = -1; // -1 not yet known, 0 no, 1 little-endian, 2 big-endian
};

// Computes the content hash of a file's bytes without decoding it (for the re-import check).
Expected<std::string> contentHashOfFile(const std::string& path);

} // namespace runlens::importers
