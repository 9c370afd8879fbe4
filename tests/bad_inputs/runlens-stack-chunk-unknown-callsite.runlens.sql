-- A stack chunk with one sample (2026-01-02T03:00:00.2Z, count 1) of callsite 9999, which does not exist.
UPDATE stack_chunk SET data = zstd_rle_frame(varint(1) || varint(1) || varint(3534645600400000000) || varint(9999)
    || varint(3), 0);
