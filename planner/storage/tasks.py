"""Tasks in the database: writing them, the change log, undo and redo.

Every task write saves the task as it was and as it became in `task_events`,
in the same transaction as the write, tagged with the user turn that made it:

    task_events(turn, tool, task_id, before JSON|NULL, after JSON|NULL, undone_at)
      before NULL: the turn created the task; after NULL: it deleted it

`undo_last_turn()` walks the newest turn's events backwards and puts each task
back as it was; `redo_last_undo()` walks the most recently undone turn forwards
again. Because the log is in the file, undo works after a restart and across
processes; the price is one small row per change. Values are checked in
fields.py; listing and the agenda are in listing.py.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import sqlite3
from typing import Any

from planner.storage.fields import Task, TaskError, describe_changes

# Columns a write may set: the keys of a changes dict are checked against these before any SQL is built.
COLUMNS = frozenset(
    {
        "title",
        "status",
        "due_date",
        "due_time",
        "start_date",
        "priority",
        "notes",
        "annotations",
        "completed_at",
        "created_at",
        "recurrence",
        "uid",
        "list",
        "estimate_minutes",
        "parent_uid",
        "remind_at",
        "reminded_at",
        "ical",
        "extra",
        "scheduled_at",
    }
)


def new_turn() -> str:
    """A fresh id for the changes one user turn (or one command) makes."""
    return secrets.token_hex(8)


def undo_stamp() -> str:
    """When an undo was made, to the microsecond: every log an undo marks gets one, and redo makes again
    the request with the newest (two undos in the same second are still in order)."""
    return dt.datetime.now().isoformat(timespec="microseconds")


def now() -> str:
    """The local time as stored in created_at and completed_at."""
    return dt.datetime.now().isoformat(timespec="seconds")


def snapshot(conn: sqlite3.Connection, task_id: int) -> Task | None:
    """Everything stored about one task (its tags and its parent's id too), or None if there is no such task.

    Not the copy another app wrote (`ical`): it can be large, it is not the user's edit, and a restore
    that leaves it alone keeps the newest copy, which the next write starts from.
    """
    row = conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
    if row is None:
        return None
    task = dict(row)
    task.pop("ical", None)
    task["tags"] = tags_of(conn, task_id)
    task["parent"] = parent_id(conn, task.get("parent_uid"))
    return task


def parent_id(conn: sqlite3.Connection, uid: str | None) -> int | None:
    """The id of the task with this uid (a parent), or None."""
    if not uid:
        return None
    row = conn.execute("SELECT id FROM tasks WHERE uid = ?", (uid,)).fetchone()
    return row[0] if row else None


def children(conn: sqlite3.Connection, uid: str, status: str | None = "open") -> list[Task]:
    """The subtasks of the task with this uid (open ones by default)."""
    rows = conn.execute(
        "SELECT id FROM tasks WHERE parent_uid = ? AND (? IS NULL OR status = ?) ORDER BY id", (uid, status, status)
    )
    return [t for r in rows.fetchall() if (t := snapshot(conn, r[0])) is not None]


def tags_of(conn: sqlite3.Connection, task_id: int) -> list[str]:
    """A task's tags, sorted."""
    return [r[0] for r in conn.execute("SELECT tag FROM task_tags WHERE task_id = ? ORDER BY tag", (task_id,))]


def set_tags(conn: sqlite3.Connection, task_id: int, tags: list[str]) -> None:
    """Replace a task's tags."""
    conn.execute("DELETE FROM task_tags WHERE task_id = ?", (task_id,))
    conn.executemany("INSERT OR IGNORE INTO task_tags (task_id, tag) VALUES (?, ?)", [(task_id, t) for t in tags])


def require(conn: sqlite3.Connection, task_id: int) -> Task:
    """One task by id, or a TaskError that says how to find the right id."""
    task = snapshot(conn, task_id)
    if task is None:
        raise TaskError(f'no task with id={task_id}; call list_tasks with status "all" to see the ids')
    return task


def titles(conn: sqlite3.Connection) -> dict[int, str]:
    """Every task's title by id (what the user's words may name: agent/intent.py)."""
    return {r[0]: r[1] for r in conn.execute("SELECT id, title FROM tasks")}


def open_titles(conn: sqlite3.Connection) -> dict[int, str]:
    """Every open task's title by id (a new task with one of these titles may be a copy: agent/guards.py)."""
    return {r[0]: r[1] for r in conn.execute("SELECT id, title FROM tasks WHERE status = 'open'")}


def by_uid(conn: sqlite3.Connection, uid: str) -> Task | None:
    """One task by uid, or None."""
    row = conn.execute("SELECT id FROM tasks WHERE uid = ?", (uid,)).fetchone()
    return snapshot(conn, row[0]) if row else None


def record(conn: sqlite3.Connection, turn: str | None, tool: str, task_id: int, before: Task | None) -> Task | None:
    """Log one change to a task (call inside the write transaction, after the write); returns the task now."""
    after = snapshot(conn, task_id)
    logged = with_copy(conn, task_id, after) if before is None else after  # a new task: redo makes it whole
    conn.execute(
        "INSERT INTO task_events (turn, tool, task_id, before, after) VALUES (?, ?, ?, ?, ?)",
        (turn or new_turn(), tool, task_id, _dump(before), _dump(logged)),
    )
    return after


def with_copy(conn: sqlite3.Connection, task_id: int, task: Task | None) -> Task | None:
    """A snapshot with the copy another app wrote (`ical`), for the log rows that make or remove a task:
    undoing a deletion, or redoing an import, puts back every field that app wrote."""
    row = conn.execute("SELECT ical FROM tasks WHERE id = ?", (task_id,)).fetchone()
    return task if task is None or not row or row[0] is None else {**task, "ical": row[0]}


def _dump(task: Task | None) -> str | None:
    return None if task is None else json.dumps(task, ensure_ascii=False)


def _checked(changes: dict[str, Any]) -> dict[str, Any]:
    unknown = set(changes) - COLUMNS
    if unknown:
        raise TaskError(f"a task has no field {sorted(unknown)[0]!r}")
    return changes


def insert(
    conn: sqlite3.Connection, turn: str | None, fields: dict[str, Any], tags: list[str], tool: str, log: bool = True
) -> Task:
    """Add a task (fields: tasks columns) with its tags, logged (unless `log` is off); returns it as stored."""
    row = _checked({"status": "open", "created_at": now(), "uid": secrets.token_hex(16), **fields})
    cols = list(row)
    cur = conn.execute(
        f"INSERT INTO tasks ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})", [row[c] for c in cols]
    )
    set_tags(conn, cur.lastrowid, tags)
    if not log:
        return snapshot(conn, cur.lastrowid)  # type: ignore[return-value]
    return record(conn, turn, tool, cur.lastrowid, None)  # type: ignore[return-value]


def update(
    conn: sqlite3.Connection,
    turn: str | None,
    tool: str,
    task_id: int,
    changes: dict[str, Any],
    tags: list[str] | None = None,
    log: bool = True,
) -> tuple[Task, Task]:
    """Change some fields (and, when given, the tags) of one task, logged; returns (before, after)."""
    before = require(conn, task_id)
    _checked(changes)
    if changes:
        sets = ", ".join(f"{k} = ?" for k in changes)
        conn.execute(f"UPDATE tasks SET {sets} WHERE id = ?", [*changes.values(), task_id])
    if tags is not None:
        set_tags(conn, task_id, tags)
    if not log:
        return before, snapshot(conn, task_id)  # type: ignore[return-value]
    return before, record(conn, turn, tool, task_id, before)  # type: ignore[return-value]


def delete(conn: sqlite3.Connection, turn: str | None, tool: str, task_id: int, log: bool = True) -> Task:
    """Delete one task, logged (its subtasks keep their parent's uid, so undo puts the family back); returns it."""
    before = require(conn, task_id)
    whole = with_copy(conn, task_id, before)  # the log keeps what another app wrote: undo puts it back too
    conn.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
    if log:
        record(conn, turn, tool, task_id, whole)
    return before


def restore(conn: sqlite3.Connection, task_id: int, task: Task | None) -> None:
    """Put a task back exactly as snapshotted (None: remove it)."""
    if task is None:
        conn.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
        return
    have = {r[1] for r in conn.execute("PRAGMA table_info(tasks)")}
    values = {k: v for k, v in task.items() if k in have}
    cols = list(values)
    if conn.execute("SELECT 1 FROM tasks WHERE id = ?", (task_id,)).fetchone():
        sets = ", ".join(f"{c} = ?" for c in cols if c != "id")
        conn.execute(f"UPDATE tasks SET {sets} WHERE id = ?", [values[c] for c in cols if c != "id"] + [task_id])
    else:
        marks = ", ".join("?" for _ in cols)
        conn.execute(f"INSERT INTO tasks ({', '.join(cols)}) VALUES ({marks})", [values[c] for c in cols])
    set_tags(conn, task_id, task.get("tags") or [])


# ---------------------------------------------------------------- undo and redo


def pending_undo(conn: sqlite3.Connection, turn: str) -> list[dict[str, Any]]:
    """The events an undo of `turn` would revert, newest first: {"id", "task_id", "tool", "before", "after"}."""
    rows = conn.execute(
        "SELECT id, task_id, tool, before, after FROM task_events WHERE turn = ? AND undone_at IS NULL ORDER BY id DESC",
        (turn,),
    ).fetchall()
    return [_event(r) for r in rows]


def _event(r: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": r["id"],
        "task_id": r["task_id"],
        "tool": r["tool"],
        "before": json.loads(r["before"]) if r["before"] else None,
        "after": json.loads(r["after"]) if r["after"] else None,
    }


def undo_preview(conn: sqlite3.Connection) -> tuple[str | None, list[dict[str, Any]]]:
    """The newest turn with task changes to undo, and its events (newest first); (None, []) if none."""
    row = conn.execute("SELECT turn FROM task_events WHERE undone_at IS NULL ORDER BY id DESC LIMIT 1").fetchone()
    return (row["turn"], pending_undo(conn, row["turn"])) if row else (None, [])


def last_undone(conn: sqlite3.Connection) -> tuple[str, str] | None:
    """The request whose task changes were undone last, and when: (turn, undone_at), or None."""
    row = conn.execute(
        "SELECT turn, undone_at FROM task_events WHERE undo_seq IS NOT NULL ORDER BY undo_seq DESC LIMIT 1"
    ).fetchone()
    return (row["turn"], row["undone_at"]) if row else None


def undone_events(conn: sqlite3.Connection, turn: str) -> list[dict[str, Any]]:
    """A request's task changes that an undo took back (and a redo may make again), in the order made."""
    rows = conn.execute(
        "SELECT id, task_id, tool, before, after FROM task_events WHERE turn = ? AND undo_seq IS NOT NULL ORDER BY id",
        (turn,),
    ).fetchall()
    return [_event(r) for r in rows]


def mark_events(conn: sqlite3.Connection, kind: str, ids: list[int]) -> None:
    """Mark change-log rows undone (kind "undo", as one undo step), made again ("redo"), or left undone for
    good ("drop": a redo found the same data already there; neither undo nor redo takes them again)."""
    if not ids:
        return
    marks = ", ".join("?" for _ in ids)
    if kind == "drop":
        conn.execute(f"UPDATE task_events SET undo_seq = NULL WHERE id IN ({marks})", ids)
    elif kind == "undo":
        seq = (conn.execute("SELECT MAX(undo_seq) FROM task_events").fetchone()[0] or 0) + 1
        conn.execute(
            f"UPDATE task_events SET undone_at = ?, undo_seq = ? WHERE id IN ({marks})", [undo_stamp(), seq, *ids]
        )
    else:
        conn.execute(f"UPDATE task_events SET undone_at = NULL, undo_seq = NULL WHERE id IN ({marks})", ids)


def plain(task: Task | None) -> Task | None:
    """A snapshot without what a restore does not set (bookkeeping), for comparing."""
    if task is None:
        return None
    return {k: v for k, v in task.items() if k not in ("reminded_at", "parent", "ical")}


def describe_undo(task_id: int, before: Task | None, after: Task | None) -> str:
    """What putting one task back did, in a line for the user."""
    if before is None:
        return f'removed task {task_id} "{(after or {}).get("title", "")}" (it was added)'
    if after is None:
        return f'restored task {task_id} "{before["title"]}" (it was deleted)'
    changes = describe_changes(after, before)  # what was after the change becomes what was before it
    return f'task {task_id} "{before["title"]}": ' + ("; ".join(changes) or "unchanged")


def describe_redo(task_id: int, before: Task | None, after: Task | None) -> str:
    """What making one change again did, in a line for the user."""
    if before is None:
        return f'added task {task_id} "{(after or {}).get("title", "")}" again'
    if after is None:
        return f'deleted task {task_id} "{before["title"]}" again'
    return describe_undo(task_id, after, before)


def _show(value: Any) -> str:
    if value is None or value == [] or value == "":
        return "none"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def describe_call(conn: sqlite3.Connection, name: str, args: Any) -> str:
    """A pending task change, in a line for a confirmation prompt."""
    args = args if isinstance(args, dict) else {}
    if name == "add_task":
        due = f" (due {args['due_date']})" if args.get("due_date") else ""
        return f'add "{args.get("title", "")}"{due}'
    try:
        task = snapshot(conn, int(args.get("id")))
    except (TypeError, ValueError):
        task = None
    what = f'task {task["id"]} "{task["title"]}"' if task else f"task {args.get('id')}"
    verb = {"complete_task": "complete", "delete_task": "DELETE", "update_task": "change"}.get(name, name)
    verb = {"cancel_task": "cancel", "reopen_task": "reopen"}.get(name, verb)
    extra = ", ".join(f"{k}={v}" for k, v in args.items() if k != "id")
    return f"{verb} {what}" + (f" ({extra})" if extra and name == "update_task" else "")


# Change-log rows that are not a change the user counts toward the large-change rule: what came from a file or
# another device (the user's own act elsewhere).
NOT_COUNTED = ("import", "sync")


def changed_since(conn: sqlite3.Connection, since: dt.datetime) -> set[int]:
    """Existing tasks changed since `since` (a UTC time) and not undone, by any process on the file: the
    large-change window where there is no request to count by."""
    rows = conn.execute(
        "SELECT DISTINCT task_id FROM task_events WHERE created_at >= ? AND undone_at IS NULL "
        "AND before IS NOT NULL AND tool NOT IN (?, ?)",
        [since.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S"), *NOT_COUNTED],
    )
    return {r[0] for r in rows}


def changed_in_turn(conn: sqlite3.Connection, turn: str) -> set[int]:
    """Existing tasks this request has changed so far (not undone)."""
    rows = conn.execute(
        "SELECT DISTINCT task_id FROM task_events WHERE turn = ? AND undone_at IS NULL AND before IS NOT NULL",
        (turn,),
    )
    return {r[0] for r in rows}


def added_in_turn(conn: sqlite3.Connection, turn: str) -> set[int]:
    """Tasks this request added (and did not undo): its own, named by it."""
    rows = conn.execute(
        "SELECT task_id FROM task_events WHERE turn = ? AND before IS NULL AND undone_at IS NULL", (turn,)
    )
    return {r[0] for r in rows}


def describe_change(op: str, task_id: int | None, before: Task | None, after: Task | None) -> str:
    """One planned change in a line for a question: 'delete task 3 "old draft"', 'complete task 4 "x"'."""
    if before is None and after is None:
        return f"task {task_id}"
    if before is None:
        return (
            f'add "{(after or {}).get("title", "")}"' if op == "add" else f'put back task {task_id} "{after["title"]}"'
        )  # type: ignore[index]
    what = f'task {before["id"]} "{before["title"]}"'
    if after is None:
        return f"DELETE {what}"
    status = (before.get("status"), after.get("status"))
    verb = {"done": "complete", "cancelled": "cancel", "open": "reopen"}.get(after.get("status") or "", "change")
    if status[0] == status[1]:
        verb = "change"
    shown = [
        f"{_label(k)} {_show(before.get(k))} → {_show(after.get(k))}"
        for k in after
        if k not in ("id", "status", "completed_at", "uid", "ical", "parent", "reminded_at", "created_at", "extra")
        and before.get(k) != after.get(k)
    ]
    return f"{verb} {what}" + (f" ({'; '.join(shown)})" if shown and verb == "change" else "")


def _label(key: str) -> str:
    return {"due_date": "due", "due_time": "time", "estimate_minutes": "estimate", "recurrence": "repeat"}.get(key, key)


# ---------------------------------------------------------------- reminders


def due_reminders(conn: sqlite3.Connection, now: dt.datetime) -> list[Task]:
    """Open tasks whose reminder time has come and that were not shown yet, soonest first."""
    rows = conn.execute(
        "SELECT * FROM tasks WHERE status = 'open' AND remind_at IS NOT NULL AND remind_at <= ? "
        "AND reminded_at IS NULL ORDER BY remind_at, id",
        (now.isoformat(timespec="minutes"),),
    )
    return [dict(r) for r in rows]


def upcoming_reminders(conn: sqlite3.Connection, start: dt.datetime, end: dt.datetime) -> list[Task]:
    """Open tasks with a reminder still to show between start and end, soonest first."""
    rows = conn.execute(
        "SELECT * FROM tasks WHERE status = 'open' AND reminded_at IS NULL AND remind_at > ? AND remind_at <= ? "
        "ORDER BY remind_at, id",
        (start.isoformat(timespec="minutes"), end.isoformat(timespec="minutes")),
    )
    return [dict(r) for r in rows]


def history(conn: sqlite3.Connection, task_id: int) -> list[dict[str, Any]]:
    """Every logged change to one task, oldest first: {"at", "tool", "before", "after", "undone"} (for `show`)."""
    rows = conn.execute(
        "SELECT id, task_id, tool, before, after, created_at, undone_at FROM task_events WHERE task_id = ? ORDER BY id",
        (task_id,),
    ).fetchall()
    return [{**_event(r), "at": r["created_at"], "undone": r["undone_at"] is not None} for r in rows]
