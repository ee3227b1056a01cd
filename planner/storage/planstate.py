"""The last plan shown, kept so that the next one is stable, in a new process too.

    plan_memory(task_id, start, end, late, made_for, made_until)
        one row per task block of a plan (start and end in local time to the minute), or, with start
        NULL, a task that plan left out; `made_for`/`made_until` the horizon it was made for

A plan made for [start, end) replaces what was remembered from `start` on inside that time, and
keeps the earlier blocks of the same day: they are what the day was planned to be, so a re-plan
after them can say which task was planned and is not done. Rows older than a fortnight go. It is
derived from the tasks and the calendar, not the user's data: a plan that cannot be written (a
read-only file) is still shown, only not remembered, and a plan equal to the one remembered writes
nothing (so reading a plan never changes the file, which MCP clients watch).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass

KEEP_DAYS = 14


@dataclass(frozen=True)
class Remembered:
    """A block of the last plan (start None: a task it left out), as stored."""

    task_id: int
    start: dt.datetime | None
    end: dt.datetime | None
    late: bool = False


def _at(text: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(text) if text else None


def _stamp(at: dt.datetime) -> str:
    return at.isoformat(timespec="minutes")


def recall(conn: sqlite3.Connection, start: dt.datetime, end: dt.datetime) -> list[Remembered]:
    """What the last plans had from the midnight before `start` to `end`, and the tasks left out there."""
    day = dt.datetime.combine(start.date(), dt.time())
    rows = conn.execute(
        "SELECT task_id, start, end, late FROM plan_memory WHERE (start >= ? AND start < ?) "
        "OR (start IS NULL AND made_for < ? AND made_until > ?) ORDER BY start, task_id",
        (_stamp(day), _stamp(end), _stamp(end), _stamp(start)),
    ).fetchall()
    return [Remembered(r[0], _at(r[1]), _at(r[2]), bool(r[3])) for r in rows]


def remember(conn: sqlite3.Connection, start: dt.datetime, end: dt.datetime, rows: list[Remembered]) -> bool:
    """Keep a plan made for [start, end) (call inside a write transaction); False when it was remembered as it
    is already (nothing written)."""
    now = conn.execute(
        "SELECT task_id, start, end, late FROM plan_memory WHERE (start >= ? AND start < ?) "
        "OR (start IS NULL AND made_for = ? AND made_until = ?) ORDER BY start, task_id, end",
        (_stamp(start), _stamp(end), _stamp(start), _stamp(end)),
    ).fetchall()
    new = sorted(
        (r.task_id, _stamp(r.start) if r.start else None, _stamp(r.end) if r.end else None, int(r.late)) for r in rows
    )
    if sorted((r[0], r[1], r[2], r[3]) for r in now) == new:
        return False
    conn.execute("DELETE FROM plan_memory WHERE start >= ? AND start < ?", (_stamp(start), _stamp(end)))
    conn.execute(
        "DELETE FROM plan_memory WHERE start IS NULL AND made_for < ? AND made_until > ?", (_stamp(end), _stamp(start))
    )
    conn.executemany(
        "INSERT INTO plan_memory (task_id, start, end, late, made_for, made_until) VALUES (?, ?, ?, ?, ?, ?)",
        [(*r, _stamp(start), _stamp(end)) for r in new],
    )
    old = _stamp(start - dt.timedelta(days=KEEP_DAYS))
    conn.execute("DELETE FROM plan_memory WHERE COALESCE(start, made_until) < ?", (old,))
    return True


def forget(conn: sqlite3.Connection) -> None:
    """Forget every plan (call inside a write transaction): the next one is made afresh."""
    conn.execute("DELETE FROM plan_memory")
