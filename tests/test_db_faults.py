"""SQLite faults, each provoked for real, classified by SQLite's result code and never by its words.

One test per class: a read-only file, a lock another program holds, a full database (max_page_count),
a write the operating system refuses (a file size limit), a damaged file; and a mistake in the SQL
(no such column, no such table), which is none of these and must never be told to the user as a
read-only file. The property under them: the class depends on the result code alone, whatever the
message says.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from helpers import ROOT, clean_env
from hypothesis import given
from hypothesis import strategies as st

from planner.storage import db
from planner.storage.db import DatabaseError, Fault, Store, explain, fault_of
from planner.storage.migrations import SCHEMA_VERSION


def titles(path) -> list[str]:
    """The task titles in the file, read by a connection of its own."""
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT title FROM tasks ORDER BY id")]
    finally:
        conn.close()


def add(store: Store, title: str) -> None:
    with store.write() as conn:
        conn.execute("INSERT INTO tasks (title) VALUES (?)", (title,))


def test_a_read_only_file_is_read_only(tmp_path, monkeypatch):
    path = tmp_path / "planner.db"
    Store(path).close()
    real = db._open

    def read_only(p):  # what chmod a-w gives a user who is not root (the tests may run as root)
        conn = sqlite3.connect(f"file:{p}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        return conn

    monkeypatch.setattr(db, "_open", read_only)
    store = Store(path)  # reading works: the schema is current
    with pytest.raises(DatabaseError) as e:
        add(store, "milk")
    assert e.value.fault is Fault.READ_ONLY and str(e.value) == Fault.READ_ONLY.value
    store.close()
    monkeypatch.setattr(db, "_open", real)
    assert titles(path) == []


def test_a_lock_held_past_the_busy_timeout_is_busy(tmp_path, monkeypatch):
    path = tmp_path / "planner.db"
    Store(path).close()
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    store = Store(path)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(DatabaseError) as e:
            add(store, "milk")
        assert e.value.fault is Fault.BUSY
    finally:
        other.execute("ROLLBACK")
        other.close()
    add(store, "milk")  # the lock gone, the same store writes
    store.close()
    assert titles(path) == ["milk"]


def test_a_full_database_is_full_and_keeps_what_it_had(tmp_path):
    path = tmp_path / "planner.db"
    store = Store(path)
    add(store, "kept")
    conn = store.conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # SQLite's own cap: SQLITE_FULL as on a full disk
    with pytest.raises(DatabaseError) as e:
        add(store, "x" * 100_000)
    assert e.value.fault is Fault.FULL and "disk is full" in str(e.value)
    store.close()
    assert titles(path) == ["kept"]


FILE_SIZE_LIMIT = """
import resource, signal, sys
from planner.storage.db import Store, DatabaseError
store = Store(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # as the planner does: the write fails instead of killing us
size = store.path.stat().st_size + 8192
resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
try:
    with store.write() as conn:
        conn.execute("INSERT INTO tasks (title) VALUES (?)", ("x" * 200_000,))
except DatabaseError as e:
    print(e.fault.name if e.fault else None)
"""


def test_a_write_the_system_refuses_past_a_file_size_limit_is_an_io_fault(tmp_path):
    path = tmp_path / "planner.db"
    Store(path).close()
    p = subprocess.run(
        [sys.executable, "-c", FILE_SIZE_LIMIT, str(path)],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=ROOT,
        timeout=60,
    )
    assert p.stdout.strip() == "IO", p.stderr  # SQLITE_IOERR_WRITE: EFBIG
    assert Fault.IO.value.startswith("the database file could not be written") and "full" in Fault.IO.value
    assert titles(path) == []


def test_a_file_that_is_not_a_database_and_a_damaged_page_are_corrupt(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"these are not the bytes of a database " * 200)
    with pytest.raises(DatabaseError) as e:
        Store(junk)
    assert e.value.fault is Fault.CORRUPT and "not a usable planner database" in str(e.value)

    path = tmp_path / "planner.db"
    store = Store(path)
    for i in range(60):
        add(store, f"task {i} " + "y" * 300)
    store.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    data = bytearray(path.read_bytes())
    root = sqlite3.connect(path).execute("SELECT rootpage FROM sqlite_schema WHERE name = 'tasks'").fetchone()[0]
    data[(root - 1) * 4096 : root * 4096] = b"\xff" * 4096  # the tasks table's root page overwritten
    path.write_bytes(bytes(data))
    store = Store(path)
    with pytest.raises(DatabaseError) as e, store.write() as conn:
        conn.execute("SELECT title FROM tasks").fetchall()
    assert e.value.fault is Fault.CORRUPT and "damaged" in str(e.value)
    store.close()


def test_no_such_column_or_table_is_a_mistake_in_the_sql_never_a_read_only_file(tmp_path, ctx):
    store = Store(tmp_path / "planner.db")
    for sql in ("UPDATE tasks SET readonly_flag = 1", "SELECT * FROM readonly_tasks"):
        with pytest.raises(sqlite3.OperationalError) as e, store.write() as conn:
            conn.execute(sql)
        assert explain(e.value) is None and fault_of(e.value) is None  # SQLITE_ERROR: not the file's fault
    store.close()

    from planner.tools import dispatch

    result, ok = dispatch(ctx, "query_planner", {"sql": "SELECT readonly_flag FROM tasks"})
    assert not ok and result["error"].startswith("SQLite said: no such column: readonly_flag")
    assert "only reads" not in result["error"] and "read-only" not in result["error"]

    # A file whose recorded version promises tables it lacks: the migration meets "no such table".
    odd = tmp_path / "odd.db"
    conn = sqlite3.connect(odd)
    conn.execute("PRAGMA user_version = 4")
    conn.close()
    with pytest.raises(DatabaseError) as e:
        Store(odd)
    assert e.value.fault is None and "no such table" in str(e.value) and "read-only" not in str(e.value)
    assert SCHEMA_VERSION > 4


CODES = [getattr(sqlite3, n) for n in dir(sqlite3) if n.startswith("SQLITE_") and n.split("_")[1].isupper()]


@given(code=st.sampled_from(CODES), message=st.text(max_size=60) | st.sampled_from(["database is locked", "readonly"]))
def test_the_class_depends_on_the_result_code_alone_never_on_the_message(code, message):
    e = sqlite3.OperationalError(message)
    e.sqlite_errorcode = code
    expected = {5: Fault.BUSY, 6: Fault.BUSY, 13: Fault.FULL, 10: Fault.IO, 8: Fault.READ_ONLY, 11: Fault.CORRUPT}
    expected[26] = Fault.CORRUPT  # the table from SQLite's documentation of primary result codes
    assert fault_of(e) is expected.get(code & 0xFF)
    bare = sqlite3.OperationalError(message)  # raised by Python, or by the planner, without a code
    assert fault_of(bare) is None and explain(bare) is None
