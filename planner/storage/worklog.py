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


def start(conn: sqlite3.Connection, turn: str, task_id: int, at: dt.datetime) -> tuple[Stretch, Stretch | None]:
    """Start the clock on a task (call inside a write transaction); the one running is stopped first. Returns
    (the new stretch, the one stopped or None)."""
    stopped = None
    was = running(conn)
    if was is not None:
        stopped = stop(conn, turn, was, at)
    cur = conn.execute(
        "INSERT INTO worklog (task_id, start, turn, after_event, seq) VALUES (?, ?, ?, ?, ?)",
        (task_id, _stamp(at), turn, _last_event(conn), _next(conn)),
    )
    return Stretch(cur.lastrowid, task_id, at.replace(second=0, microsecond=0), None, None), stopped  # type: ignore[arg-type]


def stop(conn: sqlite3.Connection, turn: str, stretch: Stretch, at: dt.datetime, minutes: int | None = None) -> Stretch:
    """Stop a running stretch at `at` (never before it started); `minutes`, when the user said how long."""
    end = max(at.replace(second=0, microsecond=0), stretch.start)
    conn.execute(
        "UPDATE worklog SET end = ?, minutes = ?, stop_turn = ?, stop_after = ?, stop_seq = ? WHERE id = ?",
        (_stamp(end), minutes, turn, _last_event(conn), _next(conn), stretch.id),
    )
    return Stretch(stretch.id, stretch.task_id, stretch.start, end, minutes)


def log(conn: sqlite3.Connection, turn: str, task_id: int, end: dt.datetime, minutes: int) -> Stretch:
    """Record work already done: `minutes` up to `end` ("that took three hours")."""
    start_at = end.replace(second=0, microsecond=0) - dt.timedelta(minutes=minutes)
    cur = conn.execute(
        "INSERT INTO worklog (task_id, start, end, minutes, turn, after_event, stop_turn, stop_after, seq, stop_seq) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (task_id, _stamp(start_at), _stamp(end), minutes, turn, _last_event(conn), turn, _last_event(conn))
        + (_next(conn),) * 2,
    )
    return Stretch(cur.lastrowid, task_id, start_at, end.replace(second=0, microsecond=0), minutes)  # type: ignore[arg-type]


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


def undo(conn: sqlite3.Connection, turn: str) -> list[str]:
    """Take back what a turn did to the clock (call inside a write transaction); one line per stretch."""
    now = dt.datetime.now().isoformat(timespec="seconds")
    pick = "SELECT w.*, COALESCE(t.title, '') AS title FROM worklog w LEFT JOIN tasks t ON t.id = w.task_id "
    lines = []
    for r in conn.execute(pick + "WHERE w.turn = ? AND w.undone_at IS NULL", (turn,)).fetchall():
        conn.execute("UPDATE worklog SET undone_at = ? WHERE id = ?", (now, r["id"]))
        lines.append(f'removed the time on task {r["task_id"]} "{r["title"]}" from {r["start"][11:]}')
    rows = conn.execute(pick + "WHERE w.stop_turn = ? AND w.turn IS NOT ? AND w.undone_at IS NULL", (turn, turn))
    for r in rows.fetchall():
        conn.execute(
            "UPDATE worklog SET end = NULL, minutes = NULL, stop_turn = NULL, stop_after = NULL, stop_seq = NULL "
            "WHERE id = ?",
            (r["id"],),
        )
        lines.append(f'task {r["task_id"]} "{r["title"]}" runs again, from {r["start"][11:]}')
    return lines
