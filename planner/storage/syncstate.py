"""What the CalDAV sync remembers between runs, and the few task reads and writes it needs.

    sync_items(uid, collection, href, etag, fields JSON, synced hash)
        for each task last synced: where it lives on the server, the ETag it had
        there, and its synced fields as both sides last agreed on them (the base
        of a merge by field; rows from before fields were kept have only the hash)
    sync_meta(key, value)
        url:<collection>    the collection's address (without any user name or password)
        token:<collection>  its sync-token, to tell a replaced collection from an emptied one

The sync itself is planner/sync/caldav_sync.py; this module is its SQL.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from typing import Any


def items(conn: sqlite3.Connection, collection: str) -> dict[str, dict[str, Any]]:
    """uid -> {"href", "etag", "synced", "fields"} for the tasks last synced with this collection."""
    rows = conn.execute(
        "SELECT uid, href, etag, synced, fields FROM sync_items WHERE collection = ?", (collection,)
    ).fetchall()
    out = {}
    for r in rows:
        try:
            fields = json.loads(r["fields"]) if r["fields"] else None
        except ValueError:
            fields = None
        out[r["uid"]] = {"href": r["href"], "etag": r["etag"], "synced": r["synced"], "fields": fields}
    return out


def remember(
    conn: sqlite3.Connection,
    collection: str,
    uid: str,
    href: str,
    etag: str | None,
    fields: dict[str, Any],
    digest: str,
) -> None:
    """Record a task as synced: both sides now hold `fields`."""
    conn.execute(
        "INSERT OR REPLACE INTO sync_items (uid, collection, href, etag, synced, fields) VALUES (?, ?, ?, ?, ?, ?)",
        (uid, collection, href, etag, digest, json.dumps(fields, ensure_ascii=False, sort_keys=True)),
    )


def forget(conn: sqlite3.Connection, uid: str) -> None:
    """Drop a task's sync record (it is gone on both sides, or it moved to another collection)."""
    conn.execute("DELETE FROM sync_items WHERE uid = ?", (uid,))


def reset(conn: sqlite3.Connection, collection: str) -> None:
    """Forget everything synced with a collection (another list at this address: the next sync merges)."""
    conn.execute("DELETE FROM sync_items WHERE collection = ?", (collection,))


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    """One remembered value."""
    row = conn.execute("SELECT value FROM sync_meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: sqlite3.Connection, key: str, value: str | None) -> None:
    """Remember (or, with None, forget) one value."""
    if value is None:
        conn.execute("DELETE FROM sync_meta WHERE key = ?", (key,))
    else:
        conn.execute("INSERT OR REPLACE INTO sync_meta (key, value) VALUES (?, ?)", (key, value))


def changed_at(conn: sqlite3.Connection, task_id: int) -> dt.datetime | None:
    """When the task was last changed here (its newest change-log entry), in UTC."""
    row = conn.execute("SELECT MAX(created_at) FROM task_events WHERE task_id = ?", (task_id,)).fetchone()
    if not row or not row[0]:
        return None
    when = dt.datetime.fromisoformat(row[0])
    return when.astimezone(dt.UTC) if "T" in row[0] else when.replace(tzinfo=dt.UTC)  # CURRENT_TIMESTAMP is UTC


def ids_by_uid(conn: sqlite3.Connection) -> dict[str, int]:
    """uid -> id of every task."""
    return dict(conn.execute("SELECT uid, id FROM tasks").fetchall())
