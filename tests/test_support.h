#pragma once

// Helpers shared by the test executables: temporary folders, writing inputs, finding ../shared/fixtures.

#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <cstdint>
#include <initializer_list>
#include <string>

// QVERIFY for an Expected/Status: on failure the message is the error.
#define QVERIFY_OK(expr)                                                                                               \
    do {                                                                                                               \
        const auto& result_ = (expr);                                                                                  \
        QVERIFY2(result_.ok(), result_.ok() ? "" : result_.error().toString().c_str());                                \
    } while (false)

namespace runlens::test {

// The fixtures folder beside the project (../shared/fixtures), or an empty string when it is absent;
// tests that need it call QSKIP with a message then.
QString fixturesDir();

// The folder of a fixture run (fixturesDir()/name/, with the trailing '/'), or an empty string when the fixtures
// are absent.
QString fixtureRun(const char* name);

// Writes bytes to dir/name and returns the full path.
std::string writeFile(const QTemporaryDir& dir, const QString& name, const std::string& bytes);

// Rows of a read-only query on a run database, cells joined by '|'; a failure is one row "query failed: ...".
QStringList queryRows(const std::string& db, const std::string& sql);

// The first row of queryRows (empty when there is none).
QString queryOne(const std::string& db, const std::string& sql);

// A UTF-8 literal as a QString.
QString str(const char* s);

// A list of UTF-8 literals as QStrings (for data-driven rows).
QStringList strs(std::initializer_list<const char*> items);

// Text as a test input file: "zstd", "gzip", "utf8bom" (also "bom"), "utf16le", or as it is for anything else.
std::string encode(const QByteArray& text, const QString& encoding);

// zstd-compresses bytes (level 3) with the zstd command-line tool's format (a standard frame).
std::string zstdCompress(const std::string& bytes);
// gzip-compresses bytes.
std::string gzipCompress(const std::string& bytes);

// Bytes written by hand, for damaged-blob inputs.
std::string rawBytes(std::initializer_list<int> bytes);
// An unsigned LEB128 varint, as the chunk codecs write them.
std::string varintBytes(uint64_t v);

// A zstd frame whose content is `head` (one raw block) followed by `fillBytes` bytes of `fill` in RLE blocks: 4 bytes
// per 128 KiB, so a few KB of frame hold a gigabyte. Declared: single segment with the content size (as the chunk
// codecs read it); else a 128 KiB window and no size (as a streaming decoder accepts it, whatever the size).
std::string zstdFrame(const std::string& head, uint64_t fillBytes, char fill = '\0', bool declared = true);

// Runs SQL on a plain SQLite connection to the file (as another program would); the error message, or "".
std::string execRaw(const std::string& path, const std::string& sql);

// nvidia-smi --query-gpu CSV: `gpus` GPUs × `samples` samples at 1 s from second `start`, values with units.
inline std::string nvsmiCsv(int gpus, int samples, int start = 0)
{
    std::string s = "timestamp, index, name, pci.bus_id, utilization.gpu [%], memory.used [MiB]\n";
    for (int i = start; i < start + samples; ++i)
        for (int g = 0; g < gpus; ++g)
            s += QStringLiteral("2026/01/02 %1:%2:%3.000, %4, NVIDIA H200, 00000000:%5:00.0, %6 %, %7 MiB\n")
                     .arg(3 + i / 3600, 2, 10, QLatin1Char('0'))
                     .arg(i / 60 % 60, 2, 10, QLatin1Char('0'))
                     .arg(i % 60, 2, 10, QLatin1Char('0'))
                     .arg(g)
                     .arg(g + 10)
                     .arg((7 * i + g) % 101)
                     .arg(1000 + i)
                     .toStdString();
    return s;
}

} // namespace runlens::test
