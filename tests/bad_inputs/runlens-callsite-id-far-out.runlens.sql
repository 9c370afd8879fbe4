-- A callsite id of two billion in a catalogue of four rows: sized by its ids, the catalogue would take gigabytes.
UPDATE callsite SET id = 2000000000 WHERE id = 4;
