#pragma once

// Errors are values: a fatal problem for one input or one operation is returned as an Error with the place it
// happened, printed like a compiler message ("run42/gpu0.csv.zst:1834:17: expected a number ...").

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace runlens {

enum class ErrorCode
{
    Io,              // cannot open, read or write a file
    Format,          // the input does not follow its format
    Compression,     // a zstd/gzip stream is corrupt or truncated
    Unsupported,     // a version or feature this build does not handle
    Database,        // SQLite reported an error
    Usage,           // a bad argument or option
    Cancelled,       // the user cancelled
    AlreadyImported, // not a failure: the same content was imported before
    Internal,        // the work itself failed (memory exhausted, a bug), not the input
};

struct SourceLocation
{
    std::string file;   // as the user named it
    int64_t line = 0;   // 1-based; 0 when unknown
    int64_t column = 0; // 1-based; 0 when unknown
    int64_t byte = -1;  // offset of the line start in the decompressed stream; -1 when unknown

    std::string toString() const
    {
        std::string s = file;
        if (line > 0) {
            s += ':' + std::to_string(line);
            if (column > 0) s += ':' + std::to_string(column);
        }
        return s;
    }
};

struct Error
{
    ErrorCode code = ErrorCode::Format;
    std::string message;
    SourceLocation where;

    // "file:line:col: message", or just the message when there is no file.
    std::string toString() const
    {
        const std::string place = where.toString();
        return place.empty() ? message : place + ": " + message;
    }
};

inline Error makeError(ErrorCode code, std::string message, SourceLocation where = {})
{
    return Error{code, std::move(message), std::move(where)};
}

// A value or an Error (std::expected arrives with C++23). Ignoring one is a compile error: an error dropped on the
// floor is data lost without a word.
template <typename T> class [[nodiscard]] Expected
{
public:
    Expected(T value) : m_v(std::in_place_index<0>, std::move(value)) {}
    Expected(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(m_v); }
    const T& value() const& { return std::get<0>(m_v); }
    T&& value() && { return std::get<0>(std::move(m_v)); }
    T* operator->() { return &std::get<0>(m_v); }
    const T* operator->() const { return &std::get<0>(m_v); }
    T& operator*() & { return std::get<0>(m_v); }
    const Error& error() const { return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

// For operations that return nothing but may fail.
struct Ok
{
};
using Status = Expected<Ok>;
inline Status okStatus()
{
    return Ok{};
}

} // namespace runlens

// Propagation: RUNLENS_TRY(expr) returns expr's Error from the enclosing function when expr (a Status or an Expected)
// failed; RUNLENS_ASSIGN_OR_RETURN(decl, expr) declares or assigns decl from expr's value, or returns its Error.
//
//   RUNLENS_TRY(writer.commit());
//   RUNLENS_ASSIGN_OR_RETURN(auto run, RunDatabase::open(path));
#define RUNLENS_TRY(expr)                                                                                              \
    do {                                                                                                               \
        if (auto runlens_try_result_ = (expr); !runlens_try_result_) return runlens_try_result_.error();               \
    } while (0)

// decl is a declaration ("auto x") and tmp a name: neither can stand in parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define RUNLENS_CONCAT_INNER_(a, b) a##b
#define RUNLENS_CONCAT_(a, b) RUNLENS_CONCAT_INNER_(a, b)
#define RUNLENS_ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr)                                                                \
    auto tmp = (expr);                                                                                                 \
    if (!tmp) return tmp.error();                                                                                      \
    decl = std::move(tmp).value()
#define RUNLENS_ASSIGN_OR_RETURN(decl, expr)                                                                           \
    RUNLENS_ASSIGN_OR_RETURN_IMPL_(RUNLENS_CONCAT_(runlens_assign_result_, __LINE__), decl, expr)
// NOLINTEND(bugprone-macro-parentheses)
