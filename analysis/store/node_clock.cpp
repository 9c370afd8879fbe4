#include "analysis/store/node_clock.h"

#include "analysis/store/run_database.h"
#include "analysis/store/sqlite_util.h"

#include <fmt/format.h>
#include <sqlite3.h>

namespace runlens::store {

Status setNodeClockOffset(RunDatabase& db, std::string_view node, int64_t offsetNs,
                          std::optional<int64_t> uncertaintyNs, std::string_view source)
{
    RUNLENS_ASSIGN_OR_RETURN(auto st,
                             Statement::prepare(db.handle(),
                                                "UPDATE node SET clock_offset_ns = ?, clock_offset_uncertainty_ns = ?, "
                                                "clock_offset_source = ? WHERE name = ?"));
    st.bind(1, offsetNs);
    if (uncertaintyNs)
        st.bind(2, *uncertaintyNs);
    else
        st.bindNull(2);
    st.bind(3, source).bind(4, node);
    RUNLENS_TRY(st.exec());
    if (sqlite3_changes(db.handle()) == 0)
        return makeError(ErrorCode::Usage, fmt::format("the run has no node \"{}\"", node));
    return okStatus();
}

} // namespace runlens::store
