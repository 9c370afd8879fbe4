#include "tests/test_support.h"

#include "analysis/store/user_query.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <algorithm>
#include <sqlite3.h>
#include <zlib.h>
#include <zstd.h>

namespace runlens::test {

QString fixturesDir()
{
    const QString env = qEnvironmentVariable("RUNLENS_FIXTURES");
    const QString dir = env.isEmpty() ? QStringLiteral(RUNLENS_SHARED_DIR "/fixtures") : env;
    return QFileInfo(dir).isDir() ? QDir(dir).canonicalPath() : QString();
}

QString fixtureRun(const char* name)
{
    const QString fixtures = fixturesDir();
    return fixtures.isEmpty() ? QString() : fixtures + QLatin1Char('/') + QLatin1String(name) + QLatin1Char('/');
}

std::string writeFile(const QTemporaryDir& dir, const QString& name, const std::string& bytes)
{
    const QString path = dir.filePath(name);
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes.data(), static_cast<qint64>(bytes.size()));
    return path.toStdString();
}

QStringList queryRows(const std::string& db, const std::string& sql)
{
    QStringList out;
    auto n = store::runUserQuery(
        db, sql, [](const std::vector<std::string>&) {},
        [&](const store::QueryRow& row) {
            QStringList cells;
            for (const std::string& v : row.values)
                cells << QString::fromStdString(v);
            out << cells.join(QLatin1Char('|'));
        });
    if (!n) out << QStringLiteral("query failed: ") + QString::fromStdString(n.error().toString());
    return out;
}

QString queryOne(const std::string& db, const std::string& sql)
{
    return queryRows(db, sql).value(0);
}

QString str(const char* s)
{
    return QString::fromUtf8(s);
}

QStringList strs(std::initializer_list<const char*> items)
{
    QStringList out;
    for (const char* s : items)
        out << QString::fromUtf8(s);
    return out;
}

std::string encode(const QByteArray& text, const QString& encoding)
{
    std::string plain = text.toStdString();
    if (encoding == QLatin1String("zstd")) return zstdCompress(plain);
    if (encoding == QLatin1String("gzip")) return gzipCompress(plain);
    if (encoding == QLatin1String("utf8bom") || encoding == QLatin1String("bom")) return "\xef\xbb\xbf" + plain;
    if (encoding == QLatin1String("utf16le")) {
        std::string out("\xff\xfe");
        for (const QChar c : QString::fromUtf8(text)) {
            out += static_cast<char>(c.unicode() & 0xff);
            out += static_cast<char>(c.unicode() >> 8);
        }
        return out;
    }
    return plain;
}

std::string zstdCompress(const std::string& bytes)
{
    std::string out(ZSTD_compressBound(bytes.size()), '\0');
    const size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
    if (ZSTD_isError(n)) qFatal("zstd: %s", ZSTD_getErrorName(n));
    out.resize(n);
    return out;
}

std::string gzipCompress(const std::string& bytes)
{
    z_stream zs{};
    if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) qFatal("deflateInit2");
    std::string out(deflateBound(&zs, bytes.size()) + 64, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    zs.avail_in = static_cast<uInt>(bytes.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) qFatal("deflate");
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

std::string rawBytes(std::initializer_list<int> bytes)
{
    std::string s;
    for (int b : bytes)
        s.push_back(static_cast<char>(b));
    return s;
}

std::string zstdFrame(const std::string& head, uint64_t fillBytes, char fill, bool declared)
{
    constexpr uint64_t kBlock = uint64_t{128} * 1024;
    std::string out = "\x28\xB5\x2F\xFD";
    if (declared) {
        out += static_cast<char>(0xE0); // 8-byte content size, single segment, no checksum, no dictionary
        const uint64_t size = head.size() + fillBytes;
        for (int b = 0; b < 8; ++b)
            out += static_cast<char>((size >> (8 * b)) & 0xff);
    } else {
        out += '\0';                      // no content size, a window descriptor, no checksum, no dictionary
        out += static_cast<char>(7 << 3); // window 2^(10 + 7) = 128 KiB
    }
    const auto blockHeader = [&](bool last, int type, uint64_t n) {
        const uint64_t h = (last ? 1u : 0u) | (static_cast<uint64_t>(type) << 1) | (n << 3);
        for (int b = 0; b < 3; ++b)
            out += static_cast<char>((h >> (8 * b)) & 0xff);
    };
    blockHeader(fillBytes == 0, 0, head.size());
    out += head;
    for (uint64_t left = fillBytes; left > 0;) {
        const uint64_t n = std::min(left, kBlock);
        left -= n;
        blockHeader(left == 0, 1, n);
        out += fill;
    }
    return out;
}

std::string execRaw(const std::string& path, const std::string& sql)
{
    sqlite3* h = nullptr;
    sqlite3_open(path.c_str(), &h);
    char* err = nullptr;
    const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
    std::string msg = rc == SQLITE_OK ? "" : err ? err : "error";
    sqlite3_free(err);
    sqlite3_close(h);
    return msg;
}

std::string varintBytes(uint64_t v)
{
    std::string s;
    for (; v >= 0x80; v >>= 7)
        s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    s.push_back(static_cast<char>(v));
    return s;
}

} // namespace runlens::test
