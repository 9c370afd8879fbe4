#pragma once

// Recoverable problems found while importing: each is a declared kind (its name and whether input was
// dropped), counted, and the first kMaxStoredPerKind of each kind are kept with their file:line.

#include "analysis/store/error.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace runlens::store {

// Text from an input as it may be shown in a terminal or stored: control characters (but tab) and bytes that are not
// UTF-8 written as \xNN, so a NUL, an escape sequence or a broken byte in a file is visible instead of acting.
std::string printableText(std::string_view text);

enum class DiagnosticSeverity
{
    Notice,   // nothing was dropped: a value kept as missing, a repair, something skipped by design
    DataLoss, // input was dropped (counts for --strict and in the import's status)
};

struct DiagnosticKind
{
    const char* name; // stable snake_case id, e.g. "bad_number"
    DiagnosticSeverity severity;
    const char* help; // one line for the user

    constexpr bool dataLoss() const { return severity == DiagnosticSeverity::DataLoss; }
};

struct DiagnosticEntry
{
    std::string kind;
    SourceLocation where;
    std::string message;
};

struct DiagnosticCount
{
    int64_t count = 0;
    bool dataLoss = false;
};

class Diagnostics
{
public:
    static constexpr int kMaxStoredPerKind = 100;

    void report(const DiagnosticKind& kind, SourceLocation where, const std::string& message);
    // One stored entry standing for `count` occurrences.
    void reportCount(const DiagnosticKind& kind, SourceLocation where, const std::string& message, int64_t count);

    int64_t total() const { return m_total; }
    int64_t dataLoss() const { return m_dataLoss; }
    const std::map<std::string, DiagnosticCount>& counts() const { return m_counts; }
    const std::vector<DiagnosticEntry>& entries() const { return m_entries; }
    void clear() { *this = Diagnostics(); }

private:
    std::map<std::string, DiagnosticCount> m_counts;
    std::vector<DiagnosticEntry> m_entries;
    int64_t m_total = 0;
    int64_t m_dataLoss = 0;
};

inline void Diagnostics::report(const DiagnosticKind& kind, SourceLocation where, const std::string& message)
{
    DiagnosticCount& c = m_counts[kind.name];
    c.dataLoss = kind.dataLoss();
    ++c.count;
    ++m_total;
    if (kind.dataLoss()) ++m_dataLoss;
    if (c.count <= kMaxStoredPerKind) m_entries.push_back({kind.name, std::move(where), printableText(message)});
}

inline void Diagnostics::reportCount(const DiagnosticKind& kind, SourceLocation where, const std::string& message,
                                     int64_t count)
{
    if (count <= 0) return;
    report(kind, std::move(where), message);
    m_counts[kind.name].count += count - 1;
    m_total += count - 1;
    if (kind.dataLoss()) m_dataLoss += count - 1;
}

} // namespace runlens::store
