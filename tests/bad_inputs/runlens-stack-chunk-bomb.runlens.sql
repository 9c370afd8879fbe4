-- A stack chunk whose 2 KB zstd frame decodes to 60 MiB and declares 15 million samples.
UPDATE stack_chunk SET data = zstd_rle_frame(varint(1) || varint(15000000), 62914560);
