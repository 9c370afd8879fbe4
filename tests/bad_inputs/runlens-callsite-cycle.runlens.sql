-- The root callsite made a child of a leaf: the call tree has a cycle.
UPDATE callsite SET parent_id = 4 WHERE id = 1;
