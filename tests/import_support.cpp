#include "tests/import_support.h"

#include "analysis/store/chunk_codec.h"
#include "analysis/store/run_database.h"
#include "tests/test_support.h"

#include <QDateTime>
#include <QFile>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTest>
#include <QTimeZone>
#include <cmath>
#include <sqlite3.h>

namespace runlens::test {

namespace {

// Raw tokens of the missing points of a series, read from its chunks in time order.
std::vector<std::string> missingTokens(store::RunDatabase& db, int64_t seriesId)
{
    std::vector<std::string> out;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db.handle(), "SELECT data FROM point_chunk WHERE series_id = ? ORDER BY first_ns", -1, &st,
                           nullptr) != SQLITE_OK)
        return {"<prepare failed>"};
    sqlite3_bind_int64(st, 1, seriesId);
    while (sqlite3_step(st) == SQLITE_ROW) {
        auto chunk = store::decodeChunk(sqlite3_column_blob(st, 0), static_cast<size_t>(sqlite3_column_bytes(st, 0)));
        if (!chunk)
            out.push_back("<corrupt chunk>");
        else
            out.insert(out.end(), chunk->missingTokens.begin(), chunk->missingTokens.end());
    }
    sqlite3_finalize(st);
    return out;
}

} // namespace

importers::ImportOptions importOptions(const QString& format, const QString& tz, const QStringList& extra,
                                       const QString& node)
{
    importers::ImportOptions options;
    options.format = format.toStdString();
    options.node = node.toStdString();
    options.timeZone = tz.toStdString();
    for (const QString& kv : extra)
        options.extra[kv.section(QLatin1Char('='), 0, 0).toStdString()] = kv.section(QLatin1Char('='), 1).toStdString();
    return options;
}

importers::ImportOptions keyedOptions(const QStringList& items, importers::ImportOptions options)
{
    for (const QString& kv : items) {
        const std::string key = kv.section(QLatin1Char('='), 0, 0).toStdString();
        const std::string value = kv.section(QLatin1Char('='), 1).toStdString();
        if (key == "node")
            options.node = value;
        else if (key == "tz")
            options.timeZone = value;
        else if (key == "format")
            options.format = value;
        else
            options.extra[key] = value;
    }
    return options;
}

Imported importWith(const std::string& dbPath, const std::string& path, const importers::ImportOptions& options,
                    const QString& mtime)
{
    Imported result;
    result.db = dbPath;
    if (!mtime.isEmpty()) {
        QFile f(QString::fromStdString(path));
        const QDateTime t = QDateTime::fromString(mtime, Qt::ISODateWithMs);
        if (!t.isValid() || !f.open(QIODevice::ReadWrite) || !f.setFileTime(t, QFileDevice::FileModificationTime)) {
            result.error = "cannot set the modification time";
            return result;
        }
    }
    auto plan = importers::planImport({path}, options);
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::Create);
    if (!plan || plan->size() != 1 || !db) {
        result.error = !db ? db.error().toString() : plan ? "expected one planned file" : plan.error().toString();
        return result;
    }
    if (plan->front().importer) result.importer = std::string(plan->front().importer->format());
    result.node = plan->front().node;
    result.result = importers::importFile(**db, plan->front(), options);
    result.outcome = result.result.outcome;
    if (result.result.error) result.error = result.result.error->toString();
    return result;
}

Imported importPath(const std::string& dbPath, const std::string& path, const QString& format, const QString& tz,
                    const QStringList& extra, const QString& mtime)
{
    return importWith(dbPath, path, importOptions(format, tz, extra), mtime);
}

void checkGarbage(const Imported& r, const QString& format, const QString& own, bool valid)
{
    if (format.isEmpty() && !valid) QVERIFY(r.importer != own.toStdString());
    if (r.outcome == importers::FileOutcome::Imported) {
        QCOMPARE(queryOne(r.db, "SELECT status FROM import_log"), QStringLiteral("data_loss"));
    } else {
        QVERIFY(!valid);
        QVERIFY(!r.error.empty());
        QCOMPARE(queryOne(r.db, "SELECT count(*) FROM import"), QStringLiteral("0"));
    }
}

QByteArray addGarbageRows(quint32 seed, const QString& format)
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("format");
    QByteArray random = randomBytes(8192, seed);
    QTest::newRow("random binary, detected") << random << QString();
    QTest::newRow("random binary, forced") << random << format;
    return random;
}

void checkDetected(const QByteArray& head, const QString& expected, const QString& own, int minScore)
{
    const importers::SniffInput in{std::string_view(head.constData(), size_t(head.size())), "x.txt"};
    const auto [importer, score] = importers::detectFormat(in);
    QCOMPARE(importer ? QString::fromUtf8(importer->format().data(), qsizetype(importer->format().size())) : QString(),
             expected);
    if (expected == own) QVERIFY(score >= minScore);
}

std::string writeInput(const QTemporaryDir& dir, const QString& name, const QByteArray& input)
{
    return writeFile(dir, name, input.toStdString());
}

std::string writeTruncatedZstd(const QTemporaryDir& dir, const QString& name, const QByteArray& text)
{
    const std::string zst = zstdCompress(text.toStdString());
    return writeFile(dir, name, zst.substr(0, zst.size() / 2));
}

std::string countsSql(std::initializer_list<const char*> tables)
{
    std::string sql = "SELECT ";
    for (const char* table : tables) {
        if (sql.size() > 7) sql += ", ";
        sql += std::string("(SELECT count(*) FROM ") + table + ")";
    }
    return sql;
}

void checkCutZstdImport(const std::string& countsSql, const QString& firstName, const QByteArray& first,
                        const QString& countsAfterFirst, const QString& cutName, const QByteArray& cut,
                        const importers::ImportOptions& options,
                        std::initializer_list<importers::ImportOptions> moreOptions)
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string db = dir.filePath(QStringLiteral("t.runlens")).toStdString();
    const std::string firstPath = writeFile(dir, QStringLiteral("a/") + firstName, first.toStdString());
    QCOMPARE(importers::outcomeName(importWith(db, firstPath, options).outcome), "imported");
    const QString before = queryOne(db, countsSql);
    QCOMPARE(before, countsAfterFirst);

    const std::string path = writeTruncatedZstd(dir, QStringLiteral("b/") + cutName, cut);
    const QString file = QRegularExpression::escape(cutName);
    checkTruncatedImport(importWith(db, path, options), file, countsSql, before);
    for (const importers::ImportOptions& more : moreOptions) {
        if (QTest::currentTestFailed()) return;
        checkTruncatedImport(importWith(db, path, more), file, countsSql, before);
    }
}

void checkTruncatedImport(const Imported& r, const QString& file, const std::string& countsSql, const QString& before)
{
    QCOMPARE(importers::outcomeName(r.outcome), "failed");
    const QRegularExpression located(file + QStringLiteral(":\\d+(:\\d+)?: .*(truncated|zstd)"));
    QVERIFY2(located.match(QString::fromStdString(r.error)).hasMatch(), r.error.c_str());
    QCOMPARE(queryOne(r.db, countsSql), before);
}

QString utc(int64_t ns, Fraction fraction)
{
    QString s;
    switch (fraction) {
    case Fraction::Millis: {
        const QDateTime t = QDateTime::fromMSecsSinceEpoch(ns / 1000000, QTimeZone::utc());
        s = t.toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss"));
        if (ns % 1000000000) s += t.toString(QStringLiteral(".zzz"));
        break;
    }
    case Fraction::MillisAndNs: {
        const int64_t ms = ns / 1000000;
        s = QDateTime::fromMSecsSinceEpoch(ms, QTimeZone::utc())
                .toString(ms % 1000 ? QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzz")
                                    : QStringLiteral("yyyy-MM-ddTHH:mm:ss"));
        if (ns % 1000000 != 0) s += QStringLiteral("+%1ns").arg(ns % 1000000);
        break;
    }
    case Fraction::AlwaysMillis: {
        const int64_t rest = ((ns % 1000000) + 1000000) % 1000000;
        s = QDateTime::fromMSecsSinceEpoch((ns - rest) / 1000000, QTimeZone::utc())
                .toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzz"));
        if (rest) s += QStringLiteral("+%1ns").arg(rest);
        break;
    }
    case Fraction::Ns:
        s = QDateTime::fromMSecsSinceEpoch(ns / 1000000, QTimeZone::utc())
                .toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss"));
        if (ns % 1000000000 != 0) s += QStringLiteral("+%1ns").arg(ns % 1000000000);
        break;
    }
    return s.startsWith(QLatin1String("2026-01-15T")) ? s.mid(11) : s;
}

QString num(double v)
{
    if (v == std::floor(v) && std::fabs(v) < 1e15) return QString::number(static_cast<qint64>(v));
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

QString num17(double v)
{
    if (v == std::floor(v) && std::fabs(v) < 1e15) return QString::number(static_cast<qint64>(v));
    return QString::number(v, 'g', 17);
}

QString secondsAfter(int64_t ns, int64_t epochSeconds)
{
    const int64_t rel = ns - epochSeconds * 1'000'000'000;
    QString s = QString::number(rel / 1'000'000'000);
    if (const int64_t frac = rel % 1'000'000'000) {
        s += QStringLiteral(".%1").arg(frac, 9, 10, QLatin1Char('0'));
        while (s.endsWith(QLatin1Char('0')))
            s.chop(1);
    }
    return s;
}

SeriesPoints readSeries(store::RunDatabase& db, int64_t seriesId, bool tokens)
{
    SeriesPoints out;
    auto points = store::RunReader(db).readPoints(seriesId, {});
    if (!points) return {QString::fromStdString(points.error().toString()), {}, {}};
    out.points = std::move(*points);
    if (tokens) out.tokens = missingTokens(db, seriesId);
    return out;
}

SeriesPoints readSeries(const std::string& dbPath, const QString& node, const QString& device, const QString& metric,
                        bool tokens)
{
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadOnly);
    if (!db) return {QString::fromStdString(db.error().toString()), {}, {}};
    store::RunReader reader(**db);
    const QString kind = device.section(QLatin1Char(':'), 0, 0), name = device.section(QLatin1Char(':'), 1);
    auto s = reader.findSeries(node.toStdString(), kind.toStdString(), name.toStdString(), metric.toStdString());
    if (!s) return {QString::fromStdString(s.error().toString()), {}, {}};
    if (!*s) return {QStringLiteral("<no series>"), {}, {}};
    return readSeries(**db, (**s).id, tokens);
}

QString pointsText(const SeriesPoints& series, const std::function<QString(int64_t)>& time,
                   const std::function<QString(double)>& value)
{
    if (!series.error.isEmpty()) return series.error;
    QStringList out;
    size_t t = 0;
    for (const store::Point& p : series.points) {
        QString v = !p.missing ? value(p.value) : QStringLiteral("?");
        if (p.missing && series.tokens)
            v += QString::fromStdString(t < series.tokens->size() ? (*series.tokens)[t++] : "<none>");
        out << time(p.tsNs) + QLatin1Char('=') + v;
    }
    return out.join(QStringLiteral(", "));
}

QString seriesText(const std::string& dbPath, const QString& device, const QString& metric, Fraction fraction,
                   bool tokens, const QString& node)
{
    return pointsText(readSeries(dbPath, node, device, metric, tokens),
                      [fraction](int64_t ns) { return utc(ns, fraction); });
}

QByteArray lines(std::initializer_list<const char*> items)
{
    QByteArray out;
    for (const char* l : items)
        out += QByteArray(l) + '\n';
    return out;
}

QByteArray randomBytes(qsizetype size, quint32 seed)
{
    QByteArray out(size, '\0');
    QRandomGenerator rng(seed);
    for (char& c : out)
        c = static_cast<char>(rng.bounded(256));
    return out;
}

const char* const kStackPathSql = R"(
WITH RECURSIVE path(leaf, next, text) AS (
    SELECT c.id, c.parent_id, f.name || CASE WHEN f.file = '' THEN '' ELSE '@' || f.file || ':' || f.line END
    FROM callsite c JOIN frame f ON f.id = c.frame_id
    UNION ALL
    SELECT p.leaf, c.parent_id,
           f.name || CASE WHEN f.file = '' THEN '' ELSE '@' || f.file || ':' || f.line END || ';' || p.text
    FROM path p JOIN callsite c ON c.id = p.next JOIN frame f ON f.id = c.frame_id
)
)";

const std::string kStackRowsSql = std::string(kStackPathSql) + R"(
SELECT t.process, t.pid, t.name, t.tid, p.text, ss.sample_count, ss.weight
FROM stack_sample ss JOIN thread t ON t.id = ss.thread_id JOIN path p ON p.leaf = ss.callsite_id AND p.next = 0
ORDER BY p.text, t.process, t.name)";

} // namespace runlens::test
