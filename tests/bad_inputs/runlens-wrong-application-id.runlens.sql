-- A run whose application id says another program wrote it.
PRAGMA application_id = 1234;
