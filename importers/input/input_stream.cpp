#include "importers/input/input_stream.h"

#include "analysis/store/bounded_queue.h"

#include <QStringDecoder>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <mutex>
#include <vector>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

namespace runlens::importers {
namespace {

constexpr size_t kRawBlock = 1u << 20;

// The content hash of a file's bytes: XXH3-128 (several GB/s, so hashing never slows an import; an
// identity check between files, not a security measure), written "xxh3-128:<32 hex digits>".
class ContentHasher
{
public:
    ContentHasher() : m_state(XXH3_createState()) { XXH3_128bits_reset(m_state); }
    ~ContentHasher() { XXH3_freeState(m_state); }
    ContentHasher(const ContentHasher&) = delete;
    ContentHasher& operator=(const ContentHasher&) = delete;
    void add(const void* data, size_t size) { XXH3_128bits_update(m_state, data, size); }
    std::string hex() const
    {
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits_digest(m_state));
        std::string s = "xxh3-128:";
        for (unsigned char b : c.digest)
            s += fmt::format("{:02x}", b);
        return s;
    }

private:
    XXH3_state_t* m_state;
};

// UTF-16 without a byte-order mark (a redirect on some Windows tools, a conversion that dropped it): text whose
// first code units are nearly all ASCII, with a zero high byte. Returns 1 for little-endian, 2 for big-endian, else
// 0. UTF-8 text has no NUL bytes, so it is never taken for UTF-16.
int utf16WithoutBom(std::string_view block)
{
    const size_t pairs = std::min<size_t>(block.size(), 512) / 2;
    if (pairs < 4) return 0;
    size_t le = 0, be = 0;
    for (size_t k = 0; k < pairs; ++k) {
        const char a = block[2 * k], b = block[2 * k + 1];
        le += a != 0 && b == 0;
        be += a == 0 && b != 0;
    }
    // Nine in ten code units ASCII: a few letters outside it (µ, é) are still text.
    if (le * 10 >= pairs * 9) return 1;
    if (be * 10 >= pairs * 9) return 2;
    return 0;
}

} // namespace

const char* compressionName(Compression c)
{
    switch (c) {
    case Compression::Zstd:
        return "zstd";
    case Compression::Gzip:
        return "gzip";
    case Compression::None:
        return "none";
    case Compression::Auto:
        break;
    }
    return "auto";
}

struct InputStream::Block
{
    std::string data; // empty at the end
    std::optional<Error> error;
};

struct InputStream::Impl
{
    BoundedQueue<Block> queue{4};
    // Block buffers handed back by the consumer, so the reader does not allocate (and the kernel does not
    // zero fresh pages) for every block.
    std::mutex poolMutex;
    std::vector<std::string> pool;
    std::thread reader;
    std::string current;
    bool readerDone = false;

    std::FILE* file = nullptr;
    std::string memory; // fromMemory
    size_t memoryPos = 0;
    bool fromMemory = false;

    std::vector<char> raw = std::vector<char>(kRawBlock);
    size_t rawLen = 0;
    size_t rawPos = 0;
    bool rawEof = false;
    std::vector<char> out = std::vector<char>(kRawBlock * 4);
    std::string utf8; // transcoded block
    QString pendingHighSurrogate;
    uint64_t utf16Bytes = 0; // of UTF-16 text decoded (an odd count at the end: the file stops inside a code unit)
    std::optional<QStringDecoder> decoder;
    ContentHasher hash;
    bool finished = false;
    bool firstBlock = true;

    ZSTD_DStream* zstd = nullptr;
    size_t zstdLast = 0; // last ZSTD_decompressStream return: 0 when a frame is complete
    z_stream zs{};
    bool zInit = false;
    bool gzipMemberDone = true;

    ~Impl()
    {
        queue.close();
        if (reader.joinable()) reader.join();
        if (file) std::fclose(file);
        if (zstd) ZSTD_freeDStream(zstd);
        if (zInit) inflateEnd(&zs);
    }

    // Fills raw[] when it is used up; returns false on a read error.
    bool refill()
    {
        if (rawPos < rawLen || rawEof) return true;
        rawPos = 0;
        if (fromMemory) {
            rawLen = std::min(kRawBlock, memory.size() - memoryPos);
            std::memcpy(raw.data(), memory.data() + memoryPos, rawLen);
            memoryPos += rawLen;
        } else {
            rawLen = std::fread(raw.data(), 1, raw.size(), file);
            if (rawLen < raw.size() && std::ferror(file)) return false;
        }
        if (rawLen == 0) rawEof = true;
        hash.add(raw.data(), rawLen);
        return true;
    }
};

InputStream::InputStream() : d(std::make_unique<Impl>()) {}
InputStream::~InputStream()
{
    // Stop the read-ahead thread before any member it uses (the display name, counters) is destroyed.
    d->queue.close();
    if (d->reader.joinable()) d->reader.join();
}

Expected<std::unique_ptr<InputStream>> InputStream::open(const std::string& path, std::string displayName,
                                                         Compression compression)
{
    std::unique_ptr<InputStream> in(new InputStream());
    in->m_displayName = std::move(displayName);
    in->d->file = std::fopen(path.c_str(), "rb");
    if (!in->d->file)
        return makeError(ErrorCode::Io, fmt::format("cannot open: {}", std::strerror(errno)), {in->m_displayName});
    if (std::fseek(in->d->file, 0, SEEK_END) == 0) {
        const long size = std::ftell(in->d->file);
        in->m_rawSize = size > 0 ? static_cast<uint64_t>(size) : 0;
        std::fseek(in->d->file, 0, SEEK_SET);
    }
    in->m_compression = compression;
    return in;
}

std::unique_ptr<InputStream> InputStream::fromMemory(std::string data, std::string displayName)
{
    std::unique_ptr<InputStream> in(new InputStream());
    in->m_displayName = std::move(displayName);
    in->m_rawSize = data.size();
    in->d->memory = std::move(data);
    in->d->fromMemory = true;
    in->m_compression = Compression::Auto;
    return in;
}

std::string InputStream::contentHash() const
{
    return d->hash.hex();
}

void InputStream::startReader()
{
    d->reader = std::thread([this] {
        for (;;) {
            auto block = decompressBlock();
            Block b;
            if (!block)
                b.error = block.error();
            else {
                {
                    std::lock_guard lock(d->poolMutex);
                    if (!d->pool.empty()) {
                        b.data = std::move(d->pool.back());
                        d->pool.pop_back();
                    }
                }
                b.data.assign(block->data(), block->size());
            }
            const bool end = !block || b.data.empty();
            if (!d->queue.push(std::move(b)) || end) return;
        }
    });
}

Expected<std::string_view> InputStream::nextBlock()
{
    for (;;) {
        if (d->readerDone) return std::string_view();
        if (!d->reader.joinable()) startReader();
        std::optional<Block> b = d->queue.pop();
        if (!b) return std::string_view();
        if (b->error) {
            d->readerDone = true;
            d->reader.join();
            return *b->error;
        }
        if (d->current.capacity() > 0) {
            std::lock_guard lock(d->poolMutex);
            if (d->pool.size() < 8) d->pool.push_back(std::move(d->current));
        }
        d->current = std::move(b->data);
        const std::string_view raw(d->current);
        const bool last = raw.empty();
        if (last) {
            d->readerDone = true;
            d->reader.join();
        }
        Expected<std::string_view> block = raw;
        auto text = transcode(*block, last);
        if (!text) return text;
        if (!text->empty() || last) {
            m_decoded += text->size();
            return text;
        }
    }
}

Expected<std::string_view> InputStream::decompressBlock()
{
    Impl& x = *d;
    if (x.finished) return std::string_view();
    auto fail = [&](std::string msg) {
        x.finished = true;
        return makeError(ErrorCode::Compression, std::move(msg), {m_displayName});
    };
    if (!x.refill())
        return makeError(ErrorCode::Io, fmt::format("read error: {}", std::strerror(errno)), {m_displayName});

    if (x.firstBlock) {
        x.firstBlock = false;
        const auto* b = reinterpret_cast<const unsigned char*>(x.raw.data());
        if (m_compression == Compression::Auto) {
            if (x.rawLen >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
                m_compression = Compression::Zstd;
            else if (x.rawLen >= 2 && b[0] == 0x1f && b[1] == 0x8b)
                m_compression = Compression::Gzip;
            else
                m_compression = Compression::None;
        }
        if (m_compression == Compression::Zstd) {
            x.zstd = ZSTD_createDStream();
            if (!x.zstd) return fail("out of memory for zstd");
            const size_t r = ZSTD_initDStream(x.zstd);
            if (ZSTD_isError(r)) return fail(fmt::format("zstd: {}", ZSTD_getErrorName(r)));
        } else if (m_compression == Compression::Gzip) {
            if (inflateInit2(&x.zs, 15 + 32) != Z_OK) return fail("cannot initialise zlib");
            x.zInit = true;
        }
    }

    if (m_compression == Compression::None) {
        if (x.rawEof) {
            x.finished = true;
            return std::string_view();
        }
        std::string_view v(x.raw.data() + x.rawPos, x.rawLen - x.rawPos);
        m_rawRead += v.size();
        x.rawPos = x.rawLen;
        return v;
    }

    // Decompress until some output is produced or the input ends.
    for (;;) {
        if (!x.refill())
            return makeError(ErrorCode::Io, fmt::format("read error: {}", std::strerror(errno)), {m_displayName});
        if (x.rawEof && x.rawPos >= x.rawLen) {
            if (m_compression == Compression::Zstd && x.zstdLast != 0)
                return fail(fmt::format("truncated zstd frame: the file ends in the middle of a frame after {} "
                                        "compressed bytes",
                                        m_rawRead));
            if (m_compression == Compression::Gzip && !x.gzipMemberDone)
                return fail(fmt::format("truncated gzip stream: the file ends in the middle of a member after {} "
                                        "compressed bytes",
                                        m_rawRead));
            x.finished = true;
            return std::string_view();
        }
        const size_t before = x.rawPos;
        size_t produced = 0;
        if (m_compression == Compression::Zstd) {
            ZSTD_inBuffer in{x.raw.data(), x.rawLen, x.rawPos};
            ZSTD_outBuffer out{x.out.data(), x.out.size(), 0};
            const size_t r = ZSTD_decompressStream(x.zstd, &out, &in);
            if (ZSTD_isError(r))
                return fail(fmt::format("corrupt zstd data near compressed byte {}: {}", m_rawRead + (in.pos - before),
                                        ZSTD_getErrorName(r)));
            x.zstdLast = r;
            x.rawPos = in.pos;
            produced = out.pos;
        } else {
            if (x.gzipMemberDone) {
                // A new gzip member (concatenated .gz files are valid).
                if (inflateReset(&x.zs) != Z_OK) return fail("cannot reset zlib");
                x.gzipMemberDone = false;
            }
            x.zs.next_in = reinterpret_cast<Bytef*>(x.raw.data() + x.rawPos);
            x.zs.avail_in = static_cast<uInt>(x.rawLen - x.rawPos);
            x.zs.next_out = reinterpret_cast<Bytef*>(x.out.data());
            x.zs.avail_out = static_cast<uInt>(x.out.size());
            const int r = inflate(&x.zs, Z_NO_FLUSH);
            // Where zlib stopped: a checksum that does not match is found at the end of the member, bad deflate
            // data where it breaks.
            if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
                return fail(fmt::format("corrupt gzip data near compressed byte {}: {}",
                                        m_rawRead + (x.rawLen - x.zs.avail_in - before),
                                        x.zs.msg ? x.zs.msg : zError(r)));
            x.rawPos = x.rawLen - x.zs.avail_in;
            produced = x.out.size() - x.zs.avail_out;
            if (r == Z_STREAM_END) x.gzipMemberDone = true;
            if (r == Z_BUF_ERROR && produced == 0 && x.rawPos == before && !x.rawEof) {
                // zlib wants more input than this block: refill happens on the next turn.
            }
        }
        m_rawRead += x.rawPos - before;
        if (produced > 0) return std::string_view(x.out.data(), produced);
    }
}

Expected<std::string_view> InputStream::transcode(std::string_view block, bool last)
{
    Impl& x = *d;
    if (m_utf16 < 0) {
        if (block.empty()) return block;
        const auto* b = reinterpret_cast<const unsigned char*>(block.data());
        if (block.size() >= 2 && b[0] == 0xff && b[1] == 0xfe) {
            m_utf16 = 1;
            x.decoder.emplace(QStringDecoder::Utf16LE, QStringDecoder::Flag::Default);
            block.remove_prefix(2);
        } else if (block.size() >= 2 && b[0] == 0xfe && b[1] == 0xff) {
            m_utf16 = 2;
            x.decoder.emplace(QStringDecoder::Utf16BE, QStringDecoder::Flag::Default);
            block.remove_prefix(2);
        } else if (const int order = utf16WithoutBom(block); order != 0) {
            m_utf16 = order;
            x.decoder.emplace(order == 1 ? QStringDecoder::Utf16LE : QStringDecoder::Utf16BE,
                              QStringDecoder::Flag::Default);
        } else {
            m_utf16 = 0;
            if (block.size() >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf) block.remove_prefix(3);
        }
    }
    if (m_utf16 == 0) return block;
    x.utf16Bytes += block.size();
    if (last && x.utf16Bytes % 2 != 0)
        return makeError(ErrorCode::Format,
                         "invalid UTF-16 text: the file ends in the middle of a character (cut short?)",
                         {m_displayName});
    // Stateful decoding keeps a code unit split across blocks.
    QString s =
        x.pendingHighSurrogate + x.decoder->decode(QByteArrayView(block.data(), static_cast<qsizetype>(block.size())));
    x.pendingHighSurrogate.clear();
    // A surrogate pair split across blocks: keep its first half until the second arrives.
    if (!last && !s.isEmpty() && s.back().isHighSurrogate()) {
        x.pendingHighSurrogate = s.back();
        s.chop(1);
    }
    x.utf8 = s.toStdString();
    if (last && x.decoder->hasError()) return makeError(ErrorCode::Format, "invalid UTF-16 text", {m_displayName});
    return std::string_view(x.utf8);
}

Expected<std::string> contentHashOfFile(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return makeError(ErrorCode::Io, fmt::format("cannot open: {}", std::strerror(errno)), {path});
    ContentHasher hash;
    std::vector<char> buf(kRawBlock);
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0)
        hash.add(buf.data(), n);
    const bool bad = std::ferror(f);
    std::fclose(f);
    if (bad) return makeError(ErrorCode::Io, "read error", {path});
    return hash.hex();
}

} // namespace runlens::importers
