-- RunLens run database, schema version 6 (PRAGMA user_version = 6).
-- Time is int64 nanoseconds since the Unix epoch, UTC. Units are in column names.
-- Tables are internal and may change between versions; the views at the end are the stable,
-- documented surface for `runlens query` and scripts.

CREATE TABLE run (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    created_ns INTEGER NOT NULL,
    creator TEXT NOT NULL                -- "runlens <version>"
);

CREATE TABLE node (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    time_zone TEXT NOT NULL DEFAULT '',   -- IANA zone or UTC offset used for naive local times
    clock_offset_ns INTEGER NOT NULL DEFAULT 0,  -- added at read time to line nodes up
    name_source TEXT NOT NULL DEFAULT '', -- option, host label, import, directory, file
    clock_offset_uncertainty_ns INTEGER,  -- ± of an estimated offset; NULL when never estimated or set
    clock_offset_source TEXT NOT NULL DEFAULT ''  -- how the offset was found: '' (none), user, traces, metrics
);

CREATE TABLE device (
    id INTEGER PRIMARY KEY,
    node_id INTEGER NOT NULL REFERENCES node(id),
    kind TEXT NOT NULL,                   -- gpu, nic, ib, disk, cpu, host
    name TEXT NOT NULL,                   -- "0" for GPU 0, "eth0", "nvme0n1", "" for the host itself
    UNIQUE (node_id, kind, name)
);

CREATE TABLE device_attribute (
    device_id INTEGER NOT NULL REFERENCES device(id),
    key TEXT NOT NULL,                    -- e.g. name, pci.bus_id, uuid
    value TEXT NOT NULL,
    PRIMARY KEY (device_id, key)
) WITHOUT ROWID;

CREATE TABLE import (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    format TEXT NOT NULL,
    importer_version INTEGER NOT NULL,
    options TEXT NOT NULL,                -- JSON object of the options in force
    node_id INTEGER REFERENCES node(id),
    started_ns INTEGER NOT NULL,
    duration_ms REAL NOT NULL,
    rows_read INTEGER NOT NULL,           -- data records read (CSV rows, folded lines)
    points INTEGER NOT NULL,              -- metric points stored
    samples INTEGER NOT NULL,             -- stack samples stored (sum of counts)
    diagnostics INTEGER NOT NULL,         -- all diagnostics counted
    data_loss INTEGER NOT NULL,           -- diagnostics of kinds that dropped input
    summary TEXT NOT NULL DEFAULT '',     -- notes shown to the user (time zone used, node source, ...)
    -- How the times of a source without wall-clock times were set: '' (the file has its own times), option
    -- (start=), aligned (matched against the timed sources of its node), unanchored (nothing matched: its
    -- values are kept in unanchored_point, not on the run's timeline).
    anchor TEXT NOT NULL DEFAULT '',
    anchor_start_ns INTEGER,              -- the chosen time of the source's zero (training start)
    anchor_uncertainty_ns INTEGER,        -- ± of anchor_start_ns
    anchor_method TEXT NOT NULL DEFAULT ''  -- in words: what was matched, and how well
);
CREATE INDEX import_size ON import(size_bytes);

-- The values of an unanchored source (see import.anchor), at times relative to the source's own zero, kept until
-- a later import (start=, or timed sources it aligns with) places them.
CREATE TABLE unanchored_point (
    import_id INTEGER NOT NULL REFERENCES import(id),
    metric TEXT NOT NULL,
    unit TEXT NOT NULL,
    raw_name TEXT NOT NULL,
    rel_ns INTEGER NOT NULL,
    value REAL                            -- NULL for a value the source logged as NaN
);
CREATE INDEX unanchored_point_import ON unanchored_point(import_id);

CREATE TABLE diagnostic_count (
    import_id INTEGER NOT NULL REFERENCES import(id),
    kind TEXT NOT NULL,
    data_loss INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (import_id, kind)
) WITHOUT ROWID;

-- The first occurrences of each kind (at most 100 per kind and import) with their place.
CREATE TABLE diagnostic (
    id INTEGER PRIMARY KEY,
    import_id INTEGER NOT NULL REFERENCES import(id),
    kind TEXT NOT NULL,
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    column INTEGER NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX diagnostic_import ON diagnostic(import_id);

CREATE TABLE series (
    id INTEGER PRIMARY KEY,
    device_id INTEGER NOT NULL REFERENCES device(id),
    metric TEXT NOT NULL,                 -- canonical name, e.g. gpu.util
    unit TEXT NOT NULL,                   -- canonical unit, e.g. %, bytes, W, Hz
    raw_name TEXT NOT NULL,               -- the source's own name, e.g. "utilization.gpu [%]"
    labels TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',      -- the format that recorded it: one series per source, so a 250 ms
                                          -- nvidia-smi query log and a 1 s dmon log of the same GPU stay apart
    points INTEGER NOT NULL DEFAULT 0,    -- including missing ones
    missing_points INTEGER NOT NULL DEFAULT 0,
    first_ns INTEGER,
    last_ns INTEGER,
    min_value REAL,
    max_value REAL,
    sum_value REAL NOT NULL DEFAULT 0,
    UNIQUE (device_id, metric, labels, source)
);

-- Points, in chunks of up to 4096 per series and import: timestamps delta-of-delta and values
-- decimal-scaled or XOR coded, zstd-compressed (codec described in chunk_codec.h), with summaries
-- for level of detail. Missing values are kept with their raw token inside the chunk.
CREATE TABLE point_chunk (
    series_id INTEGER NOT NULL REFERENCES series(id),
    first_ns INTEGER NOT NULL,
    last_ns INTEGER NOT NULL,
    import_id INTEGER NOT NULL REFERENCES import(id),
    chunk_seq INTEGER NOT NULL,           -- ordinal of the chunk within its series and import
    count INTEGER NOT NULL,
    missing INTEGER NOT NULL,
    min_value REAL,
    max_value REAL,
    sum_value REAL NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (series_id, first_ns, import_id, chunk_seq)
) WITHOUT ROWID;

CREATE TABLE frame (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    file TEXT NOT NULL DEFAULT '',
    line INTEGER NOT NULL DEFAULT 0,
    module TEXT NOT NULL DEFAULT '',
    UNIQUE (name, file, line, module)
);

-- Call paths as a prefix tree: parent 0 is the root.
CREATE TABLE callsite (
    id INTEGER PRIMARY KEY,
    parent_id INTEGER NOT NULL,
    frame_id INTEGER NOT NULL REFERENCES frame(id),
    depth INTEGER NOT NULL,
    UNIQUE (parent_id, frame_id)
);

CREATE TABLE thread (
    id INTEGER PRIMARY KEY,
    node_id INTEGER NOT NULL REFERENCES node(id),
    process TEXT NOT NULL,                -- e.g. 'python3 train.py' or '' when unknown
    pid INTEGER NOT NULL DEFAULT 0,
    name TEXT NOT NULL,                   -- e.g. 'MainThread', 'pt_autograd_0'
    tid INTEGER NOT NULL DEFAULT 0,
    UNIQUE (node_id, process, pid, name, tid)
);

-- Untimed stacks: one row per aggregated stack of a source without times (folded files, perf without
-- timestamps), ts_ns always NULL. Timed samples are in stack_chunk.
CREATE TABLE stack_sample (
    id INTEGER PRIMARY KEY,
    thread_id INTEGER NOT NULL REFERENCES thread(id),
    callsite_id INTEGER NOT NULL REFERENCES callsite(id),
    ts_ns INTEGER,
    sample_count INTEGER NOT NULL,
    weight REAL NOT NULL,
    import_id INTEGER NOT NULL REFERENCES import(id)
);
CREATE INDEX stack_sample_thread_ts ON stack_sample(thread_id, ts_ns);

-- Timed stack samples of one thread and import, up to 4096 per chunk in time order (codec in
-- stack_codec.h), with their totals per callsite (summary) so that a window sums whole chunks
-- without decoding them.
CREATE TABLE stack_chunk (
    thread_id INTEGER NOT NULL REFERENCES thread(id),
    first_ns INTEGER NOT NULL,
    last_ns INTEGER NOT NULL,
    import_id INTEGER NOT NULL REFERENCES import(id),
    chunk_seq INTEGER NOT NULL,           -- ordinal of the chunk within its thread and import
    samples INTEGER NOT NULL,             -- sum of the sample counts
    weight REAL NOT NULL,
    summary BLOB NOT NULL,                -- per-callsite totals
    data BLOB NOT NULL,                   -- the samples
    PRIMARY KEY (thread_id, first_ns, import_id, chunk_seq)
) WITHOUT ROWID;

-- Pre-aggregated per-callsite totals of one thread's timed samples over aligned time buckets
-- [start_ns, start_ns + 2^width_log2) (widths 2^34, 2^36, ..., 2^44 ns; see stack_writer.h), over every import.
CREATE TABLE stack_bucket (
    thread_id INTEGER NOT NULL REFERENCES thread(id),
    width_log2 INTEGER NOT NULL,
    start_ns INTEGER NOT NULL,
    samples INTEGER NOT NULL,
    weight REAL NOT NULL,
    summary BLOB NOT NULL,
    PRIMARY KEY (thread_id, width_log2, start_ns)
) WITHOUT ROWID;

-- Settings the user gave for the run, kept for later commands (e.g. model.params = 7e9 for the MFU; see
-- analysis/mfu/mfu.h for the keys). The value is text; a key that is not set has no row.
CREATE TABLE run_setting (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- The last analysis of the run (runlens analyze, the GUI): when it ran, the rules and every parameter's value,
-- the overrides the run keeps (reused by the next analysis), and its findings in report order, each the object
-- `runlens analyze --json` prints. An analysis replaces the previous one as a whole.
CREATE TABLE analysis (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    ran_at_ns INTEGER NOT NULL,
    program_version TEXT NOT NULL,
    rules TEXT NOT NULL,                  -- JSON array
    parameters TEXT NOT NULL,             -- JSON object: every parameter's value
    overrides TEXT NOT NULL DEFAULT '{}', -- JSON object: the parameters set for this run
    summary TEXT NOT NULL DEFAULT '{}'    -- JSON object
);

CREATE TABLE finding (
    id INTEGER PRIMARY KEY,
    ord INTEGER NOT NULL, -- report order
    rule TEXT NOT NULL,
    severity TEXT NOT NULL,
    confidence REAL NOT NULL,
    is_primary INTEGER NOT NULL,
    title TEXT NOT NULL,
    start_ns INTEGER, -- the first episode's start and the last one's end
    end_ns INTEGER,
    impact REAL NOT NULL,
    saving_s REAL NOT NULL,
    finding TEXT NOT NULL -- JSON: the whole finding
);

-- The training steps the last analysis detected per node (from the trainer log or the GPUs' periodicity): each
-- step's start and its length (to the next start; the last step's length is the median).
CREATE TABLE detected_step (
    node TEXT NOT NULL,
    start_ns INTEGER NOT NULL,
    seconds REAL NOT NULL,
    source TEXT NOT NULL, -- trainer_log, sm_periodicity, utilization_periodicity
    PRIMARY KEY (node, start_ns)
) WITHOUT ROWID;

-- ---------------------------------------------------------------------------------------------
-- Trace events (Chrome Trace Event format, PyTorch profiler / Kineto): one track per rank and
-- process/thread (CPU) or device/stream (GPU), interned slice names, and slices with their canonical
-- category. A rank is -1 when the trace does not say (no distributedInfo).

CREATE TABLE trace_track (
    id INTEGER PRIMARY KEY,
    node_id INTEGER NOT NULL REFERENCES node(id),
    rank INTEGER NOT NULL DEFAULT -1,
    kind TEXT NOT NULL,                   -- cpu (pid = OS process, tid = thread) or gpu (pid = device, tid = stream)
    pid TEXT NOT NULL,                    -- as the trace writes it: "461", "0", or a string such as "Spans"
    tid TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',        -- the thread_name metadata, e.g. "thread 498 (python3)", "stream 7"
    device_id INTEGER REFERENCES device(id), -- gpu:<index> for GPU tracks
    max_dur_ns INTEGER NOT NULL DEFAULT 0,   -- longest slice: bounds a time-window search on (track_id, ts_ns)
    UNIQUE (node_id, rank, kind, pid, tid)
);

CREATE TABLE trace_name (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- category: cpu_op, user_annotation, gpu_user_annotation, python_function, cuda_runtime, cuda_driver,
-- kernel, comm_kernel (NCCL/RCCL kernels), memcpy, memset, collective (CPU-side collective spans such as
-- gloo:all_reduce, nccl:all_reduce, record_param_comms, c10d::...), other.
CREATE TABLE trace_slice (
    id INTEGER PRIMARY KEY,
    track_id INTEGER NOT NULL REFERENCES trace_track(id),
    category TEXT NOT NULL,
    name_id INTEGER NOT NULL REFERENCES trace_name(id),
    ts_ns INTEGER NOT NULL,
    dur_ns INTEGER NOT NULL,              -- 0 for instant events
    correlation INTEGER,                  -- CPU launch <-> GPU activity (args.correlation), when given
    import_id INTEGER NOT NULL REFERENCES import(id)
);
CREATE INDEX trace_slice_track_ts ON trace_slice(track_id, ts_ns);

-- ---------------------------------------------------------------------------------------------
-- Stable views (documented in README.md, "Querying a run").

CREATE VIEW series_summary AS
SELECT n.name AS node,
       d.kind || CASE WHEN d.name = '' THEN '' ELSE ':' || d.name END AS device,
       s.metric AS metric, s.unit AS unit, s.points AS points,
       s.first_ns AS first_ns, s.last_ns AS last_ns,
       s.missing_points AS missing_points, s.min_value AS min_value, s.max_value AS max_value,
       CASE WHEN s.points > s.missing_points THEN s.sum_value / (s.points - s.missing_points) END AS mean_value,
       s.raw_name AS raw_name, s.source AS source, s.labels AS labels
FROM series s JOIN device d ON d.id = s.device_id JOIN node n ON n.id = d.node_id;

CREATE VIEW stack_summary AS
WITH per_thread AS (
    SELECT thread_id, sum(samples) AS samples, sum(weight) AS weight, 0 AS untimed_rows,
           min(first_ns) AS first_ns, max(last_ns) AS last_ns
    FROM stack_chunk GROUP BY thread_id
    UNION ALL
    SELECT thread_id, sum(sample_count), sum(weight), count(*), NULL, NULL
    FROM stack_sample GROUP BY thread_id)
SELECT n.name AS node, t.process AS process, t.name AS thread,
       SUM(p.samples) AS samples, SUM(p.weight) AS total_weight,
       t.pid AS pid, t.tid AS tid,
       SUM(p.untimed_rows) AS untimed_rows, MIN(p.first_ns) AS first_ns, MAX(p.last_ns) AS last_ns
FROM per_thread p JOIN thread t ON t.id = p.thread_id JOIN node n ON n.id = t.node_id
GROUP BY t.id;

-- Slices per node, rank and category (last_ns: the end of the latest slice).
CREATE VIEW trace_summary AS
SELECT n.name AS node, t.rank AS rank, s.category AS category, COUNT(*) AS slices,
       SUM(s.dur_ns) AS total_dur_ns, MIN(s.ts_ns) AS first_ns, MAX(s.ts_ns + s.dur_ns) AS last_ns
FROM trace_slice s JOIN trace_track t ON t.id = s.track_id JOIN node n ON n.id = t.node_id
GROUP BY n.name, t.rank, s.category;

CREATE VIEW import_log AS
SELECT i.path AS path, i.format AS format, n.name AS node,
       i.rows_read AS rows, i.diagnostics AS diagnostics,
       CASE WHEN i.data_loss > 0 THEN 'data_loss' WHEN i.diagnostics > 0 THEN 'warnings' ELSE 'ok' END AS status,
       i.points AS points, i.samples AS samples, i.size_bytes AS size_bytes,
       i.content_hash AS content_hash, i.importer_version AS importer_version, i.options AS options,
       i.started_ns AS started_ns, i.duration_ms AS duration_ms, i.id AS import_id,
       i.anchor AS anchor, i.anchor_start_ns AS anchor_start_ns, i.anchor_uncertainty_ns AS anchor_uncertainty_ns,
       i.anchor_method AS anchor_method
FROM import i LEFT JOIN node n ON n.id = i.node_id;

CREATE VIEW import_diagnostic AS
SELECT i.path AS path, dg.kind AS kind, dg.file AS file, dg.line AS line, dg.column AS column,
       dg.message AS message, i.id AS import_id
FROM diagnostic dg JOIN import i ON i.id = dg.import_id;
