-- A point chunk cut after 12 bytes.
UPDATE point_chunk SET data = substr(data, 1, 12) WHERE series_id = (SELECT min(series_id) FROM point_chunk);
