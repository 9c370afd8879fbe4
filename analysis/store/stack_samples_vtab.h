#pragma once

// `stack_samples`: a table-valued function over every stack sample, timed ones decoded from their chunks and
// untimed aggregated stacks (ts_ns NULL), for `runlens query` and scripts:
//   SELECT ts_ns, callsite_id, weight FROM stack_samples WHERE thread_id = 3 AND ts_ns >= 1793606400000000000;
// Columns: node, process, thread, ts_ns (node clock offset applied), callsite_id, sample_count, weight,
// thread_id, import_id. Equality on thread_id is applied while reading; rows come per thread, timed ones in
// time order, then the thread's untimed stacks.

#include "analysis/store/error.h"

struct sqlite3;

namespace runlens::store {

Status registerStackSamples(sqlite3* db);

} // namespace runlens::store
