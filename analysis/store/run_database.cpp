#include "analysis/store/run_database.h"

#include "analysis/store/schema_check.h"
#include "analysis/store/schema_upgrade.h"
#include "analysis/store/series_points_vtab.h"
#include "analysis/store/sqlite_util.h"
#include "analysis/store/stack_samples_vtab.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sqlite3.h>
#include <string_view>
#include <unistd.h>

namespace runlens::store {
namespace {

// A run file may come from anyone (another team, a crash, a download cut short): before the connection reads its
// schema, SQLite is told to trust nothing in it. The calls exist since SQLite 3.31.
Status hardenConnection(sqlite3* db)
{
    static constexpr std::pair<int, int> kOptions[] = {
        {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0}, // no shared library loaded from SQL
        // Functions with side effects and virtual tables not marked innocuous cannot run from the file's schema
        // (views, defaults, CHECK constraints).
        {SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0},
        // No way for SQL to corrupt the file on purpose: writable_schema, journal_mode=OFF, writes to shadow tables
        // and to sqlite_dbpage are refused.
        {SQLITE_DBCONFIG_DEFENSIVE, 1},
        {SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0}, // fts3_tokenizer() could hand SQLite a pointer to call
        {SQLITE_DBCONFIG_ENABLE_TRIGGER, 0},        // RunLens creates no triggers; one in a file never runs
    };
    for (const auto& [option, value] : kOptions)
        if (sqlite3_db_config(db, option, value, nullptr) != SQLITE_OK)
            return sqliteError(db, fmt::format("cannot set connection option {}", option));
    // Damaged pages are detected when read instead of trusted; and no memory mapping: a file cut short while
    // mapped (another process truncating it, a network share going away) would kill RunLens with SIGBUS instead of
    // failing a read.
    return execSql(db, "PRAGMA cell_size_check = ON; PRAGMA mmap_size = 0;");
}

// Extended result codes of a read-only open that an interrupted writer left behind: the write-ahead log needs its
// index rebuilt (which writes only the -shm file), or a rollback journal is hot (which would write the run).
bool needsRecovery(int extended)
{
    return extended == SQLITE_READONLY_RECOVERY || extended == SQLITE_READONLY_CANTINIT ||
           extended == SQLITE_READONLY_CANTLOCK;
}

uint32_t bigEndian32(const unsigned char* p)
{
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// True when the hot rollback journal beside the run holds nothing but the run's header page: what a writer killed
// while switching the run between its journal modes leaves (the switch rewrites the file format bytes of page 1
// only). The run's content is then the same with or without the rollback, and it can be read as it is. Every page
// record of the journal must be page 1, the journal a single header (SQLite's rollback-journal format), and the run
// as long as the journal says it was.
bool onlyHeaderInJournal(const std::string& path)
{
    std::ifstream in(path + "-journal", std::ios::binary);
    std::error_code journalError, runError;
    const auto journalSize = std::filesystem::file_size(path + "-journal", journalError);
    const auto runSize = std::filesystem::file_size(path, runError);
    if (!in || journalError || runError) return false;
    static constexpr unsigned char kMagic[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
    unsigned char header[28];
    if (!in.read(reinterpret_cast<char*>(header), sizeof header) || !std::equal(kMagic, kMagic + 8, header))
        return false;
    const uint64_t initialPages = bigEndian32(header + 16), sector = bigEndian32(header + 20),
                   page = bigEndian32(header + 24);
    if (sector < 32 || sector > 65536 || page < 512 || page > 65536 || (page & (page - 1)) != 0) return false;
    if (initialPages == 0 || runSize != initialPages * page || journalSize < sector) return false;
    const uint64_t records = (journalSize - sector) / (page + 8);
    unsigned char number[4];
    for (uint64_t r = 0; r < records; ++r) {
        in.seekg(static_cast<std::streamoff>(sector + r * (page + 8)));
        if (!in.read(reinterpret_cast<char*>(number), 4) || bigEndian32(number) != 1) return false;
    }
    return true;
}

// path as an SQLite URI (for its parameters): the characters a URI gives a meaning to, percent-encoded.
std::string fileUri(const std::string& path)
{
    const std::string absolute = std::filesystem::absolute(path).string();
    std::string out = "file:";
    for (const char c : absolute) {
        if (c == '%' || c == '?' || c == '#' || c == '&' || c == '=' || static_cast<unsigned char>(c) < 0x20)
            out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        else
            out += c;
    }
    return out;
}

} // namespace

Expected<std::unique_ptr<RunDatabase>> RunDatabase::open(const std::string& path, OpenMode mode)
{
    std::error_code ec;
    if (mode == OpenMode::Create && !std::filesystem::exists(path, ec)) {
        // A new run appears whole: its schema is written to a file beside it and renamed into place, so the path
        // never holds a run without its schema (a process killed while creating it leaves nothing at the path).
        const std::filesystem::path target(path);
        const std::filesystem::path temp =
            target.parent_path() / fmt::format(".{}.creating-{}", target.filename().string(), ::getpid());
        {
            auto fresh = openWith(temp.string(), OpenMode::Create, false, path);
            if (!fresh) {
                std::filesystem::remove(temp, ec);
                return fresh.error();
            }
        } // closed: back in rollback-journal mode, the log checkpointed into it
        std::filesystem::rename(temp, target, ec);
        if (ec) {
            std::filesystem::remove(temp, ec);
            return makeError(ErrorCode::Io, fmt::format("{}: cannot create the run: {}", path, ec.message()));
        }
        mode = OpenMode::ReadWrite;
    }
    int extended = 0; // SQLite's extended result code when the run could not be read
    auto db = openWith(path, mode, false, {}, &extended);
    if (db || mode != OpenMode::ReadOnly) return db;
    // A writer killed mid-import left its log needing recovery: a connection that may write the log's index (never
    // the run itself: no statement writes, and it does not checkpoint when it closes) reads what was committed.
    if (db.error().code == ErrorCode::Database && needsRecovery(extended)) {
        auto again = openWith(path, OpenMode::ReadWrite, true);
        if (again) return again;
    }
    // A writer killed while it switched the journal mode: only the header page is in the journal, the run reads the
    // same either way.
    if (extended == SQLITE_READONLY_ROLLBACK && onlyHeaderInJournal(path)) {
        auto asItIs = openWith(path, OpenMode::ReadOnly, false, {}, nullptr, true);
        if (asItIs) return asItIs;
    }
    if (extended == SQLITE_READONLY_ROLLBACK)
        return makeError(ErrorCode::Database,
                         fmt::format("{}: a write into it was interrupted and must be rolled back first: open it for "
                                     "writing once (e.g. `runlens import` into it)",
                                     path));
    return db.error();
}

Expected<std::unique_ptr<RunDatabase>> RunDatabase::openWith(const std::string& path, OpenMode mode, bool lookOnly,
                                                             const std::string& runPath, int* readCode,
                                                             bool ignoreJournal)
{
    std::error_code ec;
    const bool exists = std::filesystem::exists(path, ec);
    if (!exists && mode != OpenMode::Create)
        return makeError(ErrorCode::Io, fmt::format("{}: no such run database", path));
    // Only an import may make a run of an empty file (`touch run.runlens` first); anything else opening one says so
    // rather than SQLite's "not a database" or, for writing, a schema written into a file it was not asked to create.
    if (exists && mode != OpenMode::Create && std::filesystem::is_regular_file(path, ec) &&
        std::filesystem::file_size(path, ec) == 0 && !ec)
        return makeError(ErrorCode::Unsupported,
                         fmt::format("{}: an empty file (0 bytes), not a RunLens run database", path));
    int flags = SQLITE_OPEN_NOMUTEX;
    flags |= mode == OpenMode::ReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    if (mode == OpenMode::Create) flags |= SQLITE_OPEN_CREATE;
    sqlite3* raw = nullptr;
    // SQLite reads a name that starts with "file:" as a URI whose parameters choose the mode, locking and VFS: a
    // file of that name is opened as the file it is.
    std::string sqlitePath = path.rfind("file:", 0) == 0 ? "./" + path : path;
    if (ignoreJournal) {
        // immutable: no locks, no journal, no log; the run read as its bytes are.
        sqlitePath = fileUri(path) + "?immutable=1";
        flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
    }
    const int rc = sqlite3_open_v2(sqlitePath.c_str(), &raw, flags, nullptr);
    if (rc != SQLITE_OK) {
        Error e = sqliteError(raw, fmt::format("{}: cannot open run database", path));
        sqlite3_close(raw);
        return e;
    }
    std::unique_ptr<RunDatabase> db(new RunDatabase(raw, runPath.empty() ? path : runPath));
    db->m_lookOnly = lookOnly;
    sqlite3_extended_result_codes(raw, 1);
    // Several connections share a run (the window's readers, the analysis keeping its findings): a lock held for
    // a moment by one waits rather than fails the other.
    sqlite3_busy_timeout(raw, 10000);
    if (Status s = hardenConnection(raw); !s) {
        Error e = s.error();
        e.message = fmt::format("{}: {}", path, e.message);
        return e;
    }
    if (lookOnly) {
        sqlite3_db_config(raw, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
        RUNLENS_TRY(execSql(raw, "PRAGMA query_only = ON;"));
    }
    RUNLENS_TRY(registerSeriesPoints(raw));
    RUNLENS_TRY(registerStackSamples(raw));
    if (Status s = db->initialise(!exists); !s) {
        Error e = s.error();
        if (readCode) *readCode = sqlite3_extended_errcode(raw);
        if (e.message.rfind(path, 0) != 0) e.message = fmt::format("{}: {}", path, e.message);
        return e;
    }
    return db;
}

RunDatabase::~RunDatabase()
{
    // The last writer (one that put the run in WAL mode) to close puts the file back in rollback-journal mode (the
    // log checkpointed into it), so a copy of the single file is complete and it opens on read-only media; with
    // other connections still open this fails at once and the file stays in WAL mode until the next writer closes.
    if (m_wal && sqlite3_db_readonly(m_db, "main") == 0) {
        sqlite3_busy_timeout(m_db, 0);
        (void)execSql(m_db, "PRAGMA journal_mode = DELETE;");
    }
    sqlite3_close_v2(m_db);
}

Status RunDatabase::initialise(bool created)
{
    RUNLENS_TRY(execSql(m_db, "PRAGMA foreign_keys = OFF; PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY;"));
    auto version = Statement::prepare(m_db, "PRAGMA user_version");
    if (!version) return version.error();
    auto row = version->step();
    if (!row) return makeError(ErrorCode::Io, "not a SQLite database (or it is damaged): " + row.error().message);
    const int userVersion = static_cast<int>(version->int64(0));
    RUNLENS_ASSIGN_OR_RETURN(auto appIdStmt, Statement::prepare(m_db, "PRAGMA application_id"));
    RUNLENS_TRY(appIdStmt.step());
    const int appId = static_cast<int>(appIdStmt.int64(0));
    // No statement may be left running: an upgrade can drop tables.
    version->reset();
    appIdStmt.reset();

    if (userVersion > kSchemaVersion)
        return makeError(ErrorCode::Unsupported,
                         fmt::format("written by a newer RunLens (schema version {}); this build reads versions up to "
                                     "{}: update RunLens to open it",
                                     userVersion, kSchemaVersion));
    if (userVersion > 0 && appId != kApplicationId)
        return makeError(ErrorCode::Unsupported, "not a RunLens run database (unknown application id)");
    // Exactly what this version creates, or refused before anything reads a table or a view.
    if (userVersion == kSchemaVersion) return checkSchema(m_db);
    if (userVersion > 0) {
        // An earlier version's file: nothing foreign may run while it is upgraded; the upgrade ends with the exact
        // check.
        RUNLENS_TRY(checkNoForeignObjects(m_db));
        if (sqlite3_db_readonly(m_db, "main") == 1)
            return makeError(ErrorCode::Unsupported,
                             fmt::format("written by an earlier RunLens (schema version {}): open it for writing once "
                                         "(e.g. `runlens import` into it) to upgrade it to version {}",
                                         userVersion, kSchemaVersion));
        return upgradeSchema(m_db, userVersion);
    }

    // user_version 0: an empty file we just created, or some other SQLite database.
    RUNLENS_ASSIGN_OR_RETURN(auto tables, Statement::prepare(m_db, "SELECT count(*) FROM sqlite_master"));
    RUNLENS_TRY(tables.step());
    if (tables.int64(0) > 0 || (!created && sqlite3_db_readonly(m_db, "main") == 1))
        return makeError(ErrorCode::Unsupported, "not a RunLens run database");
    if (sqlite3_db_readonly(m_db, "main") == 1) return makeError(ErrorCode::Unsupported, "not a RunLens run database");

    RUNLENS_ASSIGN_OR_RETURN(Transaction tx, beginTransaction(m_db, "BEGIN"));
    RUNLENS_TRY(execSql(m_db, schemaSql()));
    const auto nowNs =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    RUNLENS_ASSIGN_OR_RETURN(Statement ins,
                             Statement::prepare(m_db, "INSERT INTO run(name, created_ns, creator) VALUES (?, ?, ?)"));
    const std::string name = std::filesystem::path(m_path).stem().string();
    ins.bind(1, std::string_view(name)).bind(2, static_cast<int64_t>(nowNs)).bind(3, "runlens " RUNLENS_VERSION);
    RUNLENS_TRY(ins.exec());
    RUNLENS_TRY(execSql(
        m_db,
        fmt::format("PRAGMA user_version = {}; PRAGMA application_id = {};", kSchemaVersion, kApplicationId).c_str()));
    return tx.commit();
}

Expected<Transaction> RunDatabase::transaction()
{
    // A writer keeps a write-ahead log from its first transaction until it closes: a transaction (an import's file)
    // is in the run once it commits, and a writer killed mid-file leaves the log's committed part for readers, who
    // ignore the rest. A read-only open then shows exactly the files whose import finished, and the next writer
    // finishes the recovery. Set here rather than at open, so opening for writing changes nothing by itself. A file
    // system without shared memory keeps the rollback journal.
    if (!m_wal && !m_lookOnly) m_wal = static_cast<bool>(execSql(m_db, "PRAGMA journal_mode = WAL;"));
    return beginTransaction(m_db);
}

Expected<Transaction> beginTransaction(sqlite3* db, const char* beginSql)
{
    RUNLENS_TRY(execSql(db, beginSql));
    return Transaction(db);
}

Status Transaction::commit()
{
    sqlite3* db = std::exchange(m_db, nullptr);
    if (!db) return makeError(ErrorCode::Internal, "commit of a transaction that has ended");
    Status s = execSql(db, "COMMIT");
    if (!s && !sqlite3_get_autocommit(db)) (void)execSql(db, "ROLLBACK"); // e.g. SQLITE_BUSY keeps it open
    return s;
}

void Transaction::rollback()
{
    sqlite3* db = std::exchange(m_db, nullptr);
    // A failed statement may have rolled the transaction back already (SQLITE_FULL, SQLITE_IOERR): then there is
    // nothing left to undo, and the ROLLBACK's own error says nothing new.
    if (db && !sqlite3_get_autocommit(db)) (void)execSql(db, "ROLLBACK");
}

} // namespace runlens::store
