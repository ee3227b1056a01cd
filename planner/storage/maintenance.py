"""The database as a whole: a consistent backup, a look inside without writing, counts for the banner.

These are the interface's questions about the file (`backup`, `doctor`, the
banner of the full terminal); they live here so that SQL stays in storage.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from planner.storage import memories
from planner.storage.db import Store

COUNTED = ("tasks", "memories", "sessions")  # fixed names, never from input: safe in the f-string below


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in COUNTED}


def backup(store: Store, target: Path, tmp: Path) -> dict[str, int]:
    """SQLite's online backup into `tmp` (a new empty file beside the target), renamed over `target`;
    the copy's row counts.

    Copying planner.db alone can miss the newest changes, which may still sit in planner.db-wal;
    the online backup is consistent even while another planner writes.
    """
    try:
        out = sqlite3.connect(tmp)
        try:
            store.conn().backup(out)
        finally:
            out.close()
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    check = sqlite3.connect(target)
    try:
        return _counts(check)
    finally:
        check.close()


def inspect(path: Path) -> tuple[int, dict[str, int]]:
    """The schema version and row counts of a database file, opened read-only: it looks, never migrates.

    Raises sqlite3.Error for a file that cannot be read (db.explain says it in words).
    """
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0], _counts(conn)
    finally:
        conn.close()


def overview(store: Store, today: str) -> dict[str, Any]:
    """What waits for the user: open and overdue tasks, memories, and whether anything was ever said."""
    conn = store.conn()
    open_, overdue = conn.execute(
        "SELECT COUNT(*), SUM(due_date < ?) FROM tasks WHERE status = 'open'", (today,)
    ).fetchone()
    return {
        "open": open_,
        "overdue": overdue or 0,
        "memories": memories.count(conn),
        "said_anything": conn.execute("SELECT 1 FROM messages LIMIT 1").fetchone() is not None,
    }
