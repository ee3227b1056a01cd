"""The SQLite file: connections, transactions and ordered schema migrations.

One connection per thread (tools run on a thread pool, and sqlite3 objects
must not cross threads), all in WAL mode with a busy timeout so two planner
processes can share a file. Connections are in autocommit mode; every write
goes through `Store.write()`, which takes the write lock up front
(BEGIN IMMEDIATE) so a read-then-write never fails half way with "database is
locked", and commits on its own.

The schema version lives in PRAGMA user_version. Version 0 with the three
tutorial tables (tasks, messages, memories) is upgraded in place.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

BUSY_TIMEOUT_MS = 15_000


class DatabaseError(RuntimeError):
    """The database cannot be used; the message is for the user."""


BUSY = "the database is busy (another program is writing to it); nothing was saved, try again in a moment"
FULL = "the disk is full, so nothing was saved; free some space and try again"
READ_ONLY = "the database file is read-only, so nothing was saved; make it writable (chmod u+w) to change it"
CORRUPT = "the database file is damaged; export what can be read (python agent.py export) and start a new file"


def explain(e: sqlite3.Error) -> DatabaseError | None:
    """A fault of the file or of other programs, as one line for the user; None for anything else."""
    text = str(e).lower()
    for words, message in (
        (("locked", "busy"), BUSY),
        (("disk is full", "disk i/o", "database or disk is full"), FULL),
        (("readonly", "read-only"), READ_ONLY),
        (("malformed", "not a database", "corrupt"), CORRUPT),
    ):
        if any(w in text for w in words):
            return DatabaseError(message)
    return None


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _script(conn: sqlite3.Connection, sql: str) -> None:
    # Not executescript(): it commits first, which would split a migration
    # across transactions.
    buffer = ""
    for piece in sql.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):  # a trigger body holds ';' of its own
            if buffer.strip(" \n;"):
                conn.execute(buffer)
            buffer = ""


def _add_columns(conn: sqlite3.Connection, table: str, columns: dict[str, str]) -> None:
    have = _columns(conn, table)
    for name, decl in columns.items():
        if name not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")


def _m1_tutorial_tables(conn: sqlite3.Connection) -> None:
    # The tutorial's tables, exactly; IF NOT EXISTS keeps a tutorial file's data.
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS tasks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            title TEXT NOT NULL,
            due_date TEXT,
            status TEXT NOT NULL DEFAULT 'open',
            created_at TEXT DEFAULT CURRENT_TIMESTAMP
        );
        CREATE TABLE IF NOT EXISTS messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session TEXT NOT NULL,
            role TEXT NOT NULL,
            content TEXT,
            tool_calls TEXT,
            tool_name TEXT,
            created_at TEXT DEFAULT CURRENT_TIMESTAMP
        );
        CREATE TABLE IF NOT EXISTS memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            text TEXT NOT NULL,
            embedding BLOB,
            created_at TEXT DEFAULT CURRENT_TIMESTAMP
        );
        """,
    )
    # A tutorial file may predate a column; add what is missing.
    _add_columns(conn, "tasks", {"due_date": "TEXT", "created_at": "TEXT"})
    _add_columns(conn, "messages", {"tool_calls": "TEXT", "tool_name": "TEXT", "created_at": "TEXT"})
    _add_columns(conn, "memories", {"embedding": "BLOB", "created_at": "TEXT"})


def _m2_sessions_and_models(conn: sqlite3.Connection) -> None:
    # embed_model: which model made each vector, so a model change is detected.
    _add_columns(conn, "memories", {"embed_model": "TEXT", "updated_at": "TEXT"})
    _script(
        conn,
        """
        -- window_start: id of the first message sent to the model (memory.py)
        CREATE TABLE IF NOT EXISTS sessions (
            name TEXT PRIMARY KEY,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            window_start INTEGER NOT NULL DEFAULT 0
        );
        INSERT OR IGNORE INTO sessions (name, created_at)
            SELECT session, MIN(created_at) FROM messages GROUP BY session;
        CREATE INDEX IF NOT EXISTS messages_session_id ON messages (session, id);
        CREATE INDEX IF NOT EXISTS tasks_status ON tasks (status);
        """,
    )


def _m3_typed_memories(conn: sqlite3.Connection) -> None:
    # Memories become typed, scored cells with a keyword index beside the vectors.
    _add_columns(
        conn,
        "memories",
        {
            "kind": "TEXT NOT NULL DEFAULT 'fact'",
            "salience": "REAL NOT NULL DEFAULT 0.5",
            "topic": "TEXT NOT NULL DEFAULT ''",
            "source": "TEXT NOT NULL DEFAULT 'remember'",
        },
    )
    _script(
        conn,
        """
        UPDATE memories SET updated_at = COALESCE(updated_at, created_at, CURRENT_TIMESTAMP);
        -- reason: update (a newer version), supersede (contradicted), forget (removed)
        CREATE TABLE IF NOT EXISTS memory_history (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id INTEGER NOT NULL,
            old_text TEXT NOT NULL,
            new_text TEXT,
            reason TEXT NOT NULL,
            changed_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
            text, content='memories', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER IF NOT EXISTS memories_fts_update AFTER UPDATE OF text ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        END;
        INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
        CREATE TABLE IF NOT EXISTS memory_topics (
            topic TEXT PRIMARY KEY,
            summary TEXT NOT NULL,
            memory_count INTEGER NOT NULL,
            updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        -- one row per finished turn whose memories are still to be extracted
        CREATE TABLE IF NOT EXISTS memory_jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session TEXT NOT NULL,
            user_text TEXT NOT NULL,
            reply TEXT NOT NULL,
            today TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        CREATE TABLE IF NOT EXISTS conversation_summaries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session TEXT NOT NULL,
            summary TEXT NOT NULL,
            first_message_id INTEGER NOT NULL,
            last_message_id INTEGER NOT NULL,
            message_count INTEGER NOT NULL,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        CREATE INDEX IF NOT EXISTS conversation_summaries_session ON conversation_summaries (session, id)
        """,
    )


def _m4_task_events(conn: sqlite3.Connection) -> None:
    # The change log behind /undo (tasks.py): each task as it was and as it became.
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS task_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            turn TEXT NOT NULL,
            tool TEXT NOT NULL,
            task_id INTEGER NOT NULL,
            before TEXT,
            after TEXT,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            undone_at TEXT
        );
        CREATE INDEX IF NOT EXISTS task_events_turn ON task_events (turn, id);
        CREATE INDEX IF NOT EXISTS task_events_pending ON task_events (id) WHERE undone_at IS NULL
        """,
    )


def _m5_planner_fields(conn: sqlite3.Connection) -> None:
    # Priority, notes, a due time, completion time, a repeat rule (RRULE) and a
    # stable uid (so export -> import is idempotent); tags in their own table.
    _add_columns(
        conn,
        "tasks",
        {
            "due_time": "TEXT",
            "priority": "TEXT",
            "notes": "TEXT",
            "completed_at": "TEXT",
            "recurrence": "TEXT",
            "uid": "TEXT",
        },
    )
    _script(
        conn,
        """
        UPDATE tasks SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
        CREATE UNIQUE INDEX IF NOT EXISTS tasks_uid ON tasks (uid);
        CREATE INDEX IF NOT EXISTS tasks_due ON tasks (status, due_date);
        CREATE TABLE IF NOT EXISTS task_tags (
            task_id INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (task_id, tag)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS task_tags_tag ON task_tags (tag)
        """,
    )


# Ordered; index i upgrades user_version i to i + 1. Append only.
def _m6_forget_undo(conn: sqlite3.Connection) -> None:
    # A forgotten memory keeps its whole row and vector under the turn that forgot it, so /undo brings it back.
    # after_event: the newest task_events.id when it was forgotten, so /undo knows which came last.
    _add_columns(
        conn,
        "memory_history",
        {"turn": "TEXT", "row": "TEXT", "embedding": "BLOB", "undone_at": "TEXT", "after_event": "INTEGER"},
    )
    conn.execute("CREATE INDEX IF NOT EXISTS memory_history_pending ON memory_history (turn) WHERE undone_at IS NULL")


def _m7_said_on(conn: sqlite3.Connection) -> None:
    # The planner's date when the fact was last said (its "today", which a background extraction
    # carries from the turn), shown with the memory so the model can answer "when" and prefer the newer.
    _add_columns(conn, "memories", {"said_on": "TEXT"})
    conn.execute("UPDATE memories SET said_on = substr(COALESCE(updated_at, created_at), 1, 10) WHERE said_on IS NULL")


def _m8_sync(conn: sqlite3.Connection) -> None:
    # CalDAV sync state: for each task last synced, where it lives on the server, the ETag it had
    # there, and a hash of its fields as synced (a change on either side since shows as a difference).
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS sync_items (
            uid TEXT PRIMARY KEY,
            href TEXT NOT NULL,
            etag TEXT,
            synced TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS sync_meta (key TEXT PRIMARY KEY, value TEXT)
        """,
    )


def _m9_reminders(conn: sqlite3.Connection) -> None:
    # When to remind (local time, like due dates) and when the reminder was shown, so each shows once.
    _add_columns(conn, "tasks", {"remind_at": "TEXT", "reminded_at": "TEXT"})
    conn.execute("CREATE INDEX IF NOT EXISTS tasks_remind ON tasks (remind_at) WHERE reminded_at IS NULL")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _m1_tutorial_tables,
    _m2_sessions_and_models,
    _m3_typed_memories,
    _m4_task_events,
    _m5_planner_fields,
    _m6_forget_undo,
    _m7_said_on,
    _m8_sync,
    _m9_reminders,
]
SCHEMA_VERSION = len(MIGRATIONS)


def _open(path: Path) -> sqlite3.Connection:
    # check_same_thread=False only so close() can run from the main thread;
    # each connection is otherwise used by the thread that opened it.
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    # In WAL mode NORMAL still survives a killed process; only a power cut can
    # lose the last commits. FULL would fsync on every tool write.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema up to SCHEMA_VERSION; return the version found."""
    found = conn.execute("PRAGMA user_version").fetchone()[0]
    if found > SCHEMA_VERSION:
        raise DatabaseError(
            f"this database was written by a newer planner (schema {found}, "
            f"this one knows {SCHEMA_VERSION}); upgrade the planner to open it"
        )
    for version in range(found, SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another process may have migrated.
            if conn.execute("PRAGMA user_version").fetchone()[0] > version:
                conn.execute("COMMIT")
                continue
            MIGRATIONS[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return found


class Store:
    """The planner's SQLite file, with one connection per thread."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._open_and_migrate()
        except sqlite3.DatabaseError as e:
            self.close()
            known = explain(e)
            if known and "busy" in str(known):
                raise DatabaseError(
                    f"{self.path} is busy: another program held its write lock for {BUSY_TIMEOUT_MS // 1000} s; "
                    "close it and start again"
                ) from None
            if known and "read-only" in str(known):
                raise DatabaseError(
                    f"{self.path} is read-only and needs an upgrade or a first write; make it writable "
                    "(chmod u+w), or read it with python agent.py export"
                ) from None
            raise DatabaseError(
                f"{self.path} is not a usable planner database ({e}); move it aside or pass --db to use another file"
            ) from None
        except OSError as e:
            raise DatabaseError(f"cannot create {self.path.parent}: {e.strerror}") from None

    def _open_and_migrate(self) -> None:
        # Two processes opening a new file at once can deadlock on the switch to
        # WAL (both in rollback mode, one reading, one wanting the exclusive
        # lock); SQLite then answers "locked" at once instead of waiting, so
        # wait here. Seen in the two-process test under load.
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        pause = 0.01
        while True:
            try:
                conn = self.conn()
                conn.execute("PRAGMA journal_mode = WAL")
                migrate(conn)
                return
            except sqlite3.OperationalError as e:
                if ("locked" not in str(e) and "busy" not in str(e)) or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.2)

    def conn(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = _open(self.path)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that commits on exit and rolls back on error."""
        conn = self.conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as e:  # another program held the lock past the busy timeout, or worse
            raise explain(e) or e from None
        try:
            yield conn
        except BaseException as e:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            if isinstance(e, sqlite3.DatabaseError) and explain(e):
                raise explain(e) from None
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as e:  # disk full or I/O error at commit: nothing was saved
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise explain(e) or e from None

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()
        self._local = threading.local()
