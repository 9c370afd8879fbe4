-- RunLens tables in a database that does not say it is a run (user_version 0).
PRAGMA user_version = 0;
