-- A run from a future RunLens (schema version 999).
PRAGMA user_version = 999;
