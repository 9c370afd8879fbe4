-- A trigger that would empty the run on the next import.
CREATE TRIGGER keep_out AFTER INSERT ON import BEGIN DELETE FROM series; END;
