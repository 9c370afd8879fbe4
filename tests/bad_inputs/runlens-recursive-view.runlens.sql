-- The node table replaced by a view whose recursion never ends: reading it would never finish.
DROP TABLE node;
CREATE VIEW node AS WITH RECURSIVE c(id, name, time_zone, clock_offset_ns, name_source, clock_offset_uncertainty_ns,
    clock_offset_source) AS (SELECT 1, 'n', '', 0, '', NULL, '' UNION ALL SELECT id + 1, 'n', '', 0, '', NULL, '' FROM c)
    SELECT * FROM c;
