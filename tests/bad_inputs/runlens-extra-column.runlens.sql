-- A column RunLens does not create.
ALTER TABLE run ADD COLUMN note TEXT;
