"""Tasks in the database: snapshots, the change log, and undo.

Every task write saves the task as it was and as it became in `task_events`,
in the same transaction as the write, tagged with the user turn that made it:

    task_events(turn, tool, task_id, before JSON|NULL, after JSON|NULL, undone_at)
      before NULL: the turn created the task; after NULL: it deleted it

`undo_last_turn()` walks the newest turn's events backwards and puts each task
back as it was. Because the log is in the file, undo works after a restart and
across processes; the price is one small row per change. Undo is one level per
turn (a second /undo reverts the turn before), with no redo.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import sqlite3
from typing import Any

from db import Store
from registry import ToolContext, ToolError

BULK_LIMIT = 3  # a turn that would change more tasks than this asks the user first

Task = dict[str, Any]  # a tasks row as a dict, plus "tags" once tasks have tags


def new_turn() -> str:
    """A fresh id for the changes one user turn (or one command) makes."""
    return secrets.token_hex(8)


def now() -> str:
    """The local time as stored in created_at and completed_at."""
    return dt.datetime.now().isoformat(timespec="seconds")


def snapshot(conn: sqlite3.Connection, task_id: int) -> Task | None:
    """Everything stored about one task, or None if there is no such task."""
    row = conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
    return dict(row) if row is not None else None


def require(conn: sqlite3.Connection, task_id: int) -> Task:
    """One task by id, or a ToolError that says how to find the right id."""
    task = snapshot(conn, task_id)
    if task is None:
        raise ToolError(f'no task with id={task_id}; call list_tasks with status "all" to see the ids')
    return task


def record(conn: sqlite3.Connection, ctx: ToolContext, tool: str, task_id: int, before: Task | None) -> Task | None:
    """Log one change to a task (call inside the write transaction, after the write); returns the task now."""
    after = snapshot(conn, task_id)
    conn.execute(
        "INSERT INTO task_events (turn, tool, task_id, before, after) VALUES (?, ?, ?, ?, ?)",
        (ctx.turn or new_turn(), tool, task_id, _dump(before), _dump(after)),
    )
    return after


def _dump(task: Task | None) -> str | None:
    return None if task is None else json.dumps(task, ensure_ascii=False)


def _restore(conn: sqlite3.Connection, task_id: int, task: Task | None) -> None:
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


def undo_last_turn(store: Store) -> list[str]:
    """Revert the newest turn that changed tasks; returns one line per task put back (empty: nothing to undo)."""
    lines: list[str] = []
    with store.write() as conn:
        row = conn.execute("SELECT turn FROM task_events WHERE undone_at IS NULL ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            return []
        events = conn.execute(
            "SELECT id, task_id, before, after FROM task_events WHERE turn = ? AND undone_at IS NULL ORDER BY id DESC",
            (row["turn"],),
        ).fetchall()
        for e in events:
            before = json.loads(e["before"]) if e["before"] else None
            after = json.loads(e["after"]) if e["after"] else None
            _restore(conn, e["task_id"], before)
            lines.append(describe_undo(e["task_id"], before, after))
        conn.execute(
            f"UPDATE task_events SET undone_at = ? WHERE id IN ({', '.join('?' for _ in events)})",
            [now(), *(e["id"] for e in events)],
        )
    return lines[::-1]  # in the order the turn made them


def describe_undo(task_id: int, before: Task | None, after: Task | None) -> str:
    """What putting one task back did, in a line for the user."""
    if before is None:
        return f'removed task {task_id} "{(after or {}).get("title", "")}" (it was added)'
    if after is None:
        return f'restored task {task_id} "{before["title"]}" (it was deleted)'
    changes = [
        f"{k} {_show(after.get(k))} → {_show(before.get(k))}"
        for k in before
        if k not in ("id", "completed_at") and before.get(k) != after.get(k)
    ]
    return f'task {task_id} "{before["title"]}": ' + ("; ".join(changes) or "unchanged")


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
    extra = ", ".join(f"{k}={v}" for k, v in args.items() if k != "id")
    return f"{verb} {what}" + (f" ({extra})" if extra and name == "update_task" else "")
