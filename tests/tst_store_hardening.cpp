// Run files from elsewhere: crafted, damaged or foreign files are refused when opened, quickly, with a message that
// names the file and what is wrong, and are left exactly as they were; a normal run and an earlier version's file
// still open.

#include "analysis/store/run_database.h"
#include "analysis/store/sqlite_util.h"
#include "tests/cli_support.h"
#include "tests/test_support.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <random>
#include <sqlite3.h>
#include <string>

using namespace runlens;
using namespace runlens::test;
using namespace runlens::test::binary;

namespace {

// Opening a refused file reads only its header and schema: well under this even on a loaded machine.
constexpr qint64 kOpenBoundMs = 1000;

constexpr const char* kUntrusted = "not a RunLens file this version can trust: ";

// Every recursion step yields a row: reading this view never ends.
constexpr const char* kRecursiveNode =
    "DROP TABLE node; CREATE VIEW node AS WITH RECURSIVE c(id, name, time_zone, clock_offset_ns, name_source, "
    "clock_offset_uncertainty_ns, clock_offset_source) AS (SELECT 1, 'n', '', 0, '', NULL, '' UNION ALL "
    "SELECT id + 1, 'n', '', 0, '', NULL, '' FROM c) SELECT * FROM c;";

QByteArray fileHash(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

bool writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

QByteArray readBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A hot rollback journal for the run at path, as SQLite writes one (one header of nRec records, each page's number,
// its bytes before the change and their checksum), holding the original bytes of the given pages.
QByteArray hotJournalOf(const QByteArray& run, const std::vector<uint32_t>& pages)
{
    const uint32_t page = 4096, sector = 512, nonce = 0x1234567;
    const auto be32 = [](QByteArray& out, uint32_t v) {
        for (int shift = 24; shift >= 0; shift -= 8)
            out.append(static_cast<char>((v >> shift) & 0xff));
    };
    QByteArray j = QByteArray::fromHex("d9d505f920a163d7");
    be32(j, static_cast<uint32_t>(pages.size()));
    be32(j, nonce);
    be32(j, static_cast<uint32_t>(run.size() / page));
    be32(j, sector);
    be32(j, page);
    j.append(QByteArray(sector - j.size(), '\0'));
    for (const uint32_t n : pages) {
        const QByteArray bytes = run.mid(static_cast<qsizetype>(n - 1) * page, page);
        be32(j, n);
        j.append(bytes);
        uint32_t sum = nonce;
        for (int i = static_cast<int>(page) - 200; i > 0; i -= 200)
            sum += static_cast<unsigned char>(bytes[i]);
        be32(j, sum);
    }
    return j;
}

QByteArray randomBytes(qsizetype size)
{
    std::mt19937 rng(7);
    QByteArray b(size, '\0');
    for (char& c : b)
        c = static_cast<char>(rng() & 0xff);
    return b;
}

} // namespace

class TstStoreHardening : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_run; // one import of nvidia-smi CSV (2 GPUs × 10 samples)

    // A copy of the normal run named name, for one case to change.
    QString copyOfRun(const QString& name)
    {
        const QString path = m_dir.filePath(name);
        QFile::remove(path);
        return QFile::copy(m_run, path) ? path : QString();
    }

    // The file names in the folder of path: opening must leave no journal or other file behind.
    static QStringList folderEntries(const QString& path)
    {
        return QFileInfo(path).dir().entryList(QDir::Files, QDir::Name);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QString csv = qs(writeFile(m_dir, QStringLiteral("gpu-host-7/nvsmi.csv"), nvsmiCsv(2, 10)));
        m_run = m_dir.filePath(QStringLiteral("run.runlens"));
        const Run r = cli({QStringLiteral("import"), QStringLiteral("-o"), m_run, QStringLiteral("--tz"),
                           QStringLiteral("UTC"), csv});
        EXPECT_EXIT(r, 0);
    }

    void normalRunOpens()
    {
        const QByteArray before = fileHash(m_run);
        for (store::OpenMode mode : {store::OpenMode::ReadOnly, store::OpenMode::ReadWrite})
            QVERIFY_OK(store::RunDatabase::open(m_run.toStdString(), mode));
        const Run r = cli({QStringLiteral("info"), m_run});
        EXPECT_EXIT(r, 0);
        EXPECT_MATCH(r.out, QStringLiteral("gpu-host-7"));
        QCOMPARE(fileHash(m_run), before);
    }

    void refused_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("sql");     // run on a copy of the normal run, when the kind is "sql"
        QTest::addColumn<QString>("message"); // after "FILE: "
        QTest::addColumn<int>("code");
        const auto row = [](const char* name, const char* kind, const char* sql, const char* message, ErrorCode code) {
            QTest::newRow(name) << QString::fromUtf8(kind) << QString::fromUtf8(sql) << QString::fromUtf8(message)
                                << static_cast<int>(code);
        };
        const auto crafted = [&row](const char* name, const char* sql, const char* what) {
            row(name, "sql", sql, (std::string(kUntrusted) + what).c_str(), ErrorCode::Format);
        };
        crafted("node replaced by a recursive view", kRecursiveNode, "view node is not one RunLens creates");
        crafted("added trigger", "CREATE TRIGGER keep_out AFTER INSERT ON import BEGIN DELETE FROM series; END;",
                "trigger keep_out is not one RunLens creates");
        crafted("virtual table (FTS5)", "CREATE VIRTUAL TABLE notes USING fts5(body);",
                "virtual table notes is not one RunLens creates");
        crafted("table lacks a column", "ALTER TABLE node DROP COLUMN clock_offset_source;",
                "table node lacks column clock_offset_source");
        crafted("table with an extra column", "ALTER TABLE run ADD COLUMN note TEXT;",
                "table run has a column note, which RunLens does not create");
        crafted("column of another type",
                "DROP TABLE run_setting; CREATE TABLE run_setting (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID;",
                "column value of table run_setting differs from the one RunLens creates");
        crafted("changed view", "DROP VIEW import_log; CREATE VIEW import_log AS SELECT path FROM import;",
                "view import_log differs from the one RunLens creates");
        crafted("extra table", "CREATE TABLE notes (body TEXT);", "table notes is not one RunLens creates");
        crafted("missing index", "DROP INDEX import_size;", "index import_size is missing");
        crafted("index on other columns", "DROP INDEX import_size; CREATE INDEX import_size ON import(path);",
                "index import_size differs from the one RunLens creates");
        row("truncated (cut in half)", "truncate", "", "database disk image is malformed", ErrorCode::Database);
        row("random bytes", "random", "", "file is not a database", ErrorCode::Database);
    }
    void refused()
    {
        QFETCH(QString, kind);
        QFETCH(QString, sql);
        QFETCH(QString, message);
        QFETCH(int, code);
        const QString path = copyOfRun(QStringLiteral("x.runlens"));
        QVERIFY(!path.isEmpty());
        if (kind == QLatin1String("sql")) {
            QCOMPARE(execRaw(path.toStdString(), sql.toStdString()), std::string());
        } else if (kind == QLatin1String("truncate")) {
            const QByteArray bytes = readBytes(path);
            QVERIFY(writeBytes(path, bytes.left(bytes.size() / 2)));
        } else {
            QVERIFY(writeBytes(path, randomBytes(qsizetype{64} * 1024)));
        }
        const QByteArray before = fileHash(path);
        const QStringList entries = folderEntries(path);

        for (store::OpenMode mode : {store::OpenMode::ReadOnly, store::OpenMode::ReadWrite}) {
            QElapsedTimer timer;
            timer.start();
            auto db = store::RunDatabase::open(path.toStdString(), mode);
            const qint64 ms = timer.elapsed();
            QVERIFY(!db.ok());
            QVERIFY2(ms < kOpenBoundMs, qPrintable(QStringLiteral("open took %1 ms").arg(ms)));
            const QString text = QString::fromStdString(db.error().toString());
            QVERIFY2(text.startsWith(path + QStringLiteral(": ")), qPrintable(text));
            QVERIFY2(text.contains(message), qPrintable(text));
            QCOMPARE(static_cast<int>(db.error().code), code);
        }

        const Run r = cli({QStringLiteral("info"), path});
        EXPECT_EXIT(r, 1);
        EXPECT_MATCH(r.err, QStringLiteral("^runlens: ") + QRegularExpression::escape(path + QStringLiteral(": ")) +
                                QStringLiteral(".*") + QRegularExpression::escape(message));
        QVERIFY(r.out.isEmpty());
        QCOMPARE(fileHash(path), before);
        QCOMPARE(folderEntries(path), entries);
    }

    // An earlier version's file is upgraded only when it holds nothing foreign, and an upgrade that would leave a
    // file other than this version's is undone.
    void earlierVersion_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("message"); // empty: it upgrades
        const auto row = [](const char* name, const char* sql, const char* what) {
            QTest::newRow(name) << QString::fromUtf8(sql)
                                << (*what ? QString::fromUtf8(kUntrusted) + QString::fromUtf8(what) : QString());
        };
        row("plain version 5", "", "");
        row("version 5 with a trigger", "CREATE TRIGGER keep_out AFTER INSERT ON node BEGIN DELETE FROM series; END;",
            "trigger keep_out is not one RunLens creates");
        row("version 5 with a recursive view", kRecursiveNode, "view node is not one RunLens creates");
        row("version 5 with an extra column", "ALTER TABLE run ADD COLUMN note TEXT;",
            "table run has a column note, which RunLens does not create");
    }
    void earlierVersion()
    {
        QFETCH(QString, sql);
        QFETCH(QString, message);
        const QString path = copyOfRun(QStringLiteral("v5.runlens"));
        QVERIFY(!path.isEmpty());
        QCOMPARE(execRaw(path.toStdString(), "DROP TABLE run_setting; PRAGMA user_version = 5;"), std::string());
        if (!sql.isEmpty()) QCOMPARE(execRaw(path.toStdString(), sql.toStdString()), std::string());
        const QByteArray before = fileHash(path);
        auto db = store::RunDatabase::open(path.toStdString(), store::OpenMode::ReadWrite);
        if (message.isEmpty()) {
            QVERIFY_OK(db);
            auto version = store::Statement::prepare((*db)->handle(), "PRAGMA user_version");
            QVERIFY_OK(version);
            auto row = version->step();
            QVERIFY(row.ok() && row.value());
            QCOMPARE(version->int64(0), int64_t(store::kSchemaVersion));
            return;
        }
        QVERIFY(!db.ok());
        const QString text = QString::fromStdString(db.error().toString());
        QVERIFY2(text.contains(message), qPrintable(text));
        QCOMPARE(fileHash(path), before);
    }

    // A writer killed while it switched the run's journal mode leaves a hot journal of the header page only: the run
    // reads the same with or without the rollback, so a read-only open reads it as it is and changes neither file.
    // A journal with any other page still needs the rollback a writer does, and says so.
    void hotJournal_data()
    {
        QTest::addColumn<std::vector<uint32_t>>("pages");
        QTest::addColumn<bool>("readable");
        QTest::newRow("header page only (a journal mode switch)") << std::vector<uint32_t>{1} << true;
        QTest::newRow("a data page too (an interrupted write)") << std::vector<uint32_t>{1, 2} << false;
    }

    void hotJournal()
    {
        QFETCH(std::vector<uint32_t>, pages);
        QFETCH(bool, readable);
        const QString path = copyOfRun(QStringLiteral("hot.runlens"));
        QVERIFY(!path.isEmpty());
        const QByteArray run = readBytes(path);
        QVERIFY(run.size() >= qsizetype{2} * 4096);
        const QString journal = path + QStringLiteral("-journal");
        QVERIFY(writeBytes(journal, hotJournalOf(run, pages)));
        const QByteArray runBefore = fileHash(path), journalBefore = fileHash(journal);
        const Run r = cli({QStringLiteral("info"), path});
        if (readable) {
            EXPECT_EXIT(r, 0);
            EXPECT_MATCH(r.out, QStringLiteral("gpu-host-7"));
        } else {
            QVERIFY2(r.exitCode != 0, qPrintable(r.describe()));
            QVERIFY2(r.err.contains(QStringLiteral("a write into it was interrupted and must be rolled back first")),
                     qPrintable(r.describe()));
        }
        QCOMPARE(fileHash(path), runBefore);
        QCOMPARE(fileHash(journal), journalBefore);
        // A read-write open rolls it back; then it reads as before.
        QVERIFY_OK(store::RunDatabase::open(path.toStdString(), store::OpenMode::ReadWrite));
        QVERIFY(!QFileInfo::exists(journal));
        EXPECT_EXIT(cli({QStringLiteral("info"), path}), 0);
    }

    // A file whose name starts with "file:" is that file, not a URI with parameters.
    void fileColonName()
    {
        QVERIFY(QFile::copy(m_run, m_dir.filePath(QStringLiteral("file:run.runlens"))));
        const Run r = cli({QStringLiteral("info"), QStringLiteral("file:run.runlens")}, m_dir.path());
        EXPECT_EXIT(r, 0);
        EXPECT_MATCH(r.out, QStringLiteral("gpu-host-7"));
    }
};

QTEST_GUILESS_MAIN(TstStoreHardening)
#include "tst_store_hardening.moc"
