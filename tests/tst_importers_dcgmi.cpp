// dcgmi dmon import (docs/formats.md §3). There is no dcgmi capture among the fixtures: the inputs are examples in
// the layout of docs/formats.md §3 and tables laid out the way dcgmi/DeviceMonitor.cpp prints them (label padded to
// 10, each field to its width + 8), with each quirk added; those cases are folders under tests/golden/dcgmi. Here:
// detection, a cut zstd file, garbage and a 10 MB line.

#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

const QString kFormat = QStringLiteral("dcgmi-dmon");

// A published dcgmi capture in the layout of docs/formats.md §3 (H800 node, llm-action docs/llm-base/dcgmi.md),
// command line included.
const QByteArray kH800 = lines(
    {"dcgmi dmon  -i 0  -e 1011,1012,1009,1010 -c 5",
     "#Entity   NVLTX                       NVLRX                       PCITX                       PCIRX        ",
     "ID                                                                                                         ",
     "GPU 0     N/A                         N/A                         N/A                         N/A          ",
     "GPU 0     0                           0                           498948                      1555         "});

struct Field
{
    const char* tag;
    const char* unit; // as dcgm_fields.cpp gives it: " W", " mJ", " C", "" ...
    int width;        // the field's valueFormat width
};
const std::vector<Field> kPowerFields = {
    {"POWER", " W", 10}, {"TOTEC", " mJ", 16}, {"SMCLK", "", 5}, {"TMPTR", " C", 5}, {"SMACT", "", 10}};

// A table as DeviceMonitor.cpp prints it; rows are "GPU 0|v|v|..."; a row starting with '#' is a header again.
// prefix goes before the header and unit lines (rows carry their own in their label).
QByteArray table(const std::vector<Field>& fields, std::initializer_list<const char*> rows, const char* prefix = "")
{
    QByteArray head = QByteArray(prefix) + QByteArray("#Entity").leftJustified(10);
    QByteArray units = QByteArray(prefix) + QByteArray("ID").leftJustified(10);
    for (const Field& f : fields) {
        head += QByteArray(f.tag).leftJustified(f.width + 8);
        units += QByteArray(f.unit).leftJustified(f.width + 8);
    }
    QByteArray out = head + '\n' + units + '\n';
    for (const char* r : rows) {
        if (r[0] == '#') {
            out += head + '\n' + units + '\n';
            continue;
        }
        const QList<QByteArray> cells = QByteArray(r).split('|');
        out += cells[0].leftJustified(9) + ' '; // a cell wider than its column still ends in a blank
        for (qsizetype i = 1; i < cells.size(); ++i)
            out += cells[i].leftJustified(i <= qsizetype(fields.size()) ? fields[size_t(i - 1)].width + 7 : 1) + ' ';
        out += '\n';
    }
    return out;
}

const QByteArray kPower =
    table(kPowerFields, {"GPU 0|300.000|1000000000|1980|45|0.500", "GPU 0|301.250|1000500000|1965|46|0.600",
                         "GPU 0|N/A|1001000000|1980|46|N/A"});
const QStringList kStart = strs({"start=2026-01-15T10:00:00Z"});

// 8 GPUs in descending order, as dcgmi lists them, for `intervals` intervals; the header again every 14 rows.
QByteArray eightGpus(int intervals)
{
    QByteArray out;
    int rows = 0;
    for (int i = 0; i < intervals; ++i) {
        for (int g = 7; g >= 0; --g) {
            if (rows++ % 14 == 0) out += "#Entity   NVLTX                       NVLRX\nID\n";
            out += "GPU " + QByteArray::number(g) + "     " + QByteArray::number(30570603980LL + i * 100LL + g) +
                   "                 " + QByteArray::number(i) + "\n";
        }
    }
    return out;
}

} // namespace

class TestDcgmiImporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sniff_data();
    void sniff();
    void truncatedZstdLeavesDatabaseUnchanged();
    void garbage_data();
    void garbage();
    void tenMegabyteLine();
};

void TestDcgmiImporter::sniff_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<QString>("expected"); // the format detected, or empty
    QTest::newRow("with the command line first") << kH800 << kFormat;
    QTest::newRow("header and ID line") << kPower << kFormat;
    QTest::newRow("awk strftime prefix") << table(kPowerFields, {}, "2026-01-15 12:00:01 ") << kFormat;
    QTest::newRow("nvidia-smi dmon is not claimed")
        << lines({"# gpu pwr sm", "# Idx W %", "0 80 5"}) << str("nvidia-smi-dmon");
    QTest::newRow("an #Entity line later in the file") << lines({"hello", "#Entity GPUTL"}) << QString();
}

void TestDcgmiImporter::sniff()
{
    QFETCH(QByteArray, head);
    QFETCH(QString, expected);
    checkDetected(head, expected, kFormat, 90);
}

void TestDcgmiImporter::truncatedZstdLeavesDatabaseUnchanged()
{
    // Without start= the second reading fails first.
    checkCutZstdImport(countsSql({"series", "point_chunk", "import", "device", "diagnostic"}), str("first.txt"), kH800,
                       str("4|4|1|1|1"), str("dcgm.txt.zst"), eightGpus(20000),
                       importOptions(QString(), str("UTC"), kStart), {importOptions(QString())});
}

void TestDcgmiImporter::garbage_data()
{
    const QByteArray random = addGarbageRows(13, kFormat);
    QTest::newRow("header then random bytes") << lines({"#Entity   GPUTL", "ID"}) + random << QString();
}

void TestDcgmiImporter::garbage()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = writeInput(dir, str("garbage.txt"), input);
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, format, str("UTC"), kStart);
    const bool withHeader = input.startsWith("#Entity");
    checkGarbage(r, format, kFormat, withHeader);
    if (r.outcome == FileOutcome::Imported) {
        QVERIFY(withHeader);
        QVERIFY(queryOne(r.db, "SELECT diagnostics FROM import").toInt() > 0);
    }
}

void TestDcgmiImporter::tenMegabyteLine()
{
    constexpr int kBytes = 10 << 20;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // Line 4: 10 MB of one field; line 5: a 10 MB value.
    std::string input = lines({"#Entity   GPUTL  POWER", "ID", "GPU 0     5      100.000"}).toStdString() +
                        std::string(kBytes, 'x') + "\nGPU 0     6      " + std::string(kBytes, '7') + "y\n" +
                        "GPU 0     7      102.000\n";
    const std::string path = test::writeFile(dir, str("huge.txt"), input);
    input.clear();
    const Imported r = importPath(dir.filePath(str("t.runlens")).toStdString(), path, QString(), str("UTC"), kStart);
    QCOMPARE(outcomeName(r.outcome), "imported");
    QCOMPARE(queryRows(r.db, "SELECT kind, line FROM diagnostic ORDER BY id"),
             strs({"invalid_line|4", "bad_number|5"}));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.util")), str("10:00:00=5, 10:00:01=6, 10:00:02=7"));
    QCOMPARE(seriesText(r.db, str("gpu:0"), str("gpu.power")), str("10:00:00=100, 10:00:01=?, 10:00:02=102"));
    const int longest = queryOne(r.db, "SELECT max(length(message)) FROM diagnostic").toInt();
    QVERIFY2(longest < 1000, qPrintable(QStringLiteral("a diagnostic message of %1 characters").arg(longest)));
}

QTEST_MAIN(TestDcgmiImporter)
#include "tst_importers_dcgmi.moc"
