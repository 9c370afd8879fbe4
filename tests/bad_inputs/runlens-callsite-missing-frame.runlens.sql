-- A callsite of a frame that does not exist.
UPDATE callsite SET frame_id = 99999 WHERE id = 3;
