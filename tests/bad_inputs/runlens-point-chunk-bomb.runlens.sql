-- A point chunk whose 2 KB zstd frame decodes to 60 MiB and declares 20 million points.
UPDATE point_chunk SET data = zstd_rle_frame(varint(1) || varint(20000000) || varint(0), 62914560)
    WHERE series_id = (SELECT min(series_id) FROM point_chunk);
