#include "tests/test_support.h"

#include "analysis/store/user_query.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <zlib.h>
#include <zstd.h>

namespace runlens::test {

QString fixturesDir()
{
    const QString env = qEnvironmentVariable("RUNLENS_FIXTURES");
    const QString dir = env.isEmpty() ? QStringLiteral(RUNLENS_SHARED_DIR "/fixtures") : env;
    return QFileInfo(dir).isDir() ? QDir(dir).canonicalPath() : QString();
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

QStringList strs(std::initializer_list<const char*> items)
{
    QStringList out;
    for (const char* s : items)
        out << QString::fromUtf8(s);
    return out;
}

std::string encode(const QByteArray& text, const QString& encoding)
{
    const std::string plain = text.toStdString();
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

std::string varintBytes(uint64_t v)
{
    std::string s;
    for (; v >= 0x80; v >>= 7)
        s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    s.push_back(static_cast<char>(v));
    return s;
}

} // namespace runlens::test
