#pragma once

// One run database file (.runlens): opening, schema creation and version checks, transactions.
// One RunDatabase is one SQLite connection: use it from one thread only.

#include "analysis/store/error.h"

#include <memory>
#include <string>
#include <utility>

struct sqlite3;

namespace runlens::store {

// One write transaction. It ends with commit(), or is rolled back when it goes out of scope without one (an early
// return with an error, an exception, a cancel), so no path leaves a run half-written.
class Transaction
{
public:
    Transaction(Transaction&& o) noexcept : m_db(std::exchange(o.m_db, nullptr)) {}
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    Transaction& operator=(Transaction&&) = delete;
    ~Transaction() { rollback(); }

    // Makes the changes durable and ends the transaction; when the commit fails, the changes are rolled back.
    Status commit();
    // Discards the changes now; nothing when the transaction has ended.
    void rollback();

private:
    friend class RunDatabase;
    friend Expected<Transaction> beginTransaction(sqlite3* db, const char* beginSql);
    explicit Transaction(sqlite3* db) : m_db(db) {}
    sqlite3* m_db = nullptr;
};

// A transaction on a bare connection (schema creation and upgrades), begun with beginSql ("BEGIN IMMEDIATE").
Expected<Transaction> beginTransaction(sqlite3* db, const char* beginSql = "BEGIN IMMEDIATE");

inline constexpr int kSchemaVersion = 6;
inline constexpr int kApplicationId = 0x524c4e53; // "RLNS"

enum class OpenMode
{
    ReadOnly,  // an existing run; nothing can be written
    ReadWrite, // an existing run
    Create,    // an existing run, or a new one when the file does not exist
};

class RunDatabase
{
public:
    static Expected<std::unique_ptr<RunDatabase>> open(const std::string& path, OpenMode mode);
    ~RunDatabase();
    RunDatabase(const RunDatabase&) = delete;
    RunDatabase& operator=(const RunDatabase&) = delete;

    sqlite3* handle() const { return m_db; }
    const std::string& path() const { return m_path; }

    // Begins a write transaction (BEGIN IMMEDIATE: it waits for other writers up to the busy timeout).
    Expected<Transaction> transaction();

private:
    RunDatabase(sqlite3* db, std::string path) : m_db(db), m_path(std::move(path)) {}
    // lookOnly: a read-write connection used only to read a run whose log needs recovery (query_only, no
    // checkpoint when it closes: the run's bytes stay as they are).
    // runPath: the run's own path when path is a file it is being created in (its name, messages).
    // readCode: set to SQLite's extended result code when the run could not be read (e.g. SQLITE_READONLY_RECOVERY).
    // ignoreJournal: read-only, the run read as it is, without its rollback journal (onlyHeaderInJournal).
    static Expected<std::unique_ptr<RunDatabase>> openWith(const std::string& path, OpenMode mode, bool lookOnly,
                                                           const std::string& runPath = {}, int* readCode = nullptr,
                                                           bool ignoreJournal = false);
    Status initialise(bool created);
    sqlite3* m_db;
    std::string m_path;
    bool m_lookOnly = false;
    bool m_wal = false; // this connection put the run in WAL mode (and puts it back when it closes)
};

// The embedded schema.sql text.
const char* schemaSql();

} // namespace runlens::store
