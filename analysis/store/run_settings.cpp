#include "analysis/store/run_settings.h"

#include "analysis/store/run_database.h"
#include "analysis/store/sqlite_util.h"

namespace runlens::store {

Expected<std::map<std::string, std::string>> loadRunSettings(RunDatabase& db)
{
    RUNLENS_ASSIGN_OR_RETURN(auto st,
                             Statement::prepare(db.handle(), "SELECT key, value FROM run_setting ORDER BY key"));
    std::map<std::string, std::string> out;
    RUNLENS_TRY(st.forEachRow([&](const Statement& row) { out[row.text(0)] = row.text(1); }));
    return out;
}

Status storeRunSettings(RunDatabase& db, const std::map<std::string, std::optional<std::string>>& changes)
{
    RUNLENS_ASSIGN_OR_RETURN(Transaction tx, db.transaction());
    RUNLENS_TRY(storeRunSettingsInTransaction(db, changes));
    return tx.commit();
}

Status storeRunSettingsInTransaction(RunDatabase& db, const std::map<std::string, std::optional<std::string>>& changes)
{
    RUNLENS_ASSIGN_OR_RETURN(
        auto set, Statement::prepare(db.handle(), "INSERT OR REPLACE INTO run_setting (key, value) VALUES (?, ?)"));
    RUNLENS_ASSIGN_OR_RETURN(auto clear, Statement::prepare(db.handle(), "DELETE FROM run_setting WHERE key = ?"));
    for (const auto& [key, value] : changes) {
        Statement& st = value ? set : clear;
        st.bind(1, std::string_view(key));
        if (value) st.bind(2, std::string_view(*value));
        RUNLENS_TRY(st.exec());
    }
    return okStatus();
}

} // namespace runlens::store
