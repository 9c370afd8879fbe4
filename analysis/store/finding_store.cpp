#include "analysis/store/finding_store.h"

#include "analysis/store/run_database.h"
#include "analysis/store/sqlite_util.h"

namespace runlens::store {

Status replaceAnalysis(RunDatabase& db, const StoredAnalysis& a)
{
    RUNLENS_ASSIGN_OR_RETURN(Transaction tx, db.transaction());
    sqlite3* h = db.handle();
    RUNLENS_TRY(execSql(h, "DELETE FROM finding; DELETE FROM analysis; DELETE FROM detected_step;"));
    RUNLENS_ASSIGN_OR_RETURN(
        auto head,
        Statement::prepare(h, "INSERT INTO analysis (id, ran_at_ns, program_version, rules, parameters, overrides, "
                              "summary) VALUES (1, ?, ?, ?, ?, ?, ?)"));
    head.bind(1, a.ranAtNs)
        .bind(2, std::string_view(a.programVersion))
        .bind(3, std::string_view(a.rulesJson))
        .bind(4, std::string_view(a.parametersJson))
        .bind(5, std::string_view(a.overridesJson))
        .bind(6, std::string_view(a.summaryJson));
    RUNLENS_TRY(head.step());
    RUNLENS_ASSIGN_OR_RETURN(
        auto row,
        Statement::prepare(h, "INSERT INTO finding (ord, rule, severity, confidence, is_primary, title, start_ns, "
                              "end_ns, impact, saving_s, finding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    for (size_t i = 0; i < a.findings.size(); ++i) {
        const StoredFinding& f = a.findings[i];
        row.bind(1, static_cast<int64_t>(i))
            .bind(2, std::string_view(f.rule))
            .bind(3, std::string_view(f.severity))
            .bind(4, f.confidence)
            .bind(5, f.primary ? 1 : 0)
            .bind(6, std::string_view(f.title));
        if (f.startNs)
            row.bind(7, *f.startNs);
        else
            row.bindNull(7);
        if (f.endNs)
            row.bind(8, *f.endNs);
        else
            row.bindNull(8);
        row.bind(9, f.impact).bind(10, f.savingS).bind(11, std::string_view(f.json));
        RUNLENS_TRY(row.step());
        row.reset();
    }
    RUNLENS_ASSIGN_OR_RETURN(
        auto step,
        Statement::prepare(
            h, "INSERT OR REPLACE INTO detected_step (node, start_ns, seconds, source) VALUES (?, ?, ?, ?)"));
    for (const StoredStep& st : a.steps) {
        step.bind(1, std::string_view(st.node))
            .bind(2, st.startNs)
            .bind(3, st.seconds)
            .bind(4, std::string_view(st.source));
        RUNLENS_TRY(step.step());
        step.reset();
    }
    return tx.commit();
}

Expected<std::optional<StoredAnalysis>> loadAnalysis(RunDatabase& db)
{
    sqlite3* h = db.handle();
    RUNLENS_ASSIGN_OR_RETURN(
        auto head, Statement::prepare(
                       h, "SELECT ran_at_ns, program_version, rules, parameters, overrides, summary FROM analysis"));
    RUNLENS_ASSIGN_OR_RETURN(auto found, head.step());
    if (!found) return std::optional<StoredAnalysis>{};
    StoredAnalysis a;
    a.ranAtNs = head.int64(0);
    a.programVersion = head.text(1);
    a.rulesJson = head.text(2);
    a.parametersJson = head.text(3);
    a.overridesJson = head.text(4);
    a.summaryJson = head.text(5);
    RUNLENS_ASSIGN_OR_RETURN(
        auto rows,
        Statement::prepare(h, "SELECT rule, severity, confidence, is_primary, title, start_ns, end_ns, impact, "
                              "saving_s, finding FROM finding ORDER BY ord"));
    RUNLENS_ASSIGN_OR_RETURN(a.findings, rows.collect<StoredFinding>([](const Statement& row) {
        StoredFinding f;
        f.rule = row.text(0);
        f.severity = row.text(1);
        f.confidence = row.real(2);
        f.primary = row.int64(3) != 0;
        f.title = row.text(4);
        if (!row.isNull(5)) f.startNs = row.int64(5);
        if (!row.isNull(6)) f.endNs = row.int64(6);
        f.impact = row.real(7);
        f.savingS = row.real(8);
        f.json = row.text(9);
        return f;
    }));
    RUNLENS_ASSIGN_OR_RETURN(
        auto steps,
        Statement::prepare(h, "SELECT node, start_ns, seconds, source FROM detected_step ORDER BY node, start_ns"));
    RUNLENS_ASSIGN_OR_RETURN(a.steps, steps.collect<StoredStep>([](const Statement& row) {
        return StoredStep{row.text(0), row.text(3), row.int64(1), row.real(2)};
    }));
    return std::optional<StoredAnalysis>{std::move(a)};
}

} // namespace runlens::store
