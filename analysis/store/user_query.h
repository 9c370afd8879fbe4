#pragma once

// Read-only SQL for users and scripts (`runlens query`): a separate read-only connection with
// query_only on, extension loading off, ATTACH refused, and an interrupt flag checked while it runs.

#include "analysis/store/error.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace runlens::store {

struct QueryRow
{
    std::vector<std::string> values; // text form; NULL as an empty string with isNull set
    std::vector<bool> isNull;
};

struct QueryOptions
{
    const std::atomic<bool>* cancel = nullptr; // set to true from another thread to interrupt
};

// Runs every statement of sql; onHeader gets the column names of each result, onRow each row.
// Returns the number of rows produced.
Expected<int64_t> runUserQuery(const std::string& dbPath, const std::string& sql,
                               const std::function<void(const std::vector<std::string>&)>& onHeader,
                               const std::function<void(const QueryRow&)>& onRow, const QueryOptions& options = {});

// RFC 4180 quoting of one CSV field, and a whole line of fields (without the line ending).
std::string csvField(const std::string& value);
std::string csvLine(const std::vector<std::string>& fields);

} // namespace runlens::store
