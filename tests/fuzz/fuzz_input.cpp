// The input pipeline: a file's bytes through InputStream (zstd / gzip detected by magic, UTF-16 transcoding, the
// content hash) and LineReader, as every importer reads them. The first byte chooses how the rest is presented:
// as it is (corrupt streams, odd encodings), compressed with zstd or with gzip (so the line splitter sees valid
// decompressed text), and how long a line may be before it is cut. Checks what line_reader.h promises: lines
// numbered 1, 2, 3, … without their line ending, a cut line exactly maxLineBytes long, offsets that only grow.

#include "importers/input/input_stream.h"
#include "importers/input/line_reader.h"
#include "tests/fuzz/fuzz_support.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <zlib.h>
#include <zstd.h>

using namespace runlens;

namespace {

[[noreturn]] void broken(const char* what)
{
    std::fprintf(stderr, "fuzz_input: %s\n", what);
    std::abort();
}

std::string zstdCompressed(std::string_view bytes)
{
    std::string out(ZSTD_compressBound(bytes.size()), '\0');
    const size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 1);
    if (ZSTD_isError(n)) broken("zstd compression failed");
    out.resize(n);
    return out;
}

std::string gzipCompressed(std::string_view bytes)
{
    z_stream zs{};
    if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) broken("deflateInit2 failed");
    std::string out(deflateBound(&zs, bytes.size()) + 64, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    zs.avail_in = static_cast<uInt>(bytes.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) broken("deflate failed");
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0) return 0;
    const uint8_t mode = data[0];
    const std::string_view rest = fuzz::bytesOf(data + 1, size - 1);
    std::string bytes;
    switch (mode % 4) {
    case 1:
        bytes = zstdCompressed(rest);
        break;
    case 2:
        bytes = gzipCompressed(rest);
        break;
    default:
        bytes = std::string(rest);
        break;
    }
    const size_t maxLine = (mode & 0x80) ? 1 + (mode & 0x3f) : importers::LineReader::kDefaultMaxLine;

    const std::string path = fuzz::writeScratchFile("input.log", bytes);
    auto input = importers::InputStream::open(path, "input.log");
    if (!input) return 0;
    importers::LineReader lines(**input, maxLine);
    importers::Line line;
    int64_t number = 0, offset = -1;
    for (;;) {
        auto more = lines.next(line);
        if (!more || !*more) break;
        if (line.number != ++number) broken("line numbers are not 1, 2, 3, ...");
        if (line.byteOffset <= offset && number > 1) broken("line offsets do not grow");
        offset = line.byteOffset;
        if (line.text.size() > maxLine) broken("a line longer than maxLineBytes");
        if (line.tooLong && line.text.size() != maxLine) broken("a cut line is not maxLineBytes long");
        if (line.text.find('\n') != std::string_view::npos) broken("a line holds a line feed");
    }
    (void)(*input)->contentHash();
    return 0;
}
