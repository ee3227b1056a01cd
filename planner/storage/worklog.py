"""Tracked time: when the user worked on a task (`start` / `stop`, or "that took three hours"), and undo.

    worklog(id, task_id, start, end, minutes, turn, after_event, stop_turn, stop_after, seq, stop_seq, undone_at)
        one stretch of work on a task, in local time to the minute; `end` NULL while it runs; `minutes`
        when the user said how long it took (it wins over end - start); made by `turn` and stopped by
        `stop_turn`, each with the change-log id it came after, so /undo finds the newest (as the
        preferences do, storage/calendar.py)

This module's functions are the table's only writers. One stretch runs at a time: starting
another stops the one running, in the same turn. Undoing a start removes the stretch (undone_at);
undoing a stop sets it running again. What the planner reads back: what runs now, the minutes
spent per task, and the finished tasks with an estimate and tracked time, newest first (the
history the estimates learn from, planner/tools/estimates.py).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass
from typing import Any

from planner.storage.owner import Owner


@dataclass(frozen=True)
class Stretch:
    """One stretch of work on a task."""

    id: int
    task_id: int
    start: dt.datetime
    end: dt.datetime | None  # None while it runs
    minutes: int | None  # as the user said, when they did

    @property
    def spent(self) -> int:
        """Its minutes: as said, else from start to end (0 while it runs)."""
        if self.minutes is not None:
            return self.minutes
        return int((self.end - self.start).total_seconds() // 60) if self.end else 0


def _stamp(at: dt.datetime) -> str:
    return at.replace(second=0, microsecond=0).isoformat(timespec="minutes")


def _row(r: sqlite3.Row) -> Stretch:
    end = dt.datetime.fromisoformat(r["end"]) if r["end"] else None
    return Stretch(r["id"], r["task_id"], dt.datetime.fromisoformat(r["start"]), end, r["minutes"])


def _last_event(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COALESCE(MAX(id), 0) FROM task_events").fetchone()[0]


def _next(conn: sqlite3.Connection) -> int:
    """The next number in the order of starts and stops (which came last, between two task changes)."""
    row = conn.execute("SELECT MAX(MAX(COALESCE(seq, 0)), MAX(COALESCE(stop_seq, 0))) FROM worklog").fetchone()
    return (row[0] or 0) + 1


def running(conn: sqlite3.Connection) -> Stretch | None:
    """The stretch that runs now, if one does."""
    r = conn.execute("SELECT * FROM worklog WHERE end IS NULL AND undone_at IS NULL ORDER BY id DESC LIMIT 1")
    row = r.fetchone()
    return _row(row) if row else None


def stretch(row: dict[str, Any]) -> Stretch:
    """A row of the table as a Stretch."""
    end = dt.datetime.fromisoformat(row["end"]) if row.get("end") else None
    return Stretch(row["id"], row["task_id"], dt.datetime.fromisoformat(row["start"]), end, row.get("minutes"))


def stamp(at: dt.datetime) -> str:
    """A moment as the table keeps it (local time, to the minute)."""
    return _stamp(at)


def stretches(conn: sqlite3.Connection, task_ids: list[int] | None = None) -> list[Stretch]:
    """Every stretch in force (of these tasks, when given), oldest first."""
    rows = conn.execute("SELECT * FROM worklog WHERE undone_at IS NULL ORDER BY start, id").fetchall()
    wanted = None if task_ids is None else set(task_ids)
    return [_row(r) for r in rows if wanted is None or r["task_id"] in wanted]


def spent(conn: sqlite3.Connection, task_ids: list[int], now: dt.datetime | None = None) -> dict[int, int]:
    """Minutes spent per task that has tracked time (a running stretch counts up to `now`)."""
    out: dict[int, int] = {}
    for s in stretches(conn, task_ids):
        minutes = s.spent
        if s.end is None and now is not None:
            minutes = max(0, int((now - s.start).total_seconds() // 60))
        out[s.task_id] = out.get(s.task_id, 0) + minutes
    return out


@dataclass(frozen=True)
class Finished:
    """A finished task with an estimate and tracked time: what the estimates learn from."""

    task_id: int
    tags: tuple[str, ...]
    list_name: str | None
    estimate: int
    tracked: int
    completed_at: str


def finished(conn: sqlite3.Connection, limit: int = 500) -> list[Finished]:
    """Done tasks with an estimate and some tracked time, the most recently completed first."""
    rows = conn.execute(
        "SELECT t.id, t.list, t.estimate_minutes, t.completed_at, "
        "SUM(COALESCE(w.minutes, (julianday(w.end) - julianday(w.start)) * 1440)) AS tracked "
        "FROM tasks t JOIN worklog w ON w.task_id = t.id "
        "WHERE t.status = 'done' AND t.estimate_minutes > 0 AND w.undone_at IS NULL AND w.end IS NOT NULL "
        "GROUP BY t.id HAVING tracked > 0 ORDER BY t.completed_at DESC, t.id DESC LIMIT ?",
        (limit,),
    ).fetchall()
    out = []
    for r in rows:
        tags = tuple(x[0] for x in conn.execute("SELECT tag FROM task_tags WHERE task_id = ? ORDER BY tag", (r[0],)))
        out.append(Finished(r[0], tags, r[1], r[2], round(r[4]), r[3] or ""))
    return out


def by_uid(conn: sqlite3.Connection) -> dict[str, list[dict[str, Any]]]:
    """Every task's tracked time for the exports, by the task's uid: [{"start", "end" (None: running), "minutes"}]."""
    out: dict[str, list[dict[str, Any]]] = {}
    rows = conn.execute(
        "SELECT t.uid, w.* FROM worklog w JOIN tasks t ON t.id = w.task_id WHERE w.undone_at IS NULL "
        "ORDER BY w.start, w.id"
    ).fetchall()
    for r in rows:
        s = _row(r)
        out.setdefault(r["uid"], []).append({"start": r["start"], "end": r["end"], "minutes": s.spent})
    return out


# ---------------------------------------------------------------- undo


def newest_turn(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The newest turn that started or stopped the clock (not undone), and the change-log id it came after."""
    row = conn.execute(
        "SELECT turn, after, seq FROM ("
        " SELECT turn, after_event AS after, seq FROM worklog WHERE undone_at IS NULL AND turn IS NOT NULL"
        " UNION ALL SELECT stop_turn, stop_after, stop_seq FROM worklog WHERE undone_at IS NULL AND stop_turn IS NOT NULL)"
        " ORDER BY after DESC, seq DESC LIMIT 1"
    ).fetchone()
    return (row[0], row[1]) if row else None


def has_turn(conn: sqlite3.Connection, turn: str) -> bool:
    """Whether this turn started or stopped the clock (and is not undone)."""
    row = conn.execute(
        "SELECT 1 FROM worklog WHERE undone_at IS NULL AND (turn = ? OR stop_turn = ?1) LIMIT 1", (turn,)
    ).fetchone()
    return row is not None


def undo_changes(conn: sqlite3.Connection, turn: str) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """What undoing a turn's starts and stops would write: (id, the row as it becomes), and a line for each.
    Undoing a start removes the stretch (undone_at); undoing a stop sets it running again."""
    now = dt.datetime.now().isoformat(timespec="seconds")
    pick = "SELECT w.*, COALESCE(t.title, '') AS title FROM worklog w LEFT JOIN tasks t ON t.id = w.task_id "
    out, lines = [], []
    for r in conn.execute(pick + "WHERE w.turn = ? AND w.undone_at IS NULL", (turn,)).fetchall():
        row = {k: r[k] for k in r.keys() if k != "title"}
        out.append((r["id"], row | {"undone_at": now}))
        lines.append(f'removed the time on task {r["task_id"]} "{r["title"]}" from {r["start"][11:]}')
    rows = conn.execute(pick + "WHERE w.stop_turn = ? AND w.turn IS NOT ? AND w.undone_at IS NULL", (turn, turn))
    for r in rows.fetchall():
        row = {k: r[k] for k in r.keys() if k != "title"}
        out.append((r["id"], row | dict.fromkeys(("end", "minutes", "stop_turn", "stop_after", "stop_seq"))))
        lines.append(f'task {r["task_id"]} "{r["title"]}" runs again, from {r["start"][11:]}')
    return out, lines


# ---------------------------------------------------------------- the gate's writers (gate.py alone calls them)

STATE = ("end", "minutes", "stop_turn", "stop_after", "stop_seq", "undone_at")


def _get(conn: sqlite3.Connection, stretch_id: int) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM worklog WHERE id = ?", (stretch_id,)).fetchone()
    return dict(row) if row else None


def _apply(conn: sqlite3.Connection, c: Any, turn: str, log: bool) -> int | None:
    """add {task_id, start[, end, minutes]}: a stretch made by `turn` (a finished one when it has an end);
    edit {end, minutes}: the stretch stopped by `turn`; put: its state as an undo leaves it."""
    values = dict(c.values or {})
    if c.op.value == "add":
        done = values.get("end") is not None
        return conn.execute(
            "INSERT INTO worklog (task_id, start, end, minutes, turn, after_event, stop_turn, stop_after, seq, stop_seq)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                values["task_id"],
                values["start"],
                values.get("end"),
                values.get("minutes"),
                turn,
                _last_event(conn),
                turn if done else None,
                _last_event(conn) if done else None,
                _next(conn),
                _next(conn) if done else None,
            ),
        ).lastrowid
    if c.op.value == "edit":
        conn.execute(
            "UPDATE worklog SET end = ?, minutes = ?, stop_turn = ?, stop_after = ?, stop_seq = ? WHERE id = ?",
            (values["end"], values.get("minutes"), turn, _last_event(conn), _next(conn), c.key),
        )
        return c.key
    if c.op.value == "put":
        conn.execute(
            f"UPDATE worklog SET {', '.join(f'{k} = ?' for k in STATE)} WHERE id = ?",
            [values.get(k) for k in STATE] + [c.key],
        )
        return c.key
    raise ValueError(f"tracked time has no change {c.op.value}")


def _line(op: str, key: int | None, before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    row = after or before or {}
    return f"{'start' if before is None else 'change'} the clock on task {row.get('task_id')}"


WORKLOG = Owner("worklog", _get, _apply, _line)
