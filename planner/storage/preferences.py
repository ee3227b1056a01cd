"""The user's planning preferences: avoid / free / prefer windows the scheduler reads, each from their words.

    preferences(id, kind, weekdays, start, end, tags, said, turn, after_event, undone_at,
                removed_turn, removed_after, removed_at)
        made by `turn` and removed by `removed_turn`, each with the change-log id it came after, so /undo
        finds the newest; the row keeps its own history (undone_at, removed_at), so undoing is an edit of it

Written only through the gate (gate.py): PREFERENCES is this table's part in it.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

from planner.storage.owner import Owner


def preferences(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """The preferences in force, oldest first."""
    rows = conn.execute(
        "SELECT id, kind, weekdays, start, end, tags, said FROM preferences "
        "WHERE undone_at IS NULL AND removed_at IS NULL ORDER BY id"
    )
    return [dict(r) for r in rows]


def newest_preference_turn(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The newest turn that added or removed a preference (not undone), and the change-log id it came after."""
    row = conn.execute(
        "SELECT turn, after_event, id FROM ("
        " SELECT turn, after_event, id FROM preferences WHERE undone_at IS NULL"
        " UNION ALL SELECT removed_turn, removed_after, id FROM preferences WHERE removed_turn IS NOT NULL)"
        " ORDER BY after_event DESC, id DESC LIMIT 1"
    ).fetchone()
    return (row[0], row[1]) if row else None


def undo_changes(conn: sqlite3.Connection, turn: str) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """What undoing a turn's preferences would write: (id, the row as it becomes), and a line for each."""
    now = dt.datetime.now().isoformat(timespec="seconds")
    out, lines = [], []
    for r in conn.execute("SELECT * FROM preferences WHERE turn = ? AND undone_at IS NULL", (turn,)).fetchall():
        out.append((r["id"], dict(r) | {"undone_at": now}))
        lines.append(f'removed preference {r["id"]} "{r["said"]}" (it was added)')
    for r in conn.execute("SELECT * FROM preferences WHERE removed_turn = ?", (turn,)).fetchall():
        out.append((r["id"], dict(r) | {"removed_at": None, "removed_turn": None, "removed_after": None}))
        lines.append(f'restored preference {r["id"]} "{r["said"]}" (it was removed)')
    return out, lines


# ---------------------------------------------------------------- the gate's writers (gate.py alone calls them)

STATE = ("undone_at", "removed_at", "removed_turn", "removed_after")


def _row(conn: sqlite3.Connection, pref_id: int) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM preferences WHERE id = ?", (pref_id,)).fetchone()
    return dict(row) if row else None


def _last_event(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COALESCE(MAX(id), 0) FROM task_events").fetchone()[0]


def _apply(conn: sqlite3.Connection, c: Any, turn: str, log: bool) -> int | None:
    """add: a new preference made by `turn`; edit {"removed": true}: dropped by `turn`; put: the row's own
    history as an undo leaves it."""
    values = dict(c.values or {})
    if c.op.value == "add":
        return conn.execute(
            "INSERT INTO preferences (kind, weekdays, start, end, tags, said, turn, after_event) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                values["kind"],
                values["weekdays"],
                values["start"],
                values["end"],
                values["tags"],
                values["said"],
                turn,
                _last_event(conn),
            ),
        ).lastrowid
    if c.op.value == "edit" and values.get("removed"):
        conn.execute(
            "UPDATE preferences SET removed_at = ?, removed_turn = ?, removed_after = ? WHERE id = ?",
            (dt.datetime.now().isoformat(timespec="seconds"), turn, _last_event(conn), c.key),
        )
        return c.key
    if c.op.value == "put":
        conn.execute(
            f"UPDATE preferences SET {', '.join(f'{k} = ?' for k in STATE)} WHERE id = ?",
            [values.get(k) for k in STATE] + [c.key],
        )
        return c.key
    raise ValueError(f"a preference has no change {c.op.value}")


def _line(op: str, key: int | None, before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    said = (before or after or {}).get("said", "")
    return f'add preference "{said}"' if before is None else f'change preference {key} "{said}"'


PREFERENCES = Owner("preferences", _row, _apply, _line)
