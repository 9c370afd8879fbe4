#pragma once

// Every diagnostic kind an importer can report, declared once: its name, whether input was dropped (kLoss) or only
// noted (kNotice: kept, repaired or skipped by design), and one line for the user.

#include "analysis/store/diagnostics.h"

namespace runlens::importers::diag {

using store::DiagnosticKind;
inline constexpr auto kLoss = store::DiagnosticSeverity::DataLoss;
inline constexpr auto kNotice = store::DiagnosticSeverity::Notice;

inline constexpr DiagnosticKind kBadNumber{"bad_number", kLoss, "a value that should be a number is not one"};
inline constexpr DiagnosticKind kNanValue{"nan_value", kNotice, "NaN or infinity stored as a missing value"};
inline constexpr DiagnosticKind kBackwardsTime{"backwards_time", kLoss,
                                               "a timestamp earlier than the previous one of the same series"};
inline constexpr DiagnosticKind kBadTimestamp{"bad_timestamp", kLoss, "a timestamp that cannot be read"};
inline constexpr DiagnosticKind kWrongFieldCount{"wrong_field_count", kLoss,
                                                 "a row with more or fewer fields than the header"};
inline constexpr DiagnosticKind kInvalidLine{"invalid_line", kLoss, "a line that does not follow the format"};
inline constexpr DiagnosticKind kLineTooLong{"line_too_long", kLoss, "a line longer than the reader's limit"};
inline constexpr DiagnosticKind kTruncatedLine{"truncated_last_line", kNotice,
                                               "the last line has no line ending (file cut while written?)"};
inline constexpr DiagnosticKind kBadUtf8{"bad_utf8", kNotice, "bytes that are not valid UTF-8 (replaced)"};
inline constexpr DiagnosticKind kCommentLine{"comment_line", kNotice, "a comment line, skipped"};
inline constexpr DiagnosticKind kRepeatedHeader{"repeated_header", kNotice, "a header line repeated inside the data"};
inline constexpr DiagnosticKind kUnmappedColumn{"unmapped_column", kNotice,
                                                "a column with no canonical metric, kept under its raw name"};
inline constexpr DiagnosticKind kRenamedColumn{
    "renamed_column", kNotice,
    "a column whose name is empty or repeats another's, kept under a name with its position"};
inline constexpr DiagnosticKind kQuotedNewline{"quoted_newline", kLoss,
                                               "a quoted cell with an embedded line break (broken CSV row)"};
inline constexpr DiagnosticKind kAttributeChanged{"attribute_changed", kNotice,
                                                  "a device property (name, bus id) changed within the file"};
inline constexpr DiagnosticKind kDifferentialCount{"differential_count", kLoss,
                                                   "a folded line with two counts: the first (before) is dropped"};
inline constexpr DiagnosticKind kZeroCount{"zero_count", kNotice, "a folded stack with a zero count"};

inline constexpr DiagnosticKind kCounterReset{"counter_reset", kNotice,
                                              "a counter went down (restart); the rate counts from zero"};
inline constexpr DiagnosticKind kSentinelValue{"sentinel_value", kNotice,
                                               "a 'blank' sentinel (DCGM NOT_SUPPORTED...) stored as missing"};
inline constexpr DiagnosticKind kImplausibleValue{
    "implausible_value", kNotice,
    "a value outside its unit's range (a utilization above 100 %), stored as missing with its text"};
inline constexpr DiagnosticKind kUnmappedMetric{"unmapped_metric", kNotice,
                                                "a metric with no canonical name, kept under its raw name"};
inline constexpr DiagnosticKind kSkippedFamily{"skipped_family", kLoss,
                                               "samples of a family not imported (histogram, summary, info)"};
inline constexpr DiagnosticKind kEstimatedTime{"estimated_time", kNotice,
                                               "timestamps estimated (no time in the file; see the import notes)"};
inline constexpr DiagnosticKind kFarFromRun{
    "far_from_run", kNotice,
    "times estimated from the file's modification time lie hours away from the run's other data (give start=)"};
inline constexpr DiagnosticKind kDuplicateSample{"duplicate_sample", kLoss,
                                                 "a second value for the same series and time; the first is kept"};
inline constexpr DiagnosticKind kSkippedColumns{
    "skipped_columns", kLoss, "sadf -dh columns whose grouping cannot be known (per-CPU interrupts); use sadf -d"};
inline constexpr DiagnosticKind kCreatedSample{"created_sample", kNotice,
                                               "OpenMetrics _created samples (counter start times), not imported"};
inline constexpr DiagnosticKind kEmptyStack{"empty_stack", kLoss, "a stack sample with no frames"};
inline constexpr DiagnosticKind kStackTooDeep{
    "stack_too_deep", kLoss, "a stack deeper than max_stack_depth: its outer frames replaced by one frame"};
inline constexpr DiagnosticKind kUnknownUnit{"unknown_unit", kLoss, "a unit that cannot be converted"};
inline constexpr DiagnosticKind kRestartRecord{"restart_record", kNotice, "a restart marker (the host rebooted)"};
inline constexpr DiagnosticKind kNodeConflict{
    "node_conflict", kNotice,
    "a host label naming another folder's node; the file was kept on its own folder's node (see the message)"};

// Chrome Trace Event / Kineto traces.
inline constexpr DiagnosticKind kInvalidEvent{"invalid_event", kLoss,
                                              "a trace event that is not an object or has no phase (ph)"};
inline constexpr DiagnosticKind kUnsupportedEvent{"unsupported_event", kLoss,
                                                  "a trace event of a phase not imported (async, object, sample...)"};
inline constexpr DiagnosticKind kUnbalancedEvent{"unbalanced_event", kLoss,
                                                 "a B/E duration event without its other half"};
inline constexpr DiagnosticKind kTruncatedTrace{"truncated_trace", kLoss,
                                                "a trace cut short inside its last event (that event is dropped)"};
inline constexpr DiagnosticKind kThreadDuration{"thread_duration", kNotice,
                                                "a complete event without dur: its thread duration (tdur) used"};

// Trainer logs.
inline constexpr DiagnosticKind kInconsistentThroughput{
    "inconsistent_throughput", kNotice,
    "a trainer log throughput that agrees neither with its elapsed time nor its token count; elapsed_time used"};
inline constexpr DiagnosticKind kUnanchored{
    "unanchored", kNotice,
    "no wall-clock time and no match with the node's timed data: values kept off the timeline (give start=)"};
inline constexpr DiagnosticKind kRepeatedStep{"repeated_step", kLoss,
                                              "a step number not after the previous one (a run appended?); dropped"};
inline constexpr DiagnosticKind kUnquotedValue{
    "unquoted_value", kNotice, "a sample value written as a JSON number, not a quoted string as the API writes it"};

} // namespace runlens::importers::diag
