// Importer cases as folders (tests/golden/README.md): each tests/golden/<format>/<case>/ holds an input file, how to
// import it (case.txt, over the format's defaults.txt) and what the run must hold afterwards (expected.txt). Every
// folder is one data row "<format>/<case>". With RUNLENS_GOLDEN_UPDATE=1 expected.txt is rewritten from what the
// importer gives (the same series, queries and sections, their values read again) instead of compared.

#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>
#include <algorithm>
#include <functional>
#include <map>
#include <utility>
#include <vector>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

// "key: value" lines in file order; a key may repeat ("option"), the last one wins for the others.
using Fields = QList<std::pair<QString, QString>>;

const QStringList kKeys = strs({"description", "file", "encoding", "format", "tz", "node", "option", "mtime", "outcome",
                                "error", "importer", "time", "values", "tokens", "origin", "xfail"});

// Reads case.txt or defaults.txt; an unknown key or a line without ": " is an error.
Fields readFields(const QString& path, QString& error)
{
    Fields out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    for (const QString& line : QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const qsizetype colon = line.indexOf(QLatin1Char(':'));
        const QString key = line.left(colon);
        if (colon < 0 || !kKeys.contains(key)) {
            error = QStringLiteral("%1: unknown line \"%2\"").arg(path, line);
            return out;
        }
        out.emplaceBack(key, line.mid(colon + 1).trimmed());
    }
    return out;
}

QString field(const Fields& fields, const char* key, const QString& fallback = {})
{
    QString value = fallback;
    for (const auto& [k, v] : fields)
        if (k == QLatin1String(key)) value = v;
    return value;
}

QStringList fieldList(const Fields& fields, const char* key)
{
    QStringList out;
    for (const auto& [k, v] : fields)
        if (k == QLatin1String(key)) out << v;
    return out;
}

// The sections of expected.txt, in the order they are written; a section absent from the file is not checked.
const QStringList kSections =
    strs({"points", "diagnostics", "slices", "stacks", "samples", "diagnostic counts", "sql"});

// Lines of each section present, by section name.
using Sections = std::map<QString, QStringList>;

Sections parseExpected(const QString& text)
{
    Sections out;
    QStringList* section = nullptr;
    for (const QString& line : text.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        if (line.startsWith(QLatin1Char('[')) && line.endsWith(QLatin1Char(']')))
            section = &out[line.mid(1, line.size() - 2)];
        else if (section)
            *section << line;
        else
            out[QString()] << line; // text before the first section: reported as an unknown section
    }
    return out;
}

QString expectedText(const Sections& expected)
{
    QStringList blocks;
    for (const auto& [name, lines] : expected) {
        QString block = QLatin1Char('[') + name + QStringLiteral("]\n");
        for (const QString& l : lines)
            block += l + QLatin1Char('\n');
        blocks << block;
    }
    return blocks.join(QLatin1Char('\n'));
}

// Sections ordered as kSections says (std::map orders them by name).
QString orderedText(const Sections& expected)
{
    QStringList blocks;
    for (const QString& name : kSections) {
        const auto it = expected.find(name);
        if (it != expected.end()) blocks << expectedText({*it});
    }
    for (const auto& [name, lines] : expected)
        if (!kSections.contains(name)) blocks << expectedText({{name, lines}});
    return blocks.join(QLatin1Char('\n'));
}

// A time as case.txt's `time` says: utc() with a fraction, or "seconds after <epoch seconds>" with the decimals
// needed ("1", "3.5", "0.000000001").
std::function<QString(int64_t)> timeText(const QString& time)
{
    if (time.startsWith(QLatin1String("seconds after "))) {
        const int64_t epoch = time.mid(14).toLongLong();
        return [epoch](int64_t ns) { return secondsAfter(ns, epoch); };
    }
    const Fraction fraction = time == QLatin1String("millis+ns")       ? Fraction::MillisAndNs
                              : time == QLatin1String("always-millis") ? Fraction::AlwaysMillis
                              : time == QLatin1String("ns")            ? Fraction::Ns
                                                                       : Fraction::Millis;
    return [fraction](int64_t ns) { return utc(ns, fraction); };
}

// A value as case.txt's `values` says: "shortest" (num()), "6 digits", or "17 digits" (an integer when it is one).
std::function<QString(double)> valueText(const QString& values)
{
    if (values == QLatin1String("6 digits")) return [](double v) { return QString::number(v, 'g', 6); };
    if (values == QLatin1String("17 digits")) return num17;
    return num;
}

// The points of a "node|kind:name|metric|..." line, rendered as case.txt's time, values and tokens say.
QString pointsLine(const std::string& db, const QString& spec, const Fields& fields)
{
    const QString node = spec.section(QLatin1Char('|'), 0, 0), device = spec.section(QLatin1Char('|'), 1, 1),
                  metric = spec.section(QLatin1Char('|'), 2, 2);
    const SeriesPoints series = readSeries(db, node, device, metric, field(fields, "tokens") == QLatin1String("yes"));
    const QString text =
        pointsText(series, timeText(field(fields, "time", str("millis"))), valueText(field(fields, "values")));
    return QStringList{node, device, metric, text}.join(QLatin1Char('|'));
}

// Trace slices as "kind|pid|tid|category|name|ts - origin|dur" in time order.
QStringList slices(const std::string& db, const QString& origin)
{
    return queryRows(db, "SELECT t.kind, t.pid, t.tid, s.category, n.name, s.ts_ns - " +
                             QString::number(origin.toLongLong()).toStdString() +
                             ", s.dur_ns FROM trace_slice s JOIN trace_name n ON n.id = s.name_id JOIN trace_track t "
                             "ON t.id = s.track_id ORDER BY s.ts_ns, n.name");
}

// A value on one line of expected.txt: a line break as "\\n", a carriage return as "\\r".
QString oneLine(QString text)
{
    return text.replace(QLatin1Char('\n'), QLatin1String("\\n")).replace(QLatin1Char('\r'), QLatin1String("\\r"));
}

// Every stored sample as "process|pid|thread|tid|root;...;leaf|ts_ns|sample_count|weight" in storage order, a frame
// as name@module (the perf script cases).
const char* const kSamplesSql = R"(
WITH RECURSIVE path(leaf, next, text) AS (
    SELECT c.id, c.parent_id, f.name || '@' || f.module FROM callsite c JOIN frame f ON f.id = c.frame_id
    UNION ALL
    SELECT p.leaf, c.parent_id, f.name || '@' || f.module || ';' || p.text
    FROM path p JOIN callsite c ON c.id = p.next JOIN frame f ON f.id = c.frame_id
)
SELECT t.process, t.pid, t.name, t.tid, p.text, coalesce(ss.ts_ns, 'null'), ss.sample_count, ss.weight
FROM stack_samples ss JOIN thread t ON t.id = ss.thread_id JOIN path p ON p.leaf = ss.callsite_id AND p.next = 0
ORDER BY ss.rowid)";

// The diagnostics the import counted, as "kind=count" by kind.
QStringList diagnosticCounts(const FileResult& result)
{
    QStringList out;
    for (const auto& [kind, count] : result.diagnostics.counts())
        out << QStringLiteral("%1=%2").arg(QString::fromStdString(kind)).arg(count.count);
    return out;
}

// What the run holds for each section of `expected`: the same series and queries, their values read again.
Sections observe(const Imported& r, const Sections& expected, const Fields& fields)
{
    const std::string& db = r.db;
    Sections got;
    for (const auto& [name, lines] : expected) {
        QStringList& out = got[name];
        if (name == QLatin1String("points")) {
            for (const QString& spec : lines)
                out << pointsLine(db, spec, fields);
        } else if (name == QLatin1String("diagnostics")) {
            out = queryRows(db, "SELECT kind, line FROM diagnostic ORDER BY id");
        } else if (name == QLatin1String("slices")) {
            out = slices(db, field(fields, "origin", str("0")));
        } else if (name == QLatin1String("stacks")) {
            out = queryRows(db, kStackRowsSql);
        } else if (name == QLatin1String("samples")) {
            out = queryRows(db, kSamplesSql);
        } else if (name == QLatin1String("diagnostic counts")) {
            out = diagnosticCounts(r.result);
        } else if (name == QLatin1String("sql")) {
            for (const QString& check : lines) {
                const QString query = check.section(QStringLiteral(" => "), 0, 0);
                out << query + QStringLiteral(" => ") + queryRows(db, query.toStdString()).join(QStringLiteral("; "));
            }
        } else {
            out = lines; // unknown: reported by the caller
        }
        for (QString& line : out)
            line = oneLine(line);
    }
    return got;
}

// A line diff of want and got: the lines only in want as "- ", only in got as "+ ", under the section they are in.
QString lineDiff(const QStringList& want, const QStringList& got)
{
    const auto n = size_t(want.size()), m = size_t(got.size());
    std::vector<std::vector<size_t>> lcs(n + 1, std::vector<size_t>(m + 1, 0));
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            lcs[i][j] = want[qsizetype(i)] == got[qsizetype(j)] ? lcs[i + 1][j + 1] + 1
                                                                : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    QStringList out;
    QString section, shown;
    const auto show = [&](const char* sign, const QString& line) {
        if (section != shown) out << QStringLiteral("  ") + (shown = section);
        out << QLatin1String(sign) + line;
    };
    size_t i = 0, j = 0;
    while (i < n || j < m) {
        const QString* w = i < n ? &want[qsizetype(i)] : nullptr;
        if (w && j < m && *w == got[qsizetype(j)]) {
            if (w->startsWith(QLatin1Char('['))) section = *w;
            ++i, ++j;
        } else if (j >= m || (w && lcs[i + 1][j] >= lcs[i][j + 1])) {
            if (w->startsWith(QLatin1Char('['))) section = *w;
            show("- ", want[qsizetype(i++)]);
        } else {
            show("+ ", got[qsizetype(j++)]);
        }
    }
    return out.join(QLatin1Char('\n'));
}

// The import options of case.txt: format, tz ("local": this machine's), node ("auto": from the file), options.
ImportOptions caseOptions(const Fields& fields)
{
    const QString tz = field(fields, "tz", str("UTC")), node = field(fields, "node", str("n1"));
    return keyedOptions(fieldList(fields, "option"),
                        importOptions(field(fields, "format"), tz == QLatin1String("local") ? QString() : tz, {},
                                      node == QLatin1String("auto") ? QString() : node));
}

// Outcome, error and importer against case.txt; each mismatch as one line.
QStringList caseProblems(const Imported& r, const Fields& fields)
{
    QStringList problems;
    const QString outcome = QString::fromLatin1(outcomeName(r.outcome)), error = QString::fromStdString(r.error);
    const QString wantOutcome = field(fields, "outcome", str("imported"));
    if (outcome != wantOutcome)
        problems << QStringLiteral("outcome: expected %1, got %2 (%3)").arg(wantOutcome, outcome, error);
    const QString pattern = field(fields, "error");
    if (!pattern.isEmpty() && !QRegularExpression(pattern).match(error).hasMatch())
        problems << QStringLiteral("error: expected a match of %1, got \"%2\"").arg(pattern, error);
    if (pattern.isEmpty() && r.outcome == FileOutcome::Imported && !error.isEmpty())
        problems << QStringLiteral("error: expected none, got \"%1\"").arg(error);
    const QString importer = field(fields, "importer", str("any"));
    const QString gotImporter = r.importer.empty() ? str("none") : QString::fromStdString(r.importer);
    if (importer != QLatin1String("any") && importer != gotImporter)
        problems << QStringLiteral("importer: expected %1, got %2").arg(importer, gotImporter);
    return problems;
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestImporterGolden : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cases_data();
    void cases();
};

void TestImporterGolden::cases_data()
{
    QTest::addColumn<QString>("dir");
    const QDir root(QStringLiteral(RUNLENS_GOLDEN_DIR));
    int rows = 0;
    for (const QString& format : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        for (const QString& name :
             QDir(root.filePath(format)).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            const QString row = format + QLatin1Char('/') + name;
            QTest::newRow(qPrintable(row)) << root.filePath(row);
            ++rows;
        }
    QVERIFY2(rows > 0, "no case folders under tests/golden");
}

void TestImporterGolden::cases()
{
    QFETCH(QString, dir);
    QString error;
    const Fields fields = readFields(dir + QStringLiteral("/../defaults.txt"), error) +
                          readFields(dir + QStringLiteral("/case.txt"), error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QString tz = field(fields, "tz");
    if (tz.contains(QLatin1Char('/')) && !QTimeZone(tz.toUtf8()).isValid())
        QSKIP("the time zone database of this machine lacks the zone of this case");
    const QStringList inputs = QDir(dir).entryList({str("input*")}, QDir::Files);
    QVERIFY2(inputs.size() == 1, "a case folder holds one input* file");

    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string path = writeFile(tmp, field(fields, "file", inputs[0]),
                                       encode(readAll(dir + QLatin1Char('/') + inputs[0]), field(fields, "encoding")));
    const Imported r =
        importWith(tmp.filePath(str("t.runlens")).toStdString(), path, caseOptions(fields), field(fields, "mtime"));

    const QString expectedPath = dir + QStringLiteral("/expected.txt");
    const Sections want = parseExpected(QString::fromUtf8(readAll(expectedPath)));
    const QString got = orderedText(observe(r, want, fields));
    const bool update = qEnvironmentVariableIntValue("RUNLENS_GOLDEN_UPDATE") == 1;
    if (update) {
        QFile out(expectedPath);
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        out.write(got.toUtf8());
    }
    QStringList problems = caseProblems(r, fields);
    for (const auto& [name, lines] : want)
        if (!kSections.contains(name)) problems << QStringLiteral("expected.txt: unknown section [%1]").arg(name);
    const QString wantText = orderedText(want);
    if (!update && got != wantText)
        problems << QStringLiteral("expected.txt differs (- expected, + got):\n") +
                        lineDiff(wantText.split(QLatin1Char('\n')), got.split(QLatin1Char('\n')));
    const QString xfail = field(fields, "xfail");
    if (!xfail.isEmpty()) {
        if (!problems.isEmpty()) qInfo().noquote() << problems.join(QLatin1Char('\n'));
        QEXPECT_FAIL("", qPrintable(xfail), Continue);
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
}

QTEST_MAIN(TestImporterGolden)
#include "tst_importer_golden.moc"
