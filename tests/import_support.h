#pragma once

// Helpers shared by the importer tests: importing one file into a run database, and reading its series back as text.

#include "analysis/store/run_reader.h"
#include "importers/import_session.h"

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace runlens::store {
class RunDatabase;
}

namespace runlens::test {

// One file imported: what the plan chose for it and what the import gave.
struct Imported
{
    importers::FileOutcome outcome = importers::FileOutcome::Failed;
    std::string importer;         // the format the plan chose (empty when none was recognised)
    std::string error;            // the plan's, the database's or the import's error
    std::string db;               // the run database it went into
    std::string node;             // the node the plan assigned
    importers::FileResult result; // all importFile gave (import id, rows read, diagnostics, notes)
};

// Import options: the format (empty: detected from the content), the time zone of naive timestamps (empty: this
// machine's), "key=value" items for the format, and the node (empty: from the file's data or its name).
importers::ImportOptions importOptions(const QString& format = {}, const QString& tz = QStringLiteral("UTC"),
                                       const QStringList& extra = {}, const QString& node = QStringLiteral("n1"));

// options with "key=value" items added: "node=", "tz=" and "format=" set those, anything else is for the format.
importers::ImportOptions keyedOptions(const QStringList& items, importers::ImportOptions options = {});

// Plans one file with options (it must plan as one file) and imports it into the run database at dbPath, created
// when absent; mtime (ISO 8601), when given, is set on the file first.
Imported importWith(const std::string& dbPath, const std::string& path, const importers::ImportOptions& options,
                    const QString& mtime = {});

// Imports one file as node n1; options are "key=value"; mtime (ISO 8601 UTC) is set on the file first.
Imported importPath(const std::string& dbPath, const std::string& path, const QString& format,
                    const QString& tz = QStringLiteral("UTC"), const QStringList& extra = {},
                    const QString& mtime = {});

// What every importer's garbage case checks of its import r: unless the format was forced or the input is valid (it
// starts as the format `own` does), `own` does not take the file; an import ends with data loss; a failure gives its
// error and stores no import, and a valid input does not fail.
void checkGarbage(const Imported& r, const QString& format, const QString& own, bool valid);

// The columns of an importer's garbage_data (input, format) and its two rows of random bytes, detected and forced as
// `format`; the random bytes (8 KiB drawn with seed), for the rows of the format's own header followed by them.
QByteArray addGarbageRows(quint32 seed, const QString& format);

// The format detected in a file of `head` named x.txt is `expected` (empty: none), with a score of at least minScore
// when it is `own`, the format under test.
void checkDetected(const QByteArray& head, const QString& expected, const QString& own, int minScore);

// input written to dir/name: the path.
std::string writeInput(const QTemporaryDir& dir, const QString& name, const QByteArray& input);

// The first half of text, zstd-compressed, written to dir/name: an input whose zstd stream is cut.
std::string writeTruncatedZstd(const QTemporaryDir& dir, const QString& name, const QByteArray& text);

// "SELECT (SELECT count(*) FROM table), …": the row counts of the tables, as one row.
std::string countsSql(std::initializer_list<const char*> tables);

// Every importer's cut-zstd case: `first` (as a/<firstName>), imported whole with options into a new run, gives the
// run's counts (the query countsSql) countsAfterFirst; then the first half of `cut` zstd-compressed (as b/<cutName>),
// imported with options and then with each of moreOptions, fails with an error naming its file and where in it, and
// leaves the counts as they were.
void checkCutZstdImport(const std::string& countsSql, const QString& firstName, const QByteArray& first,
                        const QString& countsAfterFirst, const QString& cutName, const QByteArray& cut,
                        const importers::ImportOptions& options,
                        std::initializer_list<importers::ImportOptions> moreOptions = {});

// What every importer's cut-zstd case checks of its import r: it failed with an error naming the file (`file`, a
// regular expression) and where in it, and the run's counts (the query countsSql) are still `before`.
void checkTruncatedImport(const Imported& r, const QString& file, const std::string& countsSql, const QString& before);

// How utc() writes the part of a time below the second.
enum class Fraction
{
    Millis,       // ".250" when not on a second
    MillisAndNs,  // ".250" when not on a second, "+Nns" when not on a millisecond
    AlwaysMillis, // ".000" always, "+Nns" when not on a millisecond
    Ns,           // "+Nns" when not on a second (all below the second)
};

// A time as "2026-03-29T01:00:00" (UTC) with its fraction as `fraction` says; on 2026-01-15 the time alone
// ("10:00:01.250").
QString utc(int64_t ns, Fraction fraction = Fraction::Millis);

// A value as an integer when it is one, else in the fewest digits that read back the same.
QString num(double v);

// A value as an integer when it is one, else with 17 significant digits.
QString num17(double v);

// A time as the seconds after epochSeconds with the decimals needed ("1", "3.5", "0.000000001").
QString secondsAfter(int64_t ns, int64_t epochSeconds);

// The points of one series of a run, or why there are none: the error, or "<no series>". With tokens, the raw
// tokens of its missing points too (read from its chunks, in time order).
struct SeriesPoints
{
    QString error;
    std::vector<store::Point> points;
    std::optional<std::vector<std::string>> tokens;
};

// The series with this id.
SeriesPoints readSeries(store::RunDatabase& db, int64_t seriesId, bool tokens = false);
// The series of a node, device "kind:name" ("gpu:0", "cpu", "host") and metric.
SeriesPoints readSeries(const std::string& dbPath, const QString& node, const QString& device, const QString& metric,
                        bool tokens = false);

// Points as "time=value" joined by ", ", a missing one as "time=?" ("time=?<raw token>" when the tokens were read);
// the series' error instead when it has one.
QString pointsText(const SeriesPoints& series, const std::function<QString(int64_t)>& time,
                   const std::function<QString(double)>& value = num);

// Every point of a series of device "kind:name" as "time=value" (utc, num), a missing one as "time=?" (with tokens,
// "time=?<raw token>").
QString seriesText(const std::string& dbPath, const QString& device, const QString& metric,
                   Fraction fraction = Fraction::Millis, bool tokens = false,
                   const QString& node = QStringLiteral("n1"));

// Lines, each ended by '\n'.
QByteArray lines(std::initializer_list<const char*> items);

// size bytes drawn from a generator seeded with seed.
QByteArray randomBytes(qsizetype size, quint32 seed);

// A recursive CTE path(leaf, next, text): each callsite's frames from the root, joined by ';', a frame written as
// name, or name@file:line when it has a file; a row with next = 0 is a whole stack. The SELECT follows it.
extern const char* const kStackPathSql;

// Every stored stack as "process|pid|thread|tid|frame;frame;...|sample_count|weight", a frame written as in
// kStackPathSql; ordered by the frames, the process and the thread.
extern const std::string kStackRowsSql;

} // namespace runlens::test
