"""The SQLite file: connections, transactions and ordered schema migrations.

One connection per thread (tools run on a thread pool, and sqlite3 objects
must not cross threads), all in WAL mode with a busy timeout so two planner
processes can share a file. Connections are in autocommit mode; every write
goes through `Store.write()`, which takes the write lock up front
(BEGIN IMMEDIATE) so a read-then-write never fails half way with "database is
locked", and commits on its own.

The schema version lives in PRAGMA user_version; the steps are in
migrations.py. Version 0 with the three tutorial tables (tasks, messages,
memories) is upgraded in place.
"""

from __future__ import annotations

import contextlib
import enum
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from planner.settings import program
from planner.storage.migrations import MIGRATIONS, SCHEMA_VERSION  # SCHEMA_VERSION: re-exported

BUSY_TIMEOUT_MS = 15_000


class Fault(enum.Enum):
    """What is wrong with the file or its neighbours, as SQLite's result code says it; the value is the user's line.

    Classified by `sqlite_errorcode` (Python 3.11), never by the message: "no such column: readonly_flag"
    is SQLITE_ERROR, a bug or an old schema, not a read-only file.
    """

    BUSY = "the database is busy (another program is writing to it); nothing was saved, try again in a moment"
    FULL = "the disk is full, so nothing was saved; free some space and try again"
    IO = (
        "the database file could not be written or read (a disk I/O error: the disk is full, or failing), "
        "so nothing was saved; free some space and try again"
    )
    READ_ONLY = "the database file is read-only, so nothing was saved; make it writable (chmod u+w) to change it"
    CORRUPT = (
        "the database file is damaged; put your latest backup in its place (the planner's backup command makes them), "
        "or save what SQLite can still read: sqlite3 planner.db .recover | sqlite3 recovered.db"
    )


# SQLite's primary result codes (the low byte of the extended code) and the fault each one is.
FAULTS = {
    sqlite3.SQLITE_BUSY: Fault.BUSY,  # another connection holds the lock past the busy timeout
    sqlite3.SQLITE_LOCKED: Fault.BUSY,  # a conflict inside a shared cache: the same, for the user
    sqlite3.SQLITE_FULL: Fault.FULL,  # ENOSPC, or max_page_count reached
    sqlite3.SQLITE_IOERR: Fault.IO,  # a write or read failed (EFBIG past a file size limit is SQLITE_IOERR_WRITE)
    sqlite3.SQLITE_READONLY: Fault.READ_ONLY,
    sqlite3.SQLITE_CORRUPT: Fault.CORRUPT,
    sqlite3.SQLITE_NOTADB: Fault.CORRUPT,
}


class DatabaseError(RuntimeError):
    """The database cannot be used; the message is for the user, `fault` says which kind (None: another cause)."""

    def __init__(self, message: str, fault: Fault | None = None):
        super().__init__(message)
        self.fault = fault


def fault_of(e: BaseException) -> Fault | None:
    """The fault SQLite's result code names, or None (a bug, a schema mismatch, or not SQLite's error at all)."""
    code = getattr(e, "sqlite_errorcode", None)
    return FAULTS.get(code & 0xFF) if isinstance(code, int) else None


def explain(e: sqlite3.Error) -> DatabaseError | None:
    """A fault of the file or of other programs, as one line for the user; None for anything else."""
    fault = fault_of(e)
    return DatabaseError(fault.value, fault) if fault else None


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
        self._watcher: sqlite3.Connection | None = None  # see data_version
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._open_and_migrate()
        except sqlite3.DatabaseError as e:
            self.close()
            fault = fault_of(e)
            if fault is Fault.BUSY:
                raise DatabaseError(
                    f"{self.path} is busy: another program held its write lock for {BUSY_TIMEOUT_MS // 1000} s; "
                    "close it and start again",
                    fault,
                ) from None
            if fault is Fault.READ_ONLY:
                raise DatabaseError(
                    f"{self.path} is read-only and needs an upgrade or a first write; make it writable "
                    f"(chmod u+w), or read it with {program()} export",
                    fault,
                ) from None
            raise DatabaseError(
                f"{self.path} is not a usable planner database ({e}); move it aside or pass --db to use another file",
                fault,
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
                if fault_of(e) is not Fault.BUSY or time.monotonic() > deadline:
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
            known = explain(e) if isinstance(e, sqlite3.DatabaseError) else None
            if known:
                raise known from None
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as e:  # disk full or I/O error at commit: nothing was saved
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise explain(e) or e from None

    @contextlib.contextmanager
    def exclusive(self, name: str, wait: float = 30.0) -> Iterator[bool]:
        """A lock beside the file that one process holds at a time (a sync); yields whether it was had.

        An OS lock (flock), so a process killed with -9 never leaves it held. Where flock does not
        exist (Windows) everyone has it.
        """
        try:
            import fcntl
        except ImportError:
            yield True
            return
        path = self.path.with_name(f"{self.path.name}.{name}-lock")
        with open(path, "a") as handle:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        yield False
                        return
                    time.sleep(0.1)
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def data_version(self) -> int:
        """A number that changes whenever a commit lands in the file (by another process, or by this one).

        Read on a connection that only watches: PRAGMA data_version is per connection, so asking each
        thread's own connection (a thread pool asks from any thread) compared numbers that mean nothing
        to each other, and a change could go unseen.
        """
        with self._lock:
            if self._watcher is None:
                self._watcher = _open(self.path)
                self._all.append(self._watcher)
            return self._watcher.execute("PRAGMA data_version").fetchone()[0]

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()
            self._watcher = None
        self._local = threading.local()
