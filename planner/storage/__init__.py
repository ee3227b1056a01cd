"""Storage: the SQLite file, tasks and their change log, read-only queries, import and export; all SQL about tasks lives here."""
