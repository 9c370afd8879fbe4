#pragma once

// `series_points`: a table-valued function over the decoded points of every series, for `runlens query`
// and scripts:
//   SELECT ts_ns, value FROM series_points WHERE node = 'node0' AND device = 'gpu:0' AND metric = 'gpu.util'
//     AND ts_ns BETWEEN 1793606400000000000 AND 1793606460000000000;
// Columns: node, device, metric, ts_ns, value (NULL when missing), missing (0/1), token (the raw missing
// spelling, e.g. "[N/A]"), series_id. Equality on node/device/metric/series_id and ranges on ts_ns are
// applied while reading, so a filtered query decodes only the chunks it needs. Times include the node's
// clock offset. Rows come per series in time order.

#include "analysis/store/error.h"

struct sqlite3;

namespace runlens::store {

Status registerSeriesPoints(sqlite3* db);

} // namespace runlens::store
