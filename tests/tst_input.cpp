// The input pipeline: compression and text encoding detection, line splitting across blocks, long lines,
// errors for truncated or corrupt streams, content hashes (BLAKE2b-256 of the raw bytes), the CSV field splitter
// every CSV importer shares, the lines an importer reads (long ones skipped and reported), documents read whole and
// the calendar dates of day counts.

#include "analysis/store/run_database.h"
#include "importers/common/time_parse.h"
#include "importers/common/whole_input.h"
#include "importers/importer.h"
#include "importers/input/csv_fields.h"
#include "importers/input/input_stream.h"
#include "importers/input/line_reader.h"
#include "tests/test_support.h"

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <random>
#include <xxhash.h>

using namespace runlens;
using namespace runlens::importers;

namespace {

constexpr qsizetype kBlock = 1 << 20; // the stream's raw block size

struct RefLine
{
    QByteArray text;
    int64_t number = 0;
    int64_t offset = 0;
    bool tooLong = false;
};

// The reference split: "\n" ends a line, one "\r" before it is dropped, the last line may lack a newline.
std::vector<RefLine> splitLines(const QByteArray& s, qsizetype maxLine)
{
    std::vector<RefLine> out;
    for (qsizetype pos = 0; pos < s.size();) {
        const qsizetype nl = s.indexOf('\n', pos);
        const qsizetype end = nl < 0 ? s.size() : nl;
        RefLine l{s.mid(pos, end - pos), int64_t(out.size()) + 1, pos, false};
        if (l.text.endsWith('\r')) l.text.chop(1);
        l.tooLong = l.text.size() > maxLine;
        if (l.tooLong) l.text.truncate(maxLine);
        out.push_back(l);
        pos = end + 1;
    }
    return out;
}

// The content hash the stream reports: XXH3-128 of the raw bytes, computed here in one shot.
std::string xxh3(const QByteArray& raw)
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(raw.constData(), static_cast<size_t>(raw.size())));
    return "xxh3-128:" + QByteArray(reinterpret_cast<const char*>(c.digest), 16).toHex().toStdString();
}

QByteArray zst(const QByteArray& s)
{
    return QByteArray::fromStdString(test::zstdCompress(s.toStdString()));
}
QByteArray gz(const QByteArray& s)
{
    return QByteArray::fromStdString(test::gzipCompress(s.toStdString()));
}

// UTF-16 with a byte-order mark.
QByteArray utf16(const QString& s, bool bigEndian)
{
    QByteArray out;
    auto put = [&](char16_t u) {
        const char hi = char(u >> 8), lo = char(u & 0xff);
        out.append(bigEndian ? hi : lo).append(bigEndian ? lo : hi);
    };
    put(0xfeff);
    for (QChar c : s)
        put(c.unicode());
    return out;
}

// About size bytes of lines of varied length (mostly short, some long, a quarter with CRLF).
QByteArray variedLines(qsizetype size, unsigned seed)
{
    std::mt19937 rng(seed);
    QByteArray out;
    out.reserve(size + 6000);
    while (out.size() < size) {
        const int len = rng() % 10 == 0 ? int(rng() % 5000) : int(rng() % 200);
        const qsizetype start = out.size();
        for (int i = 0; i < len; ++i)
            out.append(char(i % 17 == 5 ? ',' : 'a' + (start + i) % 26));
        out.append(rng() % 4 == 0 ? "\r\n" : "\n");
    }
    return out;
}

// Lines of about size UTF-16 code units of random non-ASCII text, with characters outside the BMP when astral
// (little redundancy, so compressed blocks end at arbitrary bytes).
QString variedUnicode(qsizetype size, unsigned seed, bool astral)
{
    std::mt19937 rng(seed);
    const QString words[] = {QStringLiteral("größe"), QStringLiteral("😀"),  QStringLiteral("°C,"),
                             QStringLiteral("\r\n"),  QStringLiteral("\n"), QStringLiteral("𝄞")};
    QString out;
    while (out.size() < size) {
        const unsigned r = rng() % 16;
        if (r < 6 && (astral || (r != 1 && r != 5)))
            out += words[r];
        else
            out += QChar(char16_t(r < 10 ? 0x4e00 + rng() % 20000 : 'a' + rng() % 26));
    }
    return out;
}

} // namespace

class TestInput : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    static void addRow(const char* name, const QString& file, const QByteArray& raw, const QByteArray& decoded,
                       Compression compression, qint64 maxLine = 0, const QByteArrayList& literal = {"<none>"})
    {
        QTest::newRow(name) << file << raw << decoded << int(compression) << maxLine << literal;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void readLines_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QByteArray>("raw");     // the bytes on disk
        QTest::addColumn<QByteArray>("decoded"); // the UTF-8 text the reader splits
        QTest::addColumn<int>("compression");
        QTest::addColumn<qint64>("maxLine");         // 0: the default limit
        QTest::addColumn<QByteArrayList>("literal"); // the expected lines written out, or {"<none>"}
        const auto P = QStringLiteral("data.csv");
        const auto none = Compression::None;

        const QByteArray plain("a,b,c\n1,2,3\n\nlast\n");
        addRow("plain", P, plain, plain, none, 0, {"a,b,c", "1,2,3", "", "last"});
        const QByteArray crlf("h1,h2\r\n1,2\r\n\r\n3,4\r\n");
        addRow("crlf line endings", P, crlf, crlf, none, 0, {"h1,h2", "1,2", "", "3,4"});
        const QByteArray cr("a\r\nb\nc\rd\n\r\r\n");
        addRow("lone cr kept inside a line", P, cr, cr, none, 0, {"a", "b", "c\rd", "\r"});
        addRow("no trailing newline", P, "x\ny", "x\ny", none, 0, {"x", "y"});
        addRow("no trailing newline after cr", P, "x\r\ny\r", "x\r\ny\r", none, 0, {"x", "y"});
        addRow("empty file", P, "", "", none, 0, {});
        addRow("only a newline", P, "\n", "\n", none, 0, {""});
        addRow("utf-8 bom stripped", P, "\xef\xbb\xbfname,value\n\xc3\xa4,1\n", "name,value\n\xc3\xa4,1\n", none, 0,
               {"name,value", "\xc3\xa4,1"});

        const QString unicode = QStringLiteral("größe,°C\r\n温度,😀\n\nlast 𝄞");
        const QByteArrayList unicodeLines = {"größe,°C", "温度,😀", "", "last 𝄞"};
        addRow("utf-16le with bom", P, utf16(unicode, false), unicode.toUtf8(), none, 0, unicodeLines);
        addRow("utf-16be with bom", P, utf16(unicode, true), unicode.toUtf8(), none, 0, unicodeLines);

        const QByteArray text("time,value\n1,2.5\n2,[N/A]\n");
        const QByteArrayList textLines = {"time,value", "1,2.5", "2,[N/A]"};
        addRow(".zst", QStringLiteral("data.csv.zst"), zst(text), text, Compression::Zstd, 0, textLines);
        addRow(".gz", QStringLiteral("data.csv.gz"), gz(text), text, Compression::Gzip, 0, textLines);
        addRow("zstd detected by magic bytes", P, zst(text), text, Compression::Zstd, 0, textLines);
        addRow("gzip detected by magic bytes", P, gz(text), text, Compression::Gzip, 0, textLines);
        const QByteArray a("first\nsecond li"), b("ne continues\nthird\n");
        const QByteArrayList abLines = {"first", "second line continues", "third"};
        addRow("concatenated gzip members", QStringLiteral("cat.gz"), gz(a) + gz(b), a + b, Compression::Gzip, 0,
               abLines);
        addRow("concatenated zstd frames", QStringLiteral("cat.zst"), zst(a) + zst(b), a + b, Compression::Zstd, 0,
               abLines);
        addRow("concatenated zstd frames with an empty frame", QStringLiteral("cat.zst"), zst(a) + zst({}) + zst(b),
               a + b, Compression::Zstd, 0, abLines);

        QByteArray huge(qsizetype{10} * 1000 * 1000, 'x');
        for (qsizetype i = 0; i < huge.size(); i += 1000)
            huge[i] = char('a' + (i / 1000) % 26);
        const QByteArray hugeText = "head\n" + huge + "\ntail\n";
        addRow("10 MB line", P, hugeText, hugeText, none, 0, {"head", huge, "tail"});
        addRow("10 MB line, zstd", QStringLiteral("huge.zst"), zst(hugeText), hugeText, Compression::Zstd, 0,
               {"head", huge, "tail"});

        const QByteArray longLines("short\n0123456789abcdefghijklmnopqrstuvwxyz\nnext line\n"
                                   "0123456789abcdefg\r\n0123456789abcdef\r\nafter\nlast line too long");
        addRow("lines over a 16-byte limit", P, longLines, longLines, none, 16,
               {"short", "0123456789abcdef", "next line", "0123456789abcdef", "0123456789abcdef", "after",
                "last line too lo"});

        const QByteArray varied = variedLines(3 * kBlock, 1);
        addRow("3 MB of lines across 1 MiB blocks", P, varied, varied, none);
        addRow("3 MB of lines, zstd", QStringLiteral("v.zst"), zst(varied), varied, Compression::Zstd);
        addRow("3 MB of lines, gzip", QStringLiteral("v.gz"), gz(varied), varied, Compression::Gzip);
        addRow("3 MB of lines, 300-byte limit", P, varied, varied, none, 300);
        addRow("3 MB of lines, zstd, 300-byte limit", QStringLiteral("v.zst"), zst(varied), varied, Compression::Zstd,
               300);

        QByteArray split;
        while (split.size() < kBlock - 200)
            split += QByteArray(99, 'a') + '\n';
        split += QByteArray(kBlock - 1 - split.size(), 'b');
        addRow("crlf split by the block boundary", P, split + "\r\nafter\n", split + "\r\nafter\n", none);
        addRow("newline at the end of a block", P, split + "\nafter\n", split + "\nafter\n", none);
        addRow("newline at the start of a block", P, split + "c\nafter", split + "c\nafter", none);

        QByteArray garbage(300000, '\0');
        std::mt19937 rng(3);
        for (char& c : garbage)
            c = char(rng());
        garbage[0] = 'G'; // not a magic number or byte-order mark
        addRow("garbage bytes as plain text", P, garbage, garbage, none);

        // A surrogate pair whose halves lie in different raw blocks of a plain UTF-16 file.
        QString pair;
        while (pair.size() < kBlock / 2 - 100)
            pair += QStringLiteral("line of text\n");
        pair += QString(kBlock / 2 - 2 - pair.size(), QLatin1Char('p')); // the high surrogate ends block 1
        pair += QStringLiteral("😀 after\nend\n");
        addRow("utf-16le surrogate pair across the block boundary", P, utf16(pair, false), pair.toUtf8(), none);
        const QString bmp = variedUnicode(3 * kBlock, 5, false), astral = variedUnicode(3 * kBlock, 6, true);
        addRow("utf-16be, 6 MB", P, utf16(bmp, true), bmp.toUtf8(), none);
        addRow("utf-16le, 6 MB, zstd", QStringLiteral("u16.zst"), zst(utf16(bmp, false)), bmp.toUtf8(),
               Compression::Zstd);
        // Compressed blocks end at any byte, so a code unit is split between two blocks.
        addRow("utf-16le, 6 MB, gzip", QStringLiteral("u16.gz"), gz(utf16(bmp, false)), bmp.toUtf8(),
               Compression::Gzip);
        addRow("utf-16le, 6 MB, outside the BMP", P, utf16(astral, false), astral.toUtf8(), none);
        addRow("utf-16le, 6 MB, outside the BMP, gzip", QStringLiteral("a16.gz"), gz(utf16(astral, false)),
               astral.toUtf8(), Compression::Gzip);
    }

    void readLines()
    {
        QFETCH(QString, file);
        QFETCH(QByteArray, raw);
        QFETCH(QByteArray, decoded);
        QFETCH(int, compression);
        QFETCH(qint64, maxLine);
        QFETCH(QByteArrayList, literal);
        const size_t limit = maxLine > 0 ? size_t(maxLine) : LineReader::kDefaultMaxLine;
        const std::vector<RefLine> want = splitLines(decoded, qsizetype(limit));
        if (literal != QByteArrayList{"<none>"}) {
            QByteArrayList wantText;
            for (const RefLine& l : want)
                wantText.append(l.text);
            QCOMPARE(wantText, literal); // the reference split agrees with the lines written out
        }
        const std::string path = test::writeFile(m_dir, file, raw.toStdString());
        const std::string name = file.toStdString();

        for (const bool fromFile : {true, false}) {
            std::unique_ptr<InputStream> in;
            if (fromFile) {
                auto opened = InputStream::open(path, name);
                QVERIFY_OK(opened);
                in = std::move(opened.value());
            } else {
                in = InputStream::fromMemory(raw.toStdString(), name);
            }
            LineReader reader(*in, limit);
            std::vector<RefLine> got;
            Line line;
            for (;;) {
                auto more = reader.next(line);
                QVERIFY_OK(more);
                if (!*more) break;
                got.push_back({QByteArray(line.text.data(), qsizetype(line.text.size())), line.number, line.byteOffset,
                               line.tooLong});
            }
            const QByteArray source = fromFile ? "file" : "memory";
            for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
                const RefLine &g = got[i], &w = want[i];
                const QByteArray where = source + " line " + QByteArray::number(qulonglong{i} + 1);
                QVERIFY2(g.text == w.text,
                         (where + ": text differs: " + g.text.right(40).toHex() + " | " + w.text.right(40).toHex())
                             .constData());
                QVERIFY2(g.number == w.number, (where + ": number").constData());
                QVERIFY2(g.offset == w.offset, (where + ": offset " + QByteArray::number(qlonglong(g.offset)) +
                                                " != " + QByteArray::number(qlonglong(w.offset)))
                                                   .constData());
                QVERIFY2(g.tooLong == w.tooLong, (where + ": tooLong").constData());
            }
            QCOMPARE(got.size(), want.size());
            QCOMPARE(int(in->compression()), compression);
            QCOMPARE(in->decodedBytes(), uint64_t(decoded.size()));
            QCOMPARE(reader.lastLineUnterminated(), !decoded.isEmpty() && !decoded.endsWith('\n'));
            QCOMPARE(in->contentHash(), xxh3(raw));
            Line after;
            auto end = reader.next(after);
            QVERIFY_OK(end);
            QVERIFY(!*end); // the end stays the end
        }
    }

    void streamErrors_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QByteArray>("raw");
        const QByteArray varied = variedLines(3 * kBlock, 2);
        const QByteArray z = zst(varied), g = gz(varied);
        QTest::newRow("zstd cut in the middle of a frame") << QStringLiteral("cut.csv.zst") << z.left(z.size() / 2);
        QTest::newRow("zstd cut after the frame header") << QStringLiteral("head.zst") << z.left(12);
        QTest::newRow("zstd cut one byte short") << QStringLiteral("short.zst") << z.chopped(1);
        QTest::newRow("gzip cut in the middle") << QStringLiteral("cut.csv.gz") << g.left(g.size() / 2);
        QTest::newRow("gzip cut one byte short") << QStringLiteral("short.gz") << g.chopped(1);
        QByteArray flipped = g;
        for (qsizetype i = g.size() / 2; i < g.size() / 2 + 64; ++i)
            flipped[i] = char(flipped[i] ^ 0x5a);
        QTest::newRow("gzip corrupted in the middle") << QStringLiteral("bad.csv.gz") << flipped;
        QTest::newRow("gzip followed by garbage") << QStringLiteral("tail.gz") << gz("a\nb\n") + "not gzip";
    }

    void streamErrors()
    {
        QFETCH(QString, file);
        QFETCH(QByteArray, raw);
        const std::string path = test::writeFile(m_dir, file, raw.toStdString());
        auto in = InputStream::open(path, file.toStdString());
        QVERIFY_OK(in);
        LineReader reader(**in);
        Line line;
        int64_t lines = 0;
        for (;;) {
            auto more = reader.next(line);
            if (!more) {
                const Error& e = more.error();
                QCOMPARE(e.code, ErrorCode::Compression);
                const QString text = QString::fromStdString(e.toString());
                const auto m =
                    QRegularExpression(QStringLiteral("^%1:(\\d+): \\S").arg(QRegularExpression::escape(file)))
                        .match(text);
                QVERIFY2(m.hasMatch(), qPrintable(text));
                QCOMPARE(int64_t(m.captured(1).toLongLong()), lines + 1);
                QCOMPARE(e.where.line, lines + 1);
                return;
            }
            if (!*more) break;
            ++lines;
        }
        QFAIL(qPrintable(QStringLiteral("read %1 lines to the end without an error").arg(lines)));
    }

    void missingFile()
    {
        const std::string path = m_dir.filePath(QStringLiteral("absent/none.csv")).toStdString();
        auto in = InputStream::open(path, "none.csv");
        QVERIFY(!in.ok());
        QCOMPARE(in.error().code, ErrorCode::Io);
        QVERIFY2(in.error().toString().find("none.csv") != std::string::npos, in.error().toString().c_str());
        auto hash = contentHashOfFile(path);
        QVERIFY(!hash.ok());
        QCOMPARE(hash.error().code, ErrorCode::Io);
    }

    void contentHash_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QString>("expected"); // empty: compute it with the one-shot XXH3 call
        QTest::newRow("abc") << QByteArray("abc") << QStringLiteral("xxh3-128:06b05ab6733a618578af5f94892f3950");
        QTest::newRow("empty") << QByteArray() << QStringLiteral("xxh3-128:99aa06d3014798d86001c324468d497f");
        QTest::newRow("3 MB gzip") << gz(variedLines(3 * kBlock, 4)) << QString();
        QTest::newRow("2 MiB + 1 plain") << QByteArray(2 * kBlock + 1, 'q') << QString();
    }

    void contentHash()
    {
        QFETCH(QByteArray, raw);
        QFETCH(QString, expected);
        const std::string want = expected.isEmpty() ? xxh3(raw) : expected.toStdString();
        const std::string path =
            test::writeFile(m_dir, QStringLiteral("hash-%1.bin").arg(raw.size()), raw.toStdString());
        auto fileHash = contentHashOfFile(path);
        QVERIFY_OK(fileHash);
        QCOMPARE(*fileHash, want);

        auto opened = InputStream::open(path, "hash.bin");
        QVERIFY_OK(opened);
        std::unique_ptr<InputStream> streams[] = {std::move(opened.value()),
                                                  InputStream::fromMemory(raw.toStdString(), "mem")};
        for (const auto& in : streams) {
            for (;;) {
                auto block = in->nextBlock();
                QVERIFY_OK(block);
                if (block->empty()) break;
            }
            QCOMPARE(in->contentHash(), want);
            QCOMPARE(in->rawSize(), uint64_t(raw.size()));
        }
    }

    void csvFields_data()
    {
        QTest::addColumn<QString>("record");
        QTest::addColumn<QString>("separator");
        QTest::addColumn<bool>("trim");
        QTest::addColumn<QStringList>("fields");
        QTest::addColumn<bool>("closed");
        auto row = [](const char* name, const char* record, const char* sep, bool trim,
                      std::initializer_list<const char*> fields, bool closed = true) {
            QStringList want;
            for (const char* f : fields)
                want << QString::fromUtf8(f);
            QTest::newRow(name) << QString::fromUtf8(record) << QString::fromUtf8(sep) << trim << want << closed;
        };
        row("plain", "a,b,,c", ",", false, {"a", "b", "", "c"});
        row("spaces kept", " a , b", ",", false, {" a ", " b"});
        row("spaces trimmed", " a ,\tb ", ",", true, {"a", "b"});
        row("quoted separator", "\"x,y\",2", ",", false, {"x,y", "2"});
        row("escaped quote", "\"say \"\"hi\"\"\",1", ",", false, {"say \"hi\"", "1"});
        row("space before quote", "1, \"2,5\"", ",", false, {"1", "2,5"});
        row("quoted and trimmed", "\" 12.5 \" ,x", ",", true, {"12.5", "x"});
        row("line break inside", "\"26.11\n0\",7", ",", false, {"26.11\n0", "7"});
        row("semicolons", "a;\"b;c\";d", ";", false, {"a", "b;c", "d"});
        row("tabs", "a\tb c\t", "\t", false, {"a", "b c", ""});
        row("unclosed quote", "1,\"open,2", ",", false, {"1", "open,2"}, false);
        row("empty record", "", ",", false, {""});
    }

    void csvFields()
    {
        // Spreadsheets and pandas quote fields with a separator, a quote or a line break in them: each importer of
        // CSV reads them the same way (RFC 4180).
        QFETCH(QString, record);
        QFETCH(QString, separator);
        QFETCH(bool, trim);
        QFETCH(QStringList, fields);
        QFETCH(bool, closed);
        CsvSplitter csv(separator.toLatin1().at(0), trim ? CsvSplitter::Spaces::Trim : CsvSplitter::Spaces::Keep);
        const std::string text = record.toStdString();
        std::vector<std::string_view> out;
        QCOMPARE(csv.split(text, out), closed);
        QStringList got;
        for (std::string_view f : out)
            got << QString::fromUtf8(f.data(), static_cast<qsizetype>(f.size()));
        QCOMPARE(got, fields);
    }

    void csvQuotesAsText()
    {
        // A tool that never quotes (nvidia-smi): a stray quote is part of one damaged value, the row keeps its fields.
        CsvSplitter csv(',', CsvSplitter::Spaces::Keep, CsvSplitter::Quotes::AsText);
        std::vector<std::string_view> out;
        QVERIFY(csv.split("t, 0, \"51 %, 1000 MiB", out));
        QCOMPARE(out, (std::vector<std::string_view>{"t", " 0", " \"51 %", " 1000 MiB"}));
    }

    void oddQuotes()
    {
        // A record broken by a line break inside a quoted field, told apart before it is split.
        QVERIFY(!importers::oddQuotes(""));
        QVERIFY(!importers::oddQuotes("t,1,2"));
        QVERIFY(importers::oddQuotes("t,\"a"));
        QVERIFY(!importers::oddQuotes("t,\"a,b\",2"));
        QVERIFY(importers::oddQuotes("t,\"a \"\"b\"\""));
        QVERIFY(!importers::oddQuotes("\"\"\"\""));
    }

    void civilDates()
    {
        // civilFromDays is daysFromCivil's inverse, before 1970 and after, across leap days and centuries.
        QCOMPARE(civilFromDays(0).year, int64_t{1970});
        const CivilDate leap = civilFromDays(daysFromCivil(2000, 2, 29));
        QCOMPARE(leap.year, int64_t{2000});
        QCOMPARE(leap.month, 2u);
        QCOMPARE(leap.day, 29u);
        const CivilDate before = civilFromDays(-1);
        QCOMPARE(before.year, int64_t{1969});
        QCOMPARE(before.month, 12u);
        QCOMPARE(before.day, 31u);
        for (int64_t days = -800'000; days <= 800'000; days += 997) {
            const CivilDate c = civilFromDays(days);
            QVERIFY(isCalendarDate(c.year, c.month, c.day));
            QCOMPARE(daysFromCivil(c.year, c.month, c.day), days);
        }
    }

    void importLinesSkipLongOnes()
    {
        // ImportContext::nextLine gives the lines that fit the reader; a longer one is reported (line_too_long, at
        // its own line) and, when asked, counted as a row read.
        auto db = store::RunDatabase::open(m_dir.filePath(QStringLiteral("lines.runlens")).toStdString(),
                                           store::OpenMode::Create);
        QVERIFY_OK(db);
        store::RunWriter writer(**db);
        for (const bool countSkipped : {false, true}) {
            auto in = InputStream::fromMemory("short\n" + std::string(50, 'x') + "\r\nlast", "lines.txt");
            LineReader lines(*in, 10);
            store::Diagnostics diagnostics;
            const ImportOptions options;
            ImportContext ctx{lines, writer, diagnostics, options, 0, {}, nullptr, 0, {}, {}, {}, {}};
            QStringList got;
            Line line;
            for (;;) {
                auto more = ctx.nextLine(line, countSkipped);
                QVERIFY_OK(more);
                if (!*more) break;
                got << QString::fromUtf8(line.text.data(), qsizetype(line.text.size())) + QLatin1Char('@') +
                           QString::number(line.number);
            }
            QCOMPARE(got, test::strs({"short@1", "last@3"}));
            QCOMPARE(ctx.rowsRead, int64_t(countSkipped ? 1 : 0));
            QCOMPARE(diagnostics.total(), int64_t(1));
            QCOMPARE(diagnostics.entries().at(0).kind, std::string("line_too_long"));
            QCOMPARE(diagnostics.entries().at(0).where.line, int64_t(2));
            QCOMPARE(diagnostics.entries().at(0).message, std::string("line of more than 10 bytes dropped"));
        }
    }

    void wholeInputWithinLimit()
    {
        // appendWholeInput adds the rest of the input after what the buffer holds, and refuses the block that would
        // take the whole past the cap.
        const std::string text(1000, 'a');
        auto in = InputStream::fromMemory(text, "doc.json");
        std::string buf = "head:";
        QVERIFY_OK(appendWholeInput(*in, DocumentLimit{2000, true}, buf));
        QCOMPARE(buf, "head:" + text);

        auto small = InputStream::fromMemory(text, "doc.json");
        std::string cut = "head:";
        const Status st = appendWholeInput(*small, DocumentLimit{1000, true}, cut);
        QVERIFY(!st);
        QCOMPARE(st.error().where.file, std::string("doc.json"));
        QVERIFY(st.error().message.find("larger than") != std::string::npos);
        QCOMPARE(cut, std::string("head:"));
    }
};

QTEST_GUILESS_MAIN(TestInput)
#include "tst_input.moc"
